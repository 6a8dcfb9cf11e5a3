#!/usr/bin/env bash
# Debian packages of pg_chunk for one PostgreSQL: `bash scripts/package.sh [PG_CONFIG]` (default
# Debian's 15) writes two packages under target/packages/, with the version from Cargo.toml:
#   postgresql-<major>-pg-chunk_<version>_amd64.deb  pg_chunk.so, its control file, every SQL
#       script (this release's, the earlier releases' and the upgrade scripts), ONNX Runtime's
#       library, and <sharedir>/pg_chunk/models as a link to the models package's folder;
#       depends on postgresql-<major> and on
#   pg-chunk-models_<version>_all.deb  the model files, in /usr/share/pg-chunk/models, the same
#       for every PostgreSQL major.
# Each carries /usr/share/doc/<package>/copyright: LICENSE, THIRD_PARTY.md and the licence texts
# it names. The library comes from `cargo pgrx package`, the models and ONNX Runtime from what
# scripts/models.sh installed into that PostgreSQL (run first; it does nothing when they are in
# place, and is checked with sha256sum -c), the packages from dpkg-deb; lintian must report no
# error on either. The paths inside are those of Debian's and PGDG's packages of PostgreSQL
# <major>, on which the package depends (/usr/lib/postgresql/<major>/lib,
# /usr/share/postgresql/<major>), wherever the PostgreSQL named is installed: the test matrix's
# are in the build directory. Needs what scripts/install.sh sets up.
set -euo pipefail
cd "$(dirname "$0")/.."
if (($#)); then PG_CONFIG=$1; fi
source scripts/lib.sh

# No mailing address yet: the reserved .invalid domain says so.
MAINTAINER="pg_chunk authors <maintainers@pg-chunk.invalid>"
MODELS_ROOT=/usr/share/pg-chunk/models

version=$(pg_chunk_version)
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
pkglib=/usr/lib/postgresql/$major/lib
share=/usr/share/postgresql/$major
extension_package=postgresql-$major-pg-chunk
models_package=pg-chunk-models
out=target/packages
stage=$out/stage

step "packages of pg_chunk $version for $("$PG_CONFIG" --version)"
ensure_debian_packages dpkg-dev lintian
bash scripts/models.sh
(cd "$(pg_chunk_models_dir)" && sha256sum --check --quiet SHA256SUMS)
rm -rf "$stage"
mkdir -p "$stage"

# One member of a pinned wheel (lib.sh, cached_wheel), to stdout.
wheel_member() {
    python3 - "$(cached_wheel "$1")" "$2" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    sys.stdout.buffer.write(archive.read(sys.argv[2]))
PY
}

# /usr/share/doc/<package>/: the copyright file and a Debian changelog (gzip -n, for
# reproducible bytes), as Debian's policy asks of every package.
write_docs() {
    local root=$1 package=$2 doc
    doc=$root/usr/share/doc/$package
    install -d -m 755 "$doc"
    {
        printf 'pg_chunk %s. Its own code is under the MIT licence (LICENSE, first below); THIRD_PARTY.md\n' "$version"
        printf 'then gives the source and licence of every file in these packages that pg_chunk did not\n'
        printf 'write; ONNX Runtime'"'"'s licence follows. On Debian systems the complete text of the Apache\n'
        printf 'License 2.0, which all-minilm-l6-v2'"'"'s files are under, is in /usr/share/common-licenses/Apache-2.0.\n'
        printf '\n==== LICENSE ====\n\n'
        cat LICENSE
        printf '\n==== THIRD_PARTY.md ====\n\n'
        cat THIRD_PARTY.md
        printf '\n==== ONNX Runtime: onnxruntime/LICENSE ====\n\n'
        wheel_member onnxruntime==1.31.1 onnxruntime/LICENSE
    } >"$doc/copyright"
    {
        printf '%s (%s) unstable; urgency=medium\n\n' "$package" "$version"
        printf '  * pg_chunk %s: CHANGELOG.md in its source lists what changed.\n\n' "$version"
        printf ' -- %s  %s\n' "$MAINTAINER" "$(git log -1 --format=%cD 2>/dev/null || date -R)"
    } | gzip -9n >"$doc/changelog.gz"
    chmod 644 "$doc"/*
}

# DEBIAN/control of the tree $1: package $2, architecture $3, the Depends line $4 (none when
# empty) and the description's summary $5; the long description is common.
write_control() {
    local root=$1 package=$2 architecture=$3 depends=$4 summary=$5
    install -d -m 755 "$root/DEBIAN"
    {
        printf 'Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: %s\n' "$package" "$version" "$architecture" "$MAINTAINER"
        printf 'Installed-Size: %s\n' "$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
        if [ -n "$depends" ]; then printf 'Depends: %s\n' "$depends"; fi
        printf 'Section: database\nPriority: optional\nDescription: %s\n' "$summary"
        cat <<'DESCRIPTION'
 pg_chunk turns documents into retrieval-ready chunks inside PostgreSQL: it
 cuts where the meaning changes, with exact offsets and a hard size cap,
 embeds them with local models (no service is called), and searches them by
 keyword and vector in one function. It needs pgvector 0.8.0 or later in the
 same server.
DESCRIPTION
    } >"$root/DEBIAN/control"
}

step "$extension_package: cargo pgrx package"
ext=$stage/$extension_package
cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$stage/pgrx"
install -D -m 644 "$stage/pgrx$(pg_pkglibdir)/pg_chunk.so" "$ext$pkglib/pg_chunk.so"
install -d -m 755 "$ext$share/extension"
cp "$stage/pgrx$(pg_sharedir)/extension/"pg_chunk* "$ext$share/extension/"
# The earlier releases' install scripts, so that a database made at an old version can be
# updated, as install_release copies them (scripts/lib.sh).
cp sql/pg_chunk--*.sql "$ext$share/extension/"
install -m 644 "$(pg_pkglibdir)/$ORT_LIBRARY" "$ext$pkglib/$ORT_LIBRARY"
ln -s "$ORT_LIBRARY" "$ext$pkglib/libonnxruntime.so"
install -d -m 755 "$ext$share/pg_chunk"
ln -s "$(realpath -m --relative-to="$share/pg_chunk" "$MODELS_ROOT")" "$ext$share/pg_chunk/models"
# Stripped as Debian's packages are (dh_strip's options).
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$ext$pkglib/pg_chunk.so"
chmod 644 "$ext$pkglib/pg_chunk.so" "$ext$share/extension/"*
# lintian recognises code of curl and mbedtls inside ONNX Runtime's library: the unchanged file of
# its pinned wheel, which a package cannot unbundle; its ThirdPartyNotices.txt, shipped beside the
# copyright file, lists what it contains.
install -d -m 755 "$ext/usr/share/lintian/overrides"
for library in curl mbedtls; do
    printf 'embedded-library %s [%s]\n' "$library" "${pkglib#/}/$ORT_LIBRARY"
done >"$ext/usr/share/lintian/overrides/$extension_package"
chmod 644 "$ext/usr/share/lintian/overrides/$extension_package"
write_docs "$ext" "$extension_package"
wheel_member onnxruntime==1.31.1 onnxruntime/ThirdPartyNotices.txt | gzip -9n \
    >"$ext/usr/share/doc/$extension_package/onnxruntime-ThirdPartyNotices.txt.gz"
chmod 644 "$ext/usr/share/doc/$extension_package/onnxruntime-ThirdPartyNotices.txt.gz"
# The shared libraries' own dependencies, as dpkg-shlibdeps finds them (it reads debian/control).
shlibs=$(
    cd "$stage" && mkdir -p debian &&
        printf 'Source: pg-chunk\n\nPackage: %s\nArchitecture: any\n' "$extension_package" >debian/control &&
        dpkg-shlibdeps -O -e"$extension_package$pkglib/pg_chunk.so" -e"$extension_package$pkglib/$ORT_LIBRARY" 2>/dev/null |
        sed -n 's/^shlibs:Depends=//p'
)
write_control "$ext" "$extension_package" amd64 \
    "postgresql-$major, $models_package (= $version)${shlibs:+, $shlibs}" \
    "semantic chunking, local embeddings and hybrid search for PostgreSQL $major"

step "$models_package: the model files"
models=$stage/$models_package
install -d -m 755 "$models$MODELS_ROOT"
cp -r "$(pg_chunk_models_dir)"/. "$models$MODELS_ROOT/"
# SHA256SUMS without ONNX Runtime's line, which names a path of the other package.
grep -v '  /' "$(pg_chunk_models_dir)/SHA256SUMS" >"$models$MODELS_ROOT/SHA256SUMS"
find "$models" -type d -exec chmod 755 {} + && find "$models" -type f -exec chmod 644 {} +
write_docs "$models" "$models_package"
write_control "$models" "$models_package" all "" \
    "models for pg_chunk: all-MiniLM-L6-v2, multilingual-e5-small, potion-base-8M"

step "dpkg-deb and lintian"
for package in "$extension_package:amd64" "$models_package:all"; do
    name=${package%:*}
    deb=$out/${name}_${version}_${package#*:}.deb
    # gzip at level 1: the model weights hardly compress, and xz takes minutes over them.
    dpkg-deb --root-owner-group -Zgzip -z1 --build "$stage/$name" "$deb" >/dev/null
    say "$deb: $(du -h "$deb" | cut -f1)"
    # Errors fail the script; warnings are printed.
    lintian --fail-on error "$deb" | sed 's/^/    /'
done
rm -rf "$stage"
