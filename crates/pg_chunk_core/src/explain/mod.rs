//! What `knowledge.chunk_explain` shows (the curve, the threshold and each sentence's fate,
//! computed here by [`explain_semantic`]) and `knowledge.chunk_plot`'s picture of it ([`plot`]).

pub mod plot;

use crate::config::ChunkConfig;
use crate::curve::distance_curve;
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::sentences::{split_sentences_interruptible, Span};
use crate::size::{TokenCounter, UnitSizes};
use crate::strategy::semantic::{analyse, embed_units, is_inline, plan_chunks, smoothed_curve};
use crate::strategy::{check_document_size, SplitReason};

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
    check_document_size(doc, cfg)?;
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
    let chunks = if inline {
        vec![]
    } else {
        plan_chunks(doc, &units, &sizes, &analysis, cfg, tokens, &|| embedder.check_interrupt())?
    };
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
