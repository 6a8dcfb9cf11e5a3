#!/usr/bin/env bash
# README command 1: sets up everything pg_chunk needs on a fresh Debian 12 machine, installs
# the extension into the system PostgreSQL 15, starts the cluster and shows pg_chunk chunking
# a sample document. Idempotent: each step checks first and skips what is already done.
# Run as root (or through sudo).
#
# PG_CONFIG=/path/to/pg_config bash scripts/install.sh installs into that PostgreSQL instead
# (13 to 18, its server headers installed): pgvector, the models, pg_chunk; the server, its
# settings and your databases stay yours (README, "Supported PostgreSQL versions").
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

PGRX_VERSION=0.18.0
BUILD_DIR=${PG_CHUNK_BUILD_DIR:-/var/tmp/pg_chunk-build}

# Into Debian's PostgreSQL 15 (the default), or into an existing one named by PG_CONFIG.
existing=0
[ "$PG_CONFIG" = "$DEBIAN_PG_CONFIG" ] || existing=1

step "Debian packages"
packages=(libclang-dev clang sudo pkg-config make gcc dpkg-dev)
# Debian's PostgreSQL 15, and what building 17 from source for the test matrix needs.
((existing)) || packages+=(postgresql-15 postgresql-server-dev-15 bison flex zlib1g-dev)
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
build_pgvector "$PG_CONFIG"

# Step "models and ONNX Runtime" (prints its own header, so it also runs alone).
bash scripts/models.sh

if ! ((existing)); then
    # PostgreSQL 16 and 17 for the tests' other runs (scripts/test.sh); not used by the demo.
    bash scripts/postgresql16.sh
    bash scripts/postgresql17.sh
fi

step "cargo-pgrx $PGRX_VERSION"
if cargo pgrx --version 2>/dev/null | grep -q "$PGRX_VERSION"; then
    say "already installed"
else
    say "cargo install cargo-pgrx (takes about 7 minutes)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi
# The PostgreSQL installations pgrx builds for: the one named, or 15 and the test matrix.
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
versions=(--pg"$major"="$PG_CONFIG")
if ! ((existing)); then
    for version in $TEST_VERSIONS; do versions+=(--pg"$version"="$(test_pg_config "$version")"); done
fi
unknown=0
for option in "${versions[@]}"; do
    option=${option#--}
    grep -qsxF "${option%%=*} = \"${option#*=}\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml" || unknown=1
done
if ((unknown)); then cargo pgrx init "${versions[@]}"; else say "pgrx knows ${versions[*]}"; fi

if ((existing)); then
    step "build and install pg_chunk (release) into $("$PG_CONFIG" --version)"
    install_release
    say "Installed. In that server: shared_preload_libraries = 'pg_chunk' (for the queue's workers),"
    say "then in a database: CREATE EXTENSION pg_chunk CASCADE;"
    exit 0
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
