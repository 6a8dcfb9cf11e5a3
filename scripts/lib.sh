# Shared by install.sh and test.sh: logging, the PostgreSQL 15 paths, and the steps both need.

PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
export PGHOST=${PGHOST:-/var/run/postgresql}
export PGPORT=${PGPORT:-5432}
export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n==> %s\n' "$*"; }
say() { printf '    %s\n' "$*"; }

pg_sharedir() { "$PG_CONFIG" --sharedir; }
pg_pkglibdir() { "$PG_CONFIG" --pkglibdir; }
# Where scripts/models.sh installs the embedding models, one folder per model name.
pg_chunk_models_dir() { printf '%s/pg_chunk/models' "$(pg_sharedir)"; }

# The sha256 of a file as 64 hex digits, or nothing when the file is missing.
file_sha256() { if [ -f "$1" ]; then sha256sum "$1" | cut -d' ' -f1; fi; }

# The installer's Python environment for making model files, with scripts/model-venv.txt
# (created once, topped up when the file pins something new). Sets MODEL_VENV.
MODEL_VENV=${PG_CHUNK_BUILD_DIR:-/var/tmp/pg_chunk-build}/model-venv
ensure_model_venv() {
    local requirements=scripts/model-venv.txt installed missing
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
        say "installing python3-venv"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
    fi
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

# Debian 12 ships no pgvector 0.8.0; Debian 13's source package has it. Adds a deb-src entry
# for trixie that reuses the Debian mirror this machine is already configured with. (0.8.4 and
# later fix an HNSW VACUUM race, tests/pgvector.rs, but the archive serves us no later version.)
add_trixie_sources() {
    local list=/etc/apt/sources.list.d/pg_chunk-trixie-src.sources mirror
    if [ ! -f "$list" ]; then
        mirror=$(grep -hoE '^URIs: *[^ ]+/debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | sed 's/^URIs: *//')
        [ -n "$mirror" ] || mirror=$(grep -hoE '^deb +[^ ]+/debian/? ' /etc/apt/sources.list 2>/dev/null | head -n1 | awk '{print $2}')
        [ -n "$mirror" ] || { echo "no Debian mirror found in /etc/apt/sources.list*" >&2; return 1; }
        say "adding deb-src trixie main from $mirror"
        printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror" >"$list"
    fi
    apt-get update -qq
}

# pg_chunk.so is mapped by every backend that used it, and by the postmaster itself once it is
# in shared_preload_libraries: overwriting the file in place crashes them (SIGBUS). Moved aside
# first, the old file lives on for them until the cluster restarts.
move_library_aside() {
    local library
    library="$(pg_pkglibdir)/pg_chunk.so"
    if [ -f "$library" ]; then mv -f "$library" "$library.previous"; fi
}

install_release() {
    local library
    library="$(pg_pkglibdir)/pg_chunk.so"
    move_library_aside
    if ! cargo pgrx install --release --pg-config "$PG_CONFIG"; then
        # A preloading server cannot start without the library: put the old one back.
        if [ ! -f "$library" ] && [ -f "$library.previous" ]; then mv -f "$library.previous" "$library"; fi
        return 1
    fi
    rm -f "$library.previous"
    # Earlier releases' install scripts, so that databases can be made at an old version and
    # updated (sql/releases/README.md).
    cp sql/releases/pg_chunk--*.sql "$(pg_sharedir)/extension/"
}

# Loads pg_chunk at server start (shared_preload_libraries, after what is there already) and
# has its background workers serve the given databases besides those they serve; restarts the
# cluster for each setting that changed. The cluster must be running.
configure_workers() {
    local preload databases changed=0 db
    preload=$(psql -X -qAt -d postgres -c "SHOW shared_preload_libraries")
    if ! tr ',' '\n' <<<"$preload" | sed 's/^ *//; s/ *$//' | grep -qxF pg_chunk; then
        preload=${preload:+$preload, }pg_chunk
        say "shared_preload_libraries = '$preload'; restarting 15 main"
        psql -X -q -d postgres -c "ALTER SYSTEM SET shared_preload_libraries = '$preload'"
        restart_cluster
    fi
    # pg_chunk's server-start settings exist once the server has preloaded it.
    databases=$(psql -X -qAt -d postgres -c "SHOW pg_chunk.worker_databases")
    for db in "$@"; do
        if ! tr ',' '\n' <<<"$databases" | sed 's/^ *//; s/ *$//' | grep -qxF "$db"; then
            databases=${databases:+$databases,}$db
            changed=1
        fi
    done
    if ((changed)); then
        say "pg_chunk.worker_databases = '$databases'; restarting 15 main"
        psql -X -q -d postgres -c "ALTER SYSTEM SET pg_chunk.worker_databases = '$databases'"
        restart_cluster
    else
        say "pg_chunk workers serve: $databases"
    fi
}

# Starts the "15 main" cluster, creating it first if the machine has none.
start_cluster() {
    if ! pg_lsclusters -h 2>/dev/null | awk '$1 == "15" && $2 == "main"' | grep -q .; then
        say "creating cluster 15 main"
        pg_createcluster 15 main
    fi
    if pg_lsclusters -h | awk '$1 == "15" && $2 == "main" {print $4}' | grep -q online; then
        say "15 main is running"
    else
        say "starting 15 main"
        pg_ctlcluster 15 main start
    fi
}

restart_cluster() {
    pg_ctlcluster 15 main restart
}

# Lets the invoking OS user (root in CI) connect over the socket with peer authentication.
ensure_superuser_role() {
    local user
    user=$(id -un)
    if [ "$user" != postgres ] && ! runuser -u postgres -- psql -X -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$user'" | grep -q 1; then
        say "creating superuser role $user"
        runuser -u postgres -- createuser --superuser "$user"
    fi
    psql -X -q -d postgres -c "SELECT 1" >/dev/null
}
