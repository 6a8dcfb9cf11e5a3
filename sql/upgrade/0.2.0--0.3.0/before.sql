-- 0.2.0 → 0.3.0, before the functions (scripts/upgrade_script.py puts every function of
-- sql/*.sql after this): what pg_chunk's own SQL calls and users do not moves into the schema
-- knowledge_internal; the new C functions; the new tables and views; the functions 0.3.0 drops
-- or whose arguments change.

-- What pg_chunk's own SQL calls and users do not moves out of knowledge into knowledge_internal
-- (sql/models.sql). SET SCHEMA keeps each object's privileges, comments, and the triggers,
-- constraints and views that name it; user tables attached before keep their mirror_document
-- triggers.
CREATE SCHEMA knowledge_internal;
GRANT USAGE ON SCHEMA knowledge_internal TO PUBLIC;

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc AS p
             JOIN pg_catalog.pg_depend AS d ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
             WHERE d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension AS e WHERE e.extname = 'pg_chunk')
               AND p.pronamespace = 'knowledge'::regnamespace
               AND p.proname = ANY (ARRAY[
                   'check_chunk_config', 'chunk_configs_changed', 'chunk_configs_sync',
                   'chunk_configs_vector_index', 'create_vector_index', 'current_run',
                   'document_configs', 'documents_sync', 'drop_vector_index', 'embed_chunks',
                   'embed_chunks_batch', 'enqueue', 'mirror_document', 'mirror_row',
                   'model_file_sha256', 'models_vector_index', 'named_chunk_config', 'queue_failed',
                   'queue_lock_class', 'queue_served', 'queue_workers', 'refresh_chunks',
                   'sync_document', 'uses_halfvec', 'vector_expression', 'vector_index_name',
                   'write_chunks', 'write_queued']) LOOP
        EXECUTE format('ALTER FUNCTION %s SET SCHEMA knowledge_internal', f);
    END LOOP;
END
$$;

-- The text leg of knowledge.search ranks by BM25 over an OR of the query's lexemes
-- (sql/text_search.sql), not by ts_rank_cd over an AND of them.
DROP AGGREGATE knowledge.tsquery_or_all (tsquery);

-- The new C functions; embedding_stats() gains the columns stored_hits and chunks_written.
CREATE  FUNCTION "cjk_bigrams"(
	"doc" TEXT /* & str */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'cjk_bigrams_of_wrapper';

CREATE  FUNCTION knowledge_internal."bm25"(
	"tsv" tsvector, /* TsVectorBytes < '_ > */
	"lexemes" TEXT[], /* Vec < String > */
	"df" double precision[], /* Vec < f64 > */
	"chunks" double precision, /* f64 */
	"k1" double precision, /* f64 */
	"b" double precision, /* f64 */
	"average_length" double precision /* f64 */
) RETURNS double precision /* f64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'bm25_wrapper';

-- pg_chunk.maintain_chunks is superuser-only now; the triggers read it through pg_chunk (which a
-- placeholder set before pg_chunk was loaded cannot bypass).
CREATE  FUNCTION knowledge_internal."maintains_chunks"() RETURNS bool /* bool */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'maintains_chunks_wrapper';

CREATE FUNCTION knowledge_internal."embed_chunks_stored"(
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
AS 'MODULE_PATHNAME', 'embed_chunks_stored_wrapper';

CREATE FUNCTION knowledge_internal."count_chunks_written"(
	"model" TEXT, /* & str */
	"chunks" bigint /* i64 */
) RETURNS void
STRICT VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'count_chunks_written_wrapper';

DROP FUNCTION knowledge.embedding_stats();
CREATE FUNCTION knowledge."embedding_stats"() RETURNS TABLE (
	"model" TEXT,  /* String */
	"loads" bigint,  /* i64 */
	"load_ms" double precision,  /* f64 */
	"sentences_embedded" bigint,  /* i64 */
	"cache_hits" bigint,  /* i64 */
	"embed_ms" double precision,  /* f64 */
	"stored_hits" bigint,  /* i64 */
	"chunks_written" bigint  /* i64 */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'embedding_stats_wrapper';

-- Chunks with CJK text get the tsvector of their bigrams, before the statistics count them.
UPDATE knowledge.chunks AS c SET tsv = pg_catalog.to_tsvector(d.language, knowledge.cjk_bigrams(c.content))
FROM knowledge.documents AS d
WHERE d.id = c.document_id AND knowledge.cjk_bigrams(c.content) IS DISTINCT FROM c.content;

-- The tables and views of sql/text_search.sql.
-- Per chunk config: in how many chunks each lexeme occurs and how often in all (lexeme '',
-- which no tsvector holds: how many chunks there are and how many lexeme occurrences they hold
-- together). A lexeme's figures are the SUM of its rows: each transaction that writes chunks
-- adds, as it commits, one row of differences per lexeme it changed, so writers never wait on
-- each other's rows, and folds a lexeme's rows into one once it has many. Exact after any
-- sequence of writes, rollbacks and truncations; knowledge.rebuild_text_stats recomputes it
-- from the chunks (after a data-only restore with triggers disabled, say).
CREATE TABLE knowledge_internal.text_stats (
    chunk_config text NOT NULL,
    lexeme text NOT NULL,
    chunks bigint NOT NULL,
    occurrences bigint NOT NULL
);
CREATE INDEX text_stats_lexeme ON knowledge_internal.text_stats (chunk_config, lexeme);
-- Not dumped: restoring knowledge.chunks writes it again through the triggers below.
-- Granted to nobody: lexemes are the documents' vocabulary.
REVOKE ALL ON knowledge_internal.text_stats FROM PUBLIC;
-- knowledge_internal.text_stats as knowledge.search reads it: every row for a role that may read
-- knowledge.chunks, none for another (current_user in a view is the querying role; the
-- barrier keeps the role's own conditions from seeing rows before that check does).
CREATE VIEW knowledge_internal.text_stats_visible WITH (security_barrier) AS
SELECT s.chunk_config, s.lexeme, s.chunks, s.occurrences FROM knowledge_internal.text_stats AS s
WHERE pg_catalog.has_table_privilege('knowledge.chunks', 'SELECT');
GRANT SELECT ON knowledge_internal.text_stats_visible TO PUBLIC;

-- The differences of transactions in progress, per chunk row written, until their commit adds
-- them up into knowledge_internal.text_stats (a rolled-back statement's go with it).
-- Unlogged: nothing in it outlives its transaction.
CREATE UNLOGGED TABLE knowledge_internal.text_stats_pending (
    xid xid8 NOT NULL,
    chunk_config text NOT NULL,
    lexeme text NOT NULL,
    chunks bigint NOT NULL,
    occurrences bigint NOT NULL
);
CREATE INDEX text_stats_pending_xid ON knowledge_internal.text_stats_pending (xid);
-- One row per transaction with pending differences; its deferred trigger adds them up at commit.
CREATE UNLOGGED TABLE knowledge_internal.text_stats_commits (
    xid xid8 PRIMARY KEY
);
REVOKE ALL ON knowledge_internal.text_stats_pending, knowledge_internal.text_stats_commits FROM PUBLIC;
-- knowledge.search reads the caller's own pending rows; those are the only ones a transaction
-- sees (others' are uncommitted until they commit, and committing deletes them).
GRANT SELECT ON knowledge_internal.text_stats_pending TO PUBLIC;

-- The tables and views of sql/store.sql.
-- The vectors the store embedded, each by what made it (docs/store.md, "Reuse: an edit embeds what it changed"): knowledge.write_chunks
-- looks every sentence and chunk it embeds up here first (knowledge.embed_chunks_stored), so an
-- edit embeds only what it changed and a paragraph repeated in many documents is embedded once.
-- key is (the first 16 bytes of) the sha256 of the model's vector identity (the fields of its
-- knowledge.models row that change vectors, and the sha256 of its files), the role and the text:
-- a vector made with another model file or row never matches. Rows are only inserted (two writers storing one text
-- at once leave two equal rows) and deleted, lowest id first, past pg_chunk.stored_vectors_mb.
-- Not dumped: a restored store embeds afresh what it writes. Granted to nobody: it holds the
-- vectors of the documents' sentences.
CREATE TABLE knowledge_internal.stored_vectors (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key bytea NOT NULL,
    model text NOT NULL,
    embedding vector NOT NULL
);
CREATE INDEX stored_vectors_key ON knowledge_internal.stored_vectors USING hash (key);

-- What each knowledge.write_chunks call did (one row per call, so writers never wait on each
-- other's rows); knowledge.embedding_run_stats sums them per run. Delete rows whenever you like:
-- only those figures read them.
CREATE TABLE knowledge.embedding_writes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id bigint NOT NULL REFERENCES knowledge.embedding_runs (id) ON DELETE CASCADE,
    written_at timestamptz NOT NULL DEFAULT now(),
    documents int NOT NULL,
    -- Chunk rows inserted, and rows left as they were (same text, place, metadata and vector).
    chunks_written int NOT NULL,
    chunks_kept int NOT NULL,
    -- Texts (sentences and chunks) the model embedded, and texts whose vector was reused from
    -- knowledge_internal.stored_vectors or the backend's cache.
    vectors_embedded int NOT NULL,
    vectors_reused int NOT NULL
);
CREATE INDEX embedding_writes_run_id ON knowledge.embedding_writes (run_id);

-- Per embedding run: what its writes did, summed.
CREATE VIEW knowledge.embedding_run_stats AS
SELECT r.id AS run_id, r.chunk_config, r.model, count(w.run_id) AS writes,
       coalesce(sum(w.documents), 0) AS documents, coalesce(sum(w.chunks_written), 0) AS chunks_written,
       coalesce(sum(w.chunks_kept), 0) AS chunks_kept, coalesce(sum(w.vectors_embedded), 0) AS vectors_embedded,
       coalesce(sum(w.vectors_reused), 0) AS vectors_reused, max(w.written_at) AS last_write
FROM knowledge.embedding_runs AS r LEFT JOIN knowledge.embedding_writes AS w ON w.run_id = r.id
GROUP BY r.id;

SELECT pg_catalog.pg_extension_config_dump('knowledge.embedding_writes', '');
SELECT pg_catalog.pg_extension_config_dump('knowledge.embedding_writes_id_seq', '');
REVOKE ALL ON knowledge_internal.stored_vectors, knowledge.embedding_writes, knowledge.embedding_run_stats FROM PUBLIC;
GRANT SELECT ON knowledge.embedding_run_stats TO PUBLIC;

-- A config's indexes: create_vector_index takes the config's row (a rename makes the new ones
-- before the row changes), and each config gets a full-text index of its own (below).
DROP TRIGGER chunk_configs_vector_index ON knowledge.chunk_configs;
DROP FUNCTION knowledge_internal.chunk_configs_vector_index();
DROP FUNCTION knowledge_internal.create_vector_index(text);

-- knowledge.search's options and query as typed records (sql/search.sql, which defines them;
-- tests/tests/upgrade.rs fails when these differ from it).
CREATE TYPE knowledge_internal.search_settings AS (
    mode text,                      -- "hybrid", "vector" or "text"
    config knowledge.chunk_configs, -- the config named (default "default")
    min_score float8,               -- least cosine similarity; NULL: none
    document_ids bigint[],          -- NULL: every document
    metadata jsonb,                 -- documents whose metadata @> it; NULL: every document
    language regconfig,             -- the query's; NULL: each language in knowledge.languages
    k1 float8,                      -- BM25's constants
    b float8,
    fusion text,                    -- the fusion in effect: "rrf" outside hybrid mode
    neighbours float8               -- the neighbours' share in effect: 0 unless fusion is "scores"
);

CREATE TYPE knowledge_internal.search_query AS (
    k int,
    candidates int,
    vector vector,
    lexemes text[],
    df float8[],
    text_candidates tsquery,
    chunks float8,
    average_length float8
);
