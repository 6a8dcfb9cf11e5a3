#!/usr/bin/env bash
# Boundary quality: segmentation of the Python 3.11 documentation by Choi's
# protocol, scored with Pk and WindowDiff; the ideas tried for the semantic strategy, scored the
# same way on the same sentence embeddings; then retrieval on the same documents, section titles
# as queries, scored with recall and precision. Prints three markdown tables.
#
#   bash bench/quality/run.sh
#
# Needs what scripts/install.sh sets up; run as root. Fetches Debian's python3.11-doc (apt-get
# download; the reST sources under html/_sources), builds samples with a fixed seed (samples.py),
# segments each with every method inside PostgreSQL (segment.sql) and scores them (score.py),
# exports the samples' sentence embeddings and scores the ideas on them (export.sql, ideas.py, in
# the reference Python environment of bench/python_env.sh), then searches every method's chunks
# with each installed model (retrieval.sql, retrieval.py).
# Creates (and drops first) the database pg_chunk_bench_quality; work files go to
# $PG_CHUNK_BUILD_DIR/quality. PER_RANGE (default 25) samples per sentence range; SEED (default
# 2026) draws them (the penalty was chosen on 2026; SEED=7 is the held-out check); RETRIEVAL=0
# skips the retrieval step (12 minutes here, most of it MiniLM).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
source bench/python_env.sh
source bench/python_docs.sh

PER_RANGE=${PER_RANGE:-25}
SEED=${SEED:-2026}
RETRIEVAL=${RETRIEVAL:-1}
OUT=$BUILD_DIR/quality
DB=pg_chunk_bench_quality
HERE=bench/quality
sql() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

step "quality: the Python 3.11 documentation"
unpack_python_docs "$OUT"
python3 $HERE/sections.py "$sources" "$OUT/sections.csv"
say "$(basename "$deb"): $(python3 -c 'import csv, sys; print(sum(1 for _ in csv.reader(open(sys.argv[1]))))' "$OUT/sections.csv") sections"

step "quality: sentences and samples ($PER_RANGE per range)"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE'
sql -f $HERE/prepare.sql <"$OUT/sections.csv" >"$OUT/sentences.csv"
python3 $HERE/samples.py "$OUT/sentences.csv" "$OUT/samples.csv" --per-range "$PER_RANGE" --seed "$SEED" --segments "$OUT/segments.csv"
say "$(wc -l <"$OUT/sentences.csv") sentences kept; $(wc -l <"$OUT/samples.csv") sentences in the samples"

step "quality: segmenting"
started=$(date +%s)
sql -f $HERE/segment.sql <"$OUT/samples.csv" >"$OUT/boundaries.csv"
say "$(($(date +%s) - started)) s"

# What follows is also written to RESULTS/quality.md (default bench/quality/results, the latest run
# kept beside this script; RESULTS= only prints it).
RESULTS=${RESULTS-bench/quality/results}
if [ -n "$RESULTS" ]; then mkdir -p "$RESULTS" && exec > >(tee "$RESULTS/quality.md"); fi
step "quality: results ($(date -u '+%Y-%m-%d %H:%M UTC'), $(basename "$deb"), seed $SEED)"
python3 $HERE/score.py "$OUT/boundaries.csv"

step "quality: the ideas, on the same sentence embeddings (seed $SEED)"
ensure_reference_venv
for model in all-minilm-l6-v2 potion-base-8m; do
    sql -v model=$model -f $HERE/export.sql >"$OUT/units-$model.csv"
done
"$REFERENCE_VENV/bin/python" $HERE/ideas.py "$OUT/units-all-minilm-l6-v2.csv" "$OUT/units-potion-base-8m.csv"

((RETRIEVAL)) || exit 0
step "quality: retrieval (section titles as queries, 10 nearest chunks)"
started=$(date +%s)
sql -f $HERE/retrieval.sql <"$OUT/segments.csv" >"$OUT/retrieval.csv"
say "$(($(date +%s) - started)) s"
python3 $HERE/retrieval.py "$OUT/retrieval.csv" --reference 'fixed (350 characters)'
