//! The one place where errors become PostgreSQL errors with a deliberate SQLSTATE.

use pg_chunk_core::ChunkError;
use pg_chunk_embed::{EmbedError, ModelFile, ModelSpec};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::PgSqlErrorCode;

/// Everything a pg_chunk function can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Chunk(ChunkError),
    /// A model that cannot be loaded or run, with the setting a user would check.
    #[error("{source} (model \"{model}\"; see {setting})")]
    Embed { source: EmbedError, model: String, setting: &'static str },
    #[error("unknown embedding model \"{0}\"; see knowledge.models")]
    UnknownModel(String),
    /// A function argument out of its domain, other than a cfg (SQLSTATE 22023).
    #[error("{0}")]
    InvalidArgument(String),
    /// `knowledge.models` holds something unusable.
    #[error("{0}")]
    Registry(String),
    /// This library is older than the SQL installed in the database (catalog.rs has the rule).
    #[error("pg_chunk's library is version {library}, older than its SQL in this database, version {sql}")]
    VersionMismatch { library: String, sql: String },
}

impl From<ChunkError> for Error {
    /// A model's error that the chunking core carried (`ChunkError::Embedder`, put there by
    /// `embedding::ModelAdapter`) comes out as the error it was, with its SQLSTATE.
    fn from(error: ChunkError) -> Error {
        match error {
            ChunkError::Embedder(source) => match source.downcast::<Error>() {
                Ok(error) => error,
                Err(source) => Error::Chunk(ChunkError::Embedder(source)),
            },
            other => Error::Chunk(other),
        }
    }
}

impl Error {
    /// An embedder error for `spec`, naming the setting that decides the file involved.
    pub fn embed(source: EmbedError, spec: &ModelSpec) -> Error {
        let setting = match &source {
            EmbedError::MissingFile { what: ModelFile::RuntimeLibrary, .. } => "pg_chunk.onnxruntime_library",
            EmbedError::IncompatibleRuntime { .. } => "pg_chunk.onnxruntime_library",
            EmbedError::MissingFile { .. } => "pg_chunk.model_dir and knowledge.models",
            _ => "knowledge.models",
        };
        Error::Embed { source, model: spec.name.clone(), setting }
    }

    /// The SQLSTATE each kind of error is reported with.
    pub fn sqlstate(&self) -> PgSqlErrorCode {
        match self {
            Error::Chunk(ChunkError::InvalidConfig { .. }) | Error::InvalidArgument(_) => {
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE
            } // 22023
            Error::Chunk(ChunkError::DocumentTooLarge { .. }) => PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED, // 54000
            Error::Chunk(ChunkError::UnknownModel(_)) | Error::UnknownModel(_) => {
                PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT
            } // 42704
            Error::Chunk(ChunkError::Embedding(_) | ChunkError::Embedder(_)) => {
                PgSqlErrorCode::ERRCODE_EXTERNAL_ROUTINE_EXCEPTION
            } // 38000
            Error::Embed { source, .. } => match source {
                EmbedError::MissingFile { .. } => PgSqlErrorCode::ERRCODE_UNDEFINED_FILE, // 58P01
                EmbedError::IncompatibleRuntime { .. } => PgSqlErrorCode::ERRCODE_SYSTEM_ERROR, // 58000
                EmbedError::InvalidModel(_) | EmbedError::DimensionMismatch { .. } => {
                    PgSqlErrorCode::ERRCODE_INVALID_OBJECT_DEFINITION
                } // 42P17
                EmbedError::Runtime(_) => PgSqlErrorCode::ERRCODE_EXTERNAL_ROUTINE_EXCEPTION, // 38000
            },
            Error::Registry(_) => PgSqlErrorCode::ERRCODE_INVALID_OBJECT_DEFINITION, // 42P17
            Error::VersionMismatch { .. } => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, // 55000
        }
    }

    /// What to do about the error, where there is one thing to do.
    fn hint(&self) -> Option<String> {
        match self {
            Error::VersionMismatch { sql, .. } => Some(format!(
                "Install pg_chunk {sql}'s library; where pg_chunk is in shared_preload_libraries, restart the \
                 server after installing it (docs/operations.md, \"Upgrading\")."
            )),
            _ => None,
        }
    }

    /// The report pgrx raises when a function returns `Err`.
    pub fn report(self, function: &'static str) -> ErrorReport {
        let hint = self.hint();
        let report = ErrorReport::new(self.sqlstate(), self.to_string(), function);
        match hint {
            Some(hint) => report.set_hint(hint),
            None => report,
        }
    }
}

/// Keeps pgrx's panic hook away from PostgreSQL's own ERRORs. An ERROR raised inside our Rust
/// frames (a cancel or statement_timeout at `check_for_interrupts!`, an SPI error) unwinds to the
/// SQL function's boundary as a pgrx `CaughtError::PostgresError` panic and is raised again
/// there. pgrx's hook captures a Rust backtrace for every panic, and with RUST_BACKTRACE set in
/// the server's environment the boundary resolves it into the ERROR's DETAIL: a cancel then
/// spends about 80 ms on a quiet machine, and far longer on a busy one, looking up symbols, to
/// show frames under "canceling statement due to user request". Such an ERROR already carries
/// PostgreSQL's report; a Rust panic still goes to pgrx's hook, location and backtrace included.
/// Called once per process, from `_PG_init` (pgrx registers its hook earlier, in
/// `Pg_magic_func`).
pub fn skip_panic_hook_for_postgres_errors() {
    use pgrx::pg_sys::panic::CaughtError;
    let pgrx_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !matches!(info.payload().downcast_ref::<CaughtError>(), Some(CaughtError::PostgresError(_))) {
            pgrx_hook(info);
        }
    }));
}
