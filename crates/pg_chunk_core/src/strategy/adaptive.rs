//! `strategy: "adaptive"` (docs/strategies.md, "adaptive"): chunks the document with several strategies and
//! keeps the chunking with the best quality score.
//!
//! The candidates, in the order that breaks ties: `semantic`, `topic_coherence`,
//! `information_density`, `recursive`, each run with cfg's sizes, overlap and settings (only
//! the strategy changes). The document's sentences are embedded once; the semantic candidate's
//! request for the same sentences is answered from those vectors, and the score reuses them for
//! every candidate.
//!
//! The returned chunks are the chosen candidate's, `split_reason` as it made them, each with
//! metadata `"adaptive": {"chosen": "<name>", "scores": {"semantic": 0.7123, ...}}` (scores
//! rounded to 4 decimals; the choice compares the rounded scores, so the report explains it).
//! They satisfy `invariants::check_chunks` with a cfg whose strategy is the chosen one (checked
//! with cfg `strategy: "adaptive"` they pass too, with no sentence-boundary rule).
//!
//! # The quality score
//!
//! `0.3·(1 − V) + 0.3·B + 0.2·D + 0.2·(1 − |R − 0.1|)`, each term in `[0, 1]`:
//!
//! - **V, normalised size variance**: the population variance of the chunks' lengths in
//!   characters (`start..end`) over their squared mean, i.e. the squared coefficient of variation,
//!   clamped to `[0, 1]`. Equal sizes give 0; 0 for no chunks.
//! - **B, boundary coherence**: let `r_g` be the percentile rank, among the document's gaps, of
//!   the cosine similarity of the embeddings of sentence `g` and sentence `g + 1` (0 for the
//!   least similar pair, 1 for the most, ties sharing their mean rank). Ranks rather than raw
//!   similarities make the term spread the same for any embedder: adjacent sentences' lexical
//!   similarities mostly lie near 0.05, neural ones near 0.8, and either squeezes the raw
//!   contrast into a few hundredths, where size variance alone would decide. Each chunk `k`
//!   scores `d_k = within_k − across_k`, where `within_k` is the mean `r_g` over the gaps
//!   between two sentences that both lie whole in the chunk's own text (`core_start..end`) — ½, the mean of any document's ranks, when the chunk
//!   holds fewer than two whole sentences, which says nothing either way — and `across_k` is
//!   the mean rank across the chunk's boundaries with its neighbours (0 for a lone chunk). A
//!   boundary between sentences `g` and `g + 1` has rank `r_g`; a boundary inside a sentence
//!   has rank 1 (a sentence agrees with itself). `B = (1 + mean_k d_k) / 2`: near 1 when chunks
//!   are internally alike and every cut falls at the least similar gaps, ½ when cuts are no
//!   better than chance, 0 when every cut separates the most similar text.
//! - **D, density**: the mean over chunks of the character-level Shannon entropy of the chunk's
//!   text, over the entropy of the whole document, clamped to `[0, 1]` (1 when the document's
//!   entropy is 0). Chunks of separators or repeated characters score low.
//! - **R, overlap ratio**: characters of each chunk that lie inside the previous chunk
//!   (`start..min(previous end, end)`), summed, over the summed chunk lengths. The design wants
//!   10% (docs/strategies.md, "adaptive"); no overlap scores 0.9.

use std::collections::HashMap;

use super::Chunk;
use crate::config::{ChunkConfig, Strategy};
use crate::curve::{cosine_distance, Embeddings};
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::measures::{char_entropy, char_entropy_interruptible};
use crate::sentences::{split_sentences_interruptible, Span};
use crate::size::TokenCounter;
use serde_json::{json, Map, Value};

/// The strategies tried, in tie-breaking order (earlier wins).
pub const CANDIDATES: [Strategy; 4] =
    [Strategy::Semantic, Strategy::TopicCoherence, Strategy::InformationDensity, Strategy::Recursive];

pub fn adaptive_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    embedder: &mut dyn Embedder,
    tokens: &dyn TokenCounter,
) -> Result<Vec<Chunk>, ChunkError> {
    let mut embedder = CachedEmbedder::new(embedder);
    let sentences = SentenceVectors::new(doc, &mut embedder)?;
    if sentences.units.is_empty() {
        return Ok(vec![]);
    }
    let mut results = Vec::with_capacity(CANDIDATES.len());
    for strategy in CANDIDATES {
        let mut candidate_cfg = cfg.clone();
        candidate_cfg.strategy = strategy;
        let chunks = super::strategy_chunks(doc, &candidate_cfg, &mut embedder, tokens)?;
        let score = round4(quality_score(doc, &chunks, &sentences, &|| embedder.check_interrupt())?.total());
        results.push((strategy, score, chunks));
    }
    let scores: Vec<(Strategy, f64)> = results.iter().map(|(strategy, score, _)| (*strategy, *score)).collect();
    let best = best_candidate(&scores);
    let (chosen, _, mut chunks) = results.swap_remove(best);
    let scores: Map<String, Value> =
        scores.iter().map(|(strategy, score)| (strategy.as_str().to_string(), json!(score))).collect();
    let report = json!({"chosen": chosen.as_str(), "scores": scores});
    for chunk in &mut chunks {
        chunk.metadata.insert("adaptive".to_string(), report.clone());
    }
    Ok(chunks)
}

