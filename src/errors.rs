//! The one place where chunking errors become PostgreSQL errors with a deliberate SQLSTATE.

use pg_chunk_core::ChunkError;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::PgSqlErrorCode;

/// The SQLSTATE that each kind of error is reported with.
pub fn sqlstate(err: &ChunkError) -> PgSqlErrorCode {
    match err {
        ChunkError::InvalidConfig { .. } => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, // 22023
        ChunkError::DocumentTooLarge { .. } => PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED, // 54000
        ChunkError::UnknownModel(_) => PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,             // 42704
        ChunkError::Embedding(_) => PgSqlErrorCode::ERRCODE_EXTERNAL_ROUTINE_EXCEPTION,      // 38000
    }
}

/// Converts a chunking error into the report that pgrx raises when a function returns `Err`.
pub fn report(err: ChunkError, function: &'static str) -> ErrorReport {
    ErrorReport::new(sqlstate(&err), err.to_string(), function)
}
