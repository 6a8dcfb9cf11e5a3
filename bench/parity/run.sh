#!/usr/bin/env bash
# Regenerates tests/fixtures/parity.json, the reference embeddings that pg_chunk's SQL embeddings
# must match (cosine >= 0.9999), from the model files scripts/models.sh installed. The reference
# runs in a throwaway virtual environment with pinned onnxruntime, tokenizers and numpy from PyPI;
# onnxruntime is the same release the extension loads. Run as root after scripts/models.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

source bench/python_env.sh
VENV=$REFERENCE_VENV
models=$(pg_chunk_models_dir)

step "parity: Python reference environment"
[ -f "$models/SHA256SUMS" ] || { echo "no models in $models: run scripts/models.sh first" >&2; exit 1; }
ensure_reference_venv

step "parity: reference embeddings"
SECONDS=0
"$VENV/bin/python" bench/parity/make_fixture.py --models-dir "$models" --out tests/fixtures/parity.json
say "done in ${SECONDS} s (loading the models and Python included)"
