//! `strategy: "topic_coherence"` (docs/strategies.md, "topic_coherence and information_density"): a chunk goes on
//! while the next sentence shares enough keywords with it, no embeddings.
//!
//! The rules, sentence by sentence:
//! - The chunk keeps the union of its sentences' keywords ([`keywords`]: lowercased words of
//!   at least 3 letters or digits, stopwords removed).
//! - The next sentence continues the chunk when Jaccard(chunk keywords, sentence keywords) is at
//!   least [`COHERENCE_THRESHOLD`] (exactly 0.3 continues) and the chunk stays within `max_size`;
//!   otherwise it starts a new chunk, split_reason `topic` (too little overlap) or `size` (the
//!   cap). The first chunk is `start`.
//! - A sentence without keywords ("Yes.", "See above.", "3.14.") joins the current chunk, and a
//!   chunk without keywords yet takes the next sentence: with nothing to compare, the Jaccard of
//!   0 would otherwise cut before and after every such sentence.
//! - A sentence alone above `max_size` is cut at words into `forced` chunks; the chunk after it
//!   starts with `size`.
//! - Then chunks below `min_size` merge into the neighbour across the lower seam, when the
//!   merged chunk fits `max_size`. The seam at a gap is 1 − Jaccard of the chunk so far and the
//!   next sentence (0 where either side has no keywords), plus [`PARAGRAPH_SEAM`] where a
//!   paragraph ends between them ([`paragraph_breaks`]): the writer's paragraph is a topic
//!   boundary of its own, and between sentences of real prose, whose Jaccard is mostly 0, it is what tells the sides apart.
//!
//! Because the chunk's keyword set grows with every sentence while a sentence's stays small,
//! Jaccard favours short chunks: a sentence can only continue a chunk that has at most about
//! 3 × its own keywords. The merge of undersized chunks is what lets a long topic reach
//! `min_size` again, and it merges across the most coherent seam, so topics stay apart.

use std::collections::BTreeSet;

use super::{add_overlap, Chunk, SplitReason};
use crate::config::ChunkConfig;
use crate::error::ChunkError;
use crate::guards::{force_split, merge_undersized, Run};
use crate::measures::{jaccard, keywords};
use crate::sentences::{paragraph_breaks, split_sentences_interruptible, Span};
use crate::size::{TokenCounter, UnitSizes};

/// Keyword overlap (Jaccard) a sentence needs with the chunk to continue it (docs/strategies.md, "topic_coherence and
/// information_density").
pub const COHERENCE_THRESHOLD: f64 = 0.3;

/// Added to the seam where a paragraph ends, so that an undersized chunk merges within its paragraph
/// unless the other side shares clearly more keywords.
pub const PARAGRAPH_SEAM: f64 = 0.1;

pub fn topic_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<Chunk>, ChunkError> {
    let units = split_sentences_interruptible(doc, interrupt)?;
    let sizes = UnitSizes::new(doc, &units, tokens);
    let max = cfg.max_size;
    let mut pieces: Vec<Piece> = Vec::new();
    // Seam at gap g (between sentences g and g + 1), for the merge of undersized chunks.
    let mut seams = vec![0.0; units.len()];
    let breaks = paragraph_breaks(doc, &units);
    let mut chunk_words: BTreeSet<String> = BTreeSet::new();
    let mut next_reason = SplitReason::Start;
    for i in 0..units.len() {
        interrupt()?;
        let words = keywords(units[i].text(doc));
        if !sizes.fits(i, i, max) {
            pieces.extend(
                force_split(doc, units[i].start, units[i].end, max, tokens)
                    .into_iter()
                    .map(|(s, e)| Piece::Forced(s, e)),
            );
            next_reason = SplitReason::Size;
            continue;
        }
        let coherence = (!chunk_words.is_empty() && !words.is_empty()).then(|| jaccard(&chunk_words, &words));
        if i > 0 {
            seams[i - 1] = 1.0 - coherence.unwrap_or(1.0) + if breaks[i - 1] { PARAGRAPH_SEAM } else { 0.0 };
        }
        match pieces.last_mut() {
            Some(Piece::Packed(run, _))
                if coherence.is_none_or(|j| j >= COHERENCE_THRESHOLD) && sizes.fits(run.first, i, max) =>
            {
                run.last = i;
                chunk_words.extend(words);
            }
            last => {
                let reason = match last {
                    Some(Piece::Packed(..)) if coherence.is_none_or(|j| j >= COHERENCE_THRESHOLD) => SplitReason::Size,
                    Some(Piece::Packed(..)) => SplitReason::Topic,
                    _ => next_reason,
                };
                pieces.push(Piece::Packed(Run { first: i, last: i }, reason));
                chunk_words = words;
            }
        }
    }
    assemble(doc, &units, &sizes, &pieces, &seams, cfg, tokens, interrupt)
}

/// What a sentence walk produces, in document order (shared with the density strategy).
pub(super) enum Piece {
    /// Whole sentences, and why the run starts where it does.
    Packed(Run, SplitReason),
    /// Byte range of a piece of one sentence above the cap.
    Forced(usize, usize),
}

/// Pieces to chunks: in each stretch of packed runs (forced pieces stay as they are), runs below
/// `min_size` merge into a neighbour across the lower of `seams` while the result fits
/// `max_size`; a merged run keeps the reason of its first run. Overlap is added last.
#[allow(clippy::too_many_arguments)] // the one helper both sentence walks end with
pub(super) fn assemble(
    doc: &str,
    units: &[Span],
    sizes: &UnitSizes<'_>,
    pieces: &[Piece],
    seams: &[f64],
    cfg: &ChunkConfig,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<Chunk>, ChunkError> {
    let mut chunks = Vec::with_capacity(pieces.len());
    for group in pieces.chunk_by(|a, b| matches!(a, Piece::Packed(..)) == matches!(b, Piece::Packed(..))) {
        let mut runs: Vec<(Run, SplitReason)> = Vec::with_capacity(group.len());
        for piece in group {
            match piece {
                Piece::Packed(run, reason) => runs.push((*run, *reason)),
                Piece::Forced(start, end) => chunks.push(Chunk::new(*start, *end, SplitReason::Forced, None)),
            }
        }
        let plain: Vec<Run> = runs.iter().map(|(run, _)| *run).collect();
        for run in merge_undersized(&plain, sizes, seams, cfg.min_size, cfg.max_size) {
            // A merged run starts where one of the runs did; they are in order.
            let reason =
                runs.binary_search_by_key(&run.first, |(r, _)| r.first).map_or(SplitReason::Size, |k| runs[k].1);
            chunks.push(Chunk::new(units[run.first].start, units[run.last].end, reason, Some(run.first)));
        }
    }
    add_overlap(doc, units, &mut chunks, cfg.overlap, cfg.max_size, tokens, interrupt)?;
    Ok(chunks)
}

#[cfg(test)]
#[path = "topic_tests.rs"]
mod tests;
