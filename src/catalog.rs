//! This library's version against the version of pg_chunk's SQL installed in the database
//! (`pg_extension.extversion`), which differ between installing a new library and `ALTER
//! EXTENSION pg_chunk UPDATE`, or, where pg_chunk is in shared_preload_libraries, until the server
//! restarts after a new library was installed (every backend keeps the postmaster's copy).
//!
//! The rule: a library serves the SQL of its own version and of every earlier one, since the
//! upgrade path runs the new library against the old SQL until `ALTER EXTENSION pg_chunk
//! UPDATE` (tests/tests/upgrade.rs writes documents into 0.1.0, 0.2.0 and 0.3.0 databases with
//! the current library). A library older than the SQL is refused: the SQL may call functions the
//! library lacks, or read tables in a shape the library does not know.

use crate::errors::Error;
use pgrx::prelude::*;
use std::cell::Cell;

/// This library's version (Cargo's package version, which `cargo pgrx` also writes into the
/// install script's name).
pub const LIBRARY_VERSION: &str = env!("CARGO_PKG_VERSION");

thread_local! {
    // A backend is a single-threaded process: per-backend state is thread_local + Cell.
    /// Whether this backend found its library able to serve the installed SQL. Only a pass is
    /// kept: a refused backend looks again on its next call, so that `ALTER EXTENSION pg_chunk
    /// UPDATE` in the same session is seen.
    static SERVES_INSTALLED_SQL: Cell<bool> = const { Cell::new(false) };
}

/// The version of pg_chunk's SQL installed in this database; None where it is not installed.
pub fn installed_sql_version() -> Result<Option<String>, Error> {
    // Read-only select: callers include PARALLEL SAFE functions (models.rs says why).
    let query = "SELECT (SELECT e.extversion::pg_catalog.text FROM pg_catalog.pg_extension AS e \
                 WHERE e.extname OPERATOR(pg_catalog.=) 'pg_chunk')";
    Spi::connect(|client| client.select(query, Some(1), &[])?.first().get_one::<String>())
        .map_err(|e| Error::Registry(e.to_string()))
}

/// Refuses to go on where this library is older than the installed SQL (the module's rule);
/// once per backend. Called on entry by the functions that read the store's tables or
/// `knowledge.models`.
pub fn check_library_serves_sql() -> Result<(), Error> {
    if SERVES_INSTALLED_SQL.get() {
        return Ok(());
    }
    // Inside CREATE EXTENSION or ALTER EXTENSION UPDATE the script being run is the one this
    // catalog row is becoming; its own calls are never refused, nor the result kept.
    // SAFETY: a flag PostgreSQL sets while it runs an extension script.
    if unsafe { pg_sys::creating_extension } {
        return Ok(());
    }
    if let Some(sql) = installed_sql_version()? {
        if !library_serves(LIBRARY_VERSION, &sql) {
            return Err(Error::VersionMismatch { library: LIBRARY_VERSION.to_string(), sql });
        }
    }
    SERVES_INSTALLED_SQL.set(true);
    Ok(())
}

/// Whether a library of version `library` serves SQL of version `sql`: the same version or an
/// earlier one. Versions are dotted numbers; one that is not is served only by itself.
pub fn library_serves(library: &str, sql: &str) -> bool {
    let numbers = |v: &str| v.split('.').map(str::parse::<u64>).collect::<Result<Vec<_>, _>>();
    match (numbers(library), numbers(sql)) {
        (Ok(library), Ok(sql)) => sql <= library,
        _ => library == sql,
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
