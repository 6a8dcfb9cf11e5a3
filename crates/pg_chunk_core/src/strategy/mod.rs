//! The chunking strategies and the one entry point that picks among them.

mod fixed;
mod recursive;
mod semantic;

pub use semantic::{explain_semantic, Explanation, SentenceTrace};

use crate::config::{ChunkConfig, Overlap, Strategy};
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::guards::{widest_fitting_start, word_starts_before};
use crate::sentences::Span;
use crate::size::{Size, TokenCounter};

/// One chunk of a document: `doc[start..end]`, whitespace-trimmed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub start: usize,
    pub end: usize,
    /// Where the chunk's own text begins; `start..core_start` repeats earlier text (overlap).
    pub core_start: usize,
    /// Why the chunk begins where it does: `start`, `threshold`, `size`, `forced`, `inline`,
    /// `paragraph`, `sentence`, `window`.
    pub split_reason: &'static str,
    pub token_count: usize,
    /// The first sentence the chunk holds whole, when it starts on one (not inside a
    /// force-split sentence); sentence overlap counts back from it.
    first_unit: Option<usize>,
}

impl Chunk {
    fn new(start: usize, end: usize, split_reason: &'static str, first_unit: Option<usize>) -> Chunk {
        Chunk { start, end, core_start: start, split_reason, token_count: 0, first_unit }
    }

    pub fn text<'a>(&self, doc: &'a str) -> &'a str {
        &doc[self.start..self.end]
    }

    /// Characters repeated from before the chunk's own text.
    pub fn overlap_chars(&self, doc: &str) -> usize {
        doc[self.start..self.core_start].chars().count()
    }
}

/// Refuses documents above `cfg.max_document_size` before any work is done.
pub fn check_document_size(doc: &str, cfg: &ChunkConfig) -> Result<(), ChunkError> {
    if doc.len() > cfg.max_document_size {
        return Err(ChunkError::DocumentTooLarge { size: doc.len(), limit: cfg.max_document_size });
    }
    Ok(())
}

/// Chunks `doc` with the strategy `cfg` names. Chunks come in document order, each within
/// `cfg.max_size` (the hard cap), with `token_count` filled by `tokens`.
pub fn chunk_document(doc: &str, cfg: &ChunkConfig, embedder: &mut dyn Embedder, tokens: &dyn TokenCounter) -> Result<Vec<Chunk>, ChunkError> {
    check_document_size(doc, cfg)?;
    let mut chunks = match cfg.strategy {
        Strategy::Semantic => semantic::semantic_chunks(doc, cfg, embedder, tokens)?,
        Strategy::Fixed => fixed::fixed_chunks(doc, cfg.max_size, cfg.overlap, tokens),
        Strategy::Recursive => recursive::recursive_chunks(doc, cfg, tokens),
    };
    for chunk in &mut chunks {
        chunk.token_count = tokens.count_tokens(chunk.text(doc));
    }
    Ok(chunks)
}

/// Extends each chunk after the first backwards by `overlap`, as far as the hard cap allows.
fn add_overlap(doc: &str, units: &[Span], chunks: &mut [Chunk], overlap: Overlap, max: Size, tokens: &dyn TokenCounter) {
    for k in 1..chunks.len() {
        let previous_start = chunks[k - 1].start;
        let chunk = &chunks[k];
        let candidates: Vec<usize> = match (overlap, chunk.first_unit) {
            (Overlap::None, _) | (Overlap::Sentences(_), None) => continue,
            (Overlap::Sentences(n), Some(first)) => units[first.saturating_sub(n)..first].iter().map(|u| u.start).filter(|&s| s >= previous_start).collect(),
            (Overlap::Chars(n), _) => word_starts_before(doc, chunk.start, n, previous_start),
        };
        let start = widest_fitting_start(doc, &candidates, chunk.start, chunk.end, max, tokens);
        chunks[k].start = start;
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
