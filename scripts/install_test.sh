#!/usr/bin/env bash
# A step of scripts/test.sh: `PG_CONFIG=... bash scripts/install.sh` into a PostgreSQL that already
# has pgvector, as a package manager installs it, in a copy of the test matrix's PostgreSQL 16
# (which has pgvector 0.8.6). With pgvector labelled 0.7.4 the install stops at once, saying which
# version it needs; labelled 0.8.0 (its control file's default_version and install script, as a
# 0.8.0 package has them) the install runs through and leaves every pgvector file as it was,
# checked by sha256 before and after. cargo-pgrx's list of installations is kept apart
# (PGRX_HOME), so that the install's `cargo pgrx init` does not rewrite the tests' own; it starts
# out naming a PostgreSQL that is gone, which the install has to take off it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

root=$BUILD_DIR/install-test
pg_config=$root/postgresql-16/pgserver/pginstall/bin/pg_config

step "install into an existing PostgreSQL with its own pgvector (a copy of 16 in $root)"
rm -rf "$root"
mkdir -p "$root"
cp -a "$(dirname "$(dirname "$(dirname "$(dirname "$PG16_CONFIG")")")")" "$root/postgresql-16"
extension=$("$pg_config" --sharedir)/extension
# The matrix links the models and ONNX Runtime to 15's (scripts/lib.sh, prepare_test_postgresql):
# the copy gets files of its own, so that the install writes nothing outside it.
rm "$("$pg_config" --sharedir)/pg_chunk" "$("$pg_config" --pkglibdir)/$ORT_LIBRARY"
cp -r "$(pg_sharedir)/pg_chunk" "$("$pg_config" --sharedir)/pg_chunk"
cp "$(pg_pkglibdir)/$ORT_LIBRARY" "$("$pg_config" --pkglibdir)/$ORT_LIBRARY"
# The copy's pgvector, as a package of the version given would have it.
label_pgvector() {
    local current
    current=$(sed -nE "s/^default_version *= *'([^']*)'.*/\1/p" "$extension/vector.control")
    sed -i -E "s/^default_version *=.*/default_version = '$1'/" "$extension/vector.control"
    mv "$extension/vector--$current.sql" "$extension/vector--$1.sql"
}
pgvector_sums() {
    (cd "$("$pg_config" --pkglibdir)" && sha256sum vector.so)
    (cd "$extension" && sha256sum vector.control vector--*.sql)
    (cd "$("$pg_config" --includedir-server)/extension/vector" && sha256sum ./*)
}
run_install() { PG_CONFIG=$pg_config PGRX_HOME=$root/pgrx bash scripts/install.sh; }

label_pgvector 0.7.4
before=$(pgvector_sums)
if run_install >"$root/older.log" 2>&1; then
    echo "install.sh went on with pgvector 0.7.4 in the server" >&2
    exit 1
fi
grep -F "pg_chunk needs 0.8.0 or later" "$root/older.log" >&2 || {
    echo "install.sh stopped without saying which pgvector it needs:" >&2
    tail -n 20 "$root/older.log" >&2
    exit 1
}
[ "$(pgvector_sums)" = "$before" ] || { echo "install.sh changed pgvector 0.7.4's files" >&2; exit 1; }
say "with pgvector 0.7.4: stopped, saying so; its files as they were"

# cargo-pgrx's list as a build directory removed since leaves it: a 17 that is gone, then this
# PostgreSQL. pgrx's build asks each pg_config on the list in turn for its version until one is
# the PostgreSQL it builds for, so the install has to take the gone one off.
mkdir -p "$root/pgrx"
printf '[configs]\npg17 = "%s"\npg16 = "%s"\n' "$root/gone/bin/pg_config" "$pg_config" >"$root/pgrx/config.toml"
label_pgvector 0.8.0
before=$(pgvector_sums)
run_install 2>&1 | tee "$root/install.log" | sed 's/^/    | /'
if ! diff <(printf '%s\n' "$before") <(pgvector_sums) >&2; then
    echo "install.sh changed pgvector 0.8.0's files (above: before <, after >)" >&2
    exit 1
fi
grep -F "pgvector 0.8.0 in" "$root/install.log" >/dev/null
[ -f "$("$pg_config" --pkglibdir)/pg_chunk.so" ] || { echo "install.sh installed no pg_chunk.so" >&2; exit 1; }
say "with pgvector 0.8.0: pg_chunk installed, and every pgvector file has its sha256 of before ($(wc -l <<<"$before") files)"
grep -F "$root/gone/bin/pg_config, which is gone: taken off it" "$root/install.log" >/dev/null
! grep -F "$root/gone" "$root/pgrx/config.toml" || { echo "cargo-pgrx's list still names the gone PostgreSQL" >&2; exit 1; }
say "a gone PostgreSQL on cargo-pgrx's list: the install took it off"
rm -rf "$root"
