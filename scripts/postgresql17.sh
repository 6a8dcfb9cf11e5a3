#!/usr/bin/env bash
# PostgreSQL 17, the third row of the test matrix (README, "Supported PostgreSQL versions"),
# built by scripts/test.sh on its first run: from source, from the upstream tarball of
# Debian 13's postgresql-17 source package 17.11-0+deb13u1, pinned with the sha256 that package's
# signed .dsc lists, so that every install builds the same checked source. Configured
# --without-icu --without-readline (a test server needs neither) into the build directory, then
# made ready for the tests like 16 (scripts/lib.sh, prepare_test_postgresql). Takes about 6
# minutes the first time; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

VERSION=17.11
TARBALL=postgresql-17_$VERSION.orig.tar.bz2
TARBALL_SHA256=dd27f2b3c59e73ed14aa3324901242bf69a032a6347805f274e6260322d42979
ROOT=$(dirname "$(dirname "$PG17_CONFIG")")

step "PostgreSQL 17 (test matrix)"
if [ -x "$PG17_CONFIG" ]; then
    say "present: $("$PG17_CONFIG" --version) in $ROOT"
else
    ensure_debian_packages bison flex zlib1g-dev
    mkdir -p "$BUILD_DIR/postgresql-17-source"
    cd "$BUILD_DIR/postgresql-17-source"
    download_debian_source postgresql-17 "$TARBALL" "$TARBALL_SHA256"
    rm -rf "postgresql-$VERSION" "$ROOT"
    tar xjf "$TARBALL"
    cd "postgresql-$VERSION"
    say "building $VERSION (configure, make -j$(nproc), make install into $ROOT)"
    ./configure -q --prefix="$ROOT" --without-icu --without-readline >configure.log
    make -s -j"$(nproc)" >make.log 2>&1 || { tail -n 40 make.log >&2; exit 1; }
    make -s install >install.log 2>&1 || { tail -n 40 install.log >&2; exit 1; }
    cd "$BUILD_DIR" && rm -rf "postgresql-17-source/postgresql-$VERSION"
    changed "built $("$PG17_CONFIG" --version) into $ROOT"
fi

prepare_test_postgresql "$PG17_CONFIG"
