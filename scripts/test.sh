#!/usr/bin/env bash
# README command 2: runs every test. Needs only what scripts/install.sh set up.
#   0. the unreleased upgrade script as scripts/upgrade_script.py writes it from src/sql/; the
#      format (rustfmt.toml) and clippy, warnings denied
#   1. the pure crates (plain cargo test, no PostgreSQL; the embedder's use the installed models)
#   2. the #[pg_test]s inside a throwaway PostgreSQL that cargo pgrx test starts
#   3. the client tests in tests/, over a real socket to the running 15 main cluster, with
#      pg_chunk installed from its Debian packages in place of the source build, which is put
#      back after (scripts/package_test.sh); then the clients of docs/clients.md against the
#      source build (clients/test.sh)
#   4. 2 and the client tests again on PostgreSQL 16, 17 and 18 (scripts/postgresql16.sh,
#      postgresql17.sh, postgresql18.sh, which the first run builds), each on a cluster of its own
#      (port 5433, 5434, 5435); the Debian packages for 18 built and checked by lintian
#   5. stores made on 15 and 16 moved to 17: pg_upgrade from 16 (from 15 --check only, see
#      tests/tests/major_versions.rs), and from 15 with pg_dump and pg_restore; a store made on 17
#      moved to 18 with pg_upgrade and with pg_dump and pg_restore (tests/tests/major_versions.rs,
#      ignored by a plain cargo test: it needs the older BINDIRs)
#   6. a store over a Citus coordinator and two workers on PostgreSQL 17 (scripts/citus.sh,
#      tests/tests/citus.rs), skipped with a loud message where no Citus source is found
#   7. an install with PG_CONFIG= into a PostgreSQL that has its own pgvector (scripts/install_test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# Every runner's output also goes to a log, so that the totals can be printed at the end.
log=$(mktemp /tmp/pg_chunk-test.XXXXXX)
trap 'rm -f "$log"' EXIT
tested() { "$@" 2>&1 | tee -a "$log"; }

step "upgrade script: python3 scripts/upgrade_script.py --check"
python3 scripts/upgrade_script.py --check

step "format and lints: cargo fmt --check, cargo clippy -D warnings"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --features pg_test -- -D warnings

step "pure crates: cargo test -p pg_chunk_core -p pg_chunk_names -p pg_chunk_ideograph -p pg_chunk_text_search -p pg_chunk_filter -p pg_chunk_embed"
tested cargo test -p pg_chunk_core -p pg_chunk_names -p pg_chunk_ideograph -p pg_chunk_text_search -p pg_chunk_filter
tested env PG_CHUNK_MODEL_DIR="$(pg_chunk_models_dir)" PG_CHUNK_ONNXRUNTIME="$(pg_pkglibdir)/$ORT_LIBRARY" \
    cargo test -p pg_chunk_embed

step "in-database tests: cargo pgrx test pg15"
# PostgreSQL refuses to run as root, so the test server runs as postgres in its own data dir.
pgdata=${PG_CHUNK_TEST_PGDATA:-$BUILD_DIR/pgrx-test}
mkdir -p "$pgdata"
chown postgres:postgres "$pgdata"
# It installs a debug build over pg_chunk.so, which the running 15 main cluster has mapped.
move_library_aside
tested cargo pgrx test pg15 --runas postgres --pgdata "$pgdata"

step "client tests against the running cluster, on the packages (scripts/package_test.sh)"
# cargo pgrx test installed its debug build into the same PostgreSQL: put the release build back.
install_release
start_cluster
ensure_superuser_role
# shellcheck disable=SC2086 # one database name per word
configure_workers $TEST_WORKER_DATABASES
tested bash scripts/package_test.sh

step "clients: the Python package, examples/rag_langchain.py, docs/clients.md's snippets"
bash clients/test.sh

# The other PostgreSQL versions, set up on the first run (scripts/install.sh builds none), and
# cargo-pgrx told of them all.
for version in $TEST_VERSIONS; do bash "scripts/postgresql$version.sh"; done
versions=(--pg15="$PG_CONFIG")
for version in $TEST_VERSIONS; do versions+=(--pg"$version"="$(test_pg_config "$version")"); done
pgrx_init "${versions[@]}"

for version in $TEST_VERSIONS; do
    pg_config=$(test_pg_config "$version")
    step "PostgreSQL $version: in-database tests (cargo pgrx test pg$version)"
    pgdata_version=$pgdata-$version
    mkdir -p "$pgdata_version"
    chown postgres:postgres "$pgdata_version"
    move_library_aside "$pg_config"
    tested cargo pgrx test "pg$version" --runas postgres --pgdata "$pgdata_version"

    step "PostgreSQL $version: client tests against its cluster on port $(test_port "$version")"
    install_release "$pg_config"
    restart_test_cluster "$version"
    PGPORT=$(test_port "$version") ensure_superuser_role
    PGPORT=$(test_port "$version") tested cargo test -p pg_chunk_client_tests
done

step "PostgreSQL 18: its Debian packages (scripts/package.sh, lintian)"
bash scripts/package.sh "$PG18_CONFIG"
# Built with the test matrix's 18, in the build directory, its files go where Debian's and
# PGDG's postgresql-18 look for them.
deb=target/packages/postgresql-18-pg-chunk_$(pg_chunk_version)_amd64.deb
listing=$(dpkg-deb --contents "$deb")
for path in /usr/lib/postgresql/18/lib/pg_chunk.so /usr/share/postgresql/18/extension/pg_chunk.control; do
    grep -q " \.$path\$" <<<"$listing" || { echo "$deb has no $path:" >&2; printf '%s\n' "$listing" >&2; exit 1; }
done
say "$deb: pg_chunk.so and its control file in Debian's paths for 18"

step "major versions: stores on 15 and 16 moved to 17, on 17 to 18 (pg_upgrade, pg_dump)"
PGPORT=$(test_port 17) PG_CHUNK_UPGRADE_FROM="$("$PG_CONFIG" --bindir) $("$(test_pg_config 16)" --bindir)" \
    tested cargo test -p pg_chunk_client_tests --test major_versions -- --ignored from_15 from_16
PGPORT=$(test_port 18) PG_CHUNK_UPGRADE_FROM="$("$(test_pg_config 17)" --bindir)" \
    tested cargo test -p pg_chunk_client_tests --test major_versions -- --ignored from_17

step "Citus: a store over a coordinator and two workers (scripts/citus.sh, tests/tests/citus.rs)"
citus=0
PG_CONFIG=$(test_pg_config 17) bash scripts/citus.sh fresh || citus=$?
if ((citus == 3)); then say "!!! SKIPPED: no Citus source or installation; tests/tests/citus.rs did not run"
elif ((citus)); then exit "$citus"
else CITUS_COORDINATOR_PORT=5441 tested cargo test -p pg_chunk_client_tests --test citus -- --ignored; fi
PG_CONFIG=$(test_pg_config 17) bash scripts/citus.sh stop

# Its own step header; no client tests, so outside the totals.
bash scripts/install_test.sh

step "totals"
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "%d passed, %d failed\n", p, f }' "$log"
