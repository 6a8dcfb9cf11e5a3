//! Every pg_chunk setting. Each is a private static with what it does and why its default;
//! `init()` registers them from `_PG_init`; the accessors below are the only way to read them.

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use std::ffi::{CStr, CString};
use std::path::PathBuf;

/// Path of ONNX Runtime's shared library, loaded on the first transformer model use in each
/// backend. Superuser-only: whatever this names is loaded into the server process. The
/// default is the copy the installer puts beside the extension (`$libdir` is PostgreSQL's
/// package library directory).
static ONNXRUNTIME_LIBRARY: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"$libdir/libonnxruntime.so.1.31.1"));

/// Directory that `knowledge.models` file names are relative to. Superuser-only, so that
/// nobody can point a model at an arbitrary file. `$sharedir` is PostgreSQL's share directory,
/// where the installer puts the models.
static MODEL_DIR: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"$sharedir/pg_chunk/models"));

/// Model used when a cfg names none: the installed all-MiniLM-L6-v2, a good English default.
static DEFAULT_MODEL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"all-minilm-l6-v2"));

/// ONNX Runtime intra-op threads per backend. 1 by default: a database serves many backends
/// at once, and each one using every core would oversubscribe the machine.
static THREADS: GucSetting<i32> = GucSetting::<i32>::new(1);

/// The most ONNX Runtime threads one backend may use whatever pg_chunk.threads asks (which any
/// role may set). Superuser-only, so that no role can take every core. 0, the default, means
/// the machine's cores.
static MAX_THREADS: GucSetting<i32> = GucSetting::<i32>::new(0);

/// Sentences per inference batch. Smaller batches carry less padding: 16 is faster for MiniLM than
/// 32 or 64 (bench/README.md, "Decisions").
static BATCH_SIZE: GucSetting<i32> = GucSetting::<i32>::new(16);

/// Memory for the per-backend embedding cache, in MB (0 disables it). Chunking a document again
/// with another cfg then re-embeds nothing; 64 MB holds about 40,000 MiniLM sentences.
/// Superuser-only: up to 4 GB in every backend of a role that raised it would exhaust memory.
static EMBEDDING_CACHE_MB: GucSetting<i32> = GucSetting::<i32>::new(64);

/// Room for knowledge_internal.stored_vectors, in MB (0: vectors are neither stored nor looked up). The
/// store looks every text up there before embedding it, so an edit embeds only what changed
/// and a repeated paragraph is embedded once; past the cap the oldest vectors go first. 1 GB
/// holds the sentence and chunk vectors of about 80 MB of documents with the default config
/// (12.8 MB per MB: docs/store.md, "Reuse: an edit embeds what it changed"; static models' vectors are not stored). Superuser-only:
/// it sizes a table every writer shares.
static STORED_VECTORS_MB: GucSetting<i32> = GucSetting::<i32>::new(1024);

/// Whether the triggers on knowledge.documents keep knowledge.chunks in step. On by default;
/// a restore turns it off for its session (PGOPTIONS='-c pg_chunk.maintain_chunks=off'), because
/// the dump already holds the chunks and embeddings the triggers would recompute. Superuser-only:
/// a role that may write documents must not be able to write them without chunks. Read by the
/// triggers in src/sql/store_triggers.sql through knowledge_internal.maintains_chunks().
static MAINTAIN_CHUNKS: GucSetting<bool> = GucSetting::<bool>::new(true);

/// Chunks a config may have before a change of its `model` or `cfg`, which re-embeds every one of
/// them, needs a confirmation (`pg_chunk.reembed_confirm` naming the config, set in the same
/// transaction); 0 never asks. 100,000 chunks is a store whose re-embedding with a transformer
/// takes long enough (`knowledge.rechunk_estimate` says how long, at the config's own measured
/// rate) that a mistyped `UPDATE` should not start it unasked, while the small configs of
/// experiments and tests are rechunked as before. Read by the trigger in src/sql/store_triggers.sql
/// (knowledge_internal.confirm_reembed). Superuser-only, so that a database's owner decides
/// where the guard stands for everyone (ALTER DATABASE or ALTER SYSTEM).
static REEMBED_CONFIRM_CHUNKS: GucSetting<i32> = GucSetting::<i32>::new(100_000);

/// The chunk config whose store-wide re-embedding this transaction confirms (see
/// `pg_chunk.reembed_confirm_chunks`); empty by default. Naming the config, rather than turning a
/// switch on, confirms one change and no other; set it with `SET LOCAL` so that it lasts only
/// for the transaction. Anyone may set it: the guard is against accidents, and only a role that
/// may update knowledge.chunk_configs can make such a change at all.
static REEMBED_CONFIRM: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c""));

