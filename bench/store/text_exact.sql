-- The text leg against exhaustive BM25, in one backend: each query of bench_queries ranked three
-- ways, interleaved, each timed on the server (clock_timestamp around it):
--   search      knowledge.search(query, 10, text mode): the text leg as it is;
--   exhaustive  every chunk of the config holding a lexeme of the query scored by
--               knowledge_internal.bm25, the best 10 kept (ties by id): the reference;
--   first 2000  the rule of pg_chunk 0.5.0 and before: the chunks holding the query's rarest
--               lexemes (while their chunk counts add up to less than 2,000), the first 2,000
--               of them the index scan finds, scored, the best 10 kept.
-- Each with the query's statistics (knowledge_internal.text_query) inside its time. For each,
-- the share of the reference's top 10 it returns, and the queries it returns exactly.
--   psql -d DB -v config=C -f text_exact.sql
-- Prints "way<TAB>p50_ms<TAB>p95_ms<TAB>queries<TAB>% of the reference's top 10<TAB>queries exact".
\set ON_ERROR_STOP on
-- As knowledge.search runs its statement (src/sql/search.sql): the other ways' plans are costly
-- enough for JIT too, whose compiling would be most of their time.
SET jit = off;
SELECT set_config('bench.config', :'config', false) AS config \gset
CREATE TEMP TABLE text_ways (way text, i bigint, ms float8, ids bigint[]);
DO $$
DECLARE
    config text := current_setting('bench.config');
    q record;
    way text;
    started timestamptz;
    ids bigint[];
BEGIN
    PERFORM count(*) FROM knowledge.search('warm up the caches', 10, jsonb_build_object('mode', 'text', 'config', config));
    FOR q IN SELECT b.i, b.query FROM bench_queries AS b ORDER BY b.i LOOP
        -- Which way runs first turns with the query.
        FOREACH way IN ARRAY (ARRAY['search', 'exhaustive', 'first 2000', 'search', 'exhaustive'])[1 + q.i % 3:3 + q.i % 3] LOOP
            started := clock_timestamp();
            IF way = 'search' THEN
                SELECT array_agg(s.chunk_id ORDER BY s.text_rank) INTO ids
                FROM knowledge.search(q.query, 10, jsonb_build_object('mode', 'text', 'config', config)) AS s;
            ELSIF way = 'exhaustive' THEN
                SELECT array_agg(r.id ORDER BY r.score DESC, r.id) INTO ids
                FROM (SELECT c.id, knowledge_internal.bm25(c.tsv, t.lexemes, t.df, t.chunks, 1.2, 0.75, t.average_length) AS score
                      FROM knowledge_internal.text_query(config, q.query, NULL) AS t, knowledge.chunks AS c
                      WHERE c.chunk_config = config AND c.tsv @@ knowledge_internal.lexeme_query(t.lexemes, '|')
                      ORDER BY score DESC, c.id LIMIT 10) AS r;
            ELSE
                SELECT array_agg(r.id ORDER BY r.score DESC, r.id) INTO ids
                FROM (SELECT c.id, knowledge_internal.bm25(c.tsv, t.lexemes, t.df, t.chunks, 1.2, 0.75, t.average_length) AS score
                      FROM knowledge_internal.text_query(config, q.query, NULL) AS t,
                           LATERAL (SELECT c.id, c.tsv FROM knowledge.chunks AS c
                                    WHERE c.chunk_config = config
                                      AND c.tsv @@ knowledge_internal.lexeme_query(ARRAY(
                                          SELECT l.lexeme FROM unnest(t.lexemes, t.df) WITH ORDINALITY AS l (lexeme, df, n)
                                          WHERE coalesce((SELECT sum(e.df) FROM unnest(t.df[:l.n - 1]) AS e (df)), 0) < 2000
                                          ORDER BY l.n), '|')
                                    LIMIT 2000) AS c
                      ORDER BY score DESC, c.id LIMIT 10) AS r;
            END IF;
            INSERT INTO text_ways VALUES (way, q.i, extract(epoch FROM clock_timestamp() - started) * 1000, ids);
        END LOOP;
    END LOOP;
END
$$;
SELECT w.way || E'\t' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY w.ms)::numeric, 2) || E'\t'
       || round(percentile_cont(0.95) WITHIN GROUP (ORDER BY w.ms)::numeric, 2) || E'\t' || count(*) || E'\t'
       || round(100.0 * sum((SELECT count(*) FROM unnest(w.ids) AS x WHERE x = ANY (r.ids))) / nullif(sum(cardinality(r.ids)), 0), 1)
       || E'\t' || count(*) FILTER (WHERE w.ids IS NOT DISTINCT FROM r.ids)
FROM text_ways AS w JOIN text_ways AS r ON r.i = w.i AND r.way = 'exhaustive'
GROUP BY w.way ORDER BY w.way;
