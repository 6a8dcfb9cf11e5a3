#!/usr/bin/env bash
# README command 1: sets up everything pg_chunk needs on a fresh Debian 12 machine, installs
# the extension into the system PostgreSQL 15, starts the cluster and shows pg_chunk chunking
# a sample document. Idempotent: each step checks first and skips what is already done; the end
# lists what this run changed. Run as root (or through sudo). It builds no other PostgreSQL: the
# test command builds its 16, 17 and 18 on its first run.
#
# PG_CONFIG=/path/to/pg_config bash scripts/install.sh installs into that PostgreSQL instead
# (13 to 18, its server headers installed): the models, pg_chunk, and pgvector only where there is
# none (0.8.0 or later is used as it is; an older one stops the install); the server, its settings
# and your databases stay yours (docs/operations.md, "Installing").
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

PGRX_VERSION=0.18.0

# Into Debian's PostgreSQL 15 (the default), or into an existing one named by PG_CONFIG.
existing=0
[ "$PG_CONFIG" = "$DEBIAN_PG_CONFIG" ] || existing=1

# What this run changes is recorded by each step (scripts/lib.sh, changed) and listed at the end.
PG_CHUNK_CHANGES=$(mktemp /tmp/pg_chunk-install.XXXXXX)
export PG_CHUNK_CHANGES
trap 'rm -f "$PG_CHUNK_CHANGES"' EXIT
summary() {
    step "what this run changed"
    if [ -s "$PG_CHUNK_CHANGES" ]; then sed 's/^/    /' "$PG_CHUNK_CHANGES"; else say "nothing: everything was in place"; fi
}

step "Debian packages"
packages=(libclang-dev clang sudo pkg-config make gcc dpkg-dev)
((existing)) || packages+=(postgresql-15 postgresql-server-dev-15)
ensure_debian_packages "${packages[@]}"

step "pgvector $PGVECTOR_MINIMUM or later"
ensure_pgvector "$PG_CONFIG"

# Step "models and ONNX Runtime" (prints its own header, so it also runs alone).
bash scripts/models.sh

step "cargo-pgrx $PGRX_VERSION"
if cargo pgrx --version 2>/dev/null | grep -q "$PGRX_VERSION"; then
    say "already installed"
else
    say "cargo install cargo-pgrx (takes about 7 minutes)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
    changed "installed cargo-pgrx $PGRX_VERSION into $HOME/.cargo/bin"
fi
# The PostgreSQL pgrx builds for: this one. scripts/test.sh adds its other versions.
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
pgrx_init --pg"$major"="$PG_CONFIG"

step "build and install pg_chunk (release) into $("$PG_CONFIG" --version)"
install_release
changed "installed pg_chunk $(pg_chunk_version) into $("$PG_CONFIG" --pkglibdir) and $("$PG_CONFIG" --sharedir)/extension"

if ((existing)); then
    summary
    say "In that server: shared_preload_libraries = 'pg_chunk' (for the queue's workers), then in a"
    say "database: CREATE EXTENSION pg_chunk CASCADE;"
    exit 0
fi

step "PostgreSQL 15 cluster"
was_running=0
pg_lsclusters -h 2>/dev/null | awk '$1 == "15" && $2 == "main" {print $4}' | grep -q online && was_running=1
start_cluster
ensure_superuser_role
# A running server that preloads pg_chunk keeps the library it started with, older than the SQL
# just installed (docs/operations.md, "Upgrading"): restarted, it loads the new one.
if ((was_running)) && psql -X -qAt -d postgres -c "SHOW shared_preload_libraries" | tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep -qxF pg_chunk; then
    restart_cluster
    changed "restarted 15 main, which preloads pg_chunk, to load the library just installed"
fi

step "background workers (chunk configs in async mode)"
configure_workers pg_chunk_demo

step "demo database"
demo_db=pg_chunk_demo
if ! psql -X -q -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$demo_db'" | grep -q 1; then
    createdb "$demo_db"
    changed "created database $demo_db"
fi
# The demo database gets this checkout's extension freshly created, unless its store holds
# documents (the tour's, or yours): then it is updated, and they stay.
documents=0
if [ "$(psql -X -qAt -d "$demo_db" -c "SELECT to_regclass('knowledge.documents') IS NOT NULL")" = t ]; then
    documents=$(psql -X -qAt -d "$demo_db" -c "SELECT count(*) FROM knowledge.documents")
fi
if ((documents == 0)); then
    psql -X -q -v ON_ERROR_STOP=1 -d "$demo_db" -c "DROP EXTENSION IF EXISTS pg_chunk; CREATE EXTENSION pg_chunk CASCADE;"
    changed "created extension pg_chunk afresh in database $demo_db"
else
    psql -X -q -v ON_ERROR_STOP=1 -d "$demo_db" -c "ALTER EXTENSION pg_chunk UPDATE"
    changed "updated extension pg_chunk in database $demo_db; the $documents document(s) in its store kept"
fi
say "knowledge.chunk(examples/sample.txt) in database $demo_db:"
psql -X -v ON_ERROR_STOP=1 -d "$demo_db" <<'SQL'
\set doc `cat examples/sample.txt`
SELECT chunk_index, char_offset, char_length, token_count,
       metadata->>'split_reason' AS reason,
       left(regexp_replace(content, '\s+', ' ', 'g'), 60) || '…' AS content
FROM knowledge.chunk(:'doc');
SQL
summary
say "pg_chunk is installed. Try: psql -d $demo_db"
