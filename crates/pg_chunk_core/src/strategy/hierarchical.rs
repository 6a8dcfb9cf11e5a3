//! `strategy: "hierarchical"` (docs/strategies.md, "hierarchical"): two chunkings of one document, so that a search
//! can match a small child and return its larger parent as context.
//!
//! - **Parents** are made by the semantic strategy over the whole document with a cap of
//!   2 × `target_size`, never above `max_size` (defaults: 2 × 500 = 1000 = max). They pack whole
//!   sentences (cut where the meaning changes, then the size guards), so they are the semantic
//!   strategy's chunks at twice the usual size.
//! - **Children** are made by the semantic strategy again, over each parent's own text
//!   (`core_start..end`, without any overlap it repeats), capped at `target_size`. Its units are
//!   the document's sentences clipped to that span (a forced parent, a piece of one sentence, is
//!   one unit): split on its own, a parent's text can show sentence ends the document does not
//!   have, such as a line at the very end. Children therefore lie inside their parent and, level
//!   by level, cover the document: each level is a complete chunking, which is how
//!   `check_chunks` checks them.
//! - A parent that fits `target_size` has **exactly one child, equal to it**: the child level then
//!   stays a complete chunking of the document, so a search over children alone finds every
//!   passage. (The children's inline threshold is unlimited, so such a parent is never cut.)
//!
//! Output order is document order with each parent followed by its children; that order is the
//! `chunk_index` in SQL. Metadata: a parent has `"level": "parent"` and `"children": [indexes]`;
//! a child has `"level": "child"` and `"relationships": ["parent:<index>"]`, indexes being
//! positions in the returned list.
//!
//! A child's `split_reason` is the semantic strategy's reason inside its parent, except that the
//! first child of a parent begins where the parent does and so takes the parent's reason (unless
//! it is itself `forced`), and every child of a `forced` parent (a piece of one sentence) is
//! `forced` too. Overlap (cfg `overlap`) applies to parents across the document and to
//! children within their parent's own text: a parent's first child repeats nothing.
//!
//! Sentences are embedded once: the children's embedding requests are answered from the
//! parents' vectors when they ask for the same sentences (see [`CachedEmbedder`]).
//!
//! Sizes in two units (say `target_size` in words, `max_size` in characters): parents are capped
//! at `max_size` and aim at 2 × `target_size` when splitting; children are capped at
//! `target_size`, and being pieces of a parent they stay within `max_size` too.

use super::adaptive::CachedEmbedder;
use super::semantic::semantic_chunks_of;
use super::{Chunk, SplitReason};
use crate::config::{ChunkConfig, Strategy};
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::sentences::{split_sentences_interruptible, Span};
use crate::size::{Size, TokenCounter};
use serde_json::{json, Value};

pub fn hierarchical_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    embedder: &mut dyn Embedder,
    tokens: &dyn TokenCounter,
) -> Result<Vec<Chunk>, ChunkError> {
    let mut embedder = CachedEmbedder::new(embedder);
    let sentences = split_sentences_interruptible(doc, &|| embedder.check_interrupt())?;
    let parents = semantic_chunks_of(doc, &sentences, &parent_config(cfg), &mut embedder, tokens)?;
    let child_cfg = child_config(cfg);
    let mut chunks = Vec::with_capacity(parents.len() * 3);
    for parent in parents {
        let parent_index = chunks.len();
        let first = sentences.partition_point(|s| s.end <= parent.core_start);
        let units: Vec<Span> = sentences[first..]
            .iter()
            .take_while(|s| s.start < parent.end)
            .map(|s| Span { start: s.start.max(parent.core_start), end: s.end.min(parent.end) })
            .filter(|s| s.start < s.end)
            .collect();
        let children = semantic_chunks_of(doc, &units, &child_cfg, &mut embedder, tokens)?;
        let parent_reason = parent.split_reason;
        chunks.push(parent.with("level", "parent"));
        let mut child_indexes = Vec::with_capacity(children.len());
        for (k, child) in children.into_iter().enumerate() {
            // A forced parent is a piece of one sentence, and so is every child of it.
            let reason = match (k, child.split_reason) {
                _ if parent_reason == SplitReason::Forced => SplitReason::Forced,
                (0, reason) if reason != SplitReason::Forced => parent_reason,
                (_, reason) => reason,
            };
            // The child's sentence index counts sentences of the parent, not of the document.
            let mut child_chunk = Chunk::new(child.start, child.end, reason, None);
            child_chunk.core_start = child.core_start;
            child_indexes.push(chunks.len());
            chunks.push(
                child_chunk.with("level", "child").with("relationships", json!([format!("parent:{parent_index}")])),
            );
        }
        chunks[parent_index].metadata.insert("children".to_string(), Value::from(child_indexes));
    }
    Ok(chunks)
}

/// The parents' configuration: the semantic strategy, capped at 2 × `target_size` where that is
/// in `max_size`'s unit and below it.
fn parent_config(cfg: &ChunkConfig) -> ChunkConfig {
    let mut parent = cfg.clone();
    parent.strategy = Strategy::Semantic;
    let double = Size { value: cfg.target_size.value.saturating_mul(2), unit: cfg.target_size.unit };
    if double.unit == cfg.max_size.unit {
        parent.max_size.value = double.value.min(cfg.max_size.value);
        parent.target_size = parent.max_size;
    } else {
        parent.target_size = double;
    }
    parent
}

/// The children's configuration: the semantic strategy capped at `target_size`; a parent that
/// fits is one child whatever cfg `inline_threshold` says.
fn child_config(cfg: &ChunkConfig) -> ChunkConfig {
    let mut child = cfg.clone();
    child.strategy = Strategy::Semantic;
    child.max_size = cfg.target_size;
    child.inline_threshold = usize::MAX;
    child
}

#[cfg(test)]
#[path = "hierarchical_tests.rs"]
mod tests;
