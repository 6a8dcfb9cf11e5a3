-- 0.5.0 → 0.6.0, before the functions: schema moves, dropped or re-typed functions,
-- the new C functions, tables and views.

-- The text leg scores candidates until no other chunk can be among the best (exact BM25), not
-- the first 2,000 holding the rarest lexemes: no candidates tsquery, no limit.
DROP FUNCTION knowledge_internal.text_statistics(text, text, regconfig);
DROP FUNCTION knowledge_internal.text_query(text, text, regconfig);
DROP FUNCTION knowledge_internal.text_terms(text[], float8[]);
DROP FUNCTION knowledge_internal.text_candidate_limit();
ALTER TYPE knowledge_internal.search_query DROP ATTRIBUTE text_candidates;

-- Bulk loads (knowledge.begin_load): the configs whose chunks are not counted as they are written.
CREATE TABLE knowledge_internal.text_stats_paused (
    chunk_config text PRIMARY KEY REFERENCES knowledge.chunk_configs (name) ON UPDATE RESTRICT ON DELETE RESTRICT
);
REVOKE ALL ON knowledge_internal.text_stats_paused FROM PUBLIC;