/// Databases the background workers serve (comma-separated), each with its own workers; read
/// at server start. Empty by default: a worker holds a connection to its database, which only
/// the databases that use async chunk configs want. Needs pg_chunk in shared_preload_libraries.
static WORKER_DATABASES: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c""));

/// Background workers per served database; read at server start. One is enough for a 2-core
/// machine (each embeds with pg_chunk.threads threads); more drain a queue in parallel.
static WORKERS: GucSetting<i32> = GucSetting::<i32>::new(1);

/// Queued documents a worker takes in one transaction. Their chunks are embedded together, so
/// short documents fill inference batches; a larger batch holds more row locks for longer.
static WORKER_BATCH_SIZE: GucSetting<i32> = GucSetting::<i32>::new(16);

/// How long an idle worker sleeps, in seconds, before it looks at the queue anyway. Workers are
/// woken when work is queued; the nap only brings back documents waiting out a retry backoff.
static WORKER_NAPTIME: GucSetting<i32> = GucSetting::<i32>::new(10);

pub fn init() {
    // Settings read at server start can only be defined while PostgreSQL loads
    // shared_preload_libraries (defining them later is FATAL); without that there are no workers.
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    if unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        GucRegistry::define_string_guc(
            c"pg_chunk.worker_databases",
            c"Databases whose knowledge.queue background workers drain (comma-separated).",
            c"Needs pg_chunk in shared_preload_libraries; takes effect at server start.",
            &WORKER_DATABASES,
            GucContext::Postmaster,
            GucFlags::default(),
        );
        GucRegistry::define_int_guc(
            c"pg_chunk.workers",
            c"Background workers per database in pg_chunk.worker_databases.",
            c"",
            &WORKERS,
            0,
            64,
            GucContext::Postmaster,
            GucFlags::default(),
        );
    }
    define_reembed_guard();
    GucRegistry::define_int_guc(
        c"pg_chunk.worker_batch_size",
        c"Queued documents a background worker chunks and embeds in one transaction.",
        c"",
        &WORKER_BATCH_SIZE,
        1,
        1000,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_chunk.worker_naptime",
        c"Seconds an idle background worker sleeps before it looks at the queue unwoken.",
        c"",
        &WORKER_NAPTIME,
        1,
        3600,
        GucContext::Sighup,
        GucFlags::UNIT_S,
    );
    GucRegistry::define_string_guc(
        c"pg_chunk.onnxruntime_library",
        c"Path of ONNX Runtime's libonnxruntime.so.",
        c"Loaded into each backend on the first use of a transformer model. $libdir stands for PostgreSQL's package library directory.",
        &ONNXRUNTIME_LIBRARY,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_chunk.maintain_chunks",
        c"Whether changes to knowledge.documents rechunk and re-embed them.",
        c"Turn off only to load a dump that already holds knowledge.chunks.",
        &MAINTAIN_CHUNKS,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_chunk.stored_vectors_mb",
        c"Room for knowledge_internal.stored_vectors, the vectors the store reuses, in MB (0 turns reuse off).",
        c"",
        &STORED_VECTORS_MB,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::UNIT_MB,
    );
    GucRegistry::define_string_guc(
        c"pg_chunk.model_dir",
        c"Directory that knowledge.models file names are relative to.",
        c"$sharedir stands for PostgreSQL's share directory.",
        &MODEL_DIR,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"pg_chunk.default_model",
        c"Embedding model used when a cfg or call names none.",
        c"A name from knowledge.models, or lexical for the model-free embedder.",
        &DEFAULT_MODEL,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_chunk.threads",
        c"ONNX Runtime intra-op threads per backend.",
        c"Takes effect when a backend loads a model.",
        &THREADS,
        1,
        64,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_chunk.max_threads",
        c"The most ONNX Runtime threads a backend may use, whatever pg_chunk.threads asks.",
        c"0 means the machine's cores.",
        &MAX_THREADS,
        0,
        1024,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_chunk.batch_size",
        c"Sentences per inference batch.",
        c"",
        &BATCH_SIZE,
        1,
        1024,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_chunk.embedding_cache_mb",
        c"Per-backend embedding cache size in MB (0 disables it).",
        c"",
        &EMBEDDING_CACHE_MB,
        0,
        4096,
        GucContext::Suset,
        GucFlags::UNIT_MB,
    );
    reserve_prefix();
}

