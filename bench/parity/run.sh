#!/usr/bin/env bash
# Regenerates tests/fixtures/parity.json, the reference embeddings that pg_chunk's SQL embeddings
# must match (cosine >= 0.9999), from the model files scripts/models.sh installed. The reference
# runs in a throwaway virtual environment with pinned onnxruntime, tokenizers and numpy from PyPI;
# onnxruntime is the same release the extension loads. Run as root after scripts/models.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

BUILD_DIR=${PG_CHUNK_BUILD_DIR:-/var/tmp/pg_chunk-build}
VENV=$BUILD_DIR/parity-venv
# tokenizers and numpy: the versions pip chose for Python 3.11 when the fixture was first made.
REQUIREMENTS=(onnxruntime==1.31.1 tokenizers==0.23.3 numpy==2.4.6)
models=$(pg_chunk_models_dir)

step "parity: Python reference environment"
[ -f "$models/SHA256SUMS" ] || { echo "no models in $models: run scripts/models.sh first" >&2; exit 1; }
installed=$("$VENV/bin/python" -m pip freeze 2>/dev/null || true)
missing=()
for requirement in "${REQUIREMENTS[@]}"; do
    grep -qixF "$requirement" <<<"$installed" || missing+=("$requirement")
done
if ((${#missing[@]})); then
    # Debian's python3 creates virtual environments only with python3-venv installed.
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
        say "installing python3-venv"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
    fi
    [ -x "$VENV/bin/python" ] || { say "creating $VENV"; python3 -m venv "$VENV"; }
    say "installing ${missing[*]}"
    "$VENV/bin/python" -m pip install -q --progress-bar off "${REQUIREMENTS[@]}"
else
    say "$VENV has ${REQUIREMENTS[*]}"
fi

step "parity: reference embeddings"
SECONDS=0
"$VENV/bin/python" bench/parity/make_fixture.py --models-dir "$models" --out tests/fixtures/parity.json
say "done in ${SECONDS} s (loading the models and Python included)"
