#!/usr/bin/env bash
# Store benchmark: documents/s through the knowledge.documents trigger against
# chunking and embedding the same documents alone, knowledge.search latency at 100,000 chunks
# (each mode, and hybrid with a selective and a broad metadata filter: search.sql), and its
# text leg against exhaustive BM25 there (text_exact.sql). Prints markdown tables.
#
#   bash bench/store/run.sh
#
# Needs what scripts/install.sh sets up; run as root. Creates (and drops first) the database
# pg_chunk_bench_store. Documents: PostgreSQL's SQL reference pages (man section 7) as
# bench/embeddings/man_text.py writes them, one page a document (about 800 KB in all).
# RUNS (default 3; 0 skips ingestion) rounds alternate the two ingestion workloads; MINILM_PAGES (default 40)
# pages for all-MiniLM-L6-v2, every page for potion-base-8m.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

RUNS=${RUNS:-3}
MINILM_PAGES=${MINILM_PAGES:-40}
COPIES=${COPIES:-50}
OUT=$BUILD_DIR/bench-store
DB=pg_chunk_bench_store
HERE=bench/store
results=$OUT/ingest.tsv

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

step "store benchmark: database $DB and documents"
mkdir -p "$OUT"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE'
python3 bench/embeddings/man_text.py --out "$OUT/man7.csv"
sql -c 'CREATE TABLE bench_pages (page text PRIMARY KEY, body text NOT NULL)' \
    -c "\\copy bench_pages FROM '$OUT/man7.csv' WITH (FORMAT csv)"
say "$(sql -c "SELECT count(*) || ' pages, ' || pg_size_pretty(sum(octet_length(body))) FROM bench_pages")"

step "store benchmark: ingestion, $RUNS rounds"
: >"$results"
all_pages=$(sql -c 'SELECT count(*) FROM bench_pages')
for ((round = 1; round <= RUNS; round++)); do
    for model in potion-base-8m all-minilm-l6-v2; do
        pages=$all_pages
        [ "$model" = all-minilm-l6-v2 ] && pages=$MINILM_PAGES
        order=(alone trigger)
        # For the static model, also what the HNSW index's upkeep costs.
        [ "$model" = potion-base-8m ] && order+=(trigger-no-hnsw)
        ((round % 2)) || order=($(printf '%s\n' "${order[@]}" | tac))
        for workload in "${order[@]}"; do
            # ingest.sql prints "key value" (psql's \echo joins its words with one space).
            sql -v workload="$workload" -v model="$model" -v pages="$pages" -f $HERE/ingest.sql |
                sed "s/ /\t/; s/^/$round\t$model\t$workload\t/" >>"$results"
            say "round $round: $model $workload $(awk -F'\t' -v r="$round" -v m="$model" -v w="$workload" '$1 == r && $2 == m && $3 == w && $4 == "seconds" { printf "%.2f s", $5 }' "$results")"
        done
    done
done

step "store benchmark: $COPIES copies of every page, fixed 400-character chunks, potion-base-8m"
sql <<SQL
SET client_min_messages = warning;
TRUNCATE knowledge.documents CASCADE;
UPDATE knowledge.chunk_configs SET model = 'all-minilm-l6-v2' WHERE name = 'default';
INSERT INTO knowledge.chunk_configs (name, cfg, model, active)
VALUES ('bench100k', '{"strategy": "fixed", "max_size": 400, "overlap": 0}', 'potion-base-8m', false);
-- Loading then building the HNSW index is much faster than growing it row by row.
SELECT knowledge_internal.drop_vector_index('bench100k');
INSERT INTO knowledge.documents (content, chunk_config, metadata)
SELECT 'Copy ' || copy || ' of ' || page || '. ' || body, 'bench100k', jsonb_build_object('copy', copy, 'page', page)
FROM bench_pages, generate_series(1, $COPIES) AS copy;
SET maintenance_work_mem = '1GB';
SELECT knowledge_internal.create_vector_index(c) FROM knowledge.chunk_configs AS c WHERE c.name = 'bench100k';
VACUUM ANALYZE knowledge.documents, knowledge.chunks;
-- 100 queries: the first 80 characters of every 40th sentence of the pages, cut at a word.
CREATE TABLE bench_queries AS
SELECT row_number() OVER () AS i, regexp_replace(left(content, 80), '\s+\S*$', '') AS query
FROM (SELECT s.content, row_number() OVER (ORDER BY p.page, s.sentence_index) AS n
      FROM bench_pages AS p, knowledge.split_sentences(p.body) AS s WHERE length(s.content) > 40) AS sentences
