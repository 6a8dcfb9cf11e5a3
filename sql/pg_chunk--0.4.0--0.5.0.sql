-- pg_chunk 0.4.0 → 0.5.0 (ALTER EXTENSION pg_chunk UPDATE).
-- Frozen at the release of 0.5.0: written by scripts/upgrade_script.py from sql/upgrade/0.4.0--0.5.0/
-- and sql/*.sql as they were then (git tag v0.5.0); never edited since.

-- ==== sql/upgrade/0.4.0--0.5.0/before.sql

-- 0.4.0 → 0.5.0, before the functions: schema moves, dropped or re-typed functions,
-- the new C functions, tables and views.

-- Stored vectors are kept per chunk config: knowledge_internal.write_chunks calls
-- embed_config_chunks, which takes the config, in place of embed_chunks_stored (which the library
-- keeps for databases not yet updated).
DROP FUNCTION knowledge_internal.embed_chunks_stored(bigint[], text[], jsonb, text);
CREATE  FUNCTION knowledge_internal."embed_config_chunks"(
	"config" TEXT, /* &str */
	"document_ids" bigint[], /* :: std :: option :: Option < Vec < Option < i64 > > > */
	"docs" TEXT[], /* :: std :: option :: Option < Vec < Option < String > > > */
	"cfg" jsonb DEFAULT '{}', /* Option < Cfg > */
	"model" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS TABLE (
	"document_id" bigint,  /* i64 */
	"chunk_index" INT,  /* i32 */
	"content" TEXT,  /* String */
	"char_offset" INT,  /* i32 */
	"char_length" INT,  /* i32 */
	"token_count" INT,  /* i32 */
	"metadata" jsonb,  /* JsonB */
	"model" TEXT,  /* String */
	"embedding" vector  /* Option < Vector > */
)
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'embed_config_chunks_wrapper';

-- What the drop guard's event trigger calls (sql/drop_guard.sql).
CREATE  FUNCTION knowledge_internal."drop_guard_loaded"() RETURNS bool /* bool */
STRICT VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'drop_guard_loaded_wrapper';

-- ==== sql/store.sql: its functions, as CREATE OR REPLACE, and their privileges

CREATE OR REPLACE FUNCTION knowledge_internal.fires_on(fired oid, expected regclass, trigger_function text) RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF fired IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'trigger function knowledge_internal.% fires only on %, not on %', trigger_function, expected, fired::regclass
            USING ERRCODE = 'trigger_protocol_violated';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.vector_index_name(config text) RETURNS name
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ('chunks_hnsw_' || left(regexp_replace(config, '[^a-z0-9]', '_', 'g'), 40) || '_' || left(md5(config), 8))::name;

CREATE OR REPLACE FUNCTION knowledge_internal.uses_halfvec(halfvec boolean, dimension int) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(halfvec, dimension > 2000);

CREATE OR REPLACE FUNCTION knowledge_internal.vector_expression(dimension int, halfvec boolean) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN knowledge_internal.uses_halfvec(halfvec, dimension) THEN format('(embedding::halfvec(%s))', dimension)
            ELSE format('(embedding::vector(%s))', dimension) END;

CREATE OR REPLACE FUNCTION knowledge_internal.create_vector_index(c knowledge.chunk_configs) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    dim int := (SELECT m.dimension FROM knowledge.models AS m WHERE m.name = c.model);
    half boolean := knowledge_internal.uses_halfvec(c.halfvec, dim);
    -- pgvector's HNSW limits.
    most int := CASE WHEN half THEN 4000 ELSE 2000 END;
