//! Errors raised by the chunking logic. The SQL layer maps each variant to one SQLSTATE.

/// Everything that can go wrong while chunking, each naming what the user must change.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ChunkError {
    /// A cfg key that is unknown, of the wrong type or out of range (SQLSTATE 22023).
    #[error("invalid chunk configuration: {key} = {value}: {reason}")]
    InvalidConfig {
        /// The key, dotted inside an object (`threshold.type`).
        key: String,
        /// The value as the cfg gave it.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The document is larger than `max_document_size` (SQLSTATE 54000).
    #[error("document is {size} bytes, above max_document_size of {limit} bytes")]
    DocumentTooLarge {
        /// The document's size, in bytes.
        size: usize,
        /// `max_document_size`, in bytes.
        limit: usize,
    },
    /// `cfg.model` names no model that this build can load (SQLSTATE 42704).
    #[error("unknown embedding model \"{0}\"")]
    UnknownModel(String),
    /// The embedder gave something unusable, such as too few vectors (SQLSTATE 38000).
    #[error("embedding failed: {0}")]
    Embedding(String),
    /// The embedder's own error, kept whole: the SQL layer reports it as it reports that
    /// embedder's errors anywhere else (one failure, one SQLSTATE).
    #[error(transparent)]
    Embedder(EmbedderError),
}

/// An error from an [`Embedder`](crate::embed::Embedder), of the embedder's own type: this crate
/// knows no embedder, so it is boxed, and [`EmbedderError::downcast`] gets it back.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct EmbedderError(Box<dyn std::error::Error + Send + Sync>);

impl EmbedderError {
    /// The error as its own type `E`, or itself unchanged when it is of another type.
    pub fn downcast<E: std::error::Error + 'static>(self) -> Result<E, EmbedderError> {
        self.0.downcast::<E>().map(|e| *e).map_err(EmbedderError)
    }
}

/// Two embedder errors are equal when they say the same (their types may not be comparable).
impl PartialEq for EmbedderError {
    fn eq(&self, other: &EmbedderError) -> bool {
        self.0.to_string() == other.0.to_string()
    }
}

impl ChunkError {
    /// Shorthand for a configuration error on `key`, quoting the offending JSON value.
    pub fn config(key: &str, value: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        ChunkError::InvalidConfig { key: key.to_string(), value: value.to_string(), reason: reason.into() }
    }

    /// The embedder's own error `source`, kept whole.
    pub fn embedder(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        ChunkError::Embedder(EmbedderError(Box::new(source)))
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
