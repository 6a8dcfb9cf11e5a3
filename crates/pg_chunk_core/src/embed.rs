//! The interface between chunking and whatever turns text into vectors, and the caller's way to
//! stop a chunking call early.

use crate::curve::Embeddings;
use crate::error::ChunkError;

/// Turns a document's units into one vector each, in order.
///
/// The whole list of a document's units is passed at once: a lexical embedder needs all of
/// them for its document frequencies, and a neural one batches them.
pub trait Embedder {
    /// One vector per text, in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError>;

    /// Whether chunking may go on: the long loops of a chunking call (sentence splitting, the
    /// lexical vectors, segmentation, each strategy's walk, the size guards, token counts,
    /// quality metadata and filters) call it as they go, every few microseconds to a few
    /// milliseconds of work, and an error it returns stops the call and is returned as is. A
    /// database backend checks for a cancel or statement_timeout here; a wrapping embedder
    /// passes the call on.
    fn check_interrupt(&self) -> Result<(), ChunkError>;
}
