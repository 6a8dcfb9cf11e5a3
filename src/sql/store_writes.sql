-- Writing chunks: a document's chunks for a config made, embedded and written (or queued), the
-- embedding run they belong to, bulk loads, and the language a document is kept by. The
-- triggers that call these are in store_triggers.sql.

-- The configs a document is chunked with.
CREATE FUNCTION knowledge_internal.document_configs(chunk_config text) RETURNS SETOF knowledge.chunk_configs
LANGUAGE sql STABLE AS $$
    SELECT c.* FROM knowledge.chunk_configs AS c
    WHERE CASE WHEN chunk_config IS NULL THEN c.active ELSE c.name = chunk_config END
    ORDER BY c.name
$$;

-- The config called `config_name`; an unknown name is an error (42704).
CREATE FUNCTION knowledge_internal.named_chunk_config(config_name text) RETURNS knowledge.chunk_configs
LANGUAGE plpgsql STABLE AS $$
DECLARE
    c knowledge.chunk_configs;
BEGIN
    SELECT * INTO c FROM knowledge.chunk_configs AS cc WHERE cc.name = config_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown chunk config "%"', config_name USING ERRCODE = 'undefined_object';
    END IF;
    RETURN c;
END
$$;

-- A bulk load (docs/store.md, "Loading a large store"): begin_load drops a config's HNSW and GIN
-- indexes and stops counting its chunks into BM25's statistics
-- (knowledge_internal.text_stats_paused) while its documents are written; end_load counts them
-- all once and builds the indexes once, which is faster than growing both row by row
-- (bench/scale). Meanwhile its search reads every chunk of the config, and its text leg ranks
-- with the statistics of before the load. end_load waits for the transactions that wrote the
-- config's chunks uncounted, and needs READ COMMITTED so that its count sees what they wrote.
-- As their caller: a superuser (knowledge_store owns the tables; EXECUTE is revoked from PUBLIC).
CREATE FUNCTION knowledge.begin_load(config text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    c knowledge.chunk_configs := knowledge_internal.named_chunk_config(config);
BEGIN
    PERFORM knowledge_internal.drop_vector_index(c.name), knowledge_internal.drop_text_index(c.name);
    INSERT INTO knowledge_internal.text_stats_paused (chunk_config) VALUES (c.name) ON CONFLICT DO NOTHING;
    -- Its embedding run made now: made by the load's first write, it would hold the load's
    -- other sessions until that write's transaction ends.
    PERFORM knowledge_internal.current_run(c);
END
$$;

CREATE FUNCTION knowledge.end_load(config text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    c knowledge.chunk_configs := knowledge_internal.named_chunk_config(config);
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'knowledge.end_load needs READ COMMITTED isolation, not %', upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = 'Its count of the config''s chunks must see what the load''s transactions wrote.';
    END IF;
    DELETE FROM knowledge_internal.text_stats_paused AS p WHERE p.chunk_config = c.name;
    IF FOUND THEN
        PERFORM knowledge_internal.recount_text_stats(c.name);
    END IF;
    PERFORM knowledge_internal.create_vector_index(c), knowledge_internal.create_text_index(c.name);
END
$$;
REVOKE EXECUTE ON FUNCTION knowledge.begin_load(text), knowledge.end_load(text) FROM PUBLIC;

-- The embedding run for a config as it is now, created on first use.
CREATE FUNCTION knowledge_internal.current_run(config knowledge.chunk_configs) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    run bigint;
    run_sha text := knowledge_internal.model_file_sha256(config.model);
    run_dim int;
    run_normalized boolean;
BEGIN
    IF config.model = 'lexical' THEN
        run_dim := 256;
        run_normalized := true;
    ELSE
        SELECT m.dimension, m.normalize INTO run_dim, run_normalized FROM knowledge.models AS m WHERE m.name = config.model;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'unknown embedding model "%" in chunk config "%"', config.model, config.name
                USING ERRCODE = 'undefined_object', HINT = 'See knowledge.models.';
        END IF;
    END IF;
    SELECT r.id INTO run FROM knowledge.embedding_runs AS r
    WHERE r.chunk_config = config.name AND r.cfg = config.effective_cfg AND r.model = config.model
      AND r.model_sha256 IS NOT DISTINCT FROM run_sha AND r.dimension = run_dim AND r.normalized = run_normalized;
    IF NOT FOUND THEN
        INSERT INTO knowledge.embedding_runs AS r (chunk_config, cfg, model, model_sha256, dimension, normalized)
        VALUES (config.name, config.effective_cfg, config.model, run_sha, run_dim, run_normalized)
        ON CONFLICT (chunk_config, cfg, model, model_sha256, dimension, normalized)
            DO UPDATE SET created_at = r.created_at
        RETURNING r.id INTO run;
    END IF;
    RETURN run;
END
$$;

-- The chunks of one document exactly as knowledge.chunk(doc, cfg) gives them, each with its
-- embedding by model (NULL: cfg.model, else pg_chunk.default_model): embed_chunks_batch of one.
CREATE FUNCTION knowledge_internal.embed_chunks(doc text, cfg jsonb DEFAULT '{}', model text DEFAULT NULL)
RETURNS TABLE (chunk_index int, content text, char_offset int, char_length int, token_count int,
               metadata jsonb, model text, embedding vector)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT e.chunk_index, e.content, e.char_offset, e.char_length, e.token_count, e.metadata, e.model, e.embedding
    FROM knowledge_internal.embed_chunks_batch(ARRAY[0::bigint], ARRAY[doc], cfg, model) AS e
$$;

-- Brings documents' chunks for one config to what knowledge.chunk gives now, embedded (the
-- chunks of all of them go to the model together, each text looked up in knowledge_internal.stored_vectors
-- first). A chunk row equal to what it would be written as (text, place, metadata, vector, run)
-- is left as it is, id included, and one that only moved gets its new char_offset; the others
-- are deleted and inserted. Records the write in
-- knowledge.embedding_writes and returns the number of chunks the documents have now.
CREATE FUNCTION knowledge_internal.write_chunks(document_ids bigint[], config knowledge.chunk_configs) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz := clock_timestamp();
    run bigint := knowledge_internal.current_run(config);
    fresh knowledge.chunks[];
    embedded_before bigint;
    reused_before bigint;
    embedded_after bigint;
    reused_after bigint;
    written int;
BEGIN
    SELECT coalesce(sum(s.sentences_embedded), 0), coalesce(sum(s.cache_hits + s.stored_hits), 0)
    INTO embedded_before, reused_before FROM knowledge.embedding_stats() AS s;
    -- The rows as they are to be (id left NULL), in the column order of knowledge.chunks. The
    -- language is found by its name in the catalog, so its schema needs no grant to the store's
    -- owner; one that is gone is refused by the cast (42704). Each chunk's language comes from
    -- the documents read once, not from a join with knowledge.documents: a plan made while the
    -- table was small hashed all of it at every write (a bulk load into a fresh store turned
    -- quadratic).
    fresh := ARRAY(
        SELECT ROW(NULL, e.document_id, config.name, e.chunk_index, e.content, e.char_offset, e.char_length,
                   e.token_count, e.metadata, e.model, e.embedding,
                   knowledge.text_vector(coalesce(knowledge_internal.existing_language(l.language), l.language::regconfig), e.content),
                   run)::knowledge.chunks
        FROM (SELECT array_agg(d.id ORDER BY d.id) AS ids, array_agg(d.content ORDER BY d.id) AS contents,
                     array_agg(d.language ORDER BY d.id) AS languages
              FROM knowledge.documents AS d WHERE d.id = ANY (document_ids)) AS docs
             CROSS JOIN LATERAL knowledge_internal.embed_config_chunks(config.name, docs.ids, docs.contents, config.effective_cfg, config.model) AS e
             CROSS JOIN LATERAL (SELECT docs.languages[array_position(docs.ids, e.document_id)] AS language) AS l);
    -- A chunk that only moved (an edit before it changed the text's length) keeps its row.
    UPDATE knowledge.chunks AS c SET char_offset = f.char_offset
    FROM unnest(fresh) AS f
    WHERE c.document_id = ANY (document_ids) AND c.chunk_config = config.name
      AND f.document_id = c.document_id AND f.chunk_index = c.chunk_index AND f.char_offset <> c.char_offset
      AND (f.content, f.char_length, f.token_count, f.metadata, f.model, f.embedding, f.tsv, f.run_id)
          IS NOT DISTINCT FROM (c.content, c.char_length, c.token_count, c.metadata, c.model, c.embedding, c.tsv, c.run_id);
    DELETE FROM knowledge.chunks AS c
    WHERE c.document_id = ANY (document_ids) AND c.chunk_config = config.name
      AND NOT EXISTS (SELECT FROM unnest(fresh) AS f
                      WHERE f.document_id = c.document_id AND f.chunk_index = c.chunk_index
                        AND (f.content, f.char_offset, f.char_length, f.token_count, f.metadata, f.model, f.embedding, f.tsv, f.run_id)
                            IS NOT DISTINCT FROM (c.content, c.char_offset, c.char_length, c.token_count, c.metadata, c.model, c.embedding, c.tsv, c.run_id));
    INSERT INTO knowledge.chunks (document_id, chunk_config, chunk_index, content, char_offset, char_length,
                                  token_count, metadata, model, embedding, tsv, run_id)
    SELECT f.document_id, f.chunk_config, f.chunk_index, f.content, f.char_offset, f.char_length,
           f.token_count, f.metadata, f.model, f.embedding, f.tsv, f.run_id
    FROM unnest(fresh) AS f
    WHERE NOT EXISTS (SELECT FROM knowledge.chunks AS c
                      WHERE c.document_id = f.document_id AND c.chunk_config = f.chunk_config AND c.chunk_index = f.chunk_index)
    -- ids in the chunks' order, whatever join the planner picks (16 picks another than 15)
    ORDER BY f.document_id, f.chunk_index;
    GET DIAGNOSTICS written = ROW_COUNT;
    SELECT coalesce(sum(s.sentences_embedded), 0), coalesce(sum(s.cache_hits + s.stored_hits), 0)
    INTO embedded_after, reused_after FROM knowledge.embedding_stats() AS s;
    PERFORM knowledge_internal.count_chunks_written(config.model, written);
    -- Run as the caller (knowledge.rechunk), a role without this grant writes unrecorded.
    IF has_table_privilege('knowledge.embedding_writes', 'INSERT') THEN
        INSERT INTO knowledge.embedding_writes (run_id, documents, chunks_written, chunks_kept, vectors_embedded,
                                                vectors_reused, elapsed_ms)
        VALUES (run, cardinality(document_ids), written, cardinality(fresh) - written,
                embedded_after - embedded_before, reused_after - reused_before,
                1000 * extract(epoch FROM clock_timestamp() - started)::float8);
    END IF;
    RETURN cardinality(fresh);
END
$$;

-- Holds a document's row until commit, as an UPDATE of it does, before its chunks are written
-- now: an edit and a rechunk (a config change) take turns, and the later one reads the content
-- the earlier one committed. (A worker does not wait here: an edit queues the document again.)
CREATE FUNCTION knowledge_internal.lock_document(document_id bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM FROM knowledge.documents AS d WHERE d.id = lock_document.document_id FOR SHARE;
END
$$;

-- Writes a document's chunks for a config now (sync mode), or queues it (async mode, unless
-- queue_async is false). Returns the number of chunks written.
CREATE FUNCTION knowledge_internal.refresh_chunks(document_id bigint, config knowledge.chunk_configs, queue_async boolean DEFAULT true)
RETURNS int
LANGUAGE plpgsql AS $$
BEGIN
    IF queue_async AND config.mode = 'async' THEN
        PERFORM knowledge_internal.enqueue(document_id, config.name);
        RETURN 0;
    END IF;
    PERFORM knowledge_internal.lock_document(document_id);
    RETURN knowledge_internal.write_chunks(ARRAY[document_id], config);
END
$$;

-- Brings one document's chunks in step with its configs: drops chunks of configs that no
-- longer apply, rewrites (or, for async configs, queues) the others. Returns the number of
-- chunks written.
CREATE FUNCTION knowledge_internal.sync_document(document_id bigint, queue_async boolean DEFAULT true) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    doc knowledge.documents;
    config knowledge.chunk_configs;
    written int := 0;
BEGIN
    SELECT * INTO doc FROM knowledge.documents AS d WHERE d.id = sync_document.document_id;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    INSERT INTO knowledge.languages VALUES (doc.language) ON CONFLICT DO NOTHING;
    DELETE FROM knowledge.chunks AS c
    WHERE c.document_id = doc.id
      AND c.chunk_config NOT IN (SELECT name FROM knowledge_internal.document_configs(doc.chunk_config));
    FOR config IN SELECT * FROM knowledge_internal.document_configs(doc.chunk_config) LOOP
        written := written + knowledge_internal.refresh_chunks(doc.id, config, queue_async);
    END LOOP;
    RETURN written;
END
$$;

-- A text search configuration's name as the store keeps it: schema-qualified unless it is in
-- pg_catalog, so that it names the same configuration whatever the search_path (pg_dump's
-- restore runs with an empty one). 42704 for an OID that names none; 22023 for a configuration
-- in a temporary schema, which goes when its session ends (a document's language must outlive
-- the session that wrote it: every search reads the languages of all documents).
CREATE FUNCTION knowledge_internal.text_search_config_name(config regconfig) RETURNS text
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    config_name text;
    temporary boolean;
BEGIN
    SELECT CASE WHEN n.nspname = 'pg_catalog' THEN quote_ident(c.cfgname)
                ELSE quote_ident(n.nspname) || '.' || quote_ident(c.cfgname) END,
           n.oid = pg_my_temp_schema() OR pg_is_other_temp_schema(n.oid)
    INTO config_name, temporary
    FROM pg_ts_config AS c JOIN pg_namespace AS n ON n.oid = c.cfgnamespace WHERE c.oid = config;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'text search configuration with OID % does not exist', config::oid
            USING ERRCODE = 'undefined_object';
    END IF;
    IF temporary THEN
        RAISE EXCEPTION 'text search configuration "%" is in a temporary schema: a document''s language must outlive the session',
            (SELECT c.cfgname FROM pg_ts_config AS c WHERE c.oid = config)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Create the configuration in a schema that lasts, or use one of pg_catalog''s (english, simple, ...).';
    END IF;
    RETURN config_name;
END
$$;

-- The text search configuration that a language the store keeps (text_search_config_name's
-- form) names now, or NULL where it no longer exists (dropped since a document was written).
-- Read from the catalog, not cast: a cast needs USAGE on the configuration's schema, which
-- neither the store's owner nor a searching role may have.
CREATE FUNCTION knowledge_internal.existing_language(language text) RETURNS regconfig
LANGUAGE sql STABLE STRICT
RETURN (SELECT c.oid::regconfig
        FROM pg_ts_config AS c JOIN pg_namespace AS n ON n.oid = c.cfgnamespace,
             parse_ident(existing_language.language) AS p (parts)
        WHERE n.nspname = CASE WHEN cardinality(p.parts) = 1 THEN 'pg_catalog' ELSE p.parts[1] END
          AND c.cfgname = p.parts[cardinality(p.parts)]);
