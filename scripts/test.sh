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
#      postgresql17.sh, postgresql18.sh, which the first run builds in the background while 0 to 3
#      run), each on a cluster of its own (port 5433, 5434, 5435); a version's client tests run in
#      the background while the next version's build and in-database tests run, 18's while 5 and
#      6 run; the Debian package for 18 built and checked by lintian
#   5. a store over a Citus coordinator and two workers on PostgreSQL 17 (scripts/citus.sh,
#      tests/tests/citus.rs), skipped with a loud message where no Citus source is found
#   6. an install with PG_CONFIG= into a PostgreSQL that has its own pgvector (scripts/install_test.sh)
#   7. stores made on 15 and 16 moved to 17: pg_upgrade from 16 (from 15 --check only, see
#      tests/tests/major_versions.rs), and from 15 with pg_dump and pg_restore; a store made on 17
#      moved to 18 with pg_upgrade and with pg_dump and pg_restore (tests/tests/major_versions.rs,
#      ignored by a plain cargo test: it needs the older BINDIRs)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# Every runner's output also goes to a log, so that the totals can be printed at the end.
log=$(mktemp /tmp/pg_chunk-test.XXXXXX)
tested() { "$@" 2>&1 | tee -a "$log"; }

# The test matrix's other PostgreSQL versions are set up (on the first run: built, about 9
# minutes of both cores) in the background, at the lowest CPU priority, one after another while
# the steps on 15 run: those leave a core idle most of the time. Each version's output is shown
# when the matrix reaches it (matrix_postgresql). They call no apt-get, which takes one caller at
# a time: what they need from Debian is installed here first (pip fetches 16's wheel).
step "PostgreSQL $TEST_VERSIONS for the test matrix: set up in the background"
ensure_debian_packages "${POSTGRESQL_BUILD_PACKAGES[@]}"
ensure_pip
setup=$(mktemp -d /tmp/pg_chunk-matrix.XXXXXX)
# In a session of its own (setsid, so that it can be killed as a group), it is weighed by Linux's
# autogroup scheduling as a whole against this session, whatever its processes' nice: the
# session's own nice goes to 19 as well (sched(7), "The autogroup feature").
setsid nice -n 19 bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null || true
    for version in $1; do
        bash "scripts/postgresql$version.sh" >"$2/$version.log" 2>&1
        status=$?
        echo "$status" >"$2/$version.status"
        ((status == 0)) || exit "$status"
    done' setup "$TEST_VERSIONS" "$setup" &
setup_group=$!
trap 'kill -TERM -- "-$setup_group" ${clients_group:+"-$clients_group"} 2>/dev/null || true; rm -rf "$log" "$setup"' EXIT

# Waits for matrix version $1's setup to end, shows its output, and fails if it failed.
matrix_postgresql() {
    local version=$1
    while [ ! -f "$setup/$version.status" ] && kill -0 "$setup_group" 2>/dev/null; do sleep 1; done
    cat "$setup/$version.log" 2>/dev/null || true
    if [ "$(cat "$setup/$version.status" 2>/dev/null)" != 0 ]; then
        echo "setting up PostgreSQL $version failed (its output is above)" >&2
        return 1
    fi
}

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

# A matrix version's client tests run in the background while the next version builds and runs
# its in-database tests, which leave a core idle. So that cargo's lock on target/ does not hold
# the build back, they run as the binaries `cargo test` would run, built here once, from the
# directory it runs them in. One version's at a time: the tests' own clusters
# (tests/src/clusters.rs) take fixed ports and directories.
binaries=$(cargo test -p pg_chunk_client_tests --no-run --message-format=json-render-diagnostics |
    python3 -c 'import json, sys; [print(m["executable"]) for m in map(json.loads, sys.stdin) if m.get("executable")]' | sort)
mapfile -t client_test_binaries <<<"$binaries"
clients_group=

# Starts the client tests against the cluster of matrix version $1.
start_client_tests() {
    local version=$1
    step "PostgreSQL $version: client tests against its cluster on port $(test_port "$version"), in the background"
    # shellcheck disable=SC2016 # expanded by the bash in the background
    setsid bash -c 'cd tests; failed=0
        for binary in "${@:2}"; do
            printf "     Running %s\n" "$binary"
            PGPORT=$1 "$binary" || failed=1
        done
        exit "$failed"' clients "$(test_port "$version")" "${client_test_binaries[@]}" >"$setup/clients.log" 2>&1 &
    clients_group=$!
    clients_version=$version
    clients_started=$(date -u +%H:%M:%S)
}

# Waits for the client tests started last, shows their output and fails if one failed.
finish_client_tests() {
    local status=0
    [ -n "$clients_group" ] || return 0
    wait "$clients_group" || status=$?
    clients_group=
    step "PostgreSQL $clients_version: the client tests' output (begun at $clients_started)"
    tested cat "$setup/clients.log"
    return "$status"
}

for version in $TEST_VERSIONS; do
    # Set up in the background (above), and cargo-pgrx told of it.
    matrix_postgresql "$version"
    pg_config=$(test_pg_config "$version")
    pgrx_init --pg15="$PG_CONFIG" --pg"$version"="$pg_config"
    step "PostgreSQL $version: in-database tests (cargo pgrx test pg$version)"
    pgdata_version=$pgdata-$version
    mkdir -p "$pgdata_version"
    chown postgres:postgres "$pgdata_version"
    move_library_aside "$pg_config"
    tested cargo pgrx test "pg$version" --runas postgres --pgdata "$pgdata_version"

    step "PostgreSQL $version: the release build, its cluster on port $(test_port "$version") restarted"
    install_release "$pg_config"
    restart_test_cluster "$version"
    PGPORT=$(test_port "$version") ensure_superuser_role
    finish_client_tests
    start_client_tests "$version"
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

step "Citus: a store over a coordinator and two workers (scripts/citus.sh, tests/tests/citus.rs)"
citus=0
PG_CONFIG=$(test_pg_config 17) bash scripts/citus.sh fresh || citus=$?
if ((citus == 3)); then say "!!! SKIPPED: no Citus source or installation; tests/tests/citus.rs did not run"
elif ((citus)); then exit "$citus"
else CITUS_COORDINATOR_PORT=5441 tested cargo test -p pg_chunk_client_tests --test citus -- --ignored; fi
PG_CONFIG=$(test_pg_config 17) bash scripts/citus.sh stop

# Its own step header; no client tests, so outside the totals.
bash scripts/install_test.sh

finish_client_tests

step "major versions: stores on 15 and 16 moved to 17, on 17 to 18 (pg_upgrade, pg_dump)"
PGPORT=$(test_port 17) PG_CHUNK_UPGRADE_FROM="$("$PG_CONFIG" --bindir) $("$(test_pg_config 16)" --bindir)" \
    tested cargo test -p pg_chunk_client_tests --test major_versions -- --ignored from_15 from_16
PGPORT=$(test_port 18) PG_CHUNK_UPGRADE_FROM="$("$(test_pg_config 17)" --bindir)" \
    tested cargo test -p pg_chunk_client_tests --test major_versions -- --ignored from_17

step "totals"
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "%d passed, %d failed\n", p, f }' "$log"
