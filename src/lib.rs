//! pg_chunk: the SQL boundary. Every function users call is in `api.rs`; the algorithms are
//! in `crates/pg_chunk_core`, which knows nothing of PostgreSQL.

use pgrx::prelude::*;

mod api;
mod errors;

::pgrx::pg_module_magic!(name, version);

// Documentation for every function, readable with `\df+` and `obj_description()`.
extension_sql_file!("../sql/comments.sql", name = "comments", finalize);

#[cfg(any(test, feature = "pg_test"))]
mod pg_tests;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
