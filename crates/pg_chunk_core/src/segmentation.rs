//! Optimal segmentation (cfg `method: "optimal"`, the default): choose the cuts that maximise
//! the coherence of every chunk at once, by dynamic programming, rather than judging each gap
//! against a threshold on its own.
//!
//! Each unit vector is first centred on the document's mean and re-normalised, so that what
//! the whole document shares (its register, its domain) no longer makes unrelated sentences
//! look alike. A chunk's coherence is the length of the sum of its centred vectors: k
//! sentences on one topic sum to nearly k, unrelated ones to about √k. Each chunk costs a
//! fixed `penalty`; the segmentation with the highest total coherence minus penalties wins.
//! Splitting a chunk pays only when its two halves point in different directions by more
//! than the penalty, so the number of chunks follows the document, not a percentile. Where
//! nothing tells sentences apart (a run on one topic, once centred, is noise), chunks come out
//! about 4·penalty² units long, the length at which √n coherence stops paying for a cut. On
//! bench/quality (Choi's protocol on the Python documentation) its error is a fraction of
//! LangChain's rule's: bench/README.md has the figures ("Boundary quality") and the penalty
//! chosen ("Decisions").

use crate::curve::{normalize, Embeddings};
use crate::error::ChunkError;
use crate::threshold::Cuts;

/// The penalty per chunk that bench/quality chose for both installed models (a sweep from
/// 1.0 to 1.75; 1.25–1.5 are best on the tuning samples and on held-out ones).
pub const DEFAULT_PENALTY: f64 = 1.3;

/// What a cut inside a paragraph costs on top of the penalty, in a document that has
/// paragraphs (cfg `mid_paragraph_penalty`): chosen on bench/retrieval's paragraphed sets, where
/// it moves chunk ends to paragraph ends without changing how many chunks there are
/// (bench/README.md, "Decisions"). It does not apply to a document without a blank line.
pub const DEFAULT_MID_PARAGRAPH_PENALTY: f64 = 0.5;

/// The most units one chunk may hold under this method, which keeps the work linear in the
/// document's length (O(units × MAX_RUN_UNITS × dim)) whatever `max_size` allows.
pub const MAX_RUN_UNITS: usize = 256;

/// The best cuts for `vectors` (one per unit, in order). `fits(first, last)` says whether
/// units `first..=last` may form one chunk (the hard cap); a single unit always may, since
/// the size guards split it later. `scores[g]` is the gain of cutting at gap `g` against not
/// cutting there, given the chosen chunks around it; a cut whose gain is not above the
/// penalty was made only to respect `fits`.
///
/// `extra[g]` (one per gap, or empty for none) is added to the penalty of a cut at gap `g`:
/// the semantic strategy adds `mid_paragraph_penalty` to the gaps inside a paragraph.
///
/// `interrupt` is called once per unit in each pass (at most [`MAX_RUN_UNITS`] chunk scores,
/// some 50 µs, apart), and its error stops the work.
pub fn optimal_cuts(
    vectors: &Embeddings,
    penalty: f64,
    extra: &[f64],
    fits: impl Fn(usize, usize) -> bool,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Cuts, ChunkError> {
    let n = vectors.len();
    if n < 2 {
        return Ok(Cuts { threshold: penalty, is_cut: vec![], scores: vec![] });
    }
    let prefix = PrefixSums::centred(vectors, interrupt)?;
    let extra_before = |unit: usize| if unit == 0 { 0.0 } else { extra.get(unit - 1).copied().unwrap_or(0.0) };
    // best[j]: the best score of units 0..j; start[j]: where the last chunk of it begins.
    let mut best = vec![f64::NEG_INFINITY; n + 1];
    let mut start = vec![0usize; n + 1];
    best[0] = 0.0;
    for end in 1..=n {
        interrupt()?;
        let last = end - 1;
        let earliest = end.saturating_sub(MAX_RUN_UNITS);
        for first in (earliest..end).rev() {
            if first < last && !fits(first, last) {
                break;
            }
            let score = best[first] + prefix.coherence(first, end) - penalty - extra_before(first);
            if score > best[end] {
                best[end] = score;
                start[end] = first;
            }
        }
    }
    let mut is_cut = vec![false; n - 1];
    let mut end = n;
    while end > 0 {
        let first = start[end];
        if first > 0 {
            is_cut[first - 1] = true;
        }
        end = first;
    }
    let mut scores = gap_gains(&prefix, &is_cut, interrupt)?;
    scores.iter_mut().enumerate().for_each(|(gap, score)| *score -= extra_before(gap + 1));
    Ok(Cuts { threshold: penalty, is_cut, scores })
}

/// For each gap, the coherence gained by cutting there rather than not (the caller takes off
/// the gap's extra penalty): between the two
/// chosen chunks it separates, or inside the chosen chunk that holds it.
fn gap_gains(
    prefix: &PrefixSums,
    is_cut: &[bool],
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<f64>, ChunkError> {
    let n = is_cut.len() + 1;
    let bounds: Vec<usize> =
        std::iter::once(0).chain((1..n).filter(|&i| is_cut[i - 1])).chain(std::iter::once(n)).collect();
    (0..n - 1)
        .map(|gap| {
            interrupt()?;
            let cut_at = gap + 1;
            let k = bounds.partition_point(|&b| b <= gap) - 1;
            // A cut is weighed against the two chunks it separates.
            let end = if bounds[k + 1] == cut_at { bounds[k + 2] } else { bounds[k + 1] };
            Ok(prefix.coherence(bounds[k], cut_at) + prefix.coherence(cut_at, end) - prefix.coherence(bounds[k], end))
        })
        .collect()
}

/// Running sums of the centred unit vectors: `rows[i]` is the sum of units `0..i`.
struct PrefixSums {
    dim: usize,
    rows: Vec<f64>,
}

impl PrefixSums {
    fn centred(vectors: &Embeddings, interrupt: &dyn Fn() -> Result<(), ChunkError>) -> Result<PrefixSums, ChunkError> {
        let (n, dim) = (vectors.len(), vectors.dim);
        let mut mean = vec![0f32; dim];
        for i in 0..n {
            mean.iter_mut().zip(vectors.row(i)).for_each(|(m, x)| *m += x / n as f32);
        }
        let mut rows = vec![0f64; (n + 1) * dim];
        let mut centred = vec![0f32; dim];
        for i in 0..n {
            interrupt()?;
            // A unit with no features (a zero vector) stays zero: it says nothing either way.
            let row = vectors.row(i);
            let has_features = row.iter().any(|x| *x != 0.0);
            centred.iter_mut().zip(row).zip(&mean).for_each(|((c, x), m)| *c = if has_features { x - m } else { 0.0 });
            normalize(&mut centred);
            let (before, after) = rows.split_at_mut((i + 1) * dim);
            let previous = &before[i * dim..];
            after[..dim].iter_mut().zip(previous).zip(&centred).for_each(|((r, p), c)| *r = p + f64::from(*c));
        }
        Ok(PrefixSums { dim, rows })
    }

    /// Length of the sum of units `first..end`.
    fn coherence(&self, first: usize, end: usize) -> f64 {
        let (a, b) =
            (&self.rows[first * self.dim..(first + 1) * self.dim], &self.rows[end * self.dim..(end + 1) * self.dim]);
        a.iter().zip(b).map(|(x, y)| (y - x) * (y - x)).sum::<f64>().sqrt()
    }
}

#[cfg(test)]
#[path = "segmentation_tests.rs"]
mod tests;
