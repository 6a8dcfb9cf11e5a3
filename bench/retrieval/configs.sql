-- The chunk configs under test, for bench/retrieval/run.sh:
--   psql -d DB -v configs=NAME,NAME -f configs.sql < configs.tsv
-- configs.tsv: a header line, then tab-separated rows (name, cfg, model, description). Each config
-- named in :configs becomes a row of knowledge.chunk_configs: model embeds its chunks, and a cfg
-- that names another model cuts with that one (sized for the first, docs/store.md). Except
-- "default": that is the row the extension creates, left as it is (its cfg {} means whatever the
-- installed version's defaults are), and made inactive when it is not named, so that documents
-- are chunked only with the configs under test. Prints them as a markdown table.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE TEMP TABLE bench_configs (name text PRIMARY KEY, cfg jsonb NOT NULL, model text NOT NULL, description text);
\copy bench_configs FROM pstdin WITH (FORMAT text, HEADER true)
CREATE TEMP TABLE bench_selected AS
SELECT btrim(name) AS name, position FROM unnest(string_to_array(:'configs', ',')) WITH ORDINALITY AS s(name, position);
DO $$
DECLARE
    unknown text := (SELECT string_agg(s.name, ', ') FROM bench_selected AS s LEFT JOIN bench_configs AS c USING (name) WHERE c.name IS NULL);
BEGIN
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'no config % in configs.tsv', unknown;
    END IF;
END $$;
UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default' AND name NOT IN (SELECT name FROM bench_selected);
INSERT INTO knowledge.chunk_configs (name, cfg, model, description)
SELECT c.name, c.cfg, c.model, c.description
FROM bench_configs AS c JOIN bench_selected USING (name) WHERE c.name <> 'default';
\pset format unaligned
\pset tuples_only on
SELECT '| config | model | effective cfg | description |' UNION ALL SELECT '|---|---|---|---|';
SELECT format('| %s | %s | `%s` | %s |', k.name, k.model, k.effective_cfg, c.description)
FROM knowledge.chunk_configs AS k JOIN bench_selected AS s USING (name) JOIN bench_configs AS c USING (name)
WHERE k.active ORDER BY s.position;
