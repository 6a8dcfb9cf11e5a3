-- Every query with knowledge.search, for every config under test and every mode, timed in one
-- backend as bench/store/search.sql does, for bench/retrieval/run.sh:
--   psql -d DB -v configs=NAME,NAME -v k=5 -f search.sql < queries.csv > results.csv
-- queries.csv: sets.py's rows (set, query, text, doc, char_offset, char_length), one per answer
-- span. Each query is asked with knowledge.search(text, k, {"mode": mode, "config": config,
-- "metadata": {"set": set}}) for mode hybrid, vector and text, timed on the server (clock_timestamp
-- around the call; the client round trip is not included). The query embedding is inside the time
-- and the embedding cache is off, so each search embeds its query; one warm-up search per config
-- and mode first. The searches stay in table bench_searches.
-- Prints CSV rows (set, config, mode, query, ms, rank, chunk_id, document_id, doc, char_offset,
-- char_length), one per returned chunk; a search that returned nothing is one row with rank,
-- chunk and document empty.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET pg_chunk.embedding_cache_mb = 0;
SELECT set_config('bench.configs', :'configs', false) AS ignored, set_config('bench.k', :'k', false) AS ignored \gset
DROP TABLE IF EXISTS bench_answers, bench_queries, bench_searches;
CREATE TABLE bench_answers (set text, query text, text text, doc text, char_offset int, char_length int);
\copy bench_answers FROM pstdin WITH (FORMAT csv)
CREATE TABLE bench_queries AS SELECT DISTINCT set, query, text FROM bench_answers;
CREATE TABLE bench_searches (set text, config text, mode text, query text, ms float8, chunk_ids bigint[]);
DO $$
DECLARE
    configs text[] := string_to_array(current_setting('bench.configs'), ',');
    k int := current_setting('bench.k')::int;
    config text;
    mode text;
    q bench_queries;
    options jsonb;
    started timestamptz;
    ids bigint[];
BEGIN
    FOREACH config IN ARRAY configs LOOP
        FOREACH mode IN ARRAY ARRAY['hybrid', 'vector', 'text'] LOOP
            PERFORM count(*) FROM knowledge.search('warm up the caches', k, jsonb_build_object('mode', mode, 'config', config));
            FOR q IN SELECT * FROM bench_queries ORDER BY set, query LOOP
                options := jsonb_build_object('mode', mode, 'config', config, 'metadata', jsonb_build_object('set', q.set));
                started := clock_timestamp();
                SELECT array_agg(s.chunk_id ORDER BY s.ordinality) INTO ids FROM knowledge.search(q.text, k, options) WITH ORDINALITY AS s;
                INSERT INTO bench_searches
                VALUES (q.set, config, mode, q.query, extract(epoch FROM clock_timestamp() - started) * 1000, ids);
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;
\copy (SELECT s.set, s.config, s.mode, s.query, round(s.ms::numeric, 3), r.rank, r.chunk_id, c.document_id, d.metadata ->> 'doc', c.char_offset, c.char_length FROM bench_searches AS s LEFT JOIN LATERAL unnest(s.chunk_ids) WITH ORDINALITY AS r(chunk_id, rank) ON true LEFT JOIN knowledge.chunks AS c ON c.id = r.chunk_id LEFT JOIN knowledge.documents AS d ON d.id = c.document_id ORDER BY array_position(string_to_array(current_setting('bench.configs'), ','), s.config), array_position(ARRAY['hybrid', 'vector', 'text'], s.mode), s.set, s.query, r.rank) TO pstdout WITH (FORMAT csv)