WHERE n % 40 = 0 LIMIT 100;
SQL
say "$(sql -c "SELECT count(*) || ' chunks in ' || count(DISTINCT document_id) || ' documents' FROM knowledge.chunks WHERE chunk_config = 'bench100k'")"

step "store benchmark: search latency"
search_bench=$(sql -v config=bench100k -v embedding=included -v filtered=on -f $HERE/search.sql)
search_bench_alone=$(sql -v config=bench100k -v embedding=excluded -v filtered=on -f $HERE/search.sql)
# The same queries against the MiniLM chunks of the last ingestion rounds' documents, for the
# cost of a transformer's query embedding.
sql -c "SET client_min_messages = warning" -c "INSERT INTO knowledge.documents (content) SELECT body FROM bench_pages ORDER BY page LIMIT $MINILM_PAGES"
minilm_chunks=$(sql -c "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'default'")
search_minilm=$(sql -v config=default -v embedding=included -f $HERE/search.sql)
step "store benchmark: the text leg against exhaustive BM25"
text_exact=$(sql -v config=bench100k -f $HERE/text_exact.sql)

# What follows is also written to RESULTS/store.md (default bench/store/results, the latest run
# kept beside this script; RESULTS= only prints it).
RESULTS=${RESULTS-bench/store/results}
if [ -n "$RESULTS" ]; then mkdir -p "$RESULTS" && exec > >(tee "$RESULTS/store.md"); fi
step "store benchmark: results"
say "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(cpu_description)), $(psql -X -At -d "$DB" -c "SELECT 'PostgreSQL ' || current_setting('server_version')")"
echo
if [ -s "$results" ]; then
    echo "| model | documents | MB | alone (s, median) | through trigger (s, median) | trigger / alone (per round: median, range) | without the HNSW index / alone (median) | documents/s through trigger |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -F'\t' '
    { v[$1, $2, $3, $4] = $5; models[$2] = 1; rounds[$1] = 1 }
    function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END {
        for (m in models) {
            n = 0; delete alone; delete trig; delete ratio; delete bare
            for (r in rounds) { n++; alone[n] = v[r, m, "alone", "seconds"]; trig[n] = v[r, m, "trigger", "seconds"]; ratio[n] = trig[n] / alone[n]
                                bare[n] = ((r, m, "trigger-no-hnsw", "seconds") in v) ? v[r, m, "trigger-no-hnsw", "seconds"] / alone[n] : "" }
            lo = hi = ratio[1]; for (i = 2; i <= n; i++) { if (ratio[i] < lo) lo = ratio[i]; if (ratio[i] > hi) hi = ratio[i] }
            docs = v[1, m, "trigger", "documents"]; t = median(trig, n)
            without = bare[1] == "" ? "—" : sprintf("%.2f", median(bare, n))
            printf "| %s | %d | %.2f | %.2f | %.2f | %.2f (%.2f–%.2f, %d rounds) | %s | %.1f |\n", m, docs, v[1, m, "trigger", "bytes"] / 1e6,
                median(alone, n), t, median(ratio, n), lo, hi, n, without, docs / t
        }
    }' "$results"
    echo
fi
echo "| search (k = 10) | query embedding | chunks | p50 ms | p95 ms | queries | mean results |"
echo "|---|---|---|---|---|---|---|"
chunks=$(sql -c "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'bench100k'")
row() { awk -F'\t' -v m="$1" -v e="$2" -v c="$3" '{ printf "| %s, %s | %s | %s | %s | %s | %s | %s |\n", $1, m, e, c, $2, $3, $4, $5 }'; }
row potion-base-8m included "$chunks" <<<"$search_bench"
row potion-base-8m excluded "$chunks" <<<"$search_bench_alone"
row all-minilm-l6-v2 included "$minilm_chunks" <<<"$search_minilm"
echo
echo "| text leg (k = 10, $chunks chunks; bench/store/text_exact.sql) | p50 ms | p95 ms | queries | % of exhaustive BM25's top 10 | queries with exactly its top 10 |"
echo "|---|---|---|---|---|---|"
awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' <<<"$text_exact"
