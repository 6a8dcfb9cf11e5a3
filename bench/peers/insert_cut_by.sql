-- Inserting the peers' workload through the store's trigger with a config that cuts with one
-- model and embeds with another (docs/store.md, "Chunk configs"), in a fresh backend as
-- pg_chunk.sh measures its inserts (embedding cache and stored vectors off, both models loaded
-- before the clock):
--   psql -X -q -At -d pg_chunk_bench_peers -v cut=potion-base-8m -v embed=all-minilm-l6-v2 \
--        -f bench/peers/insert_cut_by.sql
-- (the database as bench/peers/pg_chunk.sh leaves it). Prints one line: cut model, embedding
-- model, seconds, chunks, mean characters, widest chunk in tokens, peak RSS in MiB.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET pg_chunk.embedding_cache_mb = 0;
SET pg_chunk.stored_vectors_mb = 0;
SELECT format('cut-%s-embed-%s', :'cut', :'embed') AS config \gset
INSERT INTO knowledge.chunk_configs (name, cfg, model, active)
VALUES (:'config', jsonb_build_object('model', :'cut'), :'embed', false) ON CONFLICT (name) DO NOTHING;
SELECT count(*) AS ignored FROM knowledge.chunk('Warm up. A second sentence.', jsonb_build_object('model', :'cut')) \gset
SELECT knowledge.embed('warm up', :'embed') IS NOT NULL AS ignored \gset
SELECT clock_timestamp() AS started \gset
INSERT INTO knowledge.documents (content, chunk_config) SELECT body, :'config' FROM bench_docs;
SELECT :'cut', :'embed', round(extract(epoch FROM clock_timestamp() - :'started'::timestamptz)::numeric, 1),
       count(*), round(avg(char_length)), max(token_count),
       substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\s+(\d+) kB')::bigint / 1024
FROM knowledge.chunks;
TRUNCATE knowledge.documents CASCADE;
