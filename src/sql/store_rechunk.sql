-- Rechunking by hand (knowledge.rechunk, rechunk_all, rechunk_estimate), and the guard on
-- re-embedding a whole config (pg_chunk.reembed_confirm_chunks).

-- pg_chunk.reembed_confirm_chunks as a number; 0 (never ask) while it is not defined, which is
-- only before pg_chunk's library is loaded in the backend: both callers have called one of its
-- functions first (maintains_chunks, check_chunk_config), which loads it and defines the setting.
CREATE FUNCTION knowledge_internal.reembed_confirm_chunks() RETURNS bigint
LANGUAGE sql STABLE
RETURN coalesce(nullif(current_setting('pg_chunk.reembed_confirm_chunks', true), '')::bigint, 0);

-- The guard on store-wide re-embedding: a change of a config's cfg or model rewrites every one
-- of its chunks, so above pg_chunk.reembed_confirm_chunks of them it is refused unless
-- pg_chunk.reembed_confirm names the config (by its old or new name: a rename may come with it).
-- The chunks are counted from BM25's statistics (one row per config and commit, indexed), not
-- by reading knowledge.chunks.
CREATE FUNCTION knowledge_internal.confirm_reembed(config text, new_name text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    most bigint := knowledge_internal.reembed_confirm_chunks();
    chunks bigint;
BEGIN
    IF most = 0 OR current_setting('pg_chunk.reembed_confirm', true) IN (config, new_name) THEN
        RETURN;
    END IF;
    chunks := knowledge_internal.config_chunk_count(config);
    IF chunks > most THEN
        RAISE EXCEPTION 'changing the cfg or model of chunk config "%" re-embeds its % chunks, more than pg_chunk.reembed_confirm_chunks (%)',
            config, chunks, most
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('knowledge.rechunk_estimate(%L) says how long it takes. To go ahead, run SET LOCAL pg_chunk.reembed_confirm = %L first in the same transaction.',
                                config, new_name);
    END IF;
END
$$;

-- Rechunks one document now (config NULL: with each of its configs), async configs included,
-- and returns the chunks written.
CREATE FUNCTION knowledge.rechunk(document_id bigint, config text DEFAULT NULL) RETURNS int
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM knowledge.documents AS d WHERE d.id = rechunk.document_id) THEN
        RAISE EXCEPTION 'no document with id %', document_id USING ERRCODE = 'no_data_found';
    END IF;
    IF config IS NULL THEN
        RETURN knowledge_internal.sync_document(document_id, queue_async => false);
    END IF;
    PERFORM knowledge_internal.lock_document(document_id);
    RETURN knowledge_internal.write_chunks(ARRAY[document_id], knowledge_internal.named_chunk_config(config));
END
$$;

-- Rechunks every document the config applies to (config NULL: every document with all its
-- configs), with a NOTICE every progress_every documents; for an async config it queues them.
-- A document whose language has gone (its text search configuration was dropped) is skipped,
-- with a WARNING. Returns the number of documents rechunked.
CREATE FUNCTION knowledge.rechunk_all(config text DEFAULT NULL, progress_every int DEFAULT 100) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    c knowledge.chunk_configs;
    total bigint;
    skipped bigint;
    done bigint := 0;
    doc_id bigint;
    -- Languages no text search configuration has now: their documents cannot be chunked.
    missing text[] := ARRAY(SELECT l.language FROM knowledge.languages AS l
                            WHERE knowledge_internal.existing_language(l.language) IS NULL);
BEGIN
    IF config IS NOT NULL THEN
        c := knowledge_internal.named_chunk_config(config);
    END IF;
    IF progress_every IS NULL OR progress_every < 1 THEN
        RAISE EXCEPTION 'progress_every must be at least 1, not %', progress_every USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT count(*) FILTER (WHERE d.language <> ALL (missing)), count(*) FILTER (WHERE d.language = ANY (missing))
    INTO total, skipped FROM knowledge.documents AS d
    WHERE config IS NULL OR d.chunk_config = config OR (d.chunk_config IS NULL AND c.active);
    IF skipped > 0 THEN
        RAISE WARNING 'rechunk_all skips % documents whose language (%) no text search configuration has now; their chunks stay as they were',
            skipped, array_to_string(missing, ', ')
            USING HINT = 'Create the configuration again, or UPDATE those documents to another language.';
    END IF;
    FOR doc_id IN SELECT d.id FROM knowledge.documents AS d
                  WHERE (config IS NULL OR d.chunk_config = config OR (d.chunk_config IS NULL AND c.active))
                    AND d.language <> ALL (missing)
                  ORDER BY d.id LOOP
        IF config IS NULL THEN
            PERFORM knowledge_internal.sync_document(doc_id);
        ELSE
            PERFORM knowledge_internal.refresh_chunks(doc_id, c);
        END IF;
        done := done + 1;
        IF done % progress_every = 0 OR done = total THEN
            RAISE NOTICE 'rechunk_all: % of % documents', done, total;
        END IF;
    END LOOP;
    RETURN done;
