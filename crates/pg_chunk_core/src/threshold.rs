//! Deciding which gaps of the distance curve are cuts.

/// How the cut threshold is derived from a document's distance curve (cfg `threshold`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// Cut the gaps above the `value`-th percentile (0–100) of the document's distances,
    /// linearly interpolated (LangChain's default family; 92 by default, docs/design.md, "Percentile breakpoints and valleys").
    Percentile(f64),
    /// Cut where the similarity `1 − distance` falls below `value` (0.75 by default: docs/design.md, "Percentile breakpoints and valleys").
    Similarity(f64),
    /// Cut the gaps above mean + `value` standard deviations (LangChain: 3).
    StdDev(f64),
    /// Cut the gaps above mean + `value` × interquartile range (LangChain: 1.5).
    Interquartile(f64),
    /// Cut where the curve's gradient is above its `value`-th percentile (LangChain: 95):
    /// sharp rises in distance rather than high distance.
    Gradient(f64),
}

/// The threshold in force for one document and which gaps it cuts.
#[derive(Clone, Debug, PartialEq)]
pub struct Cuts {
    /// The threshold on the scale of `scores`.
    pub threshold: f64,
    /// `is_cut[g]`: the gap after unit `g` is a cut.
    pub is_cut: Vec<bool>,
    /// What the rule compared with the threshold at each gap: the distance, its gradient for
    /// `Gradient`, or the coherence gained by cutting for optimal segmentation.
    pub scores: Vec<f64>,
}

impl Cuts {
    /// The gap is a cut because its score is above the threshold (not only to respect a size).
    pub fn is_meaning_cut(&self, gap: usize) -> bool {
        self.is_cut[gap] && self.scores[gap] > self.threshold
    }
}

/// Applies `rule` to the curve `distances` (one entry per gap).
pub fn find_cuts(distances: &[f64], rule: Threshold) -> Cuts {
    if distances.is_empty() {
        let threshold = match rule {
            Threshold::Similarity(v) => 1.0 - v,
            _ => f64::NAN,
        };
        return Cuts { threshold, is_cut: vec![], scores: vec![] };
    }
    let (scores, threshold): (std::borrow::Cow<[f64]>, f64) = match rule {
        Threshold::Percentile(p) => (distances.into(), percentile(distances, p)),
        Threshold::Similarity(v) => (distances.into(), 1.0 - v),
        Threshold::StdDev(k) => {
            let (mean, std) = mean_and_std(distances);
            (distances.into(), mean + k * std)
        }
        Threshold::Interquartile(k) => {
            let (mean, _) = mean_and_std(distances);
            let iqr = percentile(distances, 75.0) - percentile(distances, 25.0);
            (distances.into(), mean + k * iqr)
        }
        Threshold::Gradient(p) => {
            let g = gradient(distances);
            let t = percentile(&g, p);
            (g.into(), t)
        }
    };
    // Strictly above: a flat curve (all gaps alike) has no cuts rather than all of them.
    let is_cut = scores.iter().map(|&d| d > threshold).collect();
    Cuts { threshold, is_cut, scores: scores.into_owned() }
}

/// The `p`-th percentile (0–100) with linear interpolation between closest ranks
/// (numpy's default, which LangChain's SemanticChunker uses).
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

fn mean_and_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// numpy.gradient: central differences inside, one-sided at the ends.
fn gradient(values: &[f64]) -> Vec<f64> {
    let n = values.len();
    if n < 2 {
        return vec![0.0; n];
    }
    (0..n)
        .map(|i| match i {
            0 => values[1] - values[0],
            _ if i == n - 1 => values[n - 1] - values[n - 2],
            _ => (values[i + 1] - values[i - 1]) / 2.0,
        })
        .collect()
}

#[cfg(test)]
#[path = "threshold_tests.rs"]
mod tests;
