-- For bench/store/search_compare.sh, which loads knowledge_old.search first:
--   psql -d DB -v config=NAME -v k=10 -v rounds=1 -f search_compare.sql
-- The ways each question of bench_queries is asked: each mode, the rank fusion, the filters
-- (metadata, document ids), min_score, the neighbours' share and BM25's constants, a language.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET pg_chunk.embedding_cache_mb = 64;
-- The text leg takes the first 2,000 chunks that match (knowledge_internal.text_candidate_limit);
-- a sequential scan of a large table that starts where the last one stopped would make that a
-- different 2,000 from one search to the next, of either function.
SET synchronize_seqscans = off;
SELECT set_config('bench.config', :'config', false) AS ignored, set_config('bench.k', :'k', false) AS ignored,
       set_config('bench.rounds', :'rounds', false) AS ignored \gset
-- bench_queries as bench/retrieval/search.sql leaves it (set, query, text) or bench/store/run.sh
-- (i, query).
CREATE TEMP TABLE questions AS
SELECT coalesce(to_jsonb(b) ->> 'set', '') AS set, to_jsonb(b) ->> 'query' AS query,
       coalesce(to_jsonb(b) ->> 'text', to_jsonb(b) ->> 'query') AS text
FROM bench_queries AS b;
CREATE TEMP TABLE ways (way text PRIMARY KEY, options jsonb, timed boolean);
INSERT INTO ways VALUES
    ('hybrid', '{}', true),
    ('hybrid rrf', '{"fusion": "rrf"}', true),
    ('vector', '{"mode": "vector"}', true),
    ('text', '{"mode": "text"}', true),
    -- The set of the first document where there are sets (bench/retrieval), else {}: every document.
    ('hybrid metadata', jsonb_build_object('metadata', coalesce((SELECT jsonb_build_object('set', d.metadata -> 'set') FROM knowledge.documents AS d
                                                                  WHERE d.metadata ? 'set' ORDER BY d.id LIMIT 1), '{}')), true),
    ('hybrid document_ids', jsonb_build_object('document_ids', (SELECT jsonb_agg(d.id) FROM knowledge.documents AS d WHERE d.id % 3 = 0)), false),
    ('vector min_score', '{"mode": "vector", "min_score": 0.5}', false),
    ('hybrid neighbours k1 b', '{"neighbours": 0.8, "k1": 2, "b": 0.5}', false),
    ('text english', '{"mode": "text", "language": "english"}', false);
UPDATE ways SET options = options || jsonb_build_object('config', current_setting('bench.config'));
CREATE TEMP TABLE differences (way text, query text, old_only bigint, new_only bigint, rows bigint);
CREATE TEMP TABLE timings (way text, function text, ms float8);

-- The plans: each function's statement EXPLAINed (a copy of the function that keeps the plan where
-- it would run the statement) for the first question: hybrid, hybrid with a filter, hybrid with
-- enable_seqscan off, where the text leg must scan the config's GIN index, and with bitmap scans
-- off too, where the vector leg must scan its HNSW index (the planner matches the partial
-- indexes; on a few thousand chunks it rightly prefers to read them all). The plans of both
-- functions must be the same.
CREATE TEMP TABLE plans (n bigserial, function text, way text, line text);
DO $$
DECLARE
    f text;
    plan_way text;
    source text;
    question text := (SELECT text FROM questions ORDER BY set, query LIMIT 1);
    vector_index name := knowledge_internal.vector_index_name(current_setting('bench.config'));
    text_index name := knowledge_internal.text_index_name(current_setting('bench.config'));
BEGIN
    FOREACH f IN ARRAY ARRAY['knowledge', 'knowledge_old'] LOOP
        FOREACH plan_way IN ARRAY ARRAY['hybrid', 'hybrid metadata', 'hybrid no seqscan', 'hybrid no seqscan or bitmapscan'] LOOP
            source := (SELECT p.prosrc FROM pg_proc AS p WHERE p.oid = format('%s.search(text, int, jsonb)', f)::regprocedure);
            source := regexp_replace(source, 'RETURN QUERY EXECUTE statement(.*?);(\s*)RETURN;',
                                     'FOR plan_line IN EXECUTE ''EXPLAIN (COSTS OFF) '' || statement\1 LOOP INSERT INTO plans (function, way, line) VALUES ('
                                     || quote_literal(f) || ', ' || quote_literal(plan_way) || ', plan_line); END LOOP; RETURN;', 's');
            source := regexp_replace(source, 'DECLARE', 'DECLARE plan_line text;');
            EXECUTE format('CREATE FUNCTION pg_temp.explained(query text, k int, options jsonb) RETURNS TABLE (chunk_id bigint, document_id bigint,'
                           ' chunk_index int, content text, score float8, vector_rank int, text_rank int, similarity float8, below_min_score boolean)'
                           ' LANGUAGE plpgsql SET hnsw.ef_search = 100 SET hnsw.iterative_scan = strict_order SET search_path = %s AS %L',
                           (SELECT substr(c, length('search_path=') + 1) FROM pg_proc AS p, unnest(p.proconfig) AS c
                            WHERE p.oid = 'knowledge.search(text, int, jsonb)'::regprocedure AND c LIKE 'search_path=%'),
                           source);
            PERFORM set_config('enable_seqscan', (plan_way !~ 'no seqscan')::text, true);
            PERFORM set_config('enable_bitmapscan', (plan_way !~ 'bitmapscan')::text, true);
            PERFORM pg_temp.explained(question, current_setting('bench.k')::int,
                                      (SELECT w.options FROM ways AS w WHERE w.way = split_part(plan_way, ' no ', 1)));
            PERFORM set_config('enable_seqscan', 'on', true);
            PERFORM set_config('enable_bitmapscan', 'on', true);
            DROP FUNCTION pg_temp.explained;
        END LOOP;
        IF NOT EXISTS (SELECT FROM plans AS p WHERE p.function = f AND p.way = 'hybrid no seqscan or bitmapscan' AND p.line ~ ('Index Scan using ' || vector_index || ' ')) THEN
            RAISE EXCEPTION '%.search: the vector leg does not scan %', f, vector_index;
        END IF;
        IF NOT EXISTS (SELECT FROM plans AS p WHERE p.function = f AND p.way = 'hybrid no seqscan' AND p.line ~ ('Bitmap Index Scan on ' || text_index)) THEN
            RAISE EXCEPTION '%.search: the text leg does not scan %', f, text_index;
        END IF;
    END LOOP;
