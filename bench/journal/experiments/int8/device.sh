#!/usr/bin/env bash
# across.py on a machine of another CPU kind that has Python 3.12 with numpy, onnx and tokenizers
# but no pg_chunk (the device machine of bench/journal/int8.md): makes all-MiniLM-L6-v2's float
# copy and integer graph as scripts/models.sh does (ONNX Runtime's Python API in place of
# pg_chunk_optimize_model, same options), prints their sha256 beside the ones models.sh pins, and
# runs across.py, which writes OUT_DIR/vectors.npz.
#
#     bash bench/journal/experiments/int8/device.sh CARRY OUT_DIR [ROUNDS]
#
# CARRY holds onnxruntime 1.31.1's cp312 wheel, the installed all-minilm-l6-v2/model.onnx and
# tokenizer.json, and sources/faq (python3.11-doc's faq/*.rst.txt). PYTHON (default python3) runs
# everything; the wheel is installed under /tmp/site unless that Python has ONNX Runtime 1.31.1.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
carry=$1 out=$2 rounds=${3:-5}
python=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
if [ "$("$python" -c 'import onnxruntime; print(onnxruntime.__version__)' 2>/dev/null || true)" != 1.31.1 ]; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        "$carry"/onnxruntime-1.31.1-*.whl
    export PYTHONPATH=/tmp/site
fi
models=$(mktemp -d)
minilm=$models/all-minilm-l6-v2
mkdir "$minilm"
cp "$carry/model.onnx" "$carry/tokenizer.json" "$minilm/"
optimise() { "$python" -c 'import sys; from pathlib import Path; sys.path.insert(0, "bench/journal/experiments/int8"); import compare
compare.optimise(sys.argv[1], Path(sys.argv[2]))' "$1" "$2"; }
optimise "$minilm/model.onnx" "$minilm/model.optimized.onnx"
"$python" scripts/int8/minilm.py "$minilm/model.optimized.onnx" "$models/quantized.onnx"
optimise "$models/quantized.onnx" "$minilm/model.int8.onnx"
(cd "$models" && sha256sum all-minilm-l6-v2/model.optimized.onnx* quantized.onnx all-minilm-l6-v2/model.int8.onnx*)
echo "pinned in scripts/models.sh:"
grep -E '^(OPTIMISED_MINILM(_DATA)?_SHA256=|    \[all-minilm-l6-v2\]=)' scripts/models.sh
"$python" bench/journal/experiments/int8/across.py "$models" "$carry/sources" "$rounds" "$out/vectors.npz"
rm -rf "$models"
