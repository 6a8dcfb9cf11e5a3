-- Asynchronous ingestion. For a chunk config in async mode the document triggers do not chunk
-- in the inserting transaction: they queue the document here and return. Background workers
-- (src/worker.rs) take queued documents after commit and chunk and embed them with
-- knowledge.process_queue. A document is chunked as it is when a worker takes it, so the newest
-- content wins; deleting a document drops it from the queue.

CREATE TABLE knowledge.queue (
    document_id bigint NOT NULL REFERENCES knowledge.documents (id) ON DELETE CASCADE,
    chunk_config text NOT NULL REFERENCES knowledge.chunk_configs (name) ON UPDATE CASCADE ON DELETE CASCADE,
    -- When the document was queued (kept while it waits, so the oldest pending age is honest).
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    -- Failed attempts so far, and when the next one may start (exponential backoff).
    attempts int NOT NULL DEFAULT 0,
    not_before timestamptz NOT NULL DEFAULT now(),
    last_error text,
    -- Set when its chunks are written. Done rows stay a minute for knowledge.queue_status.
    done_at timestamptz,
    PRIMARY KEY (document_id, chunk_config)
);

CREATE INDEX queue_ready ON knowledge.queue (not_before, document_id) WHERE done_at IS NULL;

-- Documents a worker gave up on after max_attempts errors; knowledge.retry_failed queues them
-- again, and so does any change to the document.
CREATE TABLE knowledge.failed (
    document_id bigint NOT NULL REFERENCES knowledge.documents (id) ON DELETE CASCADE,
    chunk_config text NOT NULL REFERENCES knowledge.chunk_configs (name) ON UPDATE CASCADE ON DELETE CASCADE,
    attempts int NOT NULL,
    error text NOT NULL,
    failed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (document_id, chunk_config)
);

-- A dump keeps what is still to do.
SELECT pg_catalog.pg_extension_config_dump('knowledge.queue', '');
SELECT pg_catalog.pg_extension_config_dump('knowledge.failed', '');

REVOKE ALL ON knowledge.queue, knowledge.failed FROM PUBLIC;

