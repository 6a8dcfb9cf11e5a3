//! The chunking strategies and the one entry point that picks among them.

mod adaptive;
mod code;
mod density;
mod fixed;
mod hierarchical;
mod labels;
mod markdown;
mod post;
mod recursive;
pub(crate) mod semantic;
mod topic;

pub use labels::{BlockKind, ChunkType, SplitReason};

use crate::config::{ChunkConfig, Overlap, Strategy};
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::guards::{widest_fitting_start, word_starts_before};
use crate::sentences::Span;
use crate::size::{Size, TokenCounter};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// One chunk of a document: `doc[start..end]`, whitespace-trimmed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Byte offset of the chunk's first byte in the document.
    pub start: usize,
    /// Byte offset just past its last byte.
    pub end: usize,
    /// Where the chunk's own text begins; `start..core_start` repeats earlier text (overlap).
    pub core_start: usize,
    /// Why the chunk begins where it does.
    pub split_reason: SplitReason,
    /// Tokens in the chunk's text, as the token counter counts them.
    pub token_count: usize,
    /// What the strategy says about the chunk beyond its reason (code: `language`,
    /// `chunk_type`, `function_name`; Markdown: `heading_path`; hierarchical: `level`,
    /// `relationships`; cfg `metadata`: the quality measures). Becomes the row's metadata.
    pub metadata: Map<String, Value>,
    /// Text that belongs before the chunk when it is embedded but is not part of it (a split
    /// function's signature, a section's heading path): `content` and offsets stay exact.
    pub context: Option<String>,
    /// The first sentence the chunk holds whole, when it starts on one (not inside a
    /// force-split sentence); sentence overlap counts back from it.
    pub(crate) first_unit: Option<usize>,
}

impl Chunk {
    fn new(start: usize, end: usize, split_reason: SplitReason, first_unit: Option<usize>) -> Chunk {
        Chunk {
            start,
            end,
            core_start: start,
            split_reason,
            token_count: 0,
            metadata: Map::new(),
            context: None,
            first_unit,
        }
    }

    /// The chunk with `key` set in its metadata.
    fn with(mut self, key: &str, value: impl Into<Value>) -> Chunk {
        self.metadata.insert(key.to_string(), value.into());
        self
    }

    /// The chunk's text: `doc[start..end]`.
    pub fn text<'a>(&self, doc: &'a str) -> &'a str {
        &doc[self.start..self.end]
    }

    /// The text embedded for the chunk: see [`embedded_text`].
    pub fn embedded_text<'a>(&self, doc: &'a str) -> Cow<'a, str> {
        embedded_text(self.context.as_deref(), self.text(doc))
    }

    /// Characters repeated from before the chunk's own text.
    pub fn overlap_chars(&self, doc: &str) -> usize {
        doc[self.start..self.core_start].chars().count()
    }
}

/// The text embedded for a chunk of `content`: the content, after its `context` (a split
/// function's signature, a section's heading path) and a line break when it has one. Only the
/// vector sees the context: the chunk's content and offsets stay exact.
pub fn embedded_text<'a>(context: Option<&str>, content: &'a str) -> Cow<'a, str> {
    match context {
        Some(context) => Cow::Owned(format!("{context}\n{content}")),
        None => Cow::Borrowed(content),
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
pub fn chunk_document(
    doc: &str,
    cfg: &ChunkConfig,
    embedder: &mut dyn Embedder,
    tokens: &dyn TokenCounter,
) -> Result<Vec<Chunk>, ChunkError> {
    check_document_size(doc, cfg)?;
    let mut chunks = strategy_chunks(doc, cfg, embedder, tokens)?;
    for chunk in &mut chunks {
        embedder.check_interrupt()?;
        chunk.token_count = tokens.count_tokens(chunk.text(doc));
    }
    if cfg.metadata {
        post::add_quality_metadata(doc, &mut chunks, embedder)?;
    }
    if cfg.filters {
        let mut kept = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            embedder.check_interrupt()?;
            if post::keep(chunk.text(doc)) {
                kept.push(chunk);
            }
        }
        chunks = kept;
    }
    Ok(chunks)
}

/// The chunks `cfg.strategy` makes, before token counts, metadata and filters.
fn strategy_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    embedder: &mut dyn Embedder,
    tokens: &dyn TokenCounter,
) -> Result<Vec<Chunk>, ChunkError> {
    Ok(match cfg.strategy {
        Strategy::Semantic => semantic::semantic_chunks(doc, cfg, embedder, tokens)?,
        Strategy::Fixed => fixed::fixed_chunks(doc, cfg.max_size, cfg.overlap, tokens, &|| embedder.check_interrupt())?,
        Strategy::Recursive => recursive::recursive_chunks(doc, cfg, tokens, &|| embedder.check_interrupt())?,
        Strategy::Code => code::code_chunks(doc, cfg, tokens, &|| embedder.check_interrupt())?,
        Strategy::Markdown => markdown::markdown_chunks(doc, cfg, tokens, &|| embedder.check_interrupt())?,
        Strategy::TopicCoherence => topic::topic_chunks(doc, cfg, tokens, &|| embedder.check_interrupt())?,
        Strategy::InformationDensity => density::density_chunks(doc, cfg, tokens, &|| embedder.check_interrupt())?,
        Strategy::Hierarchical => hierarchical::hierarchical_chunks(doc, cfg, embedder, tokens)?,
        Strategy::Adaptive => adaptive::adaptive_chunks(doc, cfg, embedder, tokens)?,
    })
}

/// Extends each chunk after the first backwards by `overlap`, as far as the hard cap allows;
/// `interrupt` is called before each.
fn add_overlap(
    doc: &str,
    units: &[Span],
    chunks: &mut [Chunk],
    overlap: Overlap,
    max: Size,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<(), ChunkError> {
    for k in 1..chunks.len() {
        interrupt()?;
        let previous_start = chunks[k - 1].start;
        let chunk = &chunks[k];
        let candidates: Vec<usize> = match (overlap, chunk.first_unit) {
            (Overlap::None, _) | (Overlap::Sentences(_), None) => continue,
            (Overlap::Sentences(n), Some(first)) => {
                units[first.saturating_sub(n)..first].iter().map(|u| u.start).filter(|&s| s >= previous_start).collect()
            }
            (Overlap::Chars(n), _) => word_starts_before(doc, chunk.start, n, previous_start),
        };
        let start = widest_fitting_start(doc, &candidates, chunk.start, chunk.end, max, tokens);
        chunks[k].start = start;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod test_support;
