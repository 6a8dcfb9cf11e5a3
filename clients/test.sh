#!/usr/bin/env bash
# The clients (docs/clients.md), against the running cluster libpq's environment names (PGHOST,
# PGPORT; pg_chunk and pgvector installed, the databases pg_chunk_test_python and
# pg_chunk_test_clients in pg_chunk.worker_databases):
#   1. a virtual environment with clients/python/requirements-test.txt, and the package pg_chunk
#      built (sdist and wheel), checked with twine and installed
#   2. node-postgres and pgvector as clients/package-lock.json pins them (for the JavaScript snippets)
#   3. the package's tests (clients/python/tests)
#   4. examples/rag_langchain.py, then every snippet of docs/clients.md (clients/docs_snippets.py)
# Safe to run again: the environment and node's modules live in the build directory and are
# installed again only when their pins change. scripts/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
root=$PWD

build=$BUILD_DIR
venv=$build/python-client-venv
node_dir=$build/node-client
requirements=clients/python/requirements-test.txt

ensure_venv_module
if ! command -v npm >/dev/null; then
    say "installing nodejs and npm"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi

# 1. The environment, whose copy of the requirements says what it holds.
[ -x "$venv/bin/python" ] || { say "creating $venv"; python3 -m venv "$venv"; }
if ! cmp -s "$requirements" "$venv/requirements-test.txt"; then
    say "installing $requirements into $venv"
    "$venv/bin/python" -m pip install -q --progress-bar off --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$venv/requirements-test.txt"
fi
# The package as it would be published: its sdist and wheel built from a copy (so that the
# checkout gets no build files) and checked as PyPI checks them, then the wheel installed.
source_copy=$(mktemp -d)
trap 'rm -rf "$source_copy"' EXIT
cp -r clients/python/pyproject.toml clients/python/README.md clients/python/pg_chunk "$source_copy/"
"$venv/bin/python" -m build --no-isolation --outdir "$source_copy/dist" "$source_copy" >"$source_copy/build.log" 2>&1 ||
    { cat "$source_copy/build.log"; exit 1; }
"$venv/bin/python" -m twine check --strict "$source_copy"/dist/*
"$venv/bin/python" -m pip install -q --progress-bar off --disable-pip-version-check --no-deps \
    --force-reinstall "$source_copy"/dist/*.whl

# 2. node-postgres, outside the checkout (the Markdown link check reads every folder of it).
mkdir -p "$node_dir"
if ! cmp -s clients/package-lock.json "$node_dir/package-lock.json" || [ ! -d "$node_dir/node_modules" ]; then
    say "installing clients/package-lock.json into $node_dir"
    cp clients/package.json clients/package-lock.json "$node_dir/"
    (cd "$node_dir" && npm ci --silent --no-audit --no-fund)
fi

# 3. and 4. pytest runs from the build directory: from clients/python, `python -m` would import
# pg_chunk from the checkout rather than the installed package.
(cd "$build" && "$venv/bin/python" -m pytest -p no:cacheprovider -q \
    -c "$root/clients/python/pyproject.toml" "$root/clients/python/tests")
"$venv/bin/python" clients/docs_snippets.py --database pg_chunk_test_clients --node-dir "$node_dir"
