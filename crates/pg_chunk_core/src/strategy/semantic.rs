//! `strategy: "semantic"`: embed each sentence, cut where the meaning changes (by optimal
//! segmentation, or where a threshold on the smoothed distance curve says), then apply the size
//! guards (merge undersized, split oversized, force-split a sentence above the cap) and the
//! overlap.

use super::{add_overlap, Chunk, SplitReason};
use crate::config::{Boundaries, ChunkConfig};
use crate::curve::{distance_curve, smooth_neighbours, Embeddings};
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::guards::{force_split, merge_undersized, runs_from_cuts, split_oversized};
use crate::segmentation::optimal_cuts;
use crate::sentences::{paragraph_breaks, split_sentences_interruptible, Span};
use crate::size::{TokenCounter, UnitSizes};
use crate::threshold::{find_cuts, Cuts};

/// Where one document is cut.
pub(crate) struct Analysis {
    pub(crate) cuts: Cuts,
    /// The smoothed distance curve, when the method needed it (threshold rules cut on it).
    pub(crate) smoothed: Option<Vec<f64>>,
    /// What the scores of the gaps inside a paragraph have had taken off: `mid_paragraph_penalty`
    /// when it applied, else 0 (a threshold rule, a document that marks no paragraphs).
    pub(crate) paragraph_penalty: f64,
}

impl Analysis {
    /// How unlike its neighbours each gap is, for the size guards (which merge across the
    /// lowest seam and split at the highest): the smoothed distance, or for optimal
    /// segmentation the coherence gained by cutting there.
    fn seams(&self) -> &[f64] {
        self.smoothed.as_deref().unwrap_or(&self.cuts.scores)
    }
}

pub(crate) fn embed_units(doc: &str, units: &[Span], embedder: &mut dyn Embedder) -> Result<Embeddings, ChunkError> {
    let texts: Vec<&str> = units.iter().map(|u| u.text(doc)).collect();
    let vectors = embedder.embed(&texts)?;
    if vectors.len() != units.len() {
        return Err(ChunkError::Embedding(format!(
            "embedder returned {} vectors for {} sentences",
            vectors.len(),
            units.len()
        )));
    }
    Ok(vectors)
}

