#!/usr/bin/env bash
# Bulk ingestion with one and with two background workers (docs/operations.md, "Cores: workers and threads"): DOCUMENTS (default
# 250) documents of 20,000 characters, 5 MB, inserted one per transaction by one pgbench client
# into an async chunk config with the default model, until knowledge.wait_for_queue says every
# chunk is written. pg_chunk.workers is read at server start, so each measurement restarts the
# cluster with its count; the orders alternate between rounds (RUNS, default 2). Prints the drain
# times, their ratio and the inserting session's commit latency (p50, p95).
#
#   bash bench/queue/workers.sh
#
# Needs what scripts/install.sh sets up; run as root. Restarts PostgreSQL (15 main) twice per
# round and leaves pg_chunk.workers and max_worker_processes as it found them. Creates (and drops first) the database
# pg_chunk_bench_workers and adds it to pg_chunk.worker_databases. The embedding cache and the
# stored vectors are off in it, so that no worker is helped by what another backend or round
# embedded (the run fails if any vector was kept).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

RUNS=${RUNS:-2}
DOCUMENTS=${DOCUMENTS:-250}
OUT=$BUILD_DIR/bench-workers
DB=pg_chunk_bench_workers
PGBENCH=/usr/lib/postgresql/15/bin/pgbench
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

step "workers benchmark: database $DB and $DOCUMENTS documents of 20 KB"
mkdir -p "$OUT"
configure_workers "$DB"
original_workers=$(psql -X -qAt -d postgres -c "SHOW pg_chunk.workers")
# Every database of pg_chunk.worker_databases gets pg_chunk.workers workers, all out of
# max_worker_processes (which PostgreSQL's own background workers share): make room for two each.
original_max=$(psql -X -qAt -d postgres -c "SHOW max_worker_processes")
databases=$(psql -X -qAt -d postgres -c "SHOW pg_chunk.worker_databases" | tr ',' '\n' | grep -c .)
needed=$((2 * databases + 4))
if ((original_max < needed)); then
    say "max_worker_processes = $needed (was $original_max) while it runs: $databases worker databases"
    psql -X -q -d postgres -c "ALTER SYSTEM SET max_worker_processes = $needed"
fi
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE' \
    -c "ALTER DATABASE $DB SET pg_chunk.embedding_cache_mb = 0" \
    -c "ALTER DATABASE $DB SET pg_chunk.stored_vectors_mb = 0"
python3 bench/embeddings/man_text.py --out "$OUT/man7.csv"
sql -v copies=20 -v documents="$DOCUMENTS" -f bench/queue/documents.sql <"$OUT/man7.csv"
sql <<SQL
CREATE SEQUENCE bench_next;
UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
INSERT INTO knowledge.chunk_configs (name, mode) VALUES ('bench-async', 'async');
SQL
say "$(sql -c "SELECT count(*) || ' documents, ' || round(sum(length(body)) / 1e6, 1) || ' MB' FROM bench_docs")"
script=$OUT/insert.sql
echo "INSERT INTO knowledge.documents (content, chunk_config)
SELECT body, 'bench-async' FROM bench_docs WHERE n = (SELECT nextval('bench_next'));" >"$script"

results=$OUT/results.tsv
: >"$results"
# One measurement: restart with $2 workers, insert every document, wait for the queue.
measure() {
    local round=$1 workers=$2
    psql -X -q -d postgres -c "ALTER SYSTEM SET pg_chunk.workers = $workers"
    restart_cluster
    for _ in $(seq 150); do [ "$(sql -c 'SELECT workers FROM knowledge.queue_status' 2>/dev/null || echo 0)" = "$workers" ] && break; sleep 0.2; done
    [ "$(sql -c 'SELECT workers FROM knowledge.queue_status')" = "$workers" ] || { echo "$DB has not $workers workers" >&2; exit 1; }
    sql -c "DELETE FROM knowledge.documents" -c "SELECT setval('bench_next', 1, false)" >/dev/null
    rm -f "$OUT"/pgbench_log.*
    local started seconds
    started=$(date +%s.%N)
    (cd "$OUT" && "$PGBENCH" -n -c 1 -t "$DOCUMENTS" -f "$script" --log --log-prefix=pgbench_log "$DB" >/dev/null)
    [ "$(sql -c "SELECT knowledge.wait_for_queue('60 min')")" = t ] || { echo "the queue did not drain" >&2; exit 1; }
    seconds=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    [ "$(sql -c 'SELECT count(DISTINCT document_id) FROM knowledge.chunks')" = "$DOCUMENTS" ] || { echo "not every document has chunks" >&2; exit 1; }
    [ "$(sql -c 'SELECT count(*) FROM knowledge_internal.stored_vectors')" = 0 ] || { echo "vectors were stored: later rounds may reuse them" >&2; exit 1; }
    awk -v r="$round" -v w="$workers" '{ printf "%s\t%s\tcommit_ms\t%.3f\n", r, w, $3 / 1000 }' "$OUT"/pgbench_log.* >>"$results"
    printf '%s\t%s\tdrain_s\t%s\n' "$round" "$workers" "$seconds" >>"$results"
    say "round $round, $workers worker(s): drained in $seconds s"
}

for ((round = 1; round <= RUNS; round++)); do
    order=(1 2)
    ((round % 2)) || order=(2 1)
    for workers in "${order[@]}"; do measure "$round" "$workers"; done
done
psql -X -q -d postgres -c "ALTER SYSTEM SET pg_chunk.workers = $original_workers" \
    -c "ALTER SYSTEM SET max_worker_processes = $original_max"
restart_cluster

# What follows is also written to RESULTS/workers.md (default bench/queue/results, the latest run
# kept beside this script; RESULTS= only prints it).
RESULTS=${RESULTS-bench/queue/results}
if [ -n "$RESULTS" ]; then mkdir -p "$RESULTS" && exec > >(tee "$RESULTS/workers.md"); fi
step "workers benchmark: results ($results), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores"
python3 - "$results" "$DOCUMENTS" <<'PY'
import sys
from statistics import median
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
drain = {}
commits = {1: [], 2: []}
for round_, workers, key, value in rows:
    if key == "drain_s":
        drain[(int(round_), int(workers))] = float(value)
    else:
        commits[int(workers)].append(float(value))
rounds = sorted({r for r, _ in drain})
print("| workers | drain, median of rounds | per round | commit p50 | commit p95 |")
print("|---|---|---|---|---|")
for w in (1, 2):
    times = [drain[(r, w)] for r in rounds]
    c = sorted(commits[w])
    print(f"| {w} | {median(times):.1f} s | {', '.join(f'{t:.1f}' for t in times)} | {c[len(c) // 2]:.2f} ms | {c[int(len(c) * 0.95)]:.2f} ms |")
ratios = [drain[(r, 1)] / drain[(r, 2)] for r in rounds]
print(f"\n{sys.argv[2]} documents; speed-up with two workers (same round): median {median(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)}); target ≥ 1.7.")
PY
