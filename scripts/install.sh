#!/usr/bin/env bash
# README command 1: sets up everything pg_chunk needs on a fresh Debian 12 machine, installs
# the extension into the system PostgreSQL 15, starts the cluster and shows pg_chunk chunking
# a sample document. Idempotent: each step checks first and skips what is already done.
# Run as root (or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

PGVECTOR_VERSION=0.8.0
PGRX_VERSION=0.18.0
BUILD_DIR=${PG_CHUNK_BUILD_DIR:-/var/tmp/pg_chunk-build}

step "Debian packages"
packages=(postgresql-15 postgresql-server-dev-15 libclang-dev clang sudo pkg-config make gcc dpkg-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    say "installing: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
else
    say "all present"
fi

step "pgvector $PGVECTOR_VERSION"
if [ -f "$(pg_sharedir)/extension/vector--$PGVECTOR_VERSION.sql" ]; then
    say "already installed"
else
    add_trixie_sources
    mkdir -p "$BUILD_DIR/pgvector"
    (
        cd "$BUILD_DIR/pgvector"
        [ -f "pgvector_$PGVECTOR_VERSION.orig.tar.gz" ] || apt-get source --download-only pgvector
        rm -rf "pgvector-$PGVECTOR_VERSION"
        tar xzf "pgvector_$PGVECTOR_VERSION.orig.tar.gz"
        cd "pgvector-$PGVECTOR_VERSION"
        make -s PG_CONFIG="$PG_CONFIG"
        make -s install PG_CONFIG="$PG_CONFIG"
    )
    say "installed into $(pg_sharedir)/extension"
fi

# Step "models and ONNX Runtime" (prints its own header, so it also runs alone).
bash scripts/models.sh

step "cargo-pgrx $PGRX_VERSION"
if cargo pgrx --version 2>/dev/null | grep -q "$PGRX_VERSION"; then
    say "already installed"
else
    say "cargo install cargo-pgrx (takes about 7 minutes)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi
if grep -qs "pg15 = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    say "pgrx already knows PostgreSQL 15"
else
    cargo pgrx init --pg15="$PG_CONFIG"
fi

step "build and install pg_chunk (release)"
install_release

step "PostgreSQL 15 cluster"
start_cluster
ensure_superuser_role

step "background workers (chunk configs in async mode)"
configure_workers pg_chunk_demo

step "demo database"
demo_db=pg_chunk_demo
psql -X -q -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$demo_db'" | grep -q 1 || createdb "$demo_db"
# The demo database always gets this checkout's extension, freshly created.
psql -X -q -v ON_ERROR_STOP=1 -d "$demo_db" -c "DROP EXTENSION IF EXISTS pg_chunk; CREATE EXTENSION pg_chunk CASCADE;"
say "knowledge.chunk(examples/sample.txt) in database $demo_db:"
psql -X -v ON_ERROR_STOP=1 -d "$demo_db" <<'SQL'
\set doc `cat examples/sample.txt`
SELECT chunk_index, char_offset, char_length, token_count,
       metadata->>'split_reason' AS reason,
       left(regexp_replace(content, '\s+', ' ', 'g'), 60) || '…' AS content
FROM knowledge.chunk(:'doc');
SQL
say "pg_chunk is installed. Try: psql -d $demo_db"