/// The distance curve of the smoothed vectors; `interrupt` is called between the two steps
/// (each about 40 ms for 5 MB of text).
pub(crate) fn smoothed_curve(
    vectors: &Embeddings,
    cfg: &ChunkConfig,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<f64>, ChunkError> {
    let smoothed = smooth_neighbours(vectors, cfg.smoothing);
    interrupt()?;
    Ok(distance_curve(&smoothed))
}

/// The extra penalty of a cut at each gap: `mid_paragraph_penalty` inside a paragraph, none where
/// one ends ([`paragraph_breaks`]: a blank line, or a heading next). A document with no such gap
/// says nothing about its paragraphs, so its gaps get none (an empty list).
fn mid_paragraph_penalties(doc: &str, units: &[Span], mid_paragraph_penalty: f64) -> Vec<f64> {
    let breaks = paragraph_breaks(doc, units);
    if mid_paragraph_penalty == 0.0 || !breaks.contains(&true) {
        return vec![];
    }
    breaks.into_iter().map(|at_break| if at_break { 0.0 } else { mid_paragraph_penalty }).collect()
}

/// Only what the method needs: chunking with optimal segmentation computes no distance curve.
pub(crate) fn analyse(
    doc: &str,
    units: &[Span],
    vectors: &Embeddings,
    sizes: &UnitSizes<'_>,
    cfg: &ChunkConfig,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Analysis, ChunkError> {
    Ok(match cfg.boundaries {
        Boundaries::Optimal { penalty, mid_paragraph_penalty } => {
            let fits = |first, last| sizes.fits(first, last, cfg.max_size);
            let extra = mid_paragraph_penalties(doc, units, mid_paragraph_penalty);
            let paragraph_penalty = if extra.is_empty() { 0.0 } else { mid_paragraph_penalty };
            Analysis {
                cuts: optimal_cuts(vectors, penalty, &extra, fits, interrupt)?,
                smoothed: None,
                paragraph_penalty,
            }
        }
        Boundaries::Threshold(rule) => {
            let smoothed = smoothed_curve(vectors, cfg, interrupt)?;
            interrupt()?;
            Analysis { cuts: find_cuts(&smoothed, rule), smoothed: Some(smoothed), paragraph_penalty: 0.0 }
        }
    })
}

/// A short document within the cap stays whole (inline routing: docs/design.md, "Short documents and the fixed fallback").
pub(crate) fn is_inline(sizes: &UnitSizes<'_>, unit_count: usize, cfg: &ChunkConfig) -> bool {
    sizes.run(0, unit_count - 1, crate::size::SizeUnit::Chars) < cfg.inline_threshold
        && sizes.fits(0, unit_count - 1, cfg.max_size)
}

pub fn semantic_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    embedder: &mut dyn Embedder,
    tokens: &dyn TokenCounter,
) -> Result<Vec<Chunk>, ChunkError> {
    let units = split_sentences_interruptible(doc, &|| embedder.check_interrupt())?;
    semantic_chunks_of(doc, &units, cfg, embedder, tokens)
}

/// The semantic strategy over given units of `doc` (in order, not overlapping): what
/// `hierarchical` uses to cut a parent at the document's own sentence boundaries.
pub fn semantic_chunks_of(
    doc: &str,
    units: &[Span],
    cfg: &ChunkConfig,
    embedder: &mut dyn Embedder,
    tokens: &dyn TokenCounter,
) -> Result<Vec<Chunk>, ChunkError> {
    if units.is_empty() {
        return Ok(vec![]);
    }
    let sizes = UnitSizes::new(doc, units, tokens);
    if is_inline(&sizes, units.len(), cfg) {
        return Ok(vec![Chunk::new(units[0].start, units[units.len() - 1].end, SplitReason::Inline, Some(0))]);
    }
    let vectors = embed_units(doc, units, embedder)?;
    let analysis = analyse(doc, units, &vectors, &sizes, cfg, &|| embedder.check_interrupt())?;
    plan_chunks(doc, units, &sizes, &analysis, cfg, tokens, &|| embedder.check_interrupt())
}

/// Runs from the cuts, through the size guards, to chunks with their reasons and overlap;
/// `interrupt` is called between the steps and for each run.
pub(crate) fn plan_chunks(
    doc: &str,
    units: &[Span],
    sizes: &UnitSizes<'_>,
    analysis: &Analysis,
    cfg: &ChunkConfig,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<Chunk>, ChunkError> {
    let (seams, max) = (analysis.seams(), cfg.max_size);
    let runs = runs_from_cuts(units.len(), &analysis.cuts.is_cut);
    let runs = merge_undersized(&runs, sizes, seams, cfg.min_size, max);
    interrupt()?;
    let mut split = Vec::with_capacity(runs.len());
    for run in runs {
        interrupt()?;
        split.extend(split_oversized(run, sizes, seams, cfg.target_size, max));
    }
    // Splitting can leave a short remainder; merging again only joins what still fits.
    let runs = merge_undersized(&split, sizes, seams, cfg.min_size, max);

    let mut chunks = Vec::with_capacity(runs.len());
    for run in runs {
        interrupt()?;
        if run.first == run.last && !sizes.fits(run.first, run.last, max) {
            let unit = units[run.first];
            chunks.extend(
                force_split(doc, unit.start, unit.end, max, tokens)
                    .into_iter()
                    .map(|(s, e)| Chunk::new(s, e, SplitReason::Forced, None)),
            );
            continue;
        }
        let reason = match run.first {
            0 => SplitReason::Start,
            first if analysis.cuts.is_meaning_cut(first - 1) => SplitReason::Threshold,
            _ => SplitReason::Size,
        };
        chunks.push(Chunk::new(units[run.first].start, units[run.last].end, reason, Some(run.first)));
    }
    add_overlap(doc, units, &mut chunks, cfg.overlap, max, tokens, interrupt)?;
    Ok(chunks)
}
