#!/usr/bin/env bash
# PostgreSQL 18, the fourth row of the test matrix (README, "Supported PostgreSQL versions"),
# built by scripts/test.sh on its first run (scripts/lib.sh, build_debian_postgresql) from the
# upstream tarball of Debian's postgresql-18 source package 18.6-3 (unstable; Debian 12 and 13
# have no 18), whose sha256 the archive's signed Sources index lists. Takes about 6 minutes the
# first time; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

build_debian_postgresql 18 18.6 555610c24d53e4316da5b7d3fc25c279d96856d5e0e23ee308c328c5fa881d9f
