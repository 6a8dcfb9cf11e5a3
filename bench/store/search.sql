-- Search latency in one backend: each query of bench_queries searched once per mode, timed
-- on the server (clock_timestamp around each knowledge.search call; the client round trip is
-- not included). With embedding=included the embedding cache is off, so each search embeds its
-- query (modes repeat the queries); with embedding=excluded every query is embedded once
-- before the clock starts and each search finds its vector in the cache, so the time is the
-- search alone. Warm: one search per mode first.
--   psql -d DB -v config=C -v embedding=included|excluded -f search.sql
-- Prints "mode<TAB>p50_ms<TAB>p95_ms<TAB>queries<TAB>mean results" rows; mode "hybrid rrf" is
-- hybrid with the reciprocal-rank fusion. With -v filtered=on, also hybrid with a selective
-- filter (the documents of copy 7: 2% of them) and a broad one (copies 1 to 45: 90%), on the
-- metadata run.sh gives the copies.
\set ON_ERROR_STOP on
\if :{?embedding}
\else
\echo 'search.sql needs -v embedding=included or excluded'
\quit
\endif
\if :{?filtered}
\else
\set filtered off
\endif
SELECT set_config('pg_chunk.embedding_cache_mb', CASE :'embedding' WHEN 'included' THEN '0' WHEN 'excluded' THEN '64' END, false) AS cache,
       set_config('bench.config', :'config', false) AS config,
       set_config('bench.filtered', :'filtered', false) AS filtered \gset
SELECT count(knowledge.embed(q.query, c.model, 'query')) AS ignored
FROM bench_queries AS q, knowledge.chunk_configs AS c
WHERE :'embedding' = 'excluded' AND c.name = :'config' \gset
CREATE TEMP TABLE timings (mode text, ms float8, results int);
DO $$
DECLARE
    mode text;
    q text;
    started timestamptz;
    n int;
    options jsonb;
BEGIN
    -- "hybrid rrf": hybrid mode with the reciprocal-rank fusion ("fusion": "rrf").
    FOREACH mode IN ARRAY ARRAY['hybrid', 'hybrid rrf', 'vector', 'text']
                          || CASE WHEN current_setting('bench.filtered') = 'on'
                                  THEN ARRAY['hybrid, filter of 2%', 'hybrid, filter of 90%'] ELSE '{}' END LOOP
        options := jsonb_build_object('mode', split_part(split_part(mode, ' ', 1), ',', 1), 'config', current_setting('bench.config'))
                   || CASE mode WHEN 'hybrid rrf' THEN '{"fusion": "rrf"}'::jsonb
                                WHEN 'hybrid, filter of 2%' THEN '{"filter": {"copy": 7}}'
                                WHEN 'hybrid, filter of 90%' THEN '{"filter": {"copy": {"$lte": 45}}}'
                                ELSE '{}' END;
        PERFORM count(*) FROM knowledge.search('warm up the caches', 10, options);
        FOR q IN SELECT query FROM bench_queries ORDER BY i LOOP
            started := clock_timestamp();
            SELECT count(*) INTO n FROM knowledge.search(q, 10, options);
            INSERT INTO timings VALUES (mode, extract(epoch FROM clock_timestamp() - started) * 1000, n);
        END LOOP;
    END LOOP;
END
$$;
SELECT mode || E'\t' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) || E'\t'
       || round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 2) || E'\t' || count(*) || E'\t' || round(avg(results), 1)
FROM timings GROUP BY mode ORDER BY mode;
