-- The cancel benchmark's database (bench/cancel/run.sh): the 5 MB document, the load's
-- document, the store's config, and the function that stops a statement and times the stop.

-- 5 MB of sentences that all differ (the document of tests/tests/cancel.rs): about 106,000
-- sentences, a blank line after every seventh.
CREATE TABLE bench_document AS
SELECT string_agg(format('Note %s says %s and %s meet %s times. ', i, w[i % 10 + 1], w[(i / 10) % 10 + 1], i % 97)
                  || CASE WHEN i % 7 = 6 THEN E'\n\n' ELSE '' END, '' ORDER BY i) AS body
FROM generate_series(0, 106500) AS i,
     (SELECT ARRAY['bees', 'lava', 'bread', 'vacuum', 'glaciers', 'rivers', 'engines', 'orchards', 'comets', 'ledgers']) AS words(w);

-- What the second client chunks in a loop: the first 200 KB of it.
CREATE TABLE bench_load AS SELECT left(body, 200000) AS body FROM bench_document;

-- The store's config, and the document rechunk_all rewrites.
SET client_min_messages = warning;
UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('bench', :'cfg', :'model');
INSERT INTO knowledge.documents (content, metadata) SELECT body, '{"kept": true}' FROM bench_document;

-- Stops the statement of the backend whose application_name is `target` (its text starting
-- with `/* cancel-bench */`) `after` its start, with pg_cancel_backend, or, when `timeout` is
-- given, waits for its statement_timeout of `timeout` to stop it. Returns the milliseconds from
-- the request (the cancel, or the statement's start plus `timeout`) to the statement's end as
-- pg_stat_activity records it (the backend's state changes when it is ready for the next
-- statement: the error raised and the transaction's work undone); NULL when the statement had
-- ended before the request.
CREATE FUNCTION bench_stop(target text, after interval, timeout interval DEFAULT NULL)
RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
    target_pid int;
    started timestamptz;
    requested timestamptz;
    ended timestamptz;
    running boolean;
    waiting_since timestamptz := clock_timestamp();
BEGIN
    LOOP
        IF clock_timestamp() > waiting_since + interval '60 seconds' THEN
            RAISE EXCEPTION 'no statement of % started within a minute', target;
        END IF;
        PERFORM pg_stat_clear_snapshot();
        SELECT pid, query_start, state = 'active' INTO target_pid, started, running FROM pg_stat_activity
        WHERE application_name = target AND query LIKE '/* cancel-bench */%';
        EXIT WHEN target_pid IS NOT NULL;
        PERFORM pg_sleep(0.002);
    END LOOP;
    IF timeout IS NULL AND NOT running THEN
        RETURN NULL;
    ELSIF timeout IS NULL THEN
        PERFORM pg_sleep(extract(epoch FROM started + after - clock_timestamp()));
        PERFORM pg_stat_clear_snapshot();
        IF NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = target_pid AND state = 'active' AND query_start = started) THEN
            RETURN NULL;
        END IF;
        requested := clock_timestamp();
        PERFORM pg_cancel_backend(target_pid);
    ELSE
        requested := started + timeout;
    END IF;
    LOOP
        PERFORM pg_stat_clear_snapshot();
        SELECT CASE WHEN state = 'active' AND query_start = started THEN NULL ELSE state_change END
        INTO ended FROM pg_stat_activity WHERE pid = target_pid;
        EXIT WHEN ended IS NOT NULL OR NOT FOUND;
        PERFORM pg_sleep(0.001);
    END LOOP;
    RETURN CASE WHEN ended >= requested THEN extract(epoch FROM ended - requested) * 1000 END;
END
$$;
