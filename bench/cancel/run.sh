#!/usr/bin/env bash
# Cancel benchmark: how long a statement working on one 5 MB document takes to stop once asked,
# for knowledge.semantic_chunk, knowledge.chunk (recursive, with quality metadata),
# knowledge.rechunk_all of a config holding the document, and an insert of it into
# knowledge.documents; each stopped RUNS times by statement_timeout and RUNS times by
# pg_cancel_backend, at a point drawn at random within its work, while a second client
# (pgbench) chunks a 200 KB document in a loop. Prints p50, p99 and
# max of the delay per case (milliseconds from the request to the statement's end, as
# pg_stat_activity records the backend ready for the next statement) as a markdown table.
#
#   bash bench/cancel/run.sh
#
# Needs what scripts/install.sh sets up; run as root. Creates (and drops first) the database
# pg_chunk_bench_cancel. RUNS (default 30) stops per case and way; MODEL (default lexical, the
# model-free embedder, so that the chunking core's own loops and the store's writes are what a
# cancel meets; all-minilm-l6-v2 meets inference) chunks and embeds everything; WINDOW (default
# 10 seconds) bounds the point of the request when the uncancelled statement takes longer.
# PGPORT and PGHOST choose the server, as for psql.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

RUNS=${RUNS:-30}
MODEL=${MODEL:-lexical}
WINDOW=${WINDOW:-10}
OUT=$BUILD_DIR/bench-cancel
DB=pg_chunk_bench_cancel
PGBENCH=/usr/lib/postgresql/15/bin/pgbench

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

# The four statements, each on the whole 5 MB document.
declare -A STATEMENTS=(
    [semantic_chunk]="SELECT count(*) FROM bench_document, knowledge.semantic_chunk(body, '{\"model\": \"$MODEL\"}')"
    [chunk]="SELECT count(*) FROM bench_document, knowledge.chunk(body, '{\"strategy\": \"recursive\", \"model\": \"$MODEL\", \"metadata\": true}')"
    [rechunk_all]="SELECT knowledge.rechunk_all('bench')"
    [insert]="INSERT INTO knowledge.documents (content) SELECT body FROM bench_document"
)
OPERATIONS=(semantic_chunk chunk rechunk_all insert)

step "cancel benchmark: database $DB, a 5 MB document, model $MODEL"
mkdir -p "$OUT"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE'
sql -v cfg='{}' -v model="$MODEL" -f bench/cancel/setup.sql
say "$(sql -c "SELECT pg_size_pretty(octet_length(body)::bigint) FROM bench_document"), $(sql -c 'SELECT count(*) FROM knowledge.chunks') chunks in config bench"

# The second client: chunks and embeds 200 KB in a loop until the benchmark ends.
printf '%s\n' "SELECT count(*) FROM bench_load, knowledge.semantic_chunk(body, '{\"model\": \"$MODEL\"}');" >"$OUT/load.sql"
"$PGBENCH" -n -c 1 -T 86400 -f "$OUT/load.sql" "$DB" >"$OUT/load.log" 2>&1 &
load_pid=$!
trap 'kill "$load_pid" 2>/dev/null || true' EXIT

# Seconds the statement of $1 takes when nothing stops it (rolled back), under the load.
full_seconds() {
    sql <<SQL
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT clock_timestamp() AS started \gset
\o /dev/null
${STATEMENTS[$1]};
\o
SELECT extract(epoch FROM clock_timestamp() - :'started'::timestamptz);
ROLLBACK;
SQL
}

delays=$OUT/delays.tsv
: >"$delays"
stops=0
# Runs the statement of operation $1 in a backend of its own and stops it $3 seconds after its
# start, by $2 (statement_timeout or pg_cancel_backend); appends operation, way, point and the
# delay in ms to delays.tsv, or "finished" when the statement ended first or failed otherwise.
stop_once() {
    local operation=$1 way=$2 point=$3 timeout='' target_pid delay outcome
    # Its own application_name: the backend of the stop before may still be exiting.
    local target="cancel_bench_$((++stops))"
    [ "$way" = statement_timeout ] && timeout="$(awk -v p="$point" 'BEGIN { printf "%d", p < 0.001 ? 1 : p * 1000 }')ms"
    # The backend stays connected (idle) a moment after the statement, so that its end is seen.
    PGAPPNAME=$target psql -X -q -d "$DB" -c "SET client_min_messages = warning" \
        ${timeout:+-c "SET statement_timeout = '$timeout'"} \
        -c "/* cancel-bench */ ${STATEMENTS[$operation]}" -c '\! sleep 0.3' >/dev/null 2>"$OUT/target.err" &
    target_pid=$!
    if [ -n "$timeout" ]; then
        delay=$(sql -c "SELECT bench_stop('$target', NULL, '$timeout')")
    else
        delay=$(sql -c "SELECT bench_stop('$target', '$point seconds')")
    fi
    wait "$target_pid" || true
    if grep -q 'canceling statement due to' "$OUT/target.err" && [ -n "$delay" ]; then
        outcome=$delay
    else
        outcome=finished
    fi
    printf '%s\t%s\t%s\t%s\n' "$operation" "$way" "$point" "$outcome" >>"$delays"
}

for operation in "${OPERATIONS[@]}"; do
    full=$(full_seconds "$operation")
    window=$(awk -v f="$full" -v w="$WINDOW" 'BEGIN { print (f < w ? f : w) }')
    say "$operation: $(printf '%.2f' "$full") s unstopped; stops drawn within the first $(printf '%.2f' "$window") s"
    for ((run = 1; run <= RUNS; run++)); do
        # The two ways alternate; each point is drawn within 5% to 95% of the window.
        for way in statement_timeout pg_cancel_backend; do
            point=$(awk -v w="$window" -v s="$RANDOM$run" 'BEGIN { srand(s); printf "%.3f", w * (0.05 + 0.9 * rand()) }')
            stop_once "$operation" "$way" "$point"
        done
    done
done
kill "$load_pid" 2>/dev/null || true

# What follows is also written to RESULTS/cancel.md (default bench/cancel/results, the latest run
# kept beside this script; RESULTS= only prints it).
RESULTS=${RESULTS-bench/cancel/results}
if [ -n "$RESULTS" ]; then mkdir -p "$RESULTS" && exec > >(tee "$RESULTS/cancel.md"); fi
step "cancel benchmark: milliseconds from the request to the statement's end"
say "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(cpu_description)), $(sql -c "SELECT 'PostgreSQL ' || current_setting('server_version')"), model $MODEL, a second client chunking 200 KB in a loop"
echo
echo "| operation | stopped by | stops | p50 | p99 | max | ended before the request |"
echo "|---|---|---|---|---|---|---|"
for operation in "${OPERATIONS[@]}"; do
    for way in statement_timeout pg_cancel_backend; do
        awk -F'\t' -v o="$operation" -v w="$way" '$1 == o && $2 == w { print $4 }' "$delays" | sort -g |
            awk -v o="$operation" -v w="$way" '
                $1 == "finished" { finished++; next }
                { v[++n] = $1 }
                END {
                    if (n == 0) { printf "| %s | %s | 0 | | | | %d |\n", o, w, finished; exit }
                    p99 = int(n * 0.99 + 0.999); if (p99 > n) p99 = n
                    printf "| %s | %s | %d | %.1f | %.1f | %.1f | %d |\n", o, w, n, v[int((n + 1) / 2)], v[p99], v[n], finished
                }'
    done
done
