#!/usr/bin/env bash
# One GIN index on knowledge.chunks(tsv) over every config's chunks (pg_chunk before 2026-12-04)
# against one partial GIN index per config (WHERE chunk_config = name, what pg_chunk makes now),
# side by side in one database: knowledge.search's text and hybrid latency for the configs named,
# the query embeddings excluded (each query embedded into the cache before the clock, as
# bench/store/search.sql does). Layouts alternate global, per-config, per-config, global, ...
# (ROUNDS pairs), each followed by ANALYZE; the database is left with pg_chunk's own layout.
#
#   DB=pg_chunk_bench_retrieval CONFIGS=default,recursive-200 \
#     QUERIES="SELECT DISTINCT text FROM bench_queries WHERE set = 'sections'" bash bench/journal/experiments/text_index.sh
#   DB=pg_chunk_bench_store CONFIGS=default,bench100k QUERIES="SELECT query FROM bench_queries" \
#     bash bench/journal/experiments/text_index.sh
#
# The databases as bench/retrieval/run.sh and bench/store/run.sh leave them. Prints
# "layout<TAB>config<TAB>mode<TAB>p50 ms<TAB>p95 ms<TAB>searches" rows, one per round, then the
# medians of the rounds. ROUNDS (default 2), K (default 5).
set -euo pipefail

DB=${DB:?DB names the database}
CONFIGS=${CONFIGS:?CONFIGS names the configs, comma-separated}
QUERIES=${QUERIES:?QUERIES is a SELECT of the query texts}
ROUNDS=${ROUNDS:-2}
K=${K:-5}
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

# Drops every GIN index on tsv, then makes the layout asked for (pg_chunk: the installed
# extension's own, global before 2026-12-04).
layout() {
    sql <<SQL
SET client_min_messages = warning;
DO \$\$
DECLARE
    i regclass;
    c text;
BEGIN
    FOR i IN SELECT x.indexrelid::regclass FROM pg_index AS x JOIN pg_class AS r ON r.oid = x.indexrelid
             JOIN pg_am AS a ON a.oid = r.relam
             WHERE x.indrelid = 'knowledge.chunks'::regclass AND a.amname = 'gin' LOOP
        EXECUTE format('DROP INDEX %s', i);
    END LOOP;
    IF '$1' = 'global' OR ('$1' = 'pg_chunk' AND to_regproc('knowledge_internal.create_text_index') IS NULL) THEN
        CREATE INDEX chunks_tsv ON knowledge.chunks USING gin (tsv);
    ELSIF to_regproc('knowledge_internal.create_text_index') IS NOT NULL THEN
        PERFORM knowledge_internal.create_text_index(name) FROM knowledge.chunk_configs;
    ELSE
        FOR c IN SELECT name FROM knowledge.chunk_configs LOOP
            EXECUTE format('CREATE INDEX %I ON knowledge.chunks USING gin (tsv) WHERE chunk_config = %L',
                           'chunks_tsv_' || left(md5(c), 8), c);
        END LOOP;
    END IF;
END
\$\$;
ANALYZE knowledge.chunks;
SQL
}

measure() {
    sql -v layout="$1" -v configs="$CONFIGS" -v k="$K" <<SQL
SET client_min_messages = warning;
SET pg_chunk.embedding_cache_mb = 64;
SELECT set_config('bench.configs', :'configs', false) AS ignored, set_config('bench.k', :'k', false) AS ignored \gset
CREATE TEMP TABLE q (text) AS $QUERIES;
SELECT count(knowledge.embed(q.text, c.model, 'query')) AS ignored FROM q, knowledge.chunk_configs AS c
WHERE c.name = ANY (string_to_array(:'configs', ',')) \gset
CREATE TEMP TABLE timings (config text, mode text, ms float8);
DO \$\$
DECLARE
    config text;
    mode text;
    t text;
    started timestamptz;
    n int;
BEGIN
    FOREACH config IN ARRAY string_to_array(current_setting('bench.configs'), ',') LOOP
        FOREACH mode IN ARRAY ARRAY['text', 'hybrid'] LOOP
            PERFORM count(*) FROM knowledge.search('warm up the caches', 5, jsonb_build_object('mode', mode, 'config', config));
            FOR t IN SELECT q.text FROM q LOOP
                started := clock_timestamp();
                SELECT count(*) INTO n FROM knowledge.search(t, current_setting('bench.k')::int,
                                                             jsonb_build_object('mode', mode, 'config', config));
                INSERT INTO timings VALUES (config, mode, extract(epoch FROM clock_timestamp() - started) * 1000);
            END LOOP;
        END LOOP;
    END LOOP;
END
\$\$;
SELECT :'layout' || E'\t' || config || E'\t' || mode || E'\t' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2)
       || E'\t' || round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 2) || E'\t' || count(*)
FROM timings GROUP BY config, mode ORDER BY config, mode DESC;
SQL
}

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for ((round = 1; round <= ROUNDS; round++)); do
    order=(global per-config)
    ((round % 2)) || order=(per-config global)
    for l in "${order[@]}"; do
        layout "$l"
        measure "$l" | tee -a "$rows"
    done
done
layout pg_chunk
echo
echo "medians of $ROUNDS rounds (layout, config, mode, p50 ms, p95 ms):"
sort "$rows" | awk -F'\t' '
    { key = $1 "\t" $2 "\t" $3; n[key]++; p50[key, n[key]] = $4; p95[key, n[key]] = $5 }
    function median(a, key, m,   i, j, t, v) { for (i = 1; i <= m; i++) v[i] = a[key, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2 }
    END { for (key in n) printf "%s\t%.2f\t%.2f\n", key, median(p50, key, n[key]), median(p95, key, n[key]) }' | sort
