//! `strategy: "recursive"`: packs whole paragraphs up to `max_size`; a paragraph too large
//! for one chunk is packed sentence by sentence, and a sentence too large is cut at words
//! (LangChain's RecursiveCharacterTextSplitter order; defaults max 1500, min 500,
//! overlap 100 characters: docs/design.md, "The recursive strategy and overlap").

use super::{add_overlap, Chunk, SplitReason};
use crate::config::ChunkConfig;
use crate::error::ChunkError;
use crate::guards::{force_split, merge_undersized, Run};
use crate::sentences::{paragraph_breaks, split_sentences_interruptible, Span};
use crate::size::{TokenCounter, UnitSizes};

/// What packing produces, in document order.
enum Piece {
    /// Whole units, and the level they were packed at (`paragraph` or `sentence`).
    Packed(Run, SplitReason),
    /// Byte range of a piece of a sentence above the cap.
    Forced(usize, usize),
}

pub fn recursive_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<Chunk>, ChunkError> {
    let units = split_sentences_interruptible(doc, interrupt)?;
    let sizes = UnitSizes::new(doc, &units, tokens);
    let max = cfg.max_size;
    let mut pieces: Vec<Piece> = Vec::new();
    // Extends the last packed run to `last` when the result still fits the cap.
    let extend = |pieces: &mut Vec<Piece>, last: usize| match pieces.last_mut() {
        Some(Piece::Packed(run, _)) if sizes.fits(run.first, last, max) => {
            run.last = last;
            true
        }
        _ => false,
    };
    for paragraph in paragraphs(doc, &units) {
        if extend(&mut pieces, paragraph.last) {
            continue;
        }
        if sizes.fits(paragraph.first, paragraph.last, max) {
            pieces.push(Piece::Packed(paragraph, SplitReason::Paragraph));
            continue;
        }
        for (unit, span) in units.iter().enumerate().take(paragraph.last + 1).skip(paragraph.first) {
            if extend(&mut pieces, unit) {
                continue;
            }
            if sizes.fits(unit, unit, max) {
                pieces.push(Piece::Packed(Run { first: unit, last: unit }, SplitReason::Sentence));
            } else {
                pieces.extend(
                    force_split(doc, span.start, span.end, max, tokens).into_iter().map(|(s, e)| Piece::Forced(s, e)),
                );
            }
        }
    }

    let mut chunks = Vec::new();
    let seams = vec![0.0; units.len()]; // no meaning here: undersized runs merge left first
    for group in pieces.chunk_by(|a, b| matches!(a, Piece::Packed(..)) == matches!(b, Piece::Packed(..))) {
        interrupt()?;
        let runs: Vec<Run> = group
            .iter()
            .filter_map(|p| match p {
                Piece::Packed(run, _) => Some(*run),
                Piece::Forced(start, end) => {
                    chunks.push(Chunk::new(*start, *end, SplitReason::Forced, None));
                    None
                }
            })
            .collect();
        for run in merge_undersized(&runs, &sizes, &seams, cfg.min_size, max) {
            let reason = group.iter().find(|p| matches!(p, Piece::Packed(r, _) if r.first == run.first));
            let reason = match reason {
                Some(Piece::Packed(_, reason)) => *reason,
                _ => SplitReason::Paragraph,
            };
            chunks.push(Chunk::new(units[run.first].start, units[run.last].end, reason, Some(run.first)));
        }
    }
    add_overlap(doc, &units, &mut chunks, cfg.overlap, max, tokens, interrupt)?;
    Ok(chunks)
}

/// Runs of units between paragraph ends ([`paragraph_breaks`]).
fn paragraphs(doc: &str, units: &[Span]) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut first = 0;
    for (gap, at_break) in paragraph_breaks(doc, units).into_iter().enumerate() {
        if at_break {
            runs.push(Run { first, last: gap });
            first = gap + 1;
        }
    }
    if !units.is_empty() {
        runs.push(Run { first, last: units.len() - 1 });
    }
    runs
}
