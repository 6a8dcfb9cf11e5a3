//! Errors raised by the chunking logic. The SQL layer maps each variant to one SQLSTATE.

/// Everything that can go wrong while chunking, each naming what the user must change.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ChunkError {
    /// A cfg key that is unknown, of the wrong type or out of range (SQLSTATE 22023).
    #[error("invalid chunk configuration: {key} = {value}: {reason}")]
    InvalidConfig { key: String, value: String, reason: String },
    /// The document is larger than `max_document_size` (SQLSTATE 54000).
    #[error("document is {size} bytes, above max_document_size of {limit} bytes")]
    DocumentTooLarge { size: usize, limit: usize },
    /// `cfg.model` names no model that this build can load (SQLSTATE 42704).
    #[error("unknown embedding model \"{0}\"")]
    UnknownModel(String),
    /// The embedder failed while running (SQLSTATE XX000 is avoided: the SQL layer reports 58000).
    #[error("embedding failed: {0}")]
    Embedding(String),
}

impl ChunkError {
    /// Shorthand for a configuration error on `key`, quoting the offending JSON value.
    pub fn config(key: &str, value: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        ChunkError::InvalidConfig { key: key.to_string(), value: value.to_string(), reason: reason.into() }
    }
}