END
$$;

-- What changing a config's cfg or model (NULL: as it is) would rewrite, and about how long it
-- would take: every document the config applies to (those knowledge.rechunk_all(config)
-- rechunks) and its chunks now, at the rate of its past writes with that model (chunks made per
-- second of knowledge.embedding_writes.elapsed_ms), or of other configs' writes with the model
-- when it has none; NULL seconds, with a note, when no write with the model was measured. Runs
-- as its caller, who reads knowledge.documents, knowledge.chunks' statistics and
-- knowledge.embedding_writes (the store's owner and superusers may).
CREATE FUNCTION knowledge.rechunk_estimate(config text, cfg jsonb DEFAULT NULL, model text DEFAULT NULL)
RETURNS TABLE (documents bigint, chunks bigint, chunks_per_second float8, seconds float8,
               needs_confirmation boolean, note text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    c knowledge.chunk_configs := knowledge_internal.named_chunk_config(config);
    new_cfg jsonb := coalesce(rechunk_estimate.cfg, c.cfg);
    new_model text := coalesce(rechunk_estimate.model, c.model);
    notes text[] := '{}';
    most bigint;
BEGIN
    -- A bad cfg is refused here as the UPDATE would refuse it (22023), and the call loads
    -- pg_chunk's library, which defines pg_chunk.reembed_confirm_chunks.
    PERFORM knowledge_internal.check_chunk_config(new_cfg);
    IF new_model <> 'lexical' AND NOT EXISTS (SELECT FROM knowledge.models AS m WHERE m.name = new_model) THEN
        RAISE EXCEPTION 'unknown embedding model "%"', new_model
            USING ERRCODE = 'undefined_object', HINT = 'See knowledge.models.';
    END IF;
    SELECT count(*) INTO documents FROM knowledge.documents AS d
    WHERE d.chunk_config = c.name OR (d.chunk_config IS NULL AND c.active);
    chunks := knowledge_internal.config_chunk_count(c.name);
    SELECT sum(w.chunks_written + w.chunks_kept) / (sum(w.elapsed_ms) / 1000) INTO chunks_per_second
    FROM knowledge.embedding_writes AS w JOIN knowledge.embedding_runs AS r ON r.id = w.run_id
    WHERE r.chunk_config = c.name AND r.model = new_model AND w.elapsed_ms > 0;
    IF chunks_per_second IS NULL THEN
        SELECT sum(w.chunks_written + w.chunks_kept) / (sum(w.elapsed_ms) / 1000) INTO chunks_per_second
        FROM knowledge.embedding_writes AS w JOIN knowledge.embedding_runs AS r ON r.id = w.run_id
        WHERE r.model = new_model AND w.elapsed_ms > 0;
        notes := notes || CASE WHEN chunks_per_second IS NULL
            THEN format('no measured write with model %s: no rate to estimate the time with', new_model)
            ELSE format('rate of other configs'' writes with model %s (this config has none)', new_model) END;
    END IF;
    seconds := chunks / chunks_per_second;
    most := knowledge_internal.reembed_confirm_chunks();
    needs_confirmation := most > 0 AND chunks > most;
    IF c.cfg = new_cfg AND c.model = new_model THEN
        notes := notes || 'cfg and model as they are: an UPDATE would rechunk nothing; the figures are knowledge.rechunk_all''s'::text;
    END IF;
    IF c.mode = 'async' THEN
        notes := notes || 'async config: the documents are queued, and the workers take the time after commit'::text;
    END IF;
    note := nullif(array_to_string(notes, '; '), '');
    RETURN NEXT;
END
$$;
