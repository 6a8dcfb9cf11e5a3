-- 0.3.0 → 0.4.0, before the functions: schema moves, dropped or re-typed functions,
-- the new C functions, tables and views.

-- knowledge.version() and knowledge.prewarm(model), new C functions.
CREATE  FUNCTION "prewarm"(
	"model" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS double precision /* Result < f64, ErrorReport > */
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'prewarm_wrapper';
CREATE  FUNCTION "version"() RETURNS TABLE (
	"library" TEXT,  /* String */
	"sql" TEXT  /* Option < String > */
)
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'version_wrapper';

-- Each write's elapsed time (knowledge_internal.write_chunks fills it), and its sum per run.
ALTER TABLE knowledge.embedding_writes ADD COLUMN elapsed_ms float8;
CREATE OR REPLACE VIEW knowledge.embedding_run_stats AS
SELECT r.id AS run_id, r.chunk_config, r.model, count(w.run_id) AS writes,
       coalesce(sum(w.documents), 0) AS documents, coalesce(sum(w.chunks_written), 0) AS chunks_written,
       coalesce(sum(w.chunks_kept), 0) AS chunks_kept, coalesce(sum(w.vectors_embedded), 0) AS vectors_embedded,
       coalesce(sum(w.vectors_reused), 0) AS vectors_reused, max(w.written_at) AS last_write,
       sum(w.elapsed_ms) AS elapsed_ms
FROM knowledge.embedding_runs AS r LEFT JOIN knowledge.embedding_writes AS w ON w.run_id = r.id
GROUP BY r.id;

-- text_stats's replica identity, for FOR ALL TABLES publications (sql/text_search.sql).
ALTER TABLE knowledge_internal.text_stats ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
-- Languages by name (text), not regconfig, whose OIDs pg_upgrade does not carry over: each
-- written as knowledge_internal.text_search_config_name writes it, which is regconfig's output
-- under a search_path of pg_catalog alone. The trigger whose WHEN reads documents.language
-- is dropped for the change (PostgreSQL refuses it otherwise) and made again as before.
DROP TRIGGER documents_sync_update ON knowledge.documents;
DO $$
DECLARE
    path text := pg_catalog.current_setting('search_path');
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog', true);
    ALTER TABLE knowledge.documents ALTER COLUMN language DROP DEFAULT;
    ALTER TABLE knowledge.documents ALTER COLUMN language TYPE text USING language::text;
    ALTER TABLE knowledge.documents ALTER COLUMN language SET DEFAULT 'english';
    ALTER TABLE knowledge.attachments ALTER COLUMN language TYPE text USING language::text;
    ALTER TABLE knowledge.languages ALTER COLUMN language TYPE text USING language::text;
    PERFORM pg_catalog.set_config('search_path', path, true);
END
$$;
CREATE TRIGGER documents_sync_update AFTER UPDATE OF content, language, chunk_config ON knowledge.documents
FOR EACH ROW WHEN (OLD.content_hash IS DISTINCT FROM NEW.content_hash
                   OR OLD.language IS DISTINCT FROM NEW.language
                   OR OLD.chunk_config IS DISTINCT FROM NEW.chunk_config)
EXECUTE FUNCTION knowledge_internal.documents_sync();

-- A search candidate as one store gives it, for knowledge.distributed_search (sql/citus.sql).
CREATE TYPE knowledge_internal.search_candidate AS (
    id bigint,
    document_id bigint,
    chunk_index int,
    content text,
    vector_rank bigint,
    text_rank bigint,
    text_score float8,
    similarity float8,
    bm25 float8
);
