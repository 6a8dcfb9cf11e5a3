#!/usr/bin/env bash
# Embedding benchmark: all-MiniLM-L6-v2 through SQL against plain ONNX Runtime, the
# static potion-base-8m, multilingual-e5-small, model load time and backend memory. Prints a markdown table.
#
#   bash bench/embeddings/run.sh
#
# Needs what scripts/install.sh sets up (the running 15 main cluster, pg_chunk with its models,
# a superuser role for this OS user); run as root (it reads the models and pip-installs into
# its own virtual environment). Creates (and drops first) the database pg_chunk_bench. Work
# files go to $PG_CHUNK_BUILD_DIR/bench (default /var/cache/pg_chunk-build/bench), among them
# sentences.txt (the corpus) and results.tsv (every measurement).
#
# The machines are small and shared, so the runs being compared alternate: each round runs
# the raw baseline and each SQL workload once, in an order that rotates from round to round,
# and the table gives medians over rounds. RUNS (default 5) rounds; LOADS (default 5) fresh
# backends per model for load time and memory.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

RUNS=${RUNS:-5}
LOADS=${LOADS:-5}
CONCURRENT=${CONCURRENT:-16}
OUT=$BUILD_DIR/bench
source bench/python_env.sh
VENV=$REFERENCE_VENV
DB=pg_chunk_bench
HERE=bench/embeddings
models=$(pg_chunk_models_dir)
results=$OUT/results.tsv

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

step "embeddings benchmark: prerequisites"
[ -f "$models/all-minilm-l6-v2/model.onnx" ] && [ -f "$models/potion-base-8m/model.safetensors" ] ||
    { echo "no models in $models: run scripts/install.sh first" >&2; exit 1; }
psql -X -q -d postgres -c 'SELECT 1' >/dev/null || { echo "cannot connect to PostgreSQL: run scripts/install.sh first" >&2; exit 1; }
ensure_reference_venv
mkdir -p "$OUT"

step "embeddings benchmark: database $DB and corpus"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE'
"$VENV/bin/python" $HERE/man_text.py --out "$OUT/man7.csv"
sql -c 'SET client_min_messages = warning' -f $HERE/corpus.sql <"$OUT/man7.csv"
sql -c 'SELECT sentence FROM bench_sentences ORDER BY i' >"$OUT/sentences.txt"
# The semantic_chunk document must split back into the very sentences the other runs embed.
same=$(sql -c "WITH units AS (SELECT u.* FROM knowledge.split_sentences(
                   (SELECT string_agg(sentence, ' ' ORDER BY i) FROM bench_sentences)) AS u)
               SELECT count(*) = 2000 AND bool_and(u.content IS NOT DISTINCT FROM b.sentence)
               FROM units AS u FULL JOIN bench_sentences AS b ON b.i = u.sentence_index + 1")
lines=$(wc -l <"$OUT/sentences.txt")
[ "$lines" = 2000 ] && [ "$same" = t ] || { echo "corpus: $lines sentences, document splits back into them: $same" >&2; exit 1; }
say "$OUT/sentences.txt: 2,000 sentences, $(wc -c <"$OUT/sentences.txt") bytes"

run_workload() { # round workload
    local round=$1 workload=$2
    if [ "$workload" = raw ]; then
        "$VENV/bin/python" $HERE/raw_ort.py "${minilm_files[@]}" --sentences "$OUT/sentences.txt"
    else
        sql -v workload="$workload" -f $HERE/throughput.sql
    fi | sed "s/^/$round\t$workload\t/" >>"$results"
    say "round $round: $workload $(awk -F'\t' -v r="$round" -v w="$workload" '$1 == r && $2 == w && $3 == "seconds" { printf "%.2f s", $4 }' "$results")"
}

# The raw baseline loads the files knowledge.models names, as the extension does.
# The raw baseline runs the default model's file as the extension does: one text a run when the
# graph quantizes its activations with one scale a run (crates/pg_chunk_embed/src/transformer.rs).
mapfile -t minilm_files < <(sql -c "SELECT '--model-file=$models/' || model_file, '--tokenizer-file=$models/' || tokenizer_file
    FROM knowledge.models WHERE name = 'all-minilm-l6-v2'"  -c "SELECT '--no-graph-optimization' FROM knowledge.models
    WHERE name = 'all-minilm-l6-v2' AND NOT optimize_graph" | tr '|' '\n')
if grep -q DynamicQuantize "${minilm_files[0]#--model-file=}"; then minilm_files+=(--batch-size=1); fi

step "embeddings benchmark: throughput, $RUNS rounds"
: >"$results"
workloads=(raw embed_batch float_batch semantic_chunk potion_batch e5_batch e5_float_batch)
for ((round = 1; round <= RUNS; round++)); do
    for ((k = 0; k < ${#workloads[@]}; k++)); do
        run_workload "$round" "${workloads[(round - 1 + k) % ${#workloads[@]}]}"
    done
done

# The wheel's model.onnx as it is, optimised by ONNX Runtime at each load (how MiniLM was
# registered before the installer made its optimised copy), for its load time and memory.
step "embeddings benchmark: model load and memory, $LOADS fresh backends per model"
for ((round = 1; round <= LOADS; round++)); do
    for model in all-minilm-l6-v2 all-minilm-l6-v2-float potion-base-8m multilingual-e5-small multilingual-e5-small-float; do
        sql -v model="$model" -f $HERE/backend.sql | sed "s/^/$round\tbackend:$model\t/" >>"$results"
    done
    say "round $round done"
done

# What one model costs a server behind a pool: 16 backends at once, each loading the default
# model and embedding the 2,000 sentences; their private memory (RssAnon) grows independently,
# so the cluster's growth is the sum of theirs.
step "embeddings benchmark: $CONCURRENT backends at once, all-minilm-l6-v2"
for ((b = 1; b <= CONCURRENT; b++)); do
    sql -v model=all-minilm-l6-v2 -f $HERE/backend.sql | sed "s/^/$b\tconcurrent:all-minilm-l6-v2\t/" >"$OUT/concurrent.$b" &
done
wait
cat "$OUT"/concurrent.* >>"$results"
rm -f "$OUT"/concurrent.*

# What follows is also written to RESULTS/embeddings.md (default bench/embeddings/results, the latest run
# kept beside this script; RESULTS= only prints it).
RESULTS=${RESULTS-bench/embeddings/results}
if [ -n "$RESULTS" ]; then mkdir -p "$RESULTS" && exec > >(tee "$RESULTS/embeddings.md"); fi
step "embeddings benchmark: results ($results)"
say "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(cpu_description)), $(psql -X -At -d "$DB" -c "SELECT 'PostgreSQL ' || current_setting('server_version') || ', pg_chunk ' || extversion FROM pg_extension WHERE extname = 'pg_chunk'")"
say "$RUNS rounds; $LOADS fresh backends per model; corpus $OUT/sentences.txt"
echo
"$VENV/bin/python" $HERE/report.py "$results"
