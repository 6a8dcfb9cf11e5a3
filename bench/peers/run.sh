#!/usr/bin/env bash
# Side by side: pg_chunk against the Python chunkers a user would otherwise pick (LangChain's and
# Chonkie's SemanticChunker with pg_chunk's own models, LangChain's RecursiveCharacterTextSplitter,
# semchunk), on the same machine, models and text, in one run. Prints markdown tables and draws
# the throughput ratios (ratios.svg in the results folder).
#
#   bash bench/peers/run.sh                 # the benchmark: 5 MB, 3 rounds
#   SMOKE=1 bash bench/peers/run.sh         # checks the harness: 300 KB, 300 sentences, 1 round
#
# Run as root (apt-get download, pip into its own virtual environment). Steps:
#   1. the peers' virtual environment $PG_CHUNK_BUILD_DIR/peers-venv, pinned by requirements.txt
#   2. the workload (workload.py): documents of 2-200 KB from Debian's python3.11-doc and
#      postgresql-doc-15 (apt-get download), MAX_BYTES in all, and SENTENCES sentences for the
#      embedding stage alone; in $PG_CHUNK_BUILD_DIR/peers/workload
#   3. ROUNDS rounds; each runs every peer once (peers.py, a new process each) and pg_chunk's SQL
#      workloads once, which of the two first alternating from round to round
#   4. report.py: tables; for a full run also the chart, the tables and the raw rows into
#      RESULTS (ratios.svg, results.md, results/)
# Environment: ROUNDS (default 3), MAX_BYTES (5000000), SENTENCES (5000), PEERS (comma-separated
# ids of peers.py, default all), THREADS (ONNX Runtime intra-op threads for the peers and the raw
# baseline, default 1 = pg_chunk.threads' default; give pg_chunk the same), PG=0 skips pg_chunk,
# RESULTS (the folder the chart, results.md and results/ go to; default bench/peers/results,
# the committed latest run, which results.md's header describes). Rounds can
# be spread over several sittings: give each the same OUT (the rows accumulate there, and the
# report covers them all) and FIRST_ROUND 1, 2, 3 with ROUNDS=1.
# With MiniLM the semantic peers are slow on two cores: budget about two hours a round for 5 MB
# (smoke, 60 KB: LangChain 38 s, Chonkie 48 s with chunk embedding), plus pg_chunk's own time.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

HERE=bench/peers
WORK=$BUILD_DIR/peers
VENV=$BUILD_DIR/peers-venv
if [ "${SMOKE:-0}" = 1 ]; then
    ROUNDS=${ROUNDS:-1} MAX_BYTES=${MAX_BYTES:-300000} SENTENCES=${SENTENCES:-300}
else
    ROUNDS=${ROUNDS:-3} MAX_BYTES=${MAX_BYTES:-5000000} SENTENCES=${SENTENCES:-5000}
fi
THREADS=${THREADS:-1}
PEERS=${PEERS:-}
PG=${PG:-1}
RESULTS=${RESULTS:-$HERE/results}
WORKLOAD=$WORK/workload
OUT=${OUT:-$WORK/results-$(date -u +%Y%m%dT%H%M%SZ)}
FIRST_ROUND=${FIRST_ROUND:-1}

step "peers: Python environment $VENV"
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
fi
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if diff -q <(grep -v '^#' $HERE/requirements.txt | tr 'A-Z_' 'a-z-' | sort) \
           <("$VENV/bin/python" -m pip freeze | tr 'A-Z_' 'a-z-' | sort) >/dev/null; then
    say "has requirements.txt"
else
    say "installing requirements.txt"
    "$VENV/bin/python" -m pip install -q --progress-bar off -r $HERE/requirements.txt
fi

step "peers: workload ($MAX_BYTES bytes, $SENTENCES sentences)"
mkdir -p "$WORK/debs"
for package in python3.11-doc postgresql-doc-15; do
    compgen -G "$WORK/debs/${package}_*_all.deb" >/dev/null || (cd "$WORK/debs" && apt-get download "$package")
done
debs=()
for package in python3.11-doc postgresql-doc-15; do
    debs+=(--deb "$(compgen -G "$WORK/debs/${package}_*_all.deb" | sort | tail -n1)")
done
python3 $HERE/workload.py "${debs[@]}" --out "$WORKLOAD" --max-bytes "$MAX_BYTES" --sentences "$SENTENCES"

run_peers() { # round
    "$VENV/bin/python" $HERE/peers.py --workload "$WORKLOAD" --out "$OUT" --rounds 1 --first-round "$1" \
        --threads "$THREADS" ${PEERS:+--peers "$PEERS"}
}

# ---- pg_chunk through SQL -------------------------------------------------------------------
# bench/peers/pg_chunk.sh WORKLOAD OUT ROUND measures pg_chunk on the same workload and appends
# its rows to OUT/pg_chunk.jsonl in the schema of bench/peers/README.md (semantic_chunk and the
# insert trigger with each model, the recursive strategy, embed_batch of sentences.txt, the first
# call in a fresh backend, the backend's peak memory), with pg_chunk.threads = THREADS.
run_pg_chunk() { # round
    if ((PG == 0)); then
        return
    elif [ -f $HERE/pg_chunk.sh ]; then
        THREADS=$THREADS bash $HERE/pg_chunk.sh "$WORKLOAD" "$OUT" "$1"
    else
        say "round $1: no $HERE/pg_chunk.sh yet, pg_chunk not measured"
    fi
}
# ---------------------------------------------------------------------------------------------

step "peers: $ROUNDS rounds from round $FIRST_ROUND into $OUT"
mkdir -p "$OUT"
for ((round = FIRST_ROUND; round < FIRST_ROUND + ROUNDS; round++)); do
    if ((round % 2)); then run_pg_chunk $round; run_peers $round; else run_peers $round; run_pg_chunk $round; fi
done

step "peers: results ($(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -c . "$WORKLOAD/manifest.tsv") documents, $MAX_BYTES bytes asked, $ROUNDS rounds)"
if [ "${SMOKE:-0}" = 1 ]; then
    python3 $HERE/report.py "$OUT" --chart "$OUT/ratios.svg"
else
    mkdir -p "$RESULTS"
    python3 $HERE/report.py "$OUT" --chart "$RESULTS/ratios.svg" --markdown "$RESULTS/results.md"
    rm -rf "$RESULTS/results" && mkdir -p "$RESULTS/results"
    cp "$OUT"/*.jsonl "$OUT/environment.json" "$OUT/summary.csv" "$WORKLOAD/manifest.tsv" "$RESULTS/results/"
fi
