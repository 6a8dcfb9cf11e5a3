//! Sentence embeddings from local models, for use inside a PostgreSQL backend. No pgrx here.
//!
//! Two kinds of model sit behind [`SentenceModel`]:
//! - `transformer`: an ONNX model run by ONNX Runtime (loaded from a path with `ort`'s
//!   `load-dynamic`), with mean or CLS pooling, as sentence-transformers computes them;
//! - `static`: a model2vec table (e.g. potion-base-8M): the average of the rows of the tokens.
//!
//! A backend is a single-threaded process: nothing here starts threads (tokenizers' rayon is turned
//! off, ONNX Runtime gets `RuntimeOptions::threads` intra-op threads, 1 by default), and the caller
//! keeps a loaded model in a `thread_local!`.

#![warn(missing_docs)]

mod batching;
pub mod cache;
mod error;
pub mod files;
mod names;
mod pieces;
mod pooling;
pub mod reuse;
mod runtime;
mod safetensors;
mod static_model;
mod tokenize;
mod tokenizer_model;
mod transformer;
mod unigram;
mod word_cache;
mod wordpiece;

use std::path::PathBuf;

pub use cache::EmbeddingCache;
pub use error::EmbedError;
pub use names::{ModelFile, ModelKind, Pooling, Role, UnknownName};
pub use runtime::{onnxruntime_version, required_runtime_version};
pub use transformer::optimize_transformer;

/// One row of `knowledge.models`, with paths already resolved against the model directory.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// The name it is registered under.
    pub name: String,
    /// Transformer or static table.
    pub kind: ModelKind,
    /// `model.onnx` for a transformer, `model.safetensors` for a static model.
    pub model_file: PathBuf,
    /// `tokenizer.json`.
    pub tokenizer_file: PathBuf,
    /// Floats per vector.
    pub dimension: usize,
    /// Ignored by static models, which always average.
    pub pooling: Pooling,
    /// Whether vectors are scaled to unit length.
    pub normalize: bool,
    /// Inputs longer than this (special tokens and prefix included) are cut, and counted in
    /// `EmbedOutput::truncated`.
    pub max_tokens: usize,
    /// Prepended to each text embedded with `Role::Query` (e5: `"query: "`).
    pub query_prefix: Option<String>,
    /// Prepended to each text embedded with `Role::Passage` (e5: `"passage: "`).
    pub passage_prefix: Option<String>,
    /// The ONNX output to pool; `None` means `last_hidden_state`. A 2-D output is taken as
    /// finished sentence embeddings and not pooled.
    pub output_name: Option<String>,
    /// Whether ONNX Runtime optimises the graph when the model loads (fusions, constant
    /// folding): most of a transformer's load time. Off for a file `optimize_transformer`
    /// already optimised (the installed MiniLM), or to start fast and embed a little slower.
    pub optimize_graph: bool,
}

impl ModelSpec {
    pub(crate) fn prefix(&self, role: Role) -> &str {
        let prefix = match role {
            Role::Query => &self.query_prefix,
            Role::Passage => &self.passage_prefix,
        };
        prefix.as_deref().unwrap_or("")
    }
}

/// How ONNX Runtime is loaded and run.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    /// Path of `libonnxruntime.so`.
    pub library_path: PathBuf,
    /// ONNX Runtime intra-op threads; 0 is taken as 1, because ONNX Runtime would read 0 as "one
    /// per core", which a database backend should never do unasked.
    pub threads: usize,
}

/// The vectors of one `embed` call.
#[derive(Clone, Debug, PartialEq)]
pub struct EmbedOutput {
    /// Floats per vector.
    pub dimension: usize,
    /// rows × dimension, in input order.
    pub vectors: Vec<f32>,
    /// How many inputs were cut at `max_tokens`.
    pub truncated: usize,
}

impl EmbedOutput {
    /// The vector of input `index`; panics if there is no such input, like slice indexing.
    pub fn row(&self, index: usize) -> &[f32] {
        &self.vectors[index * self.dimension..(index + 1) * self.dimension]
    }

    /// The vectors, one slice per input, in input order.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f32> {
        // Models have dimension > 0 (checked at load); max(1) keeps a hand-built empty output
        // from panicking in chunks_exact.
        self.vectors.chunks_exact(self.dimension.max(1))
    }
}

/// A loaded model that embeds texts and counts their tokens.
pub trait SentenceModel {
    /// The registration the model was loaded from.
    fn spec(&self) -> &ModelSpec;

    /// Embeds in batches of `batch_size` (0 is taken as 1), grouping inputs of similar token
    /// length (sort by length, batch, restore order) and padding to the longest in each batch;
    /// calls `between_batches()` before each batch, and before tokenizing each batch's worth of
    /// inputs (the caller checks for query cancel there; it may unwind, and the model stays
    /// usable if it does).
    fn embed(
        &mut self,
        texts: &[&str],
        role: Role,
        batch_size: usize,
        between_batches: &mut dyn FnMut(),
    ) -> Result<EmbedOutput, EmbedError>;

    /// Tokens as the model's tokenizer counts them, without special tokens, prefix or truncation.
    fn count_tokens(&self, text: &str) -> usize;

    /// How many of a passage's own tokens (as `count_tokens` counts them) the model reads:
    /// `max_tokens` less what it adds around every passage (special tokens, the passage prefix).
    /// Chunks within it are embedded whole.
    fn passage_window(&self) -> usize;
}

/// Loads a model. Static models never touch ONNX Runtime; the first transformer loaded in a
/// process loads ONNX Runtime from `runtime.library_path`.
pub fn load_model(spec: &ModelSpec, runtime: &RuntimeOptions) -> Result<Box<dyn SentenceModel>, EmbedError> {
    if spec.dimension == 0 {
        return Err(EmbedError::InvalidModel(format!("model {}: dimension must be > 0", spec.name)));
    }
    if spec.max_tokens == 0 {
        return Err(EmbedError::InvalidModel(format!("model {}: max_tokens must be > 0", spec.name)));
    }
    match spec.kind {
        ModelKind::Transformer => Ok(Box::new(transformer::TransformerModel::load(spec, runtime)?)),
        ModelKind::Static => Ok(Box::new(static_model::StaticModel::load(spec)?)),
    }
}
