//! pg_chunk: the SQL boundary. The functions users call are in `api.rs`, the store's in
//! `store.rs` (its tables, triggers, search and queue are SQL, in src/sql/), the queue's background
//! workers in `worker.rs`; the algorithms are in `crates/pg_chunk_core`, which knows nothing of
//! PostgreSQL.

// pgrx's own types: every fallible function returns pgrx's ErrorReport (large, and not ours to
// box), and a function's result columns are spelled out in its TableIterator signature (a type
// alias would hide the column names pgrx reads from it).
#![allow(clippy::result_large_err, clippy::type_complexity)]
// A panic on the SQL path is a backend ERROR with no SQLSTATE of ours: errors go through
// errors.rs instead. Tests may unwrap.
#![cfg_attr(not(any(test, feature = "pg_test")), deny(clippy::unwrap_used, clippy::expect_used))]

use pgrx::prelude::*;

mod api;
mod catalog;
mod cfg;
mod chunking;
mod drop_guard;
mod embedding;
mod errors;
mod filter;
mod gucs;
mod heap;
mod models;
mod store;
mod stored_vectors;
mod text_search;
mod vector;
mod vector_cache;
mod worker;

// Layers: a module imports only from the layers above its own, so imports point one way and no
// two modules import each other (lib_tests.rs reads this list and checks every `crate::` path in
// src/*.rs against it; a new module gets a line here).
//   1. errors, gucs, heap, vector, cfg: none of ours
//   2. vector_cache, catalog: this backend's state: its embeddings by model, role and text; whether its library serves the installed SQL
//   3. models: knowledge.models, the models loaded in this backend, their statistics
//   4. stored_vectors: knowledge_internal.stored_vectors, looked up before embedding and saved after
//   5. embedding: texts embedded through the cache and the stored vectors; a model as the core's embedder
//   6. chunking: the core run with the model a cfg names; the rows of knowledge.chunk
//   7. api, store, text_search, filter, worker, drop_guard: the SQL functions, the queue's background
//      workers, and the hook that keeps a drop from deleting documents

::pgrx::pg_module_magic!(name, version);

/// The schema of what pg_chunk's own SQL calls and users do not (src/sql/models.sql creates it,
/// with its grant, before anything else). Declared here as well because pgrx puts a function in a
/// schema (`#[pg_extern(schema = "knowledge_internal")]`, in store.rs and text_search.rs) only
/// when it knows the schema; its `CREATE SCHEMA IF NOT EXISTS` then finds it made.
#[pg_schema]
mod knowledge_internal {}

// The model registry comes first: functions read it at run time.
extension_sql_file!("sql/models.sql", name = "models", bootstrap);
// The store, in five files by job, each after the one before: its tables (after the Rust functions
// the store's SQL calls), each config's indexes, the writing of chunks, the triggers that keep
// them in step, and rechunking.
extension_sql_file!(
    "sql/store_tables.sql",
    name = "store_tables",
    requires = [
        "models",
        embed_chunks_batch,
        embed_config_chunks,
        count_chunks_written,
        embedding_stats,
        model_file_sha256,
        check_chunk_config,
        maintains_chunks,
        embed
    ]
);
extension_sql_file!("sql/store_indexes.sql", name = "store_indexes", requires = ["store_tables"]);
extension_sql_file!("sql/store_writes.sql", name = "store_writes", requires = ["store_indexes"]);
extension_sql_file!("sql/store_triggers.sql", name = "store_triggers", requires = ["store_writes"]);
// The last is named "store": what requires it comes after the whole store.
extension_sql_file!("sql/store_rechunk.sql", name = "store", requires = ["store_triggers"]);
// Mirroring users' tables into the store.
extension_sql_file!("sql/attach.sql", name = "attach", requires = ["store"]);
// The text leg of search: tsvectors with CJK bigrams, BM25's statistics kept by triggers.
extension_sql_file!("sql/text_search.sql", name = "text_search", requires = ["store", cjk_bigrams_of, bm25]);
// Hybrid search over the store.
extension_sql_file!("sql/search.sql", name = "search", requires = ["text_search", filter_jsonpath]);
// Asynchronous ingestion: the queue the background workers (worker.rs) drain.
extension_sql_file!("sql/queue.sql", name = "queue", requires = ["store"]);
// Logical replication: the triggers a subscriber of documents alone sets to fire.
extension_sql_file!("sql/replication.sql", name = "replication", requires = ["text_search", "queue"]);
// A store spread over Citus workers, searched through the coordinator.
extension_sql_file!("sql/citus.sql", name = "citus", requires = ["attach", "search"]);
// Refuses a drop that would delete documents: the event trigger that loads drop_guard.rs's hook.
extension_sql_file!("sql/drop_guard.sql", name = "drop_guard", requires = ["store", drop_guard_loaded]);
// The store's owner, knowledge_store, and who may run what with its rights.
extension_sql_file!(
    "sql/privileges.sql",
    name = "privileges",
    requires = ["store", "attach", "text_search", "search", "queue", "replication", "citus", "drop_guard"]
);
// Pins the search_path of every SQL function above.
extension_sql_file!(
    "sql/search_path.sql",
    name = "search_path",
    requires =
        ["store", "attach", "text_search", "search", "queue", "replication", "citus", "drop_guard", "privileges"]
);
// Documentation for every function, readable with `\df+` and `obj_description()`.
extension_sql_file!("sql/comments.sql", name = "comments", finalize);

/// Registers the settings, the exception to pgrx's panic hook for PostgreSQL's own errors, the
/// hook that refuses to drop documents, and the queue's background workers when loaded by
/// shared_preload_libraries; models load on first use in each backend, never here.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    errors::skip_panic_hook_for_postgres_errors();
    gucs::init();
    drop_guard::install();
    worker::register();
}

#[cfg(any(test, feature = "pg_test"))]
mod tests;

#[cfg(test)]
#[path = "lib_tests.rs"]
mod layers;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