END
$$;
\echo 'plans of knowledge.search, their index scans:'
SELECT way || ': ' || btrim(line) FROM plans WHERE function = 'knowledge' AND line ~ 'Index Scan' ORDER BY n \g (tuples_only)
SELECT (SELECT array_agg(line ORDER BY way, n) FROM plans WHERE function = 'knowledge')
       = (SELECT array_agg(line ORDER BY way, n) FROM plans WHERE function = 'knowledge_old') AS same_plans \gset
\if :same_plans
\echo 'knowledge_old.search has the same plans'
\else
\echo 'the plans differ; knowledge_old.search''s:'
SELECT way, line FROM plans WHERE function = 'knowledge_old' ORDER BY way, n \g (tuples_only)
\endif

-- Identical rows: EXCEPT ALL both ways over every column and the rank.
DO $$
DECLARE
    k int := current_setting('bench.k')::int;
    w ways;
    q questions;
    old_only bigint;
    new_only bigint;
    n bigint;
BEGIN
    FOR w IN SELECT * FROM ways ORDER BY way LOOP
        FOR q IN SELECT * FROM questions ORDER BY set, query LOOP
            WITH old AS MATERIALIZED (SELECT * FROM knowledge_old.search(q.text, k, w.options) WITH ORDINALITY),
                 new AS MATERIALIZED (SELECT * FROM knowledge.search(q.text, k, w.options) WITH ORDINALITY)
            SELECT (SELECT count(*) FROM (SELECT * FROM old EXCEPT ALL SELECT * FROM new) AS d),
                   (SELECT count(*) FROM (SELECT * FROM new EXCEPT ALL SELECT * FROM old) AS d),
                   (SELECT count(*) FROM new)
            INTO old_only, new_only, n;
            INSERT INTO differences VALUES (w.way, q.query, old_only, new_only, n);
        END LOOP;
    END LOOP;
END
$$;
\echo 'way | searches | rows | rows only in old | rows only in new'
SELECT way || ' | ' || count(*) || ' | ' || sum(rows) || ' | ' || sum(old_only) || ' | ' || sum(new_only)
FROM differences GROUP BY way ORDER BY way \g (tuples_only)
SELECT count(*) FILTER (WHERE old_only + new_only > 0) AS differing_searches, count(*) AS searches, sum(rows) AS rows
FROM differences \gset
\echo 'searches that differ:' :differing_searches 'of' :searches '(' :rows 'rows)'
SELECT :differing_searches = 0 AS equal \gset
\if :equal
\else
DO $$ BEGIN RAISE EXCEPTION 'knowledge.search and knowledge_old.search differ'; END $$;
\endif

-- Timings, interleaved: per question and way, old then new or new then old by turns.
DO $$
DECLARE
    k int := current_setting('bench.k')::int;
    w ways;
    q questions;
    i int := 0;
    f text;
    started timestamptz;
    n int;
BEGIN
    FOR round IN 1..current_setting('bench.rounds')::int LOOP
        FOR q IN SELECT * FROM questions ORDER BY set, query LOOP
            FOR w IN SELECT * FROM ways WHERE timed ORDER BY way LOOP
                i := i + 1;
                FOREACH f IN ARRAY CASE WHEN i % 2 = 0 THEN ARRAY['old', 'new'] ELSE ARRAY['new', 'old'] END LOOP
                    started := clock_timestamp();
                    IF f = 'old' THEN
                        SELECT count(*) INTO n FROM knowledge_old.search(q.text, k, w.options);
                    ELSE
                        SELECT count(*) INTO n FROM knowledge.search(q.text, k, w.options);
                    END IF;
                    INSERT INTO timings VALUES (w.way, f, extract(epoch FROM clock_timestamp() - started) * 1000);
                END LOOP;
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;
\echo 'way | searches | old p50 ms | new p50 ms | old p95 ms | new p95 ms'
SELECT coalesce(way, 'all') || ' | ' || count(*) FILTER (WHERE function = 'new') || ' | '
       || round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE function = 'old'))::numeric, 3) || ' | '
       || round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE function = 'new'))::numeric, 3) || ' | '
       || round((percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) FILTER (WHERE function = 'old'))::numeric, 3) || ' | '
       || round((percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) FILTER (WHERE function = 'new'))::numeric, 3)
FROM timings GROUP BY ROLLUP (way) ORDER BY way NULLS LAST \g (tuples_only)
