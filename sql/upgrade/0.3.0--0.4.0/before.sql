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