-- Queues a document for a config; the workers are woken when the transaction commits (a NOTIFY
-- is delivered then, and once per transaction however many documents it queued).
CREATE FUNCTION knowledge_internal.enqueue(document_id bigint, config text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO knowledge.queue AS q (document_id, chunk_config) VALUES (enqueue.document_id, config)
    ON CONFLICT ON CONSTRAINT queue_pkey DO UPDATE
        SET enqueued_at = CASE WHEN q.done_at IS NULL THEN q.enqueued_at ELSE now() END,
            attempts = 0, not_before = now(), last_error = NULL, done_at = NULL;
    DELETE FROM knowledge.failed AS f WHERE f.document_id = enqueue.document_id AND f.chunk_config = config;
    PERFORM pg_notify('pg_chunk_queue', '');
END
$$;

-- The advisory lock key (with the item's hash) under which a worker holds each item it is
-- processing: knowledge.queue_status counts them in pg_locks. 1885823848 is 'pgch' in ASCII.
CREATE FUNCTION knowledge_internal.queue_lock_class() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1885823848 $$;

-- Whether knowledge.queue is replicated in by a logical-replication subscription of this
-- database: then the publisher processes it, and its chunks arrive replicated too
-- (docs/operations.md, "Logical replication"); processing it here would write them twice.
CREATE FUNCTION knowledge_internal.queue_replicated() RETURNS boolean
LANGUAGE sql STABLE
RETURN EXISTS (SELECT FROM pg_catalog.pg_subscription_rel AS r WHERE r.srrelid = 'knowledge.queue'::regclass);

-- Takes up to batch_size ready documents (skipping those another worker or a writer holds),
-- chunks and embeds them together per config, writes their chunks and marks them done, all in
-- the caller's transaction; none from a queue replicated in (knowledge_internal.queue_replicated).
-- A document whose chunking fails is retried after 1, 2, 4, ... s; after max_attempts failures
-- it moves to knowledge.failed. Returns the number taken. The workers call it; so may superusers
-- (the tests drive the queue without a worker that way): like every function that runs with the
-- store's rights, no one else may (privileges.sql), so that no other role can hold queued
-- documents back in an open transaction.
CREATE FUNCTION knowledge.process_queue(batch_size int DEFAULT 16, max_attempts int DEFAULT 5) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    item knowledge.queue;
    taken knowledge.queue[] := '{}';
    config knowledge.chunk_configs;
    ids bigint[];
    id bigint;
    message text;
    state text;
BEGIN
    IF batch_size IS NULL OR batch_size < 1 OR max_attempts IS NULL OR max_attempts < 1 THEN
        RAISE EXCEPTION 'batch_size and max_attempts must be at least 1, not % and %', batch_size, max_attempts
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF knowledge_internal.queue_replicated() THEN
        RETURN 0;
    END IF;
    DELETE FROM knowledge.queue AS q WHERE (q.document_id, q.chunk_config) IN (
        SELECT o.document_id, o.chunk_config FROM knowledge.queue AS o
        WHERE o.done_at < now() - interval '1 minute' FOR UPDATE SKIP LOCKED);
    -- The document and config rows are locked too (KEY SHARE, which updates of a document's
    -- content or a config's cfg do not wait for): deleting either waits until this transaction
    -- ends, instead of deadlocking with its inserts into knowledge.chunks (which reference both).
    FOR item IN
        SELECT q.* FROM knowledge.queue AS q
        JOIN knowledge.documents AS d ON d.id = q.document_id
        JOIN knowledge.chunk_configs AS c ON c.name = q.chunk_config
        WHERE q.done_at IS NULL AND q.not_before <= clock_timestamp()
        ORDER BY q.not_before, q.document_id
        LIMIT batch_size
        FOR UPDATE OF q SKIP LOCKED FOR KEY SHARE OF d, c SKIP LOCKED
    LOOP
        taken := taken || item;
        PERFORM pg_try_advisory_xact_lock(knowledge_internal.queue_lock_class(), hashtext(item.document_id || '/' || item.chunk_config));
    END LOOP;
    FOR config IN SELECT c.* FROM knowledge.chunk_configs AS c
                  WHERE c.name IN (SELECT t.chunk_config FROM unnest(taken) AS t) ORDER BY c.name LOOP
        ids := ARRAY(SELECT t.document_id FROM unnest(taken) AS t WHERE t.chunk_config = config.name ORDER BY 1);
        BEGIN
            PERFORM knowledge_internal.write_queued(ids, config);
        EXCEPTION WHEN OTHERS THEN
            -- One document's error must not hold back the others: take them one at a time.
            FOREACH id IN ARRAY ids LOOP
                BEGIN
                    PERFORM knowledge_internal.write_queued(ARRAY[id], config);
                EXCEPTION WHEN OTHERS THEN
                    GET STACKED DIAGNOSTICS message = MESSAGE_TEXT, state = RETURNED_SQLSTATE;
                    PERFORM knowledge_internal.queue_failed(id, config.name, format('%s (SQLSTATE %s)', message, state), max_attempts);
                END;
            END LOOP;
        END;
    END LOOP;
    RETURN cardinality(taken);
END
$$;

-- Writes the chunks of queued documents for one config and marks them done. A document the
-- config no longer applies to (its chunk_config changed, or the config was deactivated) gets
-- none: the change that made it so already removed its chunks.
CREATE FUNCTION knowledge_internal.write_queued(document_ids bigint[], config knowledge.chunk_configs) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM knowledge_internal.write_chunks(ARRAY(
        SELECT d.id FROM knowledge.documents AS d
        WHERE d.id = ANY (document_ids) AND (d.chunk_config = config.name OR (d.chunk_config IS NULL AND config.active))), config);
    UPDATE knowledge.queue AS q SET done_at = clock_timestamp(), attempts = 0, last_error = NULL
    WHERE q.document_id = ANY (document_ids) AND q.chunk_config = config.name;
END
$$;

-- Records a failed attempt; after max_attempts the document moves to knowledge.failed and its
-- chunks for the config are removed (they were made from content it no longer has).
CREATE FUNCTION knowledge_internal.queue_failed(document_id bigint, config text, error text, max_attempts int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    tries int;
BEGIN
    UPDATE knowledge.queue AS q
    SET attempts = q.attempts + 1, last_error = error,
        not_before = clock_timestamp() + least(power(2, q.attempts), 300) * interval '1 second'
    WHERE q.document_id = queue_failed.document_id AND q.chunk_config = config
    RETURNING q.attempts INTO tries;
    IF tries >= max_attempts THEN
        INSERT INTO knowledge.failed AS f (document_id, chunk_config, attempts, error)
        VALUES (queue_failed.document_id, config, tries, error)
        ON CONFLICT ON CONSTRAINT failed_pkey DO UPDATE
            SET attempts = excluded.attempts, error = excluded.error, failed_at = excluded.failed_at;
        DELETE FROM knowledge.queue AS q WHERE q.document_id = queue_failed.document_id AND q.chunk_config = config;
        DELETE FROM knowledge.chunks AS c WHERE c.document_id = queue_failed.document_id AND c.chunk_config = config;
        RAISE WARNING 'pg_chunk: document % gave up for chunk config "%" after % attempts: %', document_id, config, tries, error;
    END IF;
END
$$;

-- Queues the failed documents again (config NULL: of every config); returns how many.
CREATE FUNCTION knowledge.retry_failed(config text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    f knowledge.failed;
    n bigint := 0;
BEGIN
    FOR f IN SELECT * FROM knowledge.failed AS x WHERE config IS NULL OR x.chunk_config = config LOOP
        PERFORM knowledge_internal.enqueue(f.document_id, f.chunk_config);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

-- Whether this server starts background workers for this database: pg_chunk preloaded (its
-- server-start settings exist only then), at least one worker per database, and this database
-- in pg_chunk.worker_databases.
CREATE FUNCTION knowledge_internal.queue_served() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('pg_chunk.workers', true)::int > 0, false)
       AND EXISTS (SELECT FROM unnest(string_to_array(current_setting('pg_chunk.worker_databases', true), ',')) AS d
                   WHERE btrim(d) = current_database())
$$;

-- Number of pg_chunk background workers connected to this database now.
CREATE FUNCTION knowledge_internal.queue_workers() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM pg_catalog.pg_stat_activity AS a
    WHERE a.backend_type = 'pg_chunk worker' AND a.datname = current_database()
$$;

-- The queue at a glance. pending: waiting; in_progress: held by a worker now; failed: given up
-- (knowledge.failed); done_last_minute; oldest_pending_age: how long the oldest waiting or
-- in-progress document has been queued; workers: pg_chunk workers connected to this database.
CREATE VIEW knowledge.queue_status AS
WITH queued AS (
    SELECT count(*) FILTER (WHERE q.done_at IS NULL) AS unfinished,
           count(*) FILTER (WHERE q.done_at > now() - interval '1 minute') AS done_last_minute,
           min(q.enqueued_at) FILTER (WHERE q.done_at IS NULL) AS oldest
    FROM knowledge.queue AS q
), held AS (
    SELECT count(*) AS n FROM pg_catalog.pg_locks AS l
    WHERE l.locktype = 'advisory' AND l.classid = knowledge_internal.queue_lock_class()::oid AND l.objsubid = 2
      AND l.database = (SELECT d.oid FROM pg_catalog.pg_database AS d WHERE d.datname = current_database())
)
SELECT greatest(queued.unfinished - held.n, 0) AS pending,
       least(held.n, queued.unfinished) AS in_progress,
       (SELECT count(*) FROM knowledge.failed) AS failed,
       queued.done_last_minute,
       now() - queued.oldest AS oldest_pending_age,
       knowledge_internal.queue_workers() AS workers
FROM queued, held;

GRANT SELECT ON knowledge.queue_status TO PUBLIC;

-- Waits until no document is waiting or in progress and returns true, or returns false after
-- timeout. Call it after the transaction that queued documents has committed (workers cannot see
-- them before), and at READ COMMITTED (each check then sees the workers' commits). Runs as its
-- caller: knowledge.queue_status, which everyone may read, says whether anything is left.
CREATE FUNCTION knowledge.wait_for_queue(timeout interval DEFAULT '1 minute') RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + timeout;
    warned boolean := false;
BEGIN
    IF timeout IS NULL OR timeout < interval '0' THEN
        RAISE EXCEPTION 'timeout must be a non-negative interval, not %', coalesce(timeout::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    LOOP
        IF (SELECT s.pending + s.in_progress = 0 FROM knowledge.queue_status AS s) THEN
            RETURN true;
        END IF;
        IF clock_timestamp() >= deadline THEN
            RETURN false;
        END IF;
        IF NOT warned AND NOT knowledge_internal.queue_served() THEN
            RAISE WARNING 'no pg_chunk worker serves database "%"', current_database()
                USING HINT = 'Add the database to pg_chunk.worker_databases, with pg_chunk in shared_preload_libraries, and restart PostgreSQL.';
            warned := true;
        END IF;
        PERFORM pg_sleep(0.05);
    END LOOP;
END
$$;

