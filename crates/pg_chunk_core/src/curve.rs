//! The distance curve: how far apart neighbouring units are in meaning.

/// Unit vectors of one embedding per row, stored flat (`rows × dim`).
#[derive(Clone, Debug, PartialEq)]
pub struct Embeddings {
    /// Floats per vector.
    pub dim: usize,
    /// The vectors one after the other, `dim` floats each.
    pub data: Vec<f32>,
}

impl Embeddings {
    /// Vectors of `dim` floats from `data`, one after the other.
    pub fn new(dim: usize, data: Vec<f32>) -> Embeddings {
        debug_assert!(dim == 0 || data.len().is_multiple_of(dim));
        Embeddings { dim, data }
    }

    /// How many vectors.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// Whether there is no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Vector `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// Scales `v` to unit length; a zero vector stays zero.
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Cosine distance `1 − cos(a, b)`, in `[0, 2]`. A zero vector (a unit with no features)
/// is at distance 1 from everything: it says nothing either way.
pub fn cosine_distance(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut aa, mut bb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        dot += f64::from(*x) * f64::from(*y);
        aa += f64::from(*x) * f64::from(*x);
        bb += f64::from(*y) * f64::from(*y);
    }
    if aa == 0.0 || bb == 0.0 {
        return 1.0;
    }
    (1.0 - dot / (aa.sqrt() * bb.sqrt())).clamp(0.0, 2.0)
}

/// Distance between each unit and the next: `n − 1` values for `n` units; entry `g` is the
/// gap between unit `g` and unit `g + 1`.
pub fn distance_curve(vectors: &Embeddings) -> Vec<f64> {
    (1..vectors.len()).map(|i| cosine_distance(vectors.row(i - 1), vectors.row(i))).collect()
}

/// Replaces each vector by the mean of itself and its `window` neighbours on each side
/// (fewer at the edges), re-normalised (±1: docs/design.md, "Percentile breakpoints and valleys"). One off-topic sentence then
/// no longer produces a spike of its own.
pub fn smooth_neighbours(vectors: &Embeddings, window: usize) -> Embeddings {
    if window == 0 || vectors.len() < 2 {
        return vectors.clone();
    }
    let (n, dim) = (vectors.len(), vectors.dim);
    // Running sum over the sliding window keeps this O(n · dim) whatever the window.
    let mut sum = vec![0f32; dim];
    let add = |sum: &mut [f32], row: &[f32], sign: f32| sum.iter_mut().zip(row).for_each(|(s, x)| *s += sign * x);
    for i in 0..=window.min(n - 1) {
        add(&mut sum, vectors.row(i), 1.0);
    }
    let mut data = Vec::with_capacity(n * dim);
    for i in 0..n {
        let start = data.len();
        data.extend_from_slice(&sum);
        normalize(&mut data[start..]);
        if i + window + 1 < n {
            add(&mut sum, vectors.row(i + window + 1), 1.0);
        }
        if i >= window {
            add(&mut sum, vectors.row(i - window), -1.0);
        }
    }
    Embeddings::new(dim, data)
}

#[cfg(test)]
#[path = "curve_tests.rs"]
mod tests;
