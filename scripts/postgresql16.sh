#!/usr/bin/env bash
# PostgreSQL 16, the second row of the test matrix (README, "Supported PostgreSQL versions"),
# set up by scripts/test.sh on its first run. Debian 12 ships only 15 and Debian 13 only
# 17, so this takes the PostgreSQL 16.2 build that the pgserver wheel on PyPI carries (bin, lib,
# share and the server headers, built --without-icu --without-readline, and libpq beside it;
# sha256 pinned), unpacks it into the build directory and makes it ready for the tests
# (scripts/lib.sh, prepare_test_postgresql). Idempotent. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

WHEEL=pgserver==0.1.4
WHEEL_FILE=pgserver-0.1.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
WHEEL_SHA256=d595789b47624a3d963aa9aa6359da9be31beb7e61f1a45541953242068b8813
ROOT=$BUILD_DIR/postgresql-16

step "PostgreSQL 16 (test matrix)"
if [ -x "$PG16_CONFIG" ]; then
    say "present: $("$PG16_CONFIG" --version) in $ROOT"
else
    ensure_pip
    mkdir -p "$BUILD_DIR/wheels"
    wheel=$BUILD_DIR/wheels/$WHEEL_FILE
    if [ ! -f "$wheel" ]; then
        say "downloading $WHEEL from PyPI"
        python3 -m pip download -q --progress-bar off --no-deps --only-binary=:all: --python-version 3.11 \
            --platform manylinux2014_x86_64 -d "$BUILD_DIR/wheels" "$WHEEL"
    fi
    got=$(file_sha256 "$wheel")
    [ "$got" = "$WHEEL_SHA256" ] || { echo "sha256 mismatch for $wheel: expected $WHEEL_SHA256, got $got" >&2; exit 1; }
    rm -rf "$ROOT.partial"
    # Unpacked with each member's permissions (zipfile alone drops them: the programs must run).
    python3 - "$wheel" "$ROOT.partial" <<'PY'
import os, sys, zipfile
wheel, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive:
    for member in archive.infolist():
        # The installation, and the libraries its programs find through their rpath.
        if not member.filename.startswith(("pgserver/pginstall/", "pgserver.libs/")):
            continue
        path = archive.extract(member, out)
        mode = member.external_attr >> 16
        if mode and not member.is_dir():
            os.chmod(path, mode & 0o777)
PY
    mv "$ROOT.partial" "$ROOT"
    changed "unpacked $("$PG16_CONFIG" --version) into $ROOT"
fi

prepare_test_postgresql "$PG16_CONFIG"
