-- What giving the heap back costs (src/heap.rs): six embed_batch calls of the benchmark's 2,000
-- sentences with potion-base-8m in autocommit (each transaction ends with a trim), then six
-- inside one transaction (one trim, at COMMIT). Needs the database bench/embeddings/run.sh made:
--   psql -X -q -d pg_chunk_bench -f bench/embeddings/trim_cost.sql
SET pg_chunk.embedding_cache_mb = 0;
SELECT array_agg(sentence ORDER BY i) AS s FROM bench_sentences \gset
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
\timing on
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
BEGIN;
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
SELECT count(*) FROM knowledge.embed_batch(:'s'::text[], 'potion-base-8m') \g /dev/null
COMMIT;
