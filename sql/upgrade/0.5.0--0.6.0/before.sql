-- 0.5.0 → 0.6.0, before the functions: schema moves, dropped or re-typed functions,
-- the new C functions, tables and views.

-- The text leg scores the chunks that can be among the best (exact BM25), not the first 2,000
-- holding the rarest lexemes: no candidates tsquery, no limit.
DROP FUNCTION knowledge_internal.text_statistics(text, text, regconfig);
DROP FUNCTION knowledge_internal.text_query(text, text, regconfig);
DROP FUNCTION knowledge_internal.text_terms(text[], float8[]);
DROP FUNCTION knowledge_internal.text_candidate_limit();
ALTER TYPE knowledge_internal.search_query DROP ATTRIBUTE text_candidates;

-- The text leg's sets of lexemes that can reach a score (src/text_search.rs).
CREATE  FUNCTION knowledge_internal."bm25_cover"(
	"df" double precision[], /* Vec < f64 > */
	"chunks" double precision, /* f64 */
	"k1" double precision, /* f64 */
	"score" double precision /* f64 */
) RETURNS SETOF INT[] /* Vec < i32 > */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'bm25_cover_wrapper';

-- Bulk loads (knowledge.begin_load): the configs whose chunks are not counted as they are written.
CREATE TABLE knowledge_internal.text_stats_paused (
    chunk_config text PRIMARY KEY REFERENCES knowledge.chunk_configs (name)
);
REVOKE ALL ON knowledge_internal.text_stats_paused FROM PUBLIC;

-- knowledge.search's filter option (src/filter.rs), parsed into the last field of its settings.
CREATE  FUNCTION knowledge_internal."filter_jsonpath"(
	"filter" jsonb /* pg_chunk::cfg::Cfg */
) RETURNS TEXT /* core::result::Result<alloc::string::String, pgrx_pg_sys::submodules::panic::ErrorReport> */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'filter_jsonpath_wrapper';
ALTER TYPE knowledge_internal.search_settings ADD ATTRIBUTE filter jsonpath;

-- The function that makes the table knowledge_internal.citus_workers is
-- knowledge_internal.ensure_citus_workers, a name of its own.
DROP FUNCTION knowledge_internal.citus_workers();
