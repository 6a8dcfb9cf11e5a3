#!/usr/bin/env bash
# A local Citus cluster for pg_chunk's distributed store (docs/scaling.md): builds Citus into a
# PostgreSQL from its source tarball, then creates and starts a coordinator and two workers, each
# preloading citus and pg_chunk, and registers the workers. Idempotent: what is there is kept
# (running servers are restarted, to load the libraries installed now).
#
#   scripts/citus.sh            build and start (the test matrix's PostgreSQL 17 by default)
#   scripts/citus.sh fresh      the same, from new data directories (the old ones removed), so
#                               each database gets the installed extension's SQL afresh
#   scripts/citus.sh stop       stop the three servers
#
# Environment:
#   PG_CONFIG       the PostgreSQL to build into and run (default: the test matrix's 17)
#   CITUS_TARBALL   the Citus source (default: ../shared/vendor/citus-13.2.2.tar.gz beside the
#                   repository); not needed when Citus is installed in PG_CONFIG's tree already
#   CITUS_PORTS     coordinator and worker ports (default "5441 5442 5443")
#   CITUS_DATA      prefix of the three data directories (default <the build directory>/citus-<port>)
#   CITUS_BUILD_DIR where the source is unpacked and built
#   CITUS_DATABASE  the database made on each node with citus and pg_chunk (default pg_chunk_citus)
#
# Exits 3, saying so, when Citus is neither installed nor buildable (no tarball).
set -euo pipefail
cd "$(dirname "$0")/.."
pg_config_given=${PG_CONFIG:-}
source scripts/lib.sh

# lib.sh's default is PostgreSQL 15, which Citus 13.2.2 does not build against from 15.20 on
# (its pg_version_compat.h defines have_createdb_privilege, which 15.20 exports).
PG_CONFIG=${pg_config_given:-$PG17_CONFIG}
CITUS_VERSION=13.2.2
# The sha256 of the upstream tag's git archive (../shared/vendor/README.md).
CITUS_SHA256=dd2453caec20a830e5e63f1def5c5a98cb6f57ae510407cdcd800916fcdab430
CITUS_TARBALL=${CITUS_TARBALL:-$(pwd)/../shared/vendor/citus-$CITUS_VERSION.tar.gz}
CITUS_BUILD_DIR=${CITUS_BUILD_DIR:-$BUILD_DIR/citus}
read -r -a ports <<<"${CITUS_PORTS:-5441 5442 5443}"
CITUS_DATABASE=${CITUS_DATABASE:-pg_chunk_citus}
bin=$("$PG_CONFIG" --bindir)

data_dir() { printf '%s' "${CITUS_DATA:-$BUILD_DIR/citus}-$1"; }
node_psql() { psql -X -q -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$1" "${@:2}"; }

# Builds Citus into $PG_CONFIG's tree unless its citus.control is there already.
build_citus() {
    local started source
    if [ -f "$("$PG_CONFIG" --sharedir)/extension/citus.control" ]; then
        say "Citus already in $("$PG_CONFIG" --version): $(grep default_version "$("$PG_CONFIG" --sharedir)/extension/citus.control")"
        return 0
    fi
    if [ ! -f "$CITUS_TARBALL" ]; then
        say "!!! no Citus in $("$PG_CONFIG" --sharedir)/extension and no source at $CITUS_TARBALL"
        say "!!! (name one with CITUS_TARBALL, or install Citus into that PostgreSQL)"
        return 3
    fi
    if [ "$(file_sha256 "$CITUS_TARBALL")" != "$CITUS_SHA256" ]; then
        say "!!! $CITUS_TARBALL is not Citus $CITUS_VERSION's tarball (sha256 $(file_sha256 "$CITUS_TARBALL"))"
        return 1
    fi
    ensure_debian_packages libzstd-dev liblz4-dev libkrb5-dev
    started=$SECONDS
    source=$CITUS_BUILD_DIR/citus-$CITUS_VERSION
    mkdir -p "$CITUS_BUILD_DIR"
    rm -rf "$source"
    tar xzf "$CITUS_TARBALL" -C "$CITUS_BUILD_DIR"
    (
        cd "$source"
        # The output goes to build.log, shown when a step fails.
        {
            ./configure PG_CONFIG="$PG_CONFIG" --without-libcurl &&
                make -j"$(nproc)" &&
                move_library_aside "$PG_CONFIG" citus.so &&
                make install
        } >build.log 2>&1 || { tail -n 40 build.log; exit 1; }
        rm -f "$("$PG_CONFIG" --pkglibdir)/citus.so.previous"
    )
    say "Citus $CITUS_VERSION built into $("$PG_CONFIG" --version) in $((SECONDS - started)) s"
}

# Creates (once) and starts the server on port $1, preloading citus then pg_chunk.
start_node() {
    local port=$1 data
    data=$(data_dir "$port")
    start_local_cluster "$bin" "$data" "$port" "citus, pg_chunk" "pg_chunk.worker_databases = '$CITUS_DATABASE'
max_connections = 200"
    PGPORT=$port ensure_superuser_role
    if ! node_psql "$port" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$CITUS_DATABASE'" | grep -q 1; then
        node_psql "$port" -d postgres -c "CREATE DATABASE $CITUS_DATABASE"
    fi
    # Only where missing: a registered worker refuses DDL on objects Citus propagates.
    if ! node_psql "$port" -d "$CITUS_DATABASE" -tAc "SELECT 1 FROM pg_extension WHERE extname = 'pg_chunk'" | grep -q 1; then
        PGOPTIONS='-c client_min_messages=warning' node_psql "$port" -d "$CITUS_DATABASE" \
            -c "CREATE EXTENSION IF NOT EXISTS citus" -c "CREATE EXTENSION pg_chunk CASCADE"
    fi
    say "$("$bin/postgres" --version) on port $port, $data"
}

stop_nodes() {
    local port data
    for port in "${ports[@]}"; do
        data=$(data_dir "$port")
        if [ -f "$data/PG_VERSION" ] && runuser -u postgres -- "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
            runuser -u postgres -- "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
            say "stopped $data"
        fi
    done
}

case ${1:-} in
    stop)
        stop_nodes
        exit 0
        ;;
    fresh)
        stop_nodes
        for port in "${ports[@]}"; do rm -rf "$(data_dir "$port")"; done
        ;;
    '') ;;
    *)
        echo "usage: scripts/citus.sh [fresh|stop]" >&2
        exit 2
        ;;
esac

step "Citus $CITUS_VERSION in $("$PG_CONFIG" --version) ($PG_CONFIG)"
build_citus || exit $?

step "coordinator on port ${ports[0]}, workers on ${ports[*]:1}"
for port in "${ports[@]}"; do start_node "$port"; done
coordinator=${ports[0]}
node_psql "$coordinator" -d "$CITUS_DATABASE" \
    -c "SELECT citus_set_coordinator_host('/var/run/postgresql', $coordinator)" >/dev/null
for port in "${ports[@]:1}"; do
    if ! node_psql "$coordinator" -d "$CITUS_DATABASE" -tAc \
        "SELECT 1 FROM pg_dist_node WHERE nodeport = $port" | grep -q 1; then
        node_psql "$coordinator" -d "$CITUS_DATABASE" -c "SELECT citus_add_node('/var/run/postgresql', $port)" >/dev/null
    fi
done
say "nodes: $(node_psql "$coordinator" -d "$CITUS_DATABASE" -tAc \
    "SELECT string_agg(nodeport || CASE WHEN groupid = 0 THEN ' (coordinator)' ELSE '' END, ', ' ORDER BY nodeport) FROM pg_dist_node")"