/// Reserves the `pg_chunk.` prefix, once every setting above is defined: from then on a name
/// under it that is none of them is refused (`SET pg_chunk.thread = 2` fails with 42602, "invalid
/// configuration parameter name"), and a placeholder already set under it (postgresql.conf,
/// ALTER DATABASE, a SET before the library loaded) is removed with a WARNING. So
/// pg_chunk.workers and pg_chunk.worker_databases, defined only at preload, are removed with a
/// WARNING from a server that loads pg_chunk later: there they would do nothing.
fn reserve_prefix() {
    // SAFETY: called from _PG_init, in the backend's main thread; PostgreSQL copies the name.
    #[cfg(not(any(feature = "pg13", feature = "pg14")))]
    unsafe {
        pgrx::pg_sys::MarkGUCPrefixReserved(c"pg_chunk".as_ptr());
    }
}

/// The guard on store-wide re-embedding: `pg_chunk.reembed_confirm_chunks` and its confirmation.
fn define_reembed_guard() {
    GucRegistry::define_int_guc(
        c"pg_chunk.reembed_confirm_chunks",
        c"Chunks a config may have before a change of its model or cfg needs pg_chunk.reembed_confirm (0: never asks).",
        c"",
        &REEMBED_CONFIRM_CHUNKS,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"pg_chunk.reembed_confirm",
        c"The chunk config whose re-embedding this transaction confirms.",
        c"Set it with SET LOCAL in the transaction that changes the config's model or cfg.",
        &REEMBED_CONFIRM,
        GucContext::Userset,
        GucFlags::default(),
    );
}

pub fn onnxruntime_library() -> PathBuf {
    expand_dirs(&string_setting(&ONNXRUNTIME_LIBRARY))
}

pub fn model_dir() -> PathBuf {
    expand_dirs(&string_setting(&MODEL_DIR))
}

pub fn default_model() -> String {
    string_setting(&DEFAULT_MODEL)
}

/// (threads to use, threads asked for): pg_chunk.threads clamped to pg_chunk.max_threads.
pub fn threads() -> (usize, usize) {
    let asked = THREADS.get().max(1) as usize;
    let most = match MAX_THREADS.get() {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n as usize,
    };
    (asked.min(most.max(1)), asked)
}

pub fn maintain_chunks() -> bool {
    MAINTAIN_CHUNKS.get()
}

pub fn batch_size() -> usize {
    BATCH_SIZE.get().max(1) as usize
}

pub fn embedding_cache_bytes() -> usize {
    EMBEDDING_CACHE_MB.get().max(0) as usize * 1024 * 1024
}

pub fn stored_vectors_bytes() -> u64 {
    STORED_VECTORS_MB.get().max(0) as u64 * 1024 * 1024
}

/// The databases named in pg_chunk.worker_databases, in order, without blanks or repeats.
pub fn worker_databases() -> Vec<String> {
    let mut databases: Vec<String> = Vec::new();
    for name in string_setting(&WORKER_DATABASES).split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !databases.iter().any(|d| d == name) {
            databases.push(name.to_string());
        }
    }
    databases
}

pub fn workers() -> usize {
    WORKERS.get().max(0) as usize
}

pub fn worker_batch_size() -> i32 {
    WORKER_BATCH_SIZE.get().max(1)
}

pub fn worker_naptime() -> std::time::Duration {
    std::time::Duration::from_secs(WORKER_NAPTIME.get().max(1) as u64)
}

fn string_setting(setting: &GucSetting<Option<CString>>) -> String {
    setting.get().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Replaces a leading `$libdir` or `$sharedir` by this server's directories.
fn expand_dirs(path: &str) -> PathBuf {
    let expand = |prefix: &str, dir: fn() -> String| {
        path.strip_prefix(prefix).map(|rest| PathBuf::from(format!("{}{rest}", dir())))
    };
    expand("$libdir", pkglib_dir).or_else(|| expand("$sharedir", share_dir)).unwrap_or_else(|| PathBuf::from(path))
}

fn pkglib_dir() -> String {
    server_dir(pgrx::pg_sys::get_pkglib_path)
}

fn share_dir() -> String {
    server_dir(pgrx::pg_sys::get_share_path)
}

/// A directory PostgreSQL derives from its own executable's location.
fn server_dir(getter: unsafe fn(*const std::ffi::c_char, *mut std::ffi::c_char)) -> String {
    let mut buffer = vec![0 as std::ffi::c_char; pgrx::pg_sys::MAXPGPATH as usize];
    // SAFETY: my_exec_path is set at backend start; the buffer has MAXPGPATH bytes as required.
    unsafe {
        getter(std::ptr::addr_of!(pgrx::pg_sys::my_exec_path).cast(), buffer.as_mut_ptr());
        CStr::from_ptr(buffer.as_ptr()).to_string_lossy().into_owned()
    }
}
