-- What long inputs cost a backend in memory: a fresh backend loads model M, then embeds 81 texts
-- of 25 corpus sentences each (about 2,800 characters, so most are cut at the model's window:
-- 256 tokens for MiniLM, 512 for e5) in one embed_batch, the embedding cache off.
--   psql -d pg_chunk_bench -v model=M -f long_inputs.sql        (the database bench/embeddings/run.sh makes)
-- Prints one row: the model, seconds for the call, and the backend's private memory (RssAnon, kB)
-- once the model is loaded, right after the call, and once its transaction has ended.
\set ON_ERROR_STOP on
\set QUIET on
SET pg_chunk.embedding_cache_mb = 0;
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.kb(field text) RETURNS float8 LANGUAGE sql AS $$
    SELECT substring(pg_read_file('/proc/self/status') FROM field || ':\s+(\d+) kB')::float8
$$;
SELECT knowledge.embed('x', :'model') IS NOT NULL AS loaded \gset
SELECT pg_temp.kb('RssAnon') AS loaded_kb, clock_timestamp() AS started \gset
BEGIN;
SELECT count(*) AS texts FROM knowledge.embed_batch(ARRAY(
    SELECT string_agg(sentence, ' ' ORDER BY i) FROM bench_sentences GROUP BY i / 25 ORDER BY i / 25), :'model') \gset
SELECT pg_temp.kb('RssAnon') AS in_transaction_kb, extract(epoch FROM clock_timestamp() - :'started'::timestamptz) AS seconds \gset
COMMIT;
SELECT :'model' AS model, :texts AS texts, round(:seconds::numeric, 2) AS seconds, :loaded_kb AS loaded_kb,
       :in_transaction_kb AS in_transaction_kb, pg_temp.kb('RssAnon') AS held_kb;
