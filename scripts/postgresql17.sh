#!/usr/bin/env bash
# PostgreSQL 17, the third row of the test matrix (README, "Supported PostgreSQL versions"),
# built by scripts/test.sh on its first run (scripts/lib.sh, build_debian_postgresql) from the
# upstream tarball of Debian 13's postgresql-17 source package 17.11-0+deb13u1, whose signed .dsc
# lists the sha256. Takes about 6 minutes the first time; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

build_debian_postgresql 17 17.11 dd27f2b3c59e73ed14aa3324901242bf69a032a6347805f274e6260322d42979
