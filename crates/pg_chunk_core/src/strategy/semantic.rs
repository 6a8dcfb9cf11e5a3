//! `strategy: "semantic"`: embed each sentence, cut where the meaning changes (by optimal
//! segmentation, or where a threshold on the smoothed distance curve says), then apply the size
//! guards (merge undersized, split oversized, force-split a sentence above the cap) and the
//! overlap.

use super::{add_overlap, Chunk, SplitReason};
use crate::config::{Boundaries, ChunkConfig};
use crate::curve::{distance_curve, smooth_neighbours, Embeddings};
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::guards::{force_split, merge_undersized, runs_from_cuts, split_oversized, Run};
use crate::segmentation::optimal_cuts;
use crate::sentences::{paragraph_breaks, split_sentences_interruptible, Span};
use crate::size::{TokenCounter, UnitSizes};
use crate::threshold::{find_cuts, Cuts};

/// Where one document is cut.
struct Analysis {
    cuts: Cuts,
    /// The smoothed distance curve, when the method needed it (threshold rules cut on it).
    smoothed: Option<Vec<f64>>,
    /// What the scores of the gaps inside a paragraph have had taken off: `mid_paragraph_penalty`
    /// when it applied, else 0 (a threshold rule, a document that marks no paragraphs).
    paragraph_penalty: f64,
}

impl Analysis {
    /// How unlike its neighbours each gap is, for the size guards (which merge across the
    /// lowest seam and split at the highest): the smoothed distance, or for optimal
    /// segmentation the coherence gained by cutting there.
    fn seams(&self) -> &[f64] {
        self.smoothed.as_deref().unwrap_or(&self.cuts.scores)
    }
}

