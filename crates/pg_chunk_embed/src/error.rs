//! The embedder's one error type. The extension maps each variant to a SQLSTATE at the SQL
//! boundary (`MissingFile` → 58P01 undefined_file, the rest by their meaning), so every message
//! names the offending file, version or value.

use crate::ModelFile;
use std::path::PathBuf;

/// Everything loading or running a model can fail with.
#[derive(thiserror::Error, Debug)]
pub enum EmbedError {
    /// A file named in the model registry or the runtime setting does not exist.
    #[error("{what} not found: {}", path.display())]
    MissingFile {
        /// The path looked at.
        path: PathBuf,
        /// Which file it should have been.
        what: ModelFile,
    },

    /// The ONNX Runtime library loads but its API is older (or of another major version) than the
    /// one `ort` was built against.
    #[error("ONNX Runtime {found} is not compatible: pg_chunk needs ONNX Runtime {required}")]
    IncompatibleRuntime {
        /// The library's version.
        found: String,
        /// The version `ort` was built against.
        required: String,
    },

    /// ONNX Runtime could not be loaded, or refused the model or a run.
    #[error("ONNX Runtime error: {0}")]
    Runtime(String),

    /// The model or tokenizer files exist but do not describe a model we can use.
    #[error("invalid model: {0}")]
    InvalidModel(String),

    /// The registered dimension disagrees with what the model produces.
    #[error("model produces {found}-dimensional vectors but is registered with dimension {expected}")]
    DimensionMismatch {
        /// The registered dimension.
        expected: usize,
        /// What the model gave.
        found: usize,
    },
}

impl From<ort::Error> for EmbedError {
    fn from(error: ort::Error) -> Self {
        EmbedError::Runtime(error.to_string())
    }
}

impl From<ort::Error<ort::session::builder::SessionBuilder>> for EmbedError {
    fn from(error: ort::Error<ort::session::builder::SessionBuilder>) -> Self {
        EmbedError::Runtime(error.to_string())
    }
}

/// Fails with `MissingFile` unless `path` names an existing file. Checked before handing a path
/// to ONNX Runtime or the tokenizer, whose own messages for a missing file are vague.
pub(crate) fn require_file(path: &std::path::Path, what: ModelFile) -> Result<(), EmbedError> {
    if path.is_file() {
        Ok(())
    } else {
        Err(EmbedError::MissingFile { path: path.to_path_buf(), what })
    }
}
