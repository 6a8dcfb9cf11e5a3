-- One timed ingestion run in the fresh backend of a new connection:
--   psql -d DB -v workload=W -v model=M -v pages=N -f ingest.sql
-- W is alone (knowledge_internal.embed_chunks over the first N pages: chunking plus chunk embeddings,
-- nothing stored), trigger (the same pages inserted into knowledge.documents, whose trigger
-- chunks, embeds and stores them with their tsvectors and index entries) or trigger-no-hnsw
-- (the same without the config's HNSW index, which is rebuilt after the clock stops: what
-- maintaining that index costs). M embeds both, with
-- the default config (semantic chunking with M). The embedding cache and the stored vectors
-- are off (rounds insert the same pages again) and the model is loaded before the clock starts,
-- so both runs embed every text. The trigger run starts from an empty store.
-- Prints "key value" rows: seconds, documents, chunks, bytes.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET pg_chunk.embedding_cache_mb = 0;
SET pg_chunk.stored_vectors_mb = 0;
TRUNCATE knowledge.documents CASCADE;
UPDATE knowledge.chunk_configs SET model = :'model' WHERE name = 'default';
SELECT knowledge.embed('warm up', :'model') IS NOT NULL AS loaded \gset
SELECT knowledge_internal.model_file_sha256(:'model') IS NOT NULL AS hashed \gset
SELECT count(*) AS documents, sum(octet_length(body)) AS bytes FROM (SELECT body FROM bench_pages ORDER BY page LIMIT :pages) AS p \gset
SELECT :'workload' IN ('trigger', 'trigger-no-hnsw') AS via_trigger, :'workload' = 'trigger-no-hnsw' AS no_hnsw \gset
\if :no_hnsw
SELECT knowledge_internal.drop_vector_index('default') AS dropped \gset
\endif
SELECT clock_timestamp() AS started \gset
\if :via_trigger
INSERT INTO knowledge.documents (content) SELECT body FROM bench_pages ORDER BY page LIMIT :pages;
SELECT extract(epoch FROM clock_timestamp() - :'started'::timestamptz) AS seconds \gset
SELECT count(*) AS chunks FROM knowledge.chunks \gset
\if :no_hnsw
SELECT knowledge_internal.create_vector_index(c) AS created FROM knowledge.chunk_configs AS c WHERE c.name = 'default' \gset
\endif
\else
SELECT count(*) AS chunks
FROM (SELECT body FROM bench_pages ORDER BY page LIMIT :pages) AS p,
     knowledge_internal.embed_chunks(p.body, (SELECT effective_cfg FROM knowledge.chunk_configs WHERE name = 'default'), :'model') \gset
SELECT extract(epoch FROM clock_timestamp() - :'started'::timestamptz) AS seconds \gset
\endif
-- No vector taken from knowledge_internal.stored_vectors: every text was embedded in this run.
DO $$
BEGIN
    IF (SELECT sum(stored_hits) FROM knowledge.embedding_stats()) > 0 THEN
        RAISE EXCEPTION 'vectors came from knowledge_internal.stored_vectors: the run did not embed every text';
    END IF;
END
$$;
\echo seconds :seconds
\echo documents :documents
\echo chunks :chunks
\echo bytes :bytes