fn embed_units(doc: &str, units: &[Span], embedder: &mut dyn Embedder) -> Result<Embeddings, ChunkError> {
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
fn smoothed_curve(
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
fn analyse(
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
fn is_inline(sizes: &UnitSizes<'_>, unit_count: usize, cfg: &ChunkConfig) -> bool {
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
    Ok(plan_chunks(doc, units, &sizes, &analysis, cfg, tokens))
}

/// Runs from the cuts, through the size guards, to chunks with their reasons and overlap.
fn plan_chunks(
    doc: &str,
    units: &[Span],
    sizes: &UnitSizes<'_>,
    analysis: &Analysis,
    cfg: &ChunkConfig,
    tokens: &dyn TokenCounter,
) -> Vec<Chunk> {
    let (seams, max) = (analysis.seams(), cfg.max_size);
    let runs = runs_from_cuts(units.len(), &analysis.cuts.is_cut);
    let runs = merge_undersized(&runs, sizes, seams, cfg.min_size, max);
    let runs: Vec<Run> =
        runs.into_iter().flat_map(|run| split_oversized(run, sizes, seams, cfg.target_size, max)).collect();
    // Splitting can leave a short remainder; merging again only joins what still fits.
    let runs = merge_undersized(&runs, sizes, seams, cfg.min_size, max);

    let mut chunks = Vec::with_capacity(runs.len());
    for run in runs {
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
    add_overlap(doc, units, &mut chunks, cfg.overlap, max, tokens);
    chunks
}

/// What `chunk_explain` shows for one sentence.
#[derive(Clone, Debug, PartialEq)]
pub struct SentenceTrace {
    /// The sentence's byte range in the document.
    pub span: Span,
    /// Distance from the previous sentence (none for the first).
    pub distance: Option<f64>,
    /// The distance with each vector averaged with its `smoothing` neighbours on each side.
    pub smoothed_distance: Option<f64>,
    /// What the method compared with the threshold at the gap before this sentence: the
    /// smoothed distance (or its gradient), or for optimal segmentation the coherence gained
    /// by cutting there (less the extra penalty inside a paragraph), against the penalty.
    pub score: Option<f64>,
    /// A chunk starts at this sentence.
    pub is_cut: bool,
    /// `Start`, `Inline`, `Threshold` (a cut whose score is above the threshold, kept by the
    /// guards), `Merged` (such a cut undone to reach min_size), `Size` (a cut made to respect
    /// max_size); see [`SentenceTrace::reason_text`] for what SQL shows.
    pub reason: Option<SplitReason>,
    /// The sentence itself is split at the cap.
    pub forced: bool,
}

impl SentenceTrace {
    /// The reason as `knowledge.chunk_explain` shows it: its name, with `forced` after it (or
    /// alone) when the sentence is split at the cap.
    pub fn reason_text(&self) -> Option<String> {
        let forced = SplitReason::Forced.as_str();
        match (self.reason, self.forced) {
            (reason, false) => reason.map(|r| r.as_str().to_string()),
            (None, true) => Some(forced.to_string()),
            (Some(reason), true) => Some(format!("{reason}, {forced}")),
        }
    }
}

/// What `knowledge.chunk_explain` shows: the threshold and each sentence's fate.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// The threshold on the scores' scale (the penalty for optimal segmentation; NaN when a
    /// threshold rule has no curve, i.e. the document has one sentence).
    pub threshold: f64,
    /// What the scores of the gaps inside a paragraph have had taken off (cfg
    /// `mid_paragraph_penalty`, or 0 where it did not apply).
    pub paragraph_penalty: f64,
    /// One trace per sentence, in order.
    pub sentences: Vec<SentenceTrace>,
}

/// The curve, the threshold and each sentence's fate, for `knowledge.chunk_explain`.
pub fn explain_semantic(
    doc: &str,
    cfg: &ChunkConfig,
    embedder: &mut dyn Embedder,
    tokens: &dyn TokenCounter,
) -> Result<Explanation, ChunkError> {
    super::check_document_size(doc, cfg)?;
    let units = split_sentences_interruptible(doc, &|| embedder.check_interrupt())?;
    if units.is_empty() {
        return Ok(Explanation { threshold: f64::NAN, paragraph_penalty: 0.0, sentences: vec![] });
    }
    let sizes = UnitSizes::new(doc, &units, tokens);
    let vectors = embed_units(doc, &units, embedder)?;
    let analysis = analyse(doc, &units, &vectors, &sizes, cfg, &|| embedder.check_interrupt())?;
    let raw = distance_curve(&vectors);
    let smoothed = match analysis.smoothed.clone() {
        Some(smoothed) => smoothed,
        None => smoothed_curve(&vectors, cfg, &|| embedder.check_interrupt())?,
    };
    let inline = is_inline(&sizes, units.len(), cfg);
    let chunks = if inline { vec![] } else { plan_chunks(doc, &units, &sizes, &analysis, cfg, tokens) };
    // Which sentences start a chunk, and which are cut inside at the cap.
    let (mut starts, mut forced) = (vec![false; units.len()], vec![false; units.len()]);
    for chunk in &chunks {
        match chunk.first_unit {
            Some(first) => starts[first] = true,
            None => forced[units.partition_point(|u| u.end <= chunk.core_start).min(units.len() - 1)] = true,
        }
    }
    let sentences = (0..units.len())
        .map(|i| {
            let gap = i.checked_sub(1);
            let threshold_cut = gap.is_some_and(|g| analysis.cuts.is_meaning_cut(g));
            let is_cut = i == 0 || (!inline && (starts[i] || forced[i]));
            let reason = match (i, inline, threshold_cut, is_cut) {
                (0, true, _, _) => Some(SplitReason::Inline),
                (0, false, _, _) => Some(SplitReason::Start),
                (_, true, _, _) => None,
                (_, _, true, true) => Some(SplitReason::Threshold),
                (_, _, true, false) => Some(SplitReason::Merged),
                (_, _, false, true) => Some(SplitReason::Size),
                (_, _, false, false) => None,
            };
            SentenceTrace {
                span: units[i],
                distance: gap.map(|g| raw[g]),
                smoothed_distance: gap.map(|g| smoothed[g]),
                score: gap.map(|g| analysis.cuts.scores[g]),
                is_cut,
                reason,
                forced: forced[i],
            }
        })
        .collect();
    Ok(Explanation { threshold: analysis.cuts.threshold, paragraph_penalty: analysis.paragraph_penalty, sentences })
}
