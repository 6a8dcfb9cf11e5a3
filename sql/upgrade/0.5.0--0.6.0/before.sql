-- 0.5.0 → 0.6.0, before the functions: schema moves, dropped or re-typed functions,
-- the new C functions, tables and views.

-- The text leg scores candidates until no other chunk can be among the best (exact BM25), not
-- the first 2,000 holding the rarest lexemes: no candidates tsquery, no limit.
DROP FUNCTION knowledge_internal.text_statistics(text, text, regconfig);
DROP FUNCTION knowledge_internal.text_query(text, text, regconfig);
DROP FUNCTION knowledge_internal.text_terms(text[], float8[]);
DROP FUNCTION knowledge_internal.text_candidate_limit();
ALTER TYPE knowledge_internal.search_query DROP ATTRIBUTE text_candidates;

-- BM25's pending statistics are one row per chunk row written (with its tsvector), counted at
-- commit, not one row per lexeme. The table holds only what transactions in progress wrote (the
-- DROP waits for them), so it is made again.
DROP TABLE knowledge_internal.text_stats_pending;
CREATE UNLOGGED TABLE knowledge_internal.text_stats_pending (
    xid xid8 NOT NULL,
    chunk_config text NOT NULL,
    sign int NOT NULL,
    tsv tsvector
);
CREATE INDEX text_stats_pending_xid ON knowledge_internal.text_stats_pending (xid);
REVOKE ALL ON knowledge_internal.text_stats_pending FROM PUBLIC;
GRANT SELECT ON knowledge_internal.text_stats_pending TO PUBLIC;