/// Index of the highest score; on equal scores the earliest.
fn best_candidate(scores: &[(Strategy, f64)]) -> usize {
    let mut best = 0;
    for (i, (_, score)) in scores.iter().enumerate() {
        if *score > scores[best].1 {
            best = i;
        }
    }
    best
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The terms of the quality score (see the module documentation for their definitions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QualityScore {
    /// V: squared coefficient of variation of chunk lengths, clamped to `[0, 1]`.
    pub size_variance: f64,
    /// B: `(1 + mean over chunks of within − across similarity rank) / 2`.
    pub boundary_coherence: f64,
    /// D: mean chunk entropy over the document's entropy, clamped to `[0, 1]`.
    pub density: f64,
    /// R: fraction of chunk characters repeated from the previous chunk.
    pub overlap: f64,
}

impl QualityScore {
    /// `0.3·(1 − V) + 0.3·B + 0.2·D + 0.2·(1 − |R − 0.1|)`, in `[0, 1]`.
    pub fn total(&self) -> f64 {
        0.3 * (1.0 - self.size_variance)
            + 0.3 * self.boundary_coherence
            + 0.2 * self.density
            + 0.2 * (1.0 - (self.overlap - 0.1).abs()).clamp(0.0, 1.0)
    }
}

/// A document's sentences and their embeddings, made once and shared by every score.
pub struct SentenceVectors {
    pub units: Vec<Span>,
    /// `rank[g]`: where the cosine similarity of sentences `g` and `g + 1` falls among the
    /// document's gaps, from 0 (least similar) to 1 (most), ties sharing their mean rank; ½ for
    /// a document with one gap.
    pub rank: Vec<f64>,
}

impl SentenceVectors {
    pub fn new(doc: &str, embedder: &mut dyn Embedder) -> Result<SentenceVectors, ChunkError> {
        let units = split_sentences_interruptible(doc, &|| embedder.check_interrupt())?;
        if units.is_empty() {
            return Ok(SentenceVectors { units, rank: vec![] });
        }
        let texts: Vec<&str> = units.iter().map(|u| u.text(doc)).collect();
        let vectors = embedder.embed(&texts)?;
        if vectors.len() != units.len() {
            return Err(ChunkError::Embedding(format!(
                "embedder returned {} vectors for {} sentences",
                vectors.len(),
                units.len()
            )));
        }
        let similarity: Vec<f64> =
            (1..units.len()).map(|i| 1.0 - cosine_distance(vectors.row(i - 1), vectors.row(i))).collect();
        Ok(SentenceVectors { units, rank: percentile_ranks(&similarity) })
    }

    /// Similarity rank across a cut at byte `at`: `r_g` between two sentences, 1 inside a sentence,
    /// `None` before the first or after the last sentence.
    fn across(&self, at: usize) -> Option<f64> {
        let next = self.units.partition_point(|u| u.end <= at);
        match self.units.get(next) {
            Some(unit) if unit.start < at => Some(1.0),
            Some(_) if next > 0 => Some(self.rank[next - 1]),
            _ => None,
        }
    }

    /// Mean similarity rank of the gaps between sentences that lie whole in `start..end`.
    fn within(&self, start: usize, end: usize) -> Option<f64> {
        let first = self.units.partition_point(|u| u.start < start);
        let past_last = self.units.partition_point(|u| u.end <= end);
        let gaps = self.rank.get(first..past_last.checked_sub(1)?)?;
        (!gaps.is_empty()).then(|| mean(gaps.iter().copied()))
    }
}

/// The quality terms (docs/strategies.md, "adaptive") for `chunks` of `doc`, with `sentences` made from the same `doc`;
/// `interrupt` is called between the terms and for each chunk's entropy.
pub fn quality_score(
    doc: &str,
    chunks: &[Chunk],
    sentences: &SentenceVectors,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<QualityScore, ChunkError> {
    let lengths: Vec<f64> = chunks.iter().map(|c| c.text(doc).chars().count() as f64).collect();
    interrupt()?;
    let size_variance = size_variance(&lengths);
    let boundary_coherence = boundary_coherence(chunks, sentences);
    interrupt()?;
    let density = density(doc, chunks, interrupt)?;
    interrupt()?;
    Ok(QualityScore {
        size_variance,
        boundary_coherence,
        density,
        overlap: overlap_ratio(doc, chunks, lengths.iter().sum()),
    })
}

fn mean(values: impl ExactSizeIterator<Item = f64>) -> f64 {
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    values.sum::<f64>() / n as f64
}

fn size_variance(lengths: &[f64]) -> f64 {
    let average = mean(lengths.iter().copied());
    if average == 0.0 {
        return 0.0;
    }
    let variance = mean(lengths.iter().map(|l| (l - average).powi(2)));
    (variance / (average * average)).clamp(0.0, 1.0)
}

fn boundary_coherence(chunks: &[Chunk], sentences: &SentenceVectors) -> f64 {
    if chunks.is_empty() {
        return 0.5;
    }
    let baseline = 0.5; // the mean of any document's ranks
                        // cuts[k]: similarity rank across the boundary before chunk k + 1.
    let cuts: Vec<Option<f64>> = chunks.iter().skip(1).map(|c| sentences.across(c.core_start)).collect();
    let contrast = chunks.iter().enumerate().map(|(k, c)| {
        let within = sentences.within(c.core_start, c.end).unwrap_or(baseline);
        let sides: Vec<f64> =
            [k.checked_sub(1).and_then(|b| cuts[b]), cuts.get(k).copied().flatten()].into_iter().flatten().collect();
        within - mean(sides.into_iter())
    });
    ((1.0 + mean(contrast)) / 2.0).clamp(0.0, 1.0)
}

/// Mid-ranks scaled to `[0, 1]`: the number of smaller values plus half the other equal ones,
/// over `n − 1`.
fn percentile_ranks(values: &[f64]) -> Vec<f64> {
    if values.len() < 2 {
        return vec![0.5; values.len()];
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let scale = (values.len() - 1) as f64;
    values
        .iter()
        .map(|v| {
            let smaller = sorted.partition_point(|x| x < v);
            let equal = sorted.partition_point(|x| x <= v) - smaller;
            (smaller as f64 + (equal - 1) as f64 / 2.0) / scale
        })
        .collect()
}

fn density(doc: &str, chunks: &[Chunk], interrupt: &dyn Fn() -> Result<(), ChunkError>) -> Result<f64, ChunkError> {
    let document = char_entropy_interruptible(doc, interrupt)?;
    if document == 0.0 {
        return Ok(1.0);
    }
    let mut entropies = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        interrupt()?;
        entropies.push(char_entropy(chunk.text(doc)));
    }
    Ok((mean(entropies.into_iter()) / document).clamp(0.0, 1.0))
}

fn overlap_ratio(doc: &str, chunks: &[Chunk], total_chars: f64) -> f64 {
    if total_chars == 0.0 {
        return 0.0;
    }
    let repeated: usize = chunks
        .windows(2)
        .map(|pair| {
            let (previous, chunk) = (&pair[0], &pair[1]);
            let end = previous.end.min(chunk.end);
            if chunk.start < end {
                doc[chunk.start..end].chars().count()
            } else {
                0
            }
        })
        .sum();
    repeated as f64 / total_chars
}

/// An embedder that remembers each text's vector, so that a document's sentences are embedded
/// once however many chunkings ask for them. A request is answered from memory only when every
/// text in it is known; otherwise the whole request goes to the wrapped embedder (whose vectors
/// may depend on the batch, as the lexical embedder's do) and its new texts are remembered.
pub struct CachedEmbedder<'a> {
    inner: &'a mut dyn Embedder,
    dim: usize,
    rows: Vec<f32>,
    row_of: HashMap<String, usize>,
}

impl<'a> CachedEmbedder<'a> {
    pub fn new(inner: &'a mut dyn Embedder) -> CachedEmbedder<'a> {
        CachedEmbedder { inner, dim: 0, rows: Vec::new(), row_of: HashMap::new() }
    }
}

impl Embedder for CachedEmbedder<'_> {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        let mut known = Vec::with_capacity(texts.len());
        for text in texts {
            self.inner.check_interrupt()?;
            match self.row_of.get(*text) {
                Some(&row) => known.push(row),
                None => break,
            }
        }
        if !known.is_empty() && known.len() == texts.len() {
            let mut data = Vec::with_capacity(known.len() * self.dim);
            for row in known {
                self.inner.check_interrupt()?;
                data.extend_from_slice(&self.rows[row * self.dim..(row + 1) * self.dim]);
            }
            return Ok(Embeddings::new(self.dim, data));
        }
        let vectors = self.inner.embed(texts)?;
        if vectors.len() == texts.len() && vectors.dim > 0 && (self.row_of.is_empty() || vectors.dim == self.dim) {
            self.dim = vectors.dim;
            for (i, text) in texts.iter().enumerate() {
                self.inner.check_interrupt()?;
                if !self.row_of.contains_key(*text) {
                    self.row_of.insert(text.to_string(), self.rows.len() / self.dim);
                    self.rows.extend_from_slice(vectors.row(i));
                }
            }
        }
        Ok(vectors)
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        self.inner.check_interrupt()
    }
}

#[cfg(test)]
#[path = "adaptive_tests.rs"]
mod tests;
