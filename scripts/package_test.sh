#!/usr/bin/env bash
# A step of scripts/test.sh: the packages tested in place of the source build on PostgreSQL 15.
# Builds them (scripts/package.sh), sets the source build's files aside, installs the packages
# with apt-get, restarts 15 main and runs the client tests against them; then purges the
# packages, shows that none of their files is left, and puts the source build back. A run that
# stops half-way puts the source build back too (and the next run first undoes what it left).
# Needs 15 main running, configured as scripts/test.sh leaves it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

version=$(pg_chunk_version)
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
packages=("postgresql-$major-pg-chunk" pg-chunk-models)
debs=("./target/packages/postgresql-$major-pg-chunk_${version}_amd64.deb" "./target/packages/pg-chunk-models_${version}_all.deb")
aside=$BUILD_DIR/source-build-aside

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q "install ok installed"; }

# Purges the packages if they are installed and moves the source build's files back.
put_source_build_back() {
    local p i=0 path
    for p in "${packages[@]}"; do
        if installed "$p"; then apt-get purge -y -qq "$p" >/dev/null; fi
    done
    if [ -f "$aside/paths" ]; then
        while read -r path; do
            mv -f "$aside/$i" "$path"
            i=$((i + 1))
        done <"$aside/paths"
        say "put the source build back: $i paths"
    fi
    rm -rf "$aside"
}

bash scripts/package.sh "$PG_CONFIG"

step "the packages installed in place of the source build, in $("$PG_CONFIG" --version)"
put_source_build_back
trap 'put_source_build_back; restart_cluster' EXIT
mkdir -p "$aside"
pg_chunk_files "$PG_CONFIG" >"$aside/paths"
i=0
while read -r path; do
    mv "$path" "$aside/$i"
    i=$((i + 1))
done <"$aside/paths"
say "set the source build aside: $i paths (to $aside)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}" >/dev/null
say "installed: $(dpkg-query -W -f='${Package} ${Version}, ' "${packages[@]}")"
# Every file and link the packages put on the machine (their folders may be shared).
owned=$(dpkg -L "${packages[@]}" | while read -r path; do
    if [ -L "$path" ] || [ ! -d "$path" ]; then printf '%s\n' "$path"; fi
done)
say "$(wc -l <<<"$owned") files and links; pg_chunk's in $("$PG_CONFIG" --version):"
pg_chunk_files "$PG_CONFIG" | sed 's/^/        /'
restart_cluster
cargo test -p pg_chunk_client_tests

step "the packages removed: nothing of them left"
apt-get purge -y -qq "${packages[@]}" >/dev/null
left=$(while read -r path; do
    if [ -e "$path" ] || [ -L "$path" ]; then printf '%s\n' "$path"; fi
done <<<"$owned"
pg_chunk_files "$PG_CONFIG"
if [ -e /usr/share/pg-chunk ]; then echo /usr/share/pg-chunk; fi)
if [ -n "$left" ]; then
    echo "left behind after apt-get purge:" >&2
    printf '%s\n' "$left" >&2
    exit 1
fi
say "none of the $(wc -l <<<"$owned") files and links is left, and no pg_chunk file in $("$PG_CONFIG" --version)"
trap - EXIT
put_source_build_back
restart_cluster