BEGIN
    IF dim IS NULL THEN
        RETURN;
    END IF;
    IF dim > most THEN
        RAISE NOTICE 'chunk config % embeds % dimensions with model %, more than pgvector''s HNSW indexes take as %; its chunks are searched without an index',
            c.name, dim, c.model, CASE WHEN half THEN 'halfvec' ELSE 'vector' END;
        RETURN;
    END IF;
    -- Only the config's chunks of its current model: when the model changes, chunks of the old
    -- one (another dimension) stay out of the new index until they are rewritten.
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON knowledge.chunks USING hnsw (%s %s) WHERE chunk_config = %L AND model = %L',
        knowledge_internal.vector_index_name(c.name), knowledge_internal.vector_expression(dim, half),
        CASE WHEN half THEN 'halfvec_cosine_ops' ELSE 'vector_cosine_ops' END, c.name, c.model);
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.drop_vector_index(config text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP INDEX IF EXISTS knowledge.%I', knowledge_internal.vector_index_name(config));
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.text_index_name(config text) RETURNS name
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ('chunks_tsv_' || substr(knowledge_internal.vector_index_name(config), length('chunks_hnsw_') + 1))::name;

CREATE OR REPLACE FUNCTION knowledge_internal.create_text_index(config text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON knowledge.chunks USING gin (tsv) WHERE chunk_config = %L',
        knowledge_internal.text_index_name(config), config);
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.drop_text_index(config text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP INDEX IF EXISTS knowledge.%I', knowledge_internal.text_index_name(config));
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.chunk_configs_indexes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.chunk_configs', 'chunk_configs_indexes');
    IF TG_OP <> 'INSERT' THEN
        PERFORM knowledge_internal.drop_vector_index(OLD.name);
        IF TG_OP = 'DELETE' OR OLD.name <> NEW.name THEN
            PERFORM knowledge_internal.drop_text_index(OLD.name);
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM knowledge_internal.create_vector_index(NEW);
        IF TG_OP = 'INSERT' OR OLD.name <> NEW.name THEN
            PERFORM knowledge_internal.create_text_index(NEW.name);
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.models_vector_index() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM knowledge_internal.drop_vector_index(c.name), knowledge_internal.create_vector_index(c)
    FROM knowledge.chunk_configs AS c
    WHERE c.model IN (CASE WHEN TG_OP <> 'INSERT' THEN OLD.name END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.name END);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.document_configs(chunk_config text) RETURNS SETOF knowledge.chunk_configs
LANGUAGE sql STABLE AS $$
    SELECT c.* FROM knowledge.chunk_configs AS c
    WHERE CASE WHEN chunk_config IS NULL THEN c.active ELSE c.name = chunk_config END
    ORDER BY c.name
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.named_chunk_config(config_name text) RETURNS knowledge.chunk_configs
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

CREATE OR REPLACE FUNCTION knowledge_internal.current_run(config knowledge.chunk_configs) RETURNS bigint
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

CREATE OR REPLACE FUNCTION knowledge_internal.embed_chunks(doc text, cfg jsonb DEFAULT '{}', model text DEFAULT NULL)
RETURNS TABLE (chunk_index int, content text, char_offset int, char_length int, token_count int,
               metadata jsonb, model text, embedding vector)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT e.chunk_index, e.content, e.char_offset, e.char_length, e.token_count, e.metadata, e.model, e.embedding
    FROM knowledge_internal.embed_chunks_batch(ARRAY[0::bigint], ARRAY[doc], cfg, model) AS e
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.write_chunks(document_ids bigint[], config knowledge.chunk_configs) RETURNS int
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
    -- owner; one that is gone is refused by the cast (42704).
    fresh := ARRAY(
        SELECT ROW(NULL, e.document_id, config.name, e.chunk_index, e.content, e.char_offset, e.char_length,
                   e.token_count, e.metadata, e.model, e.embedding,
                   knowledge.text_vector(coalesce(knowledge_internal.existing_language(d.language), d.language::regconfig), e.content),
                   run)::knowledge.chunks
        FROM (SELECT array_agg(d.id ORDER BY d.id) AS ids, array_agg(d.content ORDER BY d.id) AS contents
              FROM knowledge.documents AS d WHERE d.id = ANY (document_ids)) AS docs
             CROSS JOIN LATERAL knowledge_internal.embed_config_chunks(config.name, docs.ids, docs.contents, config.effective_cfg, config.model) AS e
             JOIN knowledge.documents AS d ON d.id = e.document_id);
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

CREATE OR REPLACE FUNCTION knowledge_internal.lock_document(document_id bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM FROM knowledge.documents AS d WHERE d.id = lock_document.document_id FOR SHARE;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.refresh_chunks(document_id bigint, config knowledge.chunk_configs, queue_async boolean DEFAULT true)
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

CREATE OR REPLACE FUNCTION knowledge_internal.sync_document(document_id bigint, queue_async boolean DEFAULT true) RETURNS int
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

CREATE OR REPLACE FUNCTION knowledge_internal.text_search_config_name(config regconfig) RETURNS text
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

CREATE OR REPLACE FUNCTION knowledge_internal.existing_language(language text) RETURNS regconfig
LANGUAGE sql STABLE STRICT
RETURN (SELECT c.oid::regconfig
        FROM pg_ts_config AS c JOIN pg_namespace AS n ON n.oid = c.cfgnamespace,
             parse_ident(existing_language.language) AS p (parts)
        WHERE n.nspname = CASE WHEN cardinality(p.parts) = 1 THEN 'pg_catalog' ELSE p.parts[1] END
          AND c.cfgname = p.parts[cardinality(p.parts)]);

CREATE OR REPLACE FUNCTION knowledge_internal.documents_language() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.language := knowledge_internal.text_search_config_name(NEW.language::regconfig);
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.documents_sync() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.documents', 'documents_sync');
    IF knowledge_internal.maintains_chunks() THEN
        PERFORM knowledge_internal.sync_document(NEW.id);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.chunk_configs_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.model <> 'lexical' AND NOT EXISTS (SELECT FROM knowledge.models AS m WHERE m.name = NEW.model) THEN
        RAISE EXCEPTION 'unknown embedding model "%"', NEW.model
            USING ERRCODE = 'undefined_object', HINT = 'See knowledge.models.';
    END IF;
    IF NEW.halfvec AND (SELECT m.dimension FROM knowledge.models AS m WHERE m.name = NEW.model) > 4000 THEN
        RAISE EXCEPTION 'halfvec indexes take at most 4,000 dimensions; model "%" has more', NEW.model
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Leave halfvec NULL to search this config without an index.';
    END IF;
    IF NEW.mode = 'async' AND (TG_OP = 'INSERT' OR OLD.mode <> 'async') AND NOT knowledge_internal.queue_served() THEN
        RAISE WARNING 'no pg_chunk worker serves database "%": documents of chunk config "%" will wait in knowledge.queue',
            current_database(), NEW.name
            USING HINT = 'Add the database to pg_chunk.worker_databases, with pg_chunk in shared_preload_libraries, and restart PostgreSQL.';
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.chunk_configs_at_restore() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF knowledge_internal.maintains_chunks() THEN
        RETURN NEW;
    END IF;
    UPDATE knowledge.chunk_configs AS c
    SET cfg = NEW.cfg, model = NEW.model, active = NEW.active, halfvec = NEW.halfvec, mode = NEW.mode,
        description = NEW.description, created_at = NEW.created_at
    WHERE c.name = NEW.name;
    RETURN CASE WHEN FOUND THEN NULL ELSE NEW END;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.chunk_configs_sync() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    reembeds boolean;
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.chunk_configs', 'chunk_configs_sync');
    IF NOT knowledge_internal.maintains_chunks() THEN
        RETURN NULL;
    END IF;
    reembeds := TG_OP = 'UPDATE' AND (OLD.effective_cfg IS DISTINCT FROM NEW.effective_cfg OR OLD.model <> NEW.model);
    IF reembeds THEN
        PERFORM knowledge_internal.confirm_reembed(OLD.name, NEW.name);
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.active AND NOT NEW.active THEN
        DELETE FROM knowledge.chunks AS c USING knowledge.documents AS d
        WHERE c.chunk_config = NEW.name AND d.id = c.document_id AND d.chunk_config IS NULL;
    END IF;
    IF TG_OP = 'INSERT' OR reembeds OR (NEW.active AND NOT OLD.active) THEN
        PERFORM knowledge.rechunk_all(NEW.name);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.reembed_confirm_chunks() RETURNS bigint
LANGUAGE sql STABLE
RETURN coalesce(nullif(current_setting('pg_chunk.reembed_confirm_chunks', true), '')::bigint, 0);

CREATE OR REPLACE FUNCTION knowledge_internal.confirm_reembed(config text, new_name text) RETURNS void
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

CREATE OR REPLACE FUNCTION knowledge.rechunk(document_id bigint, config text DEFAULT NULL) RETURNS int
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

CREATE OR REPLACE FUNCTION knowledge.rechunk_all(config text DEFAULT NULL, progress_every int DEFAULT 100) RETURNS bigint
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

CREATE OR REPLACE FUNCTION knowledge.rechunk_estimate(config text, cfg jsonb DEFAULT NULL, model text DEFAULT NULL)
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

-- ==== sql/attach.sql: its functions, as CREATE OR REPLACE, and their privileges

CREATE OR REPLACE FUNCTION knowledge_internal.attachable_type(column_type regtype) RETURNS boolean
LANGUAGE sql STABLE
RETURN (WITH RECURSIVE base AS (
            SELECT t.oid, t.typtype, t.typbasetype, t.typnamespace FROM pg_catalog.pg_type AS t WHERE t.oid = attachable_type.column_type
            UNION ALL
            SELECT t.oid, t.typtype, t.typbasetype, t.typnamespace
            FROM pg_catalog.pg_type AS t JOIN base AS b ON t.oid = b.typbasetype WHERE b.typtype = 'd')
        SELECT b.typnamespace = 'pg_catalog'::regnamespace FROM base AS b WHERE b.typtype <> 'd');

CREATE OR REPLACE FUNCTION knowledge_internal.check_attached_columns(source regclass, id_column name, text_column name) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    column_name name;
    column_type regtype;
BEGIN
    FOREACH column_name IN ARRAY ARRAY[id_column, text_column] LOOP
        SELECT a.atttypid INTO column_type FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid = source AND a.attname = column_name AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'table % has no column %', source, quote_ident(column_name) USING ERRCODE = 'undefined_column';
        END IF;
        IF NOT knowledge_internal.attachable_type(column_type) THEN
            RAISE EXCEPTION 'column % of table % is of type %, which is not PostgreSQL''s own', quote_ident(column_name), source, column_type
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'knowledge.attach reads only columns of PostgreSQL''s own types (text, varchar, integers, uuid, ...) or domains over them: attach a view or a generated column of such a type.';
        END IF;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.mirror_document() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    a knowledge.attachments;
    read_row CONSTANT text := 'SELECT ($1).%I::text, ($1).%I::text';
    old_key text;
    new_key text;
    new_text text;
    ignored text;
BEGIN
    SELECT * INTO a FROM knowledge.attachments AS x WHERE x.id::text = TG_ARGV[0];
    IF NOT FOUND OR NOT (a.source = TG_RELID OR a.source IN (SELECT pg_catalog.pg_partition_ancestors(TG_RELID))) THEN
        RAISE EXCEPTION 'trigger function knowledge_internal.mirror_document fires only on an attached table, not on %', TG_RELID::regclass
            USING ERRCODE = 'trigger_protocol_violated';
    END IF;
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM knowledge.documents WHERE attachment_id = a.id;
        RETURN NULL;
    END IF;
    -- Its types may have changed since knowledge.attach checked them (ALTER TABLE).
    PERFORM knowledge_internal.check_attached_columns(TG_RELID, a.id_column, a.text_column);
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        EXECUTE format(read_row, a.id_column, a.text_column) INTO old_key, ignored USING OLD;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        EXECUTE format(read_row, a.id_column, a.text_column) INTO new_key, new_text USING NEW;
    END IF;
    IF old_key IS NOT NULL AND (new_key IS DISTINCT FROM old_key OR new_text IS NULL) THEN
        DELETE FROM knowledge.documents WHERE attachment_id = a.id AND source_key = old_key;
    END IF;
    IF new_key IS NOT NULL AND new_text IS NOT NULL THEN
        PERFORM knowledge_internal.mirror_row(a, new_key, new_text);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.mirror_row(a knowledge.attachments, key text, content text) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO knowledge.documents AS d (source, content, language, chunk_config, attachment_id, source_key)
    VALUES (a.source::text, content, a.language, a.chunk_config, a.id, key)
    ON CONFLICT (attachment_id, source_key) DO UPDATE
    SET content = excluded.content, language = excluded.language, chunk_config = excluded.chunk_config
$$;

CREATE OR REPLACE FUNCTION knowledge.attach(source regclass, id_column name, text_column name,
                                 config text DEFAULT 'default', language regconfig DEFAULT 'english')
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    a knowledge.attachments;
    mirrored bigint := 0;
    key text;
    content text;
    trigger_name name := 'pg_chunk_mirror_' || source::oid::text;
BEGIN
    IF (SELECT relkind FROM pg_catalog.pg_class WHERE oid = source) NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '% is not a table', source USING ERRCODE = 'wrong_object_type';
    END IF;
    PERFORM knowledge_internal.check_attached_columns(source, id_column, text_column);
    PERFORM knowledge_internal.named_chunk_config(config);
    IF EXISTS (SELECT FROM knowledge.attachments AS x WHERE x.source = attach.source) THEN
        RAISE EXCEPTION '% is already attached', source USING ERRCODE = 'duplicate_object',
            HINT = 'knowledge.detach it first.';
    END IF;
    INSERT INTO knowledge.attachments (source, id_column, text_column, chunk_config, language, trigger_name)
    VALUES (source, id_column, text_column, config, knowledge_internal.text_search_config_name(language), trigger_name)
    RETURNING * INTO a;
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION knowledge_internal.mirror_document(%L)',
        trigger_name, source, a.id);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION knowledge_internal.mirror_document(%L)',
        trigger_name || '_truncate', source, a.id);
    FOR key, content IN EXECUTE format('SELECT * FROM (SELECT t.%I::text, t.%I::text FROM %s AS t) AS r (key, content)
                                        WHERE r.key IS NOT NULL AND r.content IS NOT NULL', id_column, text_column, source) LOOP
        PERFORM knowledge_internal.mirror_row(a, key, content);
        mirrored := mirrored + 1;
    END LOOP;
    RETURN mirrored;
END
$$;

CREATE OR REPLACE FUNCTION knowledge.detach(source regclass, keep_documents boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    a knowledge.attachments;
    deleted bigint := 0;
BEGIN
    SELECT * INTO a FROM knowledge.attachments AS x WHERE x.source = detach.source;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% is not attached', source USING ERRCODE = 'undefined_object';
    END IF;
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', a.trigger_name, source);
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', a.trigger_name || '_truncate', source);
    IF keep_documents THEN
        UPDATE knowledge.documents SET attachment_id = NULL WHERE attachment_id = a.id;
    ELSE
        DELETE FROM knowledge.documents WHERE attachment_id = a.id;
        GET DIAGNOSTICS deleted = ROW_COUNT;
    END IF;
    DELETE FROM knowledge.attachments WHERE id = a.id;
    RETURN deleted;
END
$$;

-- ==== sql/text_search.sql: its functions, as CREATE OR REPLACE, and their privileges

CREATE OR REPLACE FUNCTION knowledge.text_vector(language regconfig, content text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.to_tsvector(language, knowledge.cjk_bigrams(content));

CREATE OR REPLACE FUNCTION knowledge_internal.config_chunk_count(config text) RETURNS bigint
LANGUAGE sql STABLE
RETURN (SELECT coalesce(sum(s.chunks), 0)::bigint FROM knowledge_internal.text_stats_visible AS s
        WHERE s.chunk_config = config AND s.lexeme = '');

CREATE OR REPLACE FUNCTION knowledge_internal.text_stats_lock_class() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1885828211 $$;

CREATE OR REPLACE FUNCTION knowledge_internal.text_stats_fold_rows() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 8 $$;

CREATE OR REPLACE FUNCTION knowledge_internal.count_text_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    xid xid8;
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.chunks', 'count_text_stats');
    xid := pg_current_xact_id();
    IF TG_OP = 'UPDATE' AND OLD.chunk_config = NEW.chunk_config AND OLD.tsv = NEW.tsv THEN
        RETURN NEW;
    END IF;
    INSERT INTO knowledge_internal.text_stats_pending (xid, chunk_config, lexeme, chunks, occurrences)
    WITH counted AS (
        SELECT r.chunk_config, r.sign, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS n
        FROM (SELECT OLD.chunk_config, OLD.tsv, -1 WHERE TG_OP <> 'INSERT'
              UNION ALL SELECT NEW.chunk_config, NEW.tsv, 1 WHERE TG_OP <> 'DELETE') AS r (chunk_config, tsv, sign)
        LEFT JOIN LATERAL unnest(r.tsv) AS t ON true
    )
    SELECT xid, chunk_config, lexeme, sign, sign * n FROM counted WHERE lexeme IS NOT NULL
    UNION ALL
    SELECT xid, chunk_config, '', sign, sign * coalesce(sum(n), 0) FROM counted GROUP BY chunk_config, sign;
    INSERT INTO knowledge_internal.text_stats_commits VALUES (xid) ON CONFLICT DO NOTHING;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.add_text_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET enable_seqscan = off AS $$
DECLARE
    config text;
    configs text[];
    lexemes text[];
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge_internal.text_stats_commits', 'add_text_stats');
    WITH mine AS (
        DELETE FROM knowledge_internal.text_stats_pending AS p WHERE p.xid = NEW.xid RETURNING p.chunk_config, p.lexeme, p.chunks, p.occurrences
    ), added AS (
        INSERT INTO knowledge_internal.text_stats (chunk_config, lexeme, chunks, occurrences)
        SELECT m.chunk_config, m.lexeme, sum(m.chunks), sum(m.occurrences) FROM mine AS m
        GROUP BY m.chunk_config, m.lexeme HAVING sum(m.chunks) <> 0 OR sum(m.occurrences) <> 0
        RETURNING chunk_config, lexeme
    )
    SELECT array_agg(a.chunk_config), array_agg(a.lexeme) INTO configs, lexemes FROM added AS a;
    DELETE FROM knowledge_internal.text_stats_commits AS c WHERE c.xid = NEW.xid;
    IF current_setting('transaction_isolation') <> 'read committed' OR configs IS NULL THEN
        RETURN NULL;
    END IF;
    FOR config IN SELECT DISTINCT unnest(configs) LOOP
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(knowledge_internal.text_stats_lock_class(), hashtext(config));
        WITH crowded AS (
            SELECT s.lexeme FROM knowledge_internal.text_stats AS s
            WHERE s.chunk_config = config
              AND s.lexeme = ANY (ARRAY(SELECT t.l FROM unnest(configs, lexemes) AS t (c, l) WHERE t.c = config))
            GROUP BY s.lexeme HAVING count(*) >= knowledge_internal.text_stats_fold_rows()
        ), folded AS (
            DELETE FROM knowledge_internal.text_stats AS s USING crowded
            WHERE s.chunk_config = config AND s.lexeme = crowded.lexeme
            RETURNING s.lexeme, s.chunks, s.occurrences
        )
        INSERT INTO knowledge_internal.text_stats (chunk_config, lexeme, chunks, occurrences)
        SELECT config, f.lexeme, sum(f.chunks), sum(f.occurrences) FROM folded AS f
        GROUP BY f.lexeme HAVING sum(f.chunks) <> 0 OR sum(f.occurrences) <> 0;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.clear_text_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.chunks', 'clear_text_stats');
    DELETE FROM knowledge_internal.text_stats;
    DELETE FROM knowledge_internal.text_stats_pending AS p WHERE p.xid = pg_current_xact_id();
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION knowledge.rebuild_text_stats() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    written bigint;
BEGIN
    LOCK TABLE knowledge_internal.text_stats IN SHARE ROW EXCLUSIVE MODE;
    DELETE FROM knowledge_internal.text_stats;
    -- The count below includes this transaction's own chunks.
    DELETE FROM knowledge_internal.text_stats_pending AS p WHERE p.xid = pg_current_xact_id_if_assigned();
    INSERT INTO knowledge_internal.text_stats (chunk_config, lexeme, chunks, occurrences)
    WITH occurrences AS (
        SELECT c.id, c.chunk_config, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS n
        FROM knowledge.chunks AS c, unnest(c.tsv) AS t
    )
    SELECT chunk_config, lexeme, count(*), sum(n) FROM occurrences GROUP BY chunk_config, lexeme
    UNION ALL
    SELECT c.chunk_config, '', count(*), coalesce(sum(o.n), 0)
    FROM knowledge.chunks AS c
    LEFT JOIN (SELECT id, sum(n) AS n FROM occurrences GROUP BY id) AS o ON o.id = c.id
    GROUP BY c.chunk_config;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
END
$$;

REVOKE EXECUTE ON FUNCTION knowledge.rebuild_text_stats() FROM PUBLIC;

CREATE OR REPLACE FUNCTION knowledge_internal.text_candidate_limit() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 2000::bigint $$;

CREATE OR REPLACE FUNCTION knowledge_internal.pending_text_stats(config text, words text[])
RETURNS TABLE (lexeme text, chunks bigint, occurrences bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF pg_current_xact_id_if_assigned() IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT p.lexeme, p.chunks, p.occurrences FROM knowledge_internal.text_stats_pending AS p
        WHERE p.xid = pg_current_xact_id_if_assigned() AND p.chunk_config = config AND p.lexeme = ANY (words);
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.text_terms(lexeme text[], df float8[],
    OUT lexemes text[], OUT dfs float8[], OUT candidates tsquery)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH summed AS (
        SELECT t.lexeme, sum(t.df) AS df FROM unnest(text_terms.lexeme, text_terms.df) AS t (lexeme, df) GROUP BY t.lexeme
    ), ordered AS (
        SELECT s.lexeme, s.df, sum(s.df) OVER (ORDER BY s.df, s.lexeme) - s.df AS before FROM summed AS s
    )
    SELECT array_agg(o.lexeme ORDER BY o.df, o.lexeme), array_agg(o.df ORDER BY o.df, o.lexeme),
           -- Quoted as tsquery input wants: backslashes and quotes doubled.
           string_agg('''' || replace(replace(o.lexeme, '\', '\\'), '''', '''''') || '''', ' | ' ORDER BY o.df, o.lexeme)
               FILTER (WHERE o.before < knowledge_internal.text_candidate_limit())::tsquery
    FROM ordered AS o
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.text_query(config text, query text, language regconfig,
    OUT lexemes text[], OUT df float8[], OUT candidates tsquery, OUT chunks float8, OUT average_length float8)
LANGUAGE plpgsql STABLE SET enable_seqscan = off AS $$
DECLARE
    -- '' asks for the config's totals.
    words text[];
    languages regconfig[] := ARRAY[text_query.language];
    missing text[];
BEGIN
    IF text_query.language IS NULL THEN
        SELECT array_agg(l.config) FILTER (WHERE l.config IS NOT NULL), array_agg(l.language) FILTER (WHERE l.config IS NULL)
        INTO languages, missing
        FROM (SELECT k.language, knowledge_internal.existing_language(k.language) AS config FROM knowledge.languages AS k) AS l;
        IF missing IS NOT NULL THEN
            RAISE WARNING 'search skips the documents'' language %: no text search configuration has that name now',
                array_to_string(missing, ', ')
                USING HINT = 'Create the configuration again, or UPDATE those documents to another language.';
        END IF;
    END IF;
    SELECT array_agg(DISTINCT t.lexeme) || '{""}' INTO words
    FROM unnest(languages) AS l (language), unnest(knowledge.text_vector(l.language, query)) AS t;
    WITH counted AS (
        SELECT s.lexeme, s.chunks, s.occurrences FROM knowledge_internal.text_stats_visible AS s
        WHERE s.chunk_config = config AND s.lexeme = ANY (words)
        UNION ALL
        SELECT p.lexeme, p.chunks, p.occurrences FROM knowledge_internal.pending_text_stats(config, words) AS p
    ), found AS (
        SELECT c.lexeme, sum(c.chunks)::float8 AS df, sum(c.occurrences)::float8 AS occurrences
        FROM counted AS c GROUP BY c.lexeme HAVING sum(c.chunks) > 0
    )
    SELECT (SELECT f.df FROM found AS f WHERE f.lexeme = ''),
           (SELECT f.occurrences / f.df FROM found AS f WHERE f.lexeme = ''),
           t.lexemes, t.dfs, t.candidates
    INTO chunks, average_length, lexemes, df, candidates
    FROM (SELECT array_agg(f.lexeme) AS lexeme, array_agg(f.df) AS df FROM found AS f WHERE f.lexeme <> '') AS given,
         knowledge_internal.text_terms(given.lexeme, given.df) AS t;
END
$$;

-- ==== sql/search.sql: its functions, as CREATE OR REPLACE, and their privileges

CREATE OR REPLACE FUNCTION knowledge_internal.search_option_names() RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ARRAY(SELECT a.attname::text FROM pg_attribute AS a
             WHERE a.attrelid = 'knowledge_internal.search_settings'::regclass AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY a.attnum);

CREATE OR REPLACE FUNCTION knowledge_internal.number_option(options jsonb, key text, low float8, high float8, fallback float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    value float8;
BEGIN
    IF NOT options ? key THEN
        RETURN fallback;
    END IF;
    BEGIN
        value := CASE WHEN jsonb_typeof(options -> key) = 'number' THEN (options ->> key)::float8 END;
    EXCEPTION WHEN numeric_value_out_of_range THEN
        -- JSON's numbers go past float8's (1e400, 1e-400).
        value := NULL;
    END;
    IF value IS NULL OR value < low OR value > high THEN
        RAISE EXCEPTION 'search option % must be a number from % to %, not %', key, low, high, options -> key
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN value;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.search_options(options jsonb) RETURNS knowledge_internal.search_settings
LANGUAGE plpgsql STABLE AS $$
DECLARE
    names text[] := knowledge_internal.search_option_names();
    s knowledge_internal.search_settings;
    unknown text;
BEGIN
    IF jsonb_typeof(options) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'search options must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT key INTO unknown FROM jsonb_object_keys(options - names) AS key LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'unknown search option "%"', unknown USING ERRCODE = 'invalid_parameter_value',
            HINT = format('Options are %s and %s.', array_to_string(names[:cardinality(names) - 1], ', '), names[cardinality(names)]);
    END IF;
    s.mode := coalesce(options ->> 'mode', 'hybrid');
    IF s.mode NOT IN ('hybrid', 'vector', 'text') THEN
        RAISE EXCEPTION 'search option mode must be "hybrid", "vector" or "text", not "%"', s.mode
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    s.fusion := coalesce(options ->> 'fusion', 'scores');
    IF jsonb_typeof(options -> 'fusion') NOT IN ('string', 'null') OR s.fusion NOT IN ('scores', 'rrf') THEN
        RAISE EXCEPTION 'search option fusion must be "scores" or "rrf", not %', options -> 'fusion'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- One list (vector or text mode) is ordered by reciprocal rank.
    IF s.mode <> 'hybrid' THEN
        s.fusion := 'rrf';
    END IF;
    s.neighbours := knowledge_internal.number_option(options, 'neighbours', 0, 1, CASE WHEN s.fusion = 'scores' THEN 0.3 ELSE 0 END);
    IF s.neighbours > 0 AND s.fusion <> 'scores' THEN
        RAISE EXCEPTION 'search option neighbours (%) needs mode "hybrid" with fusion "scores"', s.neighbours
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    BEGIN
        s.min_score := (options ->> 'min_score')::float8;
        s.document_ids := CASE WHEN options ? 'document_ids'
                               THEN ARRAY(SELECT jsonb_array_elements_text(options -> 'document_ids')::bigint) END;
    EXCEPTION WHEN invalid_text_representation OR numeric_value_out_of_range OR invalid_parameter_value THEN
        RAISE EXCEPTION 'search options min_score must be a number and document_ids an array of ids: %', options
            USING ERRCODE = 'invalid_parameter_value';
    END;
    IF s.min_score::text IN ('NaN', 'Infinity', '-Infinity') THEN
        RAISE EXCEPTION 'search option min_score must be a finite number, not %', s.min_score
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- BM25's constants: k1 from 0 (term frequency ignored) to 10, b from 0 (length ignored) to 1.
    s.k1 := knowledge_internal.number_option(options, 'k1', 0, 10, 1.2);
    s.b := knowledge_internal.number_option(options, 'b', 0, 1, 0.75);
    s.metadata := options -> 'metadata';
    IF s.metadata IS NOT NULL AND jsonb_typeof(s.metadata) <> 'object' THEN
        RAISE EXCEPTION 'search option metadata must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    s.config := knowledge_internal.named_chunk_config(coalesce(options ->> 'config', 'default'));
    IF s.mode = 'text' AND s.min_score IS NOT NULL THEN
        RAISE EXCEPTION 'search option min_score is a cosine similarity and needs mode "hybrid" or "vector"'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF options ? 'language' THEN
        s.language := (options ->> 'language')::regconfig;
        -- regconfig also reads a number as an oid, of a configuration that may not exist.
        IF NOT EXISTS (SELECT FROM pg_ts_config AS t WHERE t.oid = s.language) THEN
            RAISE EXCEPTION 'text search configuration "%" does not exist', options ->> 'language'
                USING ERRCODE = 'undefined_object';
        END IF;
    END IF;
    RETURN s;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.search_candidates_sql(settings knowledge_internal.search_settings) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    config knowledge.chunk_configs := settings.config;
    dim int := coalesce((SELECT m.dimension FROM knowledge.models AS m WHERE m.name = config.model), 256);
BEGIN
    RETURN format($q$
        vector_hits AS (
            SELECT c.id, row_number() OVER (ORDER BY c.embedding_cast <=> ($2).vector) AS rank
            FROM (SELECT c.id, %1$s AS embedding_cast
                  FROM knowledge.chunks AS c %4$s
                  WHERE ($1).mode <> 'text' AND ($2).vector IS NOT NULL AND c.model = %2$L AND c.chunk_config = %3$L
                    AND (($1).document_ids IS NULL OR c.document_id = ANY (($1).document_ids))
                    AND (($1).metadata IS NULL OR d.metadata @> ($1).metadata)
                  ORDER BY %1$s <=> ($2).vector LIMIT ($2).candidates) AS c
        ), text_hits AS (
            SELECT t.id, t.score, row_number() OVER (ORDER BY t.score DESC, t.id) AS rank
            FROM (SELECT c.id, knowledge_internal.bm25(c.tsv, ($2).lexemes, ($2).df, ($2).chunks, ($1).k1, ($1).b,
                                                       ($2).average_length) AS score
                  FROM (SELECT c.id, c.tsv FROM knowledge.chunks AS c %4$s
                        WHERE ($1).mode <> 'vector' AND c.chunk_config = %3$L AND c.tsv @@ ($2).text_candidates
                          AND (($1).document_ids IS NULL OR c.document_id = ANY (($1).document_ids))
                          AND (($1).metadata IS NULL OR d.metadata @> ($1).metadata)
                        LIMIT knowledge_internal.text_candidate_limit()) AS c
                  ORDER BY score DESC, c.id LIMIT ($2).candidates) AS t
        ), fused AS (
            SELECT coalesce(v.id, t.id) AS id, v.rank AS vector_rank, t.rank AS text_rank, t.score AS bm25,
                   coalesce(1.0 / (60 + v.rank), 0) + coalesce(1.0 / (60 + t.rank), 0) AS rrf
            FROM vector_hits AS v FULL JOIN text_hits AS t ON t.id = v.id
        ), measured AS (
            -- NULL, not NaN, for a chunk whose embedding is all zeros. Score fusion needs every
            -- candidate's BM25, the vector leg's too (0 without a lexeme of the query).
            SELECT f.id, f.vector_rank, f.text_rank, f.rrf,
                   CASE WHEN c.model = %2$L THEN nullif(1 - (%1$s <=> ($2).vector), 'NaN') END AS similarity,
                   CASE WHEN ($1).fusion = 'scores'
                        THEN coalesce(f.bm25, knowledge_internal.bm25(c.tsv, ($2).lexemes, ($2).df, ($2).chunks, ($1).k1,
                                                                      ($1).b, ($2).average_length), 0) END AS bm25,
                   c.document_id, c.chunk_index, c.content, f.bm25 AS text_score
            FROM fused AS f JOIN knowledge.chunks AS c ON c.id = f.id
        )
        $q$, knowledge_internal.vector_expression(dim, config.halfvec), config.model, config.name,
        -- The chunks' documents are joined only to filter: by metadata, or by their row-level
        -- security (a chunk's document always exists: the foreign key).
        CASE WHEN settings.metadata IS NOT NULL OR (SELECT c.relrowsecurity FROM pg_class AS c WHERE c.oid = 'knowledge.documents'::regclass)
             THEN 'JOIN knowledge.documents AS d ON d.id = c.document_id' ELSE 'CROSS JOIN (SELECT NULL::jsonb AS metadata) AS d' END);
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.search_ranking_sql() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN $q$
        standardised AS (
            -- z-scores over the candidates; 0 where a leg's scores are all equal (or it has none).
            SELECT m.*,
                   (m.similarity - avg(m.similarity) OVER ()) / nullif(stddev_pop(m.similarity) OVER (), 0) AS z_similarity,
                   coalesce((m.bm25 - avg(m.bm25) OVER ()) / nullif(stddev_pop(m.bm25) OVER (), 0), 0) AS z_bm25
            FROM measured AS m
        ), scored AS (
            -- A candidate without a similarity counts as the least similar.
            SELECT s.id, s.vector_rank, s.text_rank, s.similarity, s.document_id, s.chunk_index, s.content,
                   CASE WHEN ($1).fusion = 'scores' THEN (coalesce(s.z_similarity, min(s.z_similarity) OVER (), 0) + s.z_bm25) / 2
                        ELSE s.rrf::float8 END AS score
            FROM standardised AS s
        ), neighboured AS (
            -- Plus the neighbours' share of the better neighbour's score where it is above 0
            -- (greatest skips the NULL of a neighbour that is not a candidate).
            SELECT s.id, s.vector_rank, s.text_rank, s.similarity, s.document_id, s.chunk_index, s.content,
                   s.score + ($1).neighbours * greatest(0,
                       CASE WHEN lag(s.chunk_index) OVER w = s.chunk_index - 1 THEN lag(s.score) OVER w END,
                       CASE WHEN lead(s.chunk_index) OVER w = s.chunk_index + 1 THEN lead(s.score) OVER w END) AS score
            FROM scored AS s
            WINDOW w AS (PARTITION BY s.document_id ORDER BY s.chunk_index)
        ), passing AS (
            SELECT s.*, false AS below FROM neighboured AS s
            WHERE ($1).min_score IS NULL OR s.similarity >= ($1).min_score
        )
        SELECT id, document_id, chunk_index, content, score::float8, vector_rank::int, text_rank::int, similarity::float8, below
        FROM (SELECT * FROM passing
              UNION ALL
              SELECT s.*, true FROM neighboured AS s WHERE NOT EXISTS (SELECT FROM passing)) AS results
        ORDER BY score DESC, id LIMIT ($2).k
$q$;

CREATE OR REPLACE FUNCTION knowledge_internal.text_statistics(config text, query text, language regconfig)
RETURNS knowledge_internal.search_query
LANGUAGE sql STABLE
RETURN (SELECT row(NULL, NULL, NULL, t.*)::knowledge_internal.search_query
        FROM knowledge_internal.text_query(config, query, language) AS t);

CREATE OR REPLACE FUNCTION knowledge_internal.search_query_of(query text, k int, settings knowledge_internal.search_settings,
                                                   with_text_statistics boolean DEFAULT true)
RETURNS knowledge_internal.search_query
LANGUAGE plpgsql STABLE AS $$
DECLARE
    config knowledge.chunk_configs := settings.config;
    q knowledge_internal.search_query;
BEGIN
    IF k IS NULL OR k < 1 OR k > 1000 THEN
        RAISE EXCEPTION 'k must be between 1 and 1000, not %', k USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF query IS NULL OR btrim(query) = '' THEN
        RETURN NULL;
    END IF;
    -- A query is a question, not a document.
    IF length(query) > 10000 THEN
        RAISE EXCEPTION 'search query is % characters long; the limit is 10,000', length(query)
            USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF settings.mode <> 'vector' AND with_text_statistics THEN
        q := knowledge_internal.text_statistics(config.name, query, settings.language);
    END IF;
    q.k := k;
    q.candidates := 4 * k;
    IF settings.mode <> 'text' THEN
        q.vector := knowledge.embed(query, config.model, 'query');
        -- A query with nothing the model knows (only punctuation, say) embeds to zeros, which
        -- are no direction: no vector candidates, and no similarity.
        IF vector_norm(q.vector) = 0 THEN
            q.vector := NULL;
        END IF;
    END IF;
    RETURN q;
END
$$;

CREATE OR REPLACE FUNCTION knowledge.search(query text, k int DEFAULT 5, options jsonb DEFAULT '{}')
RETURNS TABLE (chunk_id bigint, document_id bigint, chunk_index int, content text, score float8,
               vector_rank int, text_rank int, similarity float8, below_min_score boolean)
LANGUAGE plpgsql STABLE
SET hnsw.ef_search = 100
-- Filters (config, ids, metadata) drop some of the index's first candidates: keep scanning.
SET hnsw.iterative_scan = 'strict_order'
AS $$
DECLARE
    settings knowledge_internal.search_settings := knowledge_internal.search_options(options);
    q knowledge_internal.search_query := knowledge_internal.search_query_of(query, k, settings);
    statement text;
BEGIN
    IF q IS NULL THEN
        RETURN;
    END IF;
    -- pgvector takes ef_search up to 1,000; the iterative scan goes on for more candidates.
    PERFORM set_config('hnsw.ef_search', least(1000, greatest(100, q.candidates))::text, true);
    statement := 'WITH ' || knowledge_internal.search_candidates_sql(settings) || ', ' || knowledge_internal.search_ranking_sql();
    -- pgvector's HNSW scan (0.8.6 included) can fail with XX000 "cannot load deleted element"
    -- when a VACUUM of the chunks marks elements deleted while an iterative scan resumes from
    -- candidates it read before. The statement has returned no row by then (its last step sorts
    -- them all) and writes nothing, so it runs again: docs/errors.md.
    FOR attempt IN 1..3 LOOP
        BEGIN
            RETURN QUERY EXECUTE statement USING settings, q;
            RETURN;
        EXCEPTION WHEN internal_error THEN
            IF SQLERRM <> 'cannot load deleted element' OR attempt = 3 THEN
                RAISE;
            END IF;
        END;
    END LOOP;
END
$$;

-- ==== sql/queue.sql: its functions, as CREATE OR REPLACE, and their privileges

CREATE OR REPLACE FUNCTION knowledge_internal.enqueue(document_id bigint, config text) RETURNS void
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

CREATE OR REPLACE FUNCTION knowledge_internal.queue_lock_class() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1885823848 $$;

CREATE OR REPLACE FUNCTION knowledge_internal.queue_replicated() RETURNS boolean
LANGUAGE sql STABLE
RETURN EXISTS (SELECT FROM pg_catalog.pg_subscription_rel AS r WHERE r.srrelid = 'knowledge.queue'::regclass);

CREATE OR REPLACE FUNCTION knowledge.process_queue(batch_size int DEFAULT 16, max_attempts int DEFAULT 5) RETURNS int
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

CREATE OR REPLACE FUNCTION knowledge_internal.write_queued(document_ids bigint[], config knowledge.chunk_configs) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM knowledge_internal.write_chunks(ARRAY(
        SELECT d.id FROM knowledge.documents AS d
        WHERE d.id = ANY (document_ids) AND (d.chunk_config = config.name OR (d.chunk_config IS NULL AND config.active))), config);
    UPDATE knowledge.queue AS q SET done_at = clock_timestamp(), attempts = 0, last_error = NULL
    WHERE q.document_id = ANY (document_ids) AND q.chunk_config = config.name;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.queue_failed(document_id bigint, config text, error text, max_attempts int) RETURNS void
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

CREATE OR REPLACE FUNCTION knowledge.retry_failed(config text DEFAULT NULL) RETURNS bigint
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

CREATE OR REPLACE FUNCTION knowledge_internal.queue_served() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('pg_chunk.workers', true)::int > 0, false)
       AND EXISTS (SELECT FROM unnest(string_to_array(current_setting('pg_chunk.worker_databases', true), ',')) AS d
                   WHERE btrim(d) = current_database())
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.queue_workers() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM pg_catalog.pg_stat_activity AS a
    WHERE a.backend_type = 'pg_chunk worker' AND a.datname = current_database()
$$;

CREATE OR REPLACE FUNCTION knowledge.wait_for_queue(timeout interval DEFAULT '1 minute') RETURNS boolean
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

-- ==== sql/replication.sql: its functions, as CREATE OR REPLACE, and their privileges

CREATE OR REPLACE FUNCTION knowledge.chunk_replicated_documents(enable boolean DEFAULT true) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    t record;
    n int := 0;
BEGIN
    FOR t IN
        SELECT tg.tgrelid::regclass AS rel, tg.tgname FROM pg_catalog.pg_trigger AS tg
        WHERE (tg.tgrelid::regclass, tg.tgname) IN (
                  ('knowledge.documents'::regclass, 'documents_sync_insert'),
                  ('knowledge.documents'::regclass, 'documents_sync_update'),
                  ('knowledge.chunks'::regclass, 'chunks_text_stats'),
                  ('knowledge.chunks'::regclass, 'chunks_text_stats_truncate'),
                  ('knowledge_internal.text_stats_commits'::regclass, 'text_stats_commits_add'))
           -- tgtype bit 3: a DELETE trigger.
           OR (tg.tgrelid = 'knowledge.documents'::regclass AND tg.tgisinternal AND tg.tgtype & 8 <> 0
               AND tg.tgconstraint IN (SELECT c.oid FROM pg_catalog.pg_constraint AS c
                                       WHERE c.confrelid = 'knowledge.documents'::regclass AND c.contype = 'f'
                                         AND c.confdeltype = 'c'))
        ORDER BY 1, 2
    LOOP
        EXECUTE format('ALTER TABLE %s %s TRIGGER %I', t.rel, CASE WHEN enable THEN 'ENABLE ALWAYS' ELSE 'ENABLE' END, t.tgname);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

REVOKE EXECUTE ON FUNCTION knowledge.chunk_replicated_documents(boolean) FROM PUBLIC;

-- ==== sql/citus.sql: its functions, as CREATE OR REPLACE, and their privileges

CREATE OR REPLACE FUNCTION knowledge_internal.search_candidates(settings knowledge_internal.search_settings,
                                                     q knowledge_internal.search_query)
RETURNS knowledge_internal.search_candidate[]
LANGUAGE plpgsql STABLE
SET hnsw.ef_search = 100
SET hnsw.iterative_scan = 'strict_order'
AS $$
DECLARE
    found knowledge_internal.search_candidate[];
BEGIN
    PERFORM set_config('hnsw.ef_search', least(1000, greatest(100, q.candidates))::text, true);
    -- As knowledge.search runs its statement again on pgvector's "cannot load deleted element".
    FOR attempt IN 1..3 LOOP
        BEGIN
            EXECUTE 'WITH ' || knowledge_internal.search_candidates_sql(settings)
                || ' SELECT coalesce(array_agg(row(id, document_id, chunk_index, content, vector_rank, text_rank,'
                || ' text_score, similarity, bm25)::knowledge_internal.search_candidate), ''{}'') FROM measured'
                INTO found USING settings, q;
            RETURN found;
        EXCEPTION WHEN internal_error THEN
            IF SQLERRM <> 'cannot load deleted element' OR attempt = 3 THEN
                RAISE;
            END IF;
        END;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.require_citus() RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RAISE EXCEPTION 'Citus is not installed in this database' USING ERRCODE = 'feature_not_supported';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.on_workers(command text) RETURNS SETOF text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    r record;
BEGIN
    PERFORM knowledge_internal.require_citus();
    FOR r IN SELECT * FROM pg_catalog.run_command_on_workers(command) LOOP
        IF NOT r.success THEN
            RAISE EXCEPTION 'on the Citus worker %:%: %', r.nodename, r.nodeport, r.result;
        END IF;
        RETURN NEXT nullif(r.result, '');
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.citus_workers() RETURNS regclass
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    fanout CONSTANT text := 'knowledge_internal.citus_workers';
    reaches_all CONSTANT text := $q$
        WITH reached AS (
            SELECT p.groupid FROM pg_catalog.pg_dist_shard AS s JOIN pg_catalog.pg_dist_placement AS p USING (shardid)
            WHERE s.logicalrelid = to_regclass($1)
        )
        SELECT count(*) > 0 AND count(*) = count(DISTINCT r.groupid)
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition AS d
                               JOIN pg_catalog.pg_dist_shard AS s USING (logicalrelid)
                               JOIN pg_catalog.pg_dist_placement AS p USING (shardid)
                               WHERE d.partmethod = 'h' AND d.logicalrelid IS DISTINCT FROM to_regclass($1)
                                 AND p.groupid NOT IN (SELECT groupid FROM reached))
        FROM reached AS r $q$;
    ok boolean;
    nodes int;
BEGIN
    PERFORM knowledge_internal.require_citus();
    EXECUTE reaches_all INTO ok USING fanout;
    IF ok THEN
        RETURN fanout::regclass;
    END IF;
    -- One session remakes it; the others wait for it and find it made.
    PERFORM pg_advisory_xact_lock(hashtext(fanout));
    EXECUTE reaches_all INTO ok USING fanout;
    IF ok THEN
        RETURN fanout::regclass;
    END IF;
    SELECT count(*) INTO nodes FROM pg_catalog.pg_dist_node AS n
    WHERE n.isactive AND n.noderole = 'primary' AND n.shouldhaveshards;
    IF nodes = 0 THEN
        RAISE EXCEPTION 'no Citus node takes shards' USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Add a worker with citus_add_node.';
    END IF;
    IF to_regclass(fanout) IS NOT NULL THEN
        DROP TABLE knowledge_internal.citus_workers;
    END IF;
    CREATE TABLE knowledge_internal.citus_workers (shard int PRIMARY KEY);
    -- Citus places the shards of a new table on the nodes that take shards, in turn.
    PERFORM pg_catalog.create_distributed_table(fanout, 'shard', shard_count => nodes, colocate_with => 'none');
    INSERT INTO knowledge_internal.citus_workers
    SELECT min(i) FROM generate_series(1, 100 * nodes) AS i
    GROUP BY pg_catalog.get_shard_id_for_distribution_column(fanout, i);
    GRANT SELECT ON knowledge_internal.citus_workers TO PUBLIC;
    EXECUTE reaches_all INTO ok USING fanout;
    IF NOT ok THEN
        RAISE EXCEPTION 'a Citus node holds shards but takes no new ones, so a search cannot reach its store'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set shouldhaveshards on every node that holds shards (citus_set_node_property).';
    END IF;
    RETURN fanout::regclass;
END
$$;

CREATE OR REPLACE FUNCTION knowledge_internal.citus_id_range() RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    range_start bigint := (SELECT g.groupid FROM pg_catalog.pg_dist_local_group AS g)::bigint << 48;
    sequence regclass;
BEGIN
    FOREACH sequence IN ARRAY ARRAY['knowledge.documents_id_seq', 'knowledge.chunks_id_seq']::regclass[] LOOP
        IF nextval(sequence) < range_start THEN
            PERFORM setval(sequence, range_start);
        END IF;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION knowledge.attach_distributed(source regclass, id_column name, text_column name,
                                             config text DEFAULT 'default', language regconfig DEFAULT 'english')
RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    mirrored bigint := 0;
    r record;
BEGIN
    PERFORM knowledge_internal.require_citus();
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition AS p WHERE p.logicalrelid = source AND p.partmethod = 'h') THEN
        RAISE EXCEPTION '% is not a hash-distributed Citus table', source USING ERRCODE = 'wrong_object_type',
            HINT = 'create_distributed_table it first, or knowledge.attach a local table.';
    END IF;
    PERFORM knowledge_internal.named_chunk_config(config);
    PERFORM knowledge_internal.on_workers('SELECT knowledge_internal.citus_id_range()');
    PERFORM knowledge_internal.citus_workers();
    -- run_command_on_shards formats the command with each shard's name (PostgreSQL's format()):
    -- %L there quotes the name as a literal, and every % of ours is doubled to stay one.
    FOR r IN SELECT * FROM pg_catalog.run_command_on_shards(source,
                 'SELECT knowledge.attach(%L, '
                 || replace(format('%L, %L, %L, %L', id_column, text_column, config, language), '%', '%%') || ')') LOOP
        IF NOT r.success THEN
            RAISE EXCEPTION 'attaching shard % of %: %', r.shardid, source, r.result;
        END IF;
        mirrored := mirrored + r.result::bigint;
    END LOOP;
    RETURN mirrored;
END
$$;

CREATE OR REPLACE FUNCTION knowledge.distributed_search(query text, k int DEFAULT 5, options jsonb DEFAULT '{}')
RETURNS TABLE (chunk_id bigint, document_id bigint, chunk_index int, content text, score float8,
               vector_rank int, text_rank int, similarity float8, below_min_score boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    settings knowledge_internal.search_settings := knowledge_internal.search_options(options);
    q knowledge_internal.search_query := knowledge_internal.search_query_of(query, k, settings, false);
    parts knowledge_internal.search_query[];
    part knowledge_internal.search_candidate[];
    found knowledge_internal.search_candidate[] := '{}';
BEGIN
    IF q IS NULL THEN
        RETURN;
    END IF;
    PERFORM knowledge_internal.citus_workers();
    IF settings.mode <> 'vector' THEN
        SELECT array_agg(w.part) INTO parts
        FROM (SELECT knowledge_internal.text_statistics((settings.config).name, query, settings.language) AS part
              FROM knowledge_internal.citus_workers) AS w;
        -- Every worker's lexemes, their counts summed, ranked as one store's are.
        SELECT t.lexemes, t.dfs, t.candidates INTO q.lexemes, q.df, q.text_candidates
        FROM (SELECT array_agg(l.lexeme) AS lexeme, array_agg(l.df) AS df
              FROM unnest(parts) AS p, unnest(p.lexemes, p.df) AS l (lexeme, df)) AS given,
             knowledge_internal.text_terms(given.lexeme, given.df) AS t;
        SELECT sum(p.chunks), sum(p.chunks * p.average_length) / nullif(sum(p.chunks), 0)
        INTO q.chunks, q.average_length
        FROM unnest(parts) AS p;
    END IF;
    -- Each worker's array as the query returns it: a query that unnests them on the workers
    -- takes Citus three times as long to plan.
    FOR part IN SELECT knowledge_internal.search_candidates(settings, q) FROM knowledge_internal.citus_workers LOOP
        found := found || part;
    END LOOP;
    -- $3: the candidates of every worker, each ranked again among all of them.
    RETURN QUERY EXECUTE format($q$
        WITH gathered AS (
            SELECT * FROM unnest($3)
        ), vector_ranked AS (
            SELECT g.id, row_number() OVER (ORDER BY g.similarity DESC NULLS LAST, g.id) AS rank
            FROM gathered AS g WHERE g.vector_rank IS NOT NULL
        ), text_ranked AS (
            SELECT g.id, row_number() OVER (ORDER BY g.text_score DESC, g.id) AS rank
            FROM gathered AS g WHERE g.text_rank IS NOT NULL
        ), measured AS (
            SELECT g.id, v.rank AS vector_rank, t.rank AS text_rank,
                   coalesce(1.0 / (60 + v.rank), 0) + coalesce(1.0 / (60 + t.rank), 0) AS rrf,
                   g.similarity, g.bm25, g.document_id, g.chunk_index, g.content
            FROM gathered AS g
            LEFT JOIN vector_ranked AS v ON v.id = g.id AND v.rank <= ($2).candidates
            LEFT JOIN text_ranked AS t ON t.id = g.id AND t.rank <= ($2).candidates
            WHERE v.rank IS NOT NULL OR t.rank IS NOT NULL
        ), %s $q$, knowledge_internal.search_ranking_sql())
        USING settings, q, found;
END
$$;

-- ==== sql/drop_guard.sql: its functions, as CREATE OR REPLACE, and their privileges

CREATE OR REPLACE FUNCTION knowledge_internal.guard_drop() RETURNS event_trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM knowledge_internal.drop_guard_loaded();
EXCEPTION WHEN undefined_file THEN
    IF has_table_privilege('knowledge.documents', 'SELECT') AND EXISTS (SELECT FROM knowledge.documents) THEN
        RAISE EXCEPTION 'pg_chunk''s library cannot be loaded to check whether this command drops knowledge.documents, which holds documents'
            USING ERRCODE = 'dependent_objects_still_exist',
                  HINT = 'Install pg_chunk''s library again; or, to drop the documents, TRUNCATE knowledge.documents CASCADE first.';
    END IF;
END
$$;

-- ==== sql/privileges.sql

-- Who owns the store, and who may run what with its rights (docs/security.md). Run after every
-- other file of the extension, and again, whole, by every upgrade script.
--
-- The store's tables, views and sequences belong to knowledge_store, a role made for them that
-- cannot log in and holds nothing else but CREATE on schema knowledge (for each chunk config's
-- indexes). The functions that write what their caller may not (the trigger functions, the
-- queue's) run as that role (SECURITY DEFINER, owned by it), never as the superuser who created
-- the extension: a mistake in one of them can reach the store's tables, not the server. No one
-- but their owner and superusers may execute them, so no one else can attach them to a table of
-- their own; and each trigger function checks the table it fires on (knowledge_internal.fires_on).
-- knowledge.models stays the superuser's: it decides which files a backend reads.

-- knowledge_store is made once per cluster (roles are the cluster's, not a database's) and kept
-- when the extension is dropped. A role of that name made by someone else is used only if it has
-- no right beyond a plain role's and no member that is not a superuser: otherwise whoever could
-- become it, or whatever it could do, would come with the store.
DO $$
DECLARE
    store_role CONSTANT name := 'knowledge_store';
    existing pg_catalog.pg_roles;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles AS r WHERE r.rolname = store_role) THEN
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN NOINHERIT', store_role);
            RETURN;
        EXCEPTION WHEN unique_violation OR duplicate_object THEN
            -- Made meanwhile by CREATE EXTENSION in another database: checked as any other.
        END;
    END IF;
    SELECT * INTO existing FROM pg_catalog.pg_roles AS r WHERE r.rolname = store_role;
    IF existing.rolsuper OR existing.rolcanlogin OR existing.rolcreaterole OR existing.rolcreatedb OR existing.rolreplication
       OR existing.rolbypassrls
       OR EXISTS (SELECT FROM pg_catalog.pg_auth_members AS m WHERE m.member = existing.oid)
       OR EXISTS (SELECT FROM pg_catalog.pg_auth_members AS m JOIN pg_catalog.pg_roles AS r ON r.oid = m.member
                  WHERE m.roleid = existing.oid AND NOT r.rolsuper) THEN
        RAISE EXCEPTION 'role % exists and is not the plain role pg_chunk''s store needs', store_role
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'pg_chunk''s store runs its triggers as this role, so it must not log in, have any attribute (SUPERUSER, CREATEROLE, CREATEDB, REPLICATION, BYPASSRLS), be a member of another role or have members other than superusers.',
                  HINT = format('Drop the role or take those away (ALTER ROLE %I NOLOGIN ..., REVOKE ...), then run this again.', store_role);
    END IF;
END
$$;

GRANT CREATE ON SCHEMA knowledge TO knowledge_store;

DO $$
DECLARE
    object record;
BEGIN
    FOR object IN
        SELECT c.oid::regclass AS name, CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind
        FROM pg_catalog.pg_class AS c
        JOIN pg_catalog.pg_depend AS d ON d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
        WHERE d.refclassid = 'pg_catalog.pg_extension'::regclass
          AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension AS e WHERE e.extname = 'pg_chunk')
          AND c.relkind IN ('r', 'p', 'v', 'S') AND c.oid <> 'knowledge.models'::regclass
          -- A table's identity sequences go with it.
          AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS o WHERE o.classid = 'pg_catalog.pg_class'::regclass
                          AND o.objid = c.oid AND o.deptype IN ('a', 'i'))
        ORDER BY 1
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO knowledge_store', object.kind, object.name);
    END LOOP;
    FOR object IN
        SELECT p.oid::regprocedure AS name FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace IN ('knowledge'::regnamespace, 'knowledge_internal'::regnamespace) AND p.prosecdef
        ORDER BY 1
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO knowledge_store', object.name);
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', object.name);
    END LOOP;
END
$$;

-- ==== sql/search_path.sql

-- Every SQL function of pg_chunk runs with a fixed search_path (pg_catalog, then pgvector's
-- schema for its types and operators), so no caller's objects can stand in for the ones it means.
DO $$
DECLARE
    vector_schema name := (SELECT n.nspname FROM pg_catalog.pg_extension AS e
                           JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'vector');
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc AS p
             WHERE p.pronamespace IN ('knowledge'::regnamespace, 'knowledge_internal'::regnamespace) AND p.prolang IN (
                   SELECT l.oid FROM pg_catalog.pg_language AS l WHERE l.lanname IN ('sql', 'plpgsql'))
               AND p.prokind = 'f' LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, vector_schema);
    END LOOP;
END
$$;

-- ==== sql/comments.sql

-- Documentation of pg_chunk's functions, shown by \df+ and obj_description(). Every function in
-- schema knowledge has one (tests/tests/catalog.rs); this file runs last, after the Rust ones too.

COMMENT ON FUNCTION knowledge.chunk(text, jsonb) IS
'Chunks a document with the strategy cfg names (semantic by default). Offsets are 0-based characters: substr(doc, char_offset + 1, char_length) = content.';

COMMENT ON FUNCTION knowledge.semantic_chunk(text, jsonb) IS
'Chunks a document where its meaning changes: sentence embeddings, optimal segmentation (or a threshold on the distance curve), size guards.';

COMMENT ON FUNCTION knowledge.split_sentences(text) IS
'The sentences, headings and list items of a document, with 0-based character offsets.';

COMMENT ON FUNCTION knowledge.chunk_explain(text, jsonb) IS
'One row per sentence: distance from the previous sentence, smoothed distance, the score the method weighed at that gap and its threshold, whether a chunk starts there and why.';

COMMENT ON FUNCTION knowledge.chunk_plot(text, jsonb) IS
'chunk_explain as an SVG picture: the score curve, the threshold, the cuts coloured by reason and the chunks as bands. Save it with psql -Atc and open it in a browser.';

COMMENT ON FUNCTION knowledge.embed(text, text, text) IS
'The embedding of a text as a vector, with a model from knowledge.models (NULL: pg_chunk.default_model) or lexical; role query or passage picks the model''s prefix.';

COMMENT ON FUNCTION knowledge.embed_batch(text[], text, text) IS
'Embeddings of many texts in batches; ordinality is the 1-based position in the array.';

COMMENT ON FUNCTION knowledge.token_count(text, text) IS
'Tokens in a text as the model''s tokenizer counts them, without special tokens.';

COMMENT ON FUNCTION knowledge.embedding_stats() IS
'Per model, in this backend: loads and load time, texts (sentences and chunks) embedded, cache hits, time spent embedding, vectors reused from knowledge_internal.stored_vectors, chunk rows written.';

COMMENT ON FUNCTION knowledge.prewarm(text) IS
'Loads a model (NULL: pg_chunk.default_model) into this backend ahead of its first use, for a connection pool''s connect hook; returns the load time in milliseconds, 0 where the model was already loaded.';

COMMENT ON FUNCTION knowledge.version() IS
'The version of this backend''s pg_chunk library and of the SQL installed in this database (pg_extension.extversion); a library older than the SQL is refused until the right library is installed and, where preloaded, the server restarted.';

COMMENT ON FUNCTION knowledge.rechunk(bigint, text) IS
'Chunks and embeds one document again now, with the named chunk config or (config NULL) with each config it belongs to, async configs included; returns the chunk rows written.';

COMMENT ON FUNCTION knowledge.rechunk_all(text, int) IS
'Chunks and embeds again every document the named config applies to (NULL: every document with all its configs), queueing them for an async config, with a NOTICE every progress_every documents; returns the number of documents.';

COMMENT ON FUNCTION knowledge.rechunk_estimate(text, jsonb, text) IS
'What changing the named config''s cfg or model (NULL: as it is) would rewrite: the documents it applies to and its chunks, the chunks per second of its past writes with that model (knowledge.embedding_writes), the seconds that makes (NULL without such writes, with a note), and whether the change needs pg_chunk.reembed_confirm.';

COMMENT ON FUNCTION knowledge.attach(regclass, name, name, text, regconfig) IS
'Mirrors a table into knowledge.documents: each row with a non-NULL text becomes a document (source_key = its id column), kept in step by triggers on the table, TRUNCATE included; returns the rows mirrored now.';

COMMENT ON FUNCTION knowledge.detach(regclass, boolean) IS
'Stops mirroring a table attached with knowledge.attach; its documents and their chunks are deleted unless keep_documents. Returns the documents deleted.';

COMMENT ON FUNCTION knowledge.search(text, int, jsonb) IS
'The k chunks that best answer a query: the config''s HNSW index by cosine similarity and BM25 over its text index, fused by score (options: mode, config, min_score, document_ids, metadata, language, k1, b, fusion, neighbours; docs/store.md). Runs with the caller''s rights, so row-level security applies.';

COMMENT ON FUNCTION knowledge.attach_distributed(regclass, name, name, text, regconfig) IS
'Citus: attaches each shard of a hash-distributed table with knowledge.attach on the worker that holds it, so that worker chunks and embeds the rows written to it; run on the coordinator. Returns the rows mirrored now (docs/scaling.md).';

COMMENT ON FUNCTION knowledge.distributed_search(text, int, jsonb) IS
'Citus: knowledge.search over every worker''s store, run on the coordinator, with the same arguments, options and results; BM25''s statistics are summed over the workers (docs/scaling.md).';

COMMENT ON FUNCTION knowledge_internal.embed_chunks_batch(bigint[], text[], jsonb, text) IS
'The chunks of several documents with their embeddings, as embed_chunks gives them for each; all the chunks are embedded together.';

COMMENT ON FUNCTION knowledge_internal.embed_config_chunks(text, bigint[], text[], jsonb, text) IS
'embed_chunks_batch for knowledge_internal.write_chunks, for one chunk config: each text''s vector is looked up among the config''s in knowledge_internal.stored_vectors first and saved there when it had to be embedded.';

COMMENT ON TABLE knowledge_internal.stored_vectors IS
'Vectors the store embedded, keyed by model identity, chunk config, role and text, reused by knowledge_internal.write_chunks; capped by pg_chunk.stored_vectors_mb.';

COMMENT ON VIEW knowledge.embedding_run_stats IS
'Per embedding run: writes, documents, chunk rows written and kept, vectors embedded and reused (knowledge.embedding_writes summed), and the milliseconds they took.';

COMMENT ON FUNCTION knowledge.process_queue(int, int) IS
'Chunks, embeds and writes up to batch_size queued documents in the caller''s transaction; failures are retried with backoff, then moved to knowledge.failed. The background workers call it.';

COMMENT ON FUNCTION knowledge.wait_for_queue(interval) IS
'Waits until knowledge.queue has nothing waiting or in progress (true) or the timeout passes (false).';

COMMENT ON FUNCTION knowledge.retry_failed(text) IS
'Queues the documents in knowledge.failed again (of one chunk config, or all); returns how many.';

COMMENT ON VIEW knowledge.queue_status IS
'Asynchronous ingestion at a glance: pending, in progress, failed, done in the last minute, the oldest pending age, and the workers serving this database.';

COMMENT ON FUNCTION knowledge.cjk_bigrams(text) IS
'The text with every run of CJK characters written as its overlapping two-character words, so that PostgreSQL''s full-text parser makes lexemes of Chinese and Japanese.';

COMMENT ON FUNCTION knowledge.text_vector(regconfig, text) IS
'The tsvector that knowledge.search''s text leg indexes a chunk (and reads a query) with: to_tsvector of the text, CJK runs written as overlapping bigrams first.';

COMMENT ON FUNCTION knowledge.rebuild_text_stats() IS
'Recomputes knowledge_internal.text_stats (BM25''s per-config lexeme statistics) from knowledge.chunks; the triggers keep it exact, so this is for a data-only restore with triggers disabled. Returns the rows written.';

COMMENT ON TABLE knowledge_internal.text_stats IS
'BM25''s statistics per chunk config: for each lexeme, the chunks holding it and its occurrences (lexeme '''': all chunks and all occurrences); a lexeme''s figures are the sum of its rows.';

COMMENT ON FUNCTION knowledge.chunk_replicated_documents(boolean) IS
'On a logical-replication subscriber of knowledge.documents alone: sets the triggers that keep chunks in step (sync, BM25''s statistics, deletes cascading to chunks) ENABLE ALWAYS, so they fire for the apply worker''s writes too (false: back to ENABLE). Returns the number of triggers set.';

-- ==== sql/upgrade/0.4.0--0.5.0/after.sql

-- 0.4.0 → 0.5.0, after the functions: triggers, indexes, data backfills.

-- Dropping never deletes documents unasked (sql/drop_guard.sql).
CREATE EVENT TRIGGER pg_chunk_drop_guard ON ddl_command_start
WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED')
EXECUTE FUNCTION knowledge_internal.guard_drop();

-- The stored vectors' keys now hold their chunk config: those stored before match nothing.
TRUNCATE knowledge_internal.stored_vectors;
