//! The interface between chunking and whatever turns text into vectors.

use crate::curve::Embeddings;
use crate::error::ChunkError;

/// Turns a document's units into one vector each, in order.
///
/// The whole list of a document's units is passed at once: a lexical embedder needs all of
/// them for its document frequencies, and a neural one batches them.
pub trait Embedder {
    /// One vector per text, in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError>;
}
