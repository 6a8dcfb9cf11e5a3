#!/usr/bin/env bash
# Asynchronous ingestion benchmark, per model, RUNS rounds side by side:
#   1. insert latency of one 20 KB document, committed, in a sync and in an async chunk config
#      (pgbench, one client, each insert its own transaction; p50 and p95);
#   2. throughput: N such documents inserted in one statement, until their chunks are written:
#      sync (the statement returns when they are) against async (the statement, then until
#      knowledge.wait_for_queue returns, the background worker doing the work).
# Prints markdown tables.
#
#   bash bench/queue/run.sh
#
# Needs what scripts/install.sh sets up; run as root. Creates (and drops first) the database
# pg_chunk_bench_queue and adds it to pg_chunk.worker_databases (restarting the cluster once
# when it is not there yet). Documents: 20,000-character pieces of PostgreSQL's SQL reference
# pages (man section 7, as bench/embeddings/man_text.py writes them), in 3 numbered copies. The
# embedding cache is off in the database: the worker's backend lives through every round and
# the clients' do not, so a cache would favour async. So are the stored vectors, which would
# give the copies and later rounds the vectors of earlier ones (the run fails if any were kept).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

RUNS=${RUNS:-3}
OUT=$BUILD_DIR/bench-queue
DB=pg_chunk_bench_queue
PGBENCH=/usr/lib/postgresql/15/bin/pgbench
# Inserts per latency run and documents per throughput run, per model (the transformer takes
# about a second and a half per 20 KB document).
declare -A LATENCY_INSERTS=([potion-base-8m]=200 [all-minilm-l6-v2]=10)
declare -A DRAIN_DOCUMENTS=([potion-base-8m]=100 [all-minilm-l6-v2]=8)
MODELS=(potion-base-8m all-minilm-l6-v2)

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

step "queue benchmark: database $DB, its worker, and 20 KB documents"
mkdir -p "$OUT"
configure_workers "$DB"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE' \
    -c "ALTER DATABASE $DB SET pg_chunk.embedding_cache_mb = 0" \
    -c "ALTER DATABASE $DB SET pg_chunk.stored_vectors_mb = 0"
python3 bench/embeddings/man_text.py --out "$OUT/man7.csv"
sql -v copies=3 -v documents=1000000 -f bench/queue/documents.sql <"$OUT/man7.csv"
sql <<SQL
UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
INSERT INTO knowledge.chunk_configs (name, model, mode, active)
SELECT 'bench-' || mode || '-' || model, model, mode, false
FROM unnest(ARRAY['potion-base-8m', 'all-minilm-l6-v2']) AS model, unnest(ARRAY['sync', 'async']) AS mode;
SQL
documents=$(sql -c 'SELECT count(*) FROM bench_docs')
say "$documents documents of 20,000 characters"
# Wait for this database's worker (the postmaster starts it within seconds of CREATE DATABASE).
for _ in $(seq 100); do [ "$(sql -c 'SELECT workers FROM knowledge.queue_status')" -gt 0 ] && break; sleep 0.2; done
[ "$(sql -c 'SELECT workers FROM knowledge.queue_status')" -gt 0 ] || { echo "no pg_chunk worker serves $DB" >&2; exit 1; }

latency_tsv=$OUT/latency.tsv
drain_tsv=$OUT/drain.tsv
: >"$latency_tsv"
: >"$drain_tsv"

# Inserts $3 documents one transaction each with pgbench, into config $2; appends the latencies
# (ms) to latency.tsv as round, model, mode, ms.
measure_latency() {
    local round=$1 model=$2 mode=$3 inserts=$4 script
    script=$OUT/insert.sql
    printf '%s\n' "\\set n random(1, $documents)" \
        "INSERT INTO knowledge.documents (content, chunk_config) SELECT body, 'bench-$mode-$model' FROM bench_docs WHERE n = :n;" >"$script"
    rm -f "$OUT"/pgbench_log.*
    (cd "$OUT" && "$PGBENCH" -n -c 1 -t "$inserts" -f "$script" --log --log-prefix=pgbench_log "$DB" >/dev/null)
    # pgbench's log: client, transaction, latency in microseconds, ...
    awk -v r="$round" -v m="$model" -v w="$mode" '{ printf "%s\t%s\t%s\t%.3f\n", r, m, w, $3 / 1000 }' "$OUT"/pgbench_log.* >>"$latency_tsv"
    sql -c "SELECT knowledge.wait_for_queue('30 min')" >/dev/null
    sql -c "DELETE FROM knowledge.documents"
}

# Inserts $4 documents in one statement and waits for their chunks; appends round, model,
# mode, seconds to drain.tsv.
measure_drain() {
    local round=$1 model=$2 mode=$3 count=$4
    sql -v config="bench-$mode-$model" -v count="$count" <<'SQL' | sed "s/^/$round\t$model\t$mode\t/" >>"$drain_tsv"
SELECT clock_timestamp() AS started \gset
INSERT INTO knowledge.documents (content, chunk_config) SELECT body, :'config' FROM bench_docs WHERE n <= :count;
SELECT knowledge.wait_for_queue('30 min') AS drained \gset
SELECT extract(epoch FROM clock_timestamp() - :'started'::timestamptz)
WHERE :'drained' AND (SELECT count(DISTINCT document_id) FROM knowledge.chunks) = :count;
DELETE FROM knowledge.documents;
SQL
}

for ((round = 1; round <= RUNS; round++)); do
    modes=(sync async)
    ((round % 2)) || modes=(async sync)
    for model in "${MODELS[@]}"; do
        for mode in "${modes[@]}"; do
            measure_latency "$round" "$model" "$mode" "${LATENCY_INSERTS[$model]}"
            measure_drain "$round" "$model" "$mode" "${DRAIN_DOCUMENTS[$model]}"
            say "round $round: $model $mode done"
        done
    done
done
kept=$(sql -c 'SELECT count(*) FROM knowledge_internal.stored_vectors')
[ "$kept" = 0 ] || { echo "$kept vectors were stored: later rounds may have reused them" >&2; exit 1; }

# What follows is also written to RESULTS/queue.md (default bench/queue/results, the latest run
# kept beside this script; RESULTS= only prints it).
RESULTS=${RESULTS-bench/queue/results}
if [ -n "$RESULTS" ]; then mkdir -p "$RESULTS" && exec > >(tee "$RESULTS/queue.md"); fi
step "insert latency of one 20 KB document (ms; all rounds' inserts pooled)"
echo "| model | mode | inserts | p50 | p95 |"
echo "|---|---|---|---|---|"
for model in "${MODELS[@]}"; do
    for mode in sync async; do
        awk -F'\t' -v m="$model" -v w="$mode" '$2 == m && $3 == w { print $4 }' "$latency_tsv" | sort -g |
            awk -v m="$model" -v w="$mode" '{ v[NR] = $1 } END { printf "| %s | %s | %d | %.2f | %.2f |\n", m, w, NR, v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)] }'
    done
done

step "ingestion until the chunks are written (median seconds of $RUNS rounds)"
echo "| model | documents | sync | async (insert + drain) | async throughput / sync |"
echo "|---|---|---|---|---|"
for model in "${MODELS[@]}"; do
    median() { awk -F'\t' -v m="$model" -v w="$1" '$2 == m && $3 == w { print $4 }' "$drain_tsv" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    sync=$(median sync)
    async=$(median async)
    awk -v m="$model" -v n="${DRAIN_DOCUMENTS[$model]}" -v s="$sync" -v a="$async" 'BEGIN { printf "| %s | %d | %.2f s | %.2f s | %.2f |\n", m, n, s, a, s / a }'
done
