//! The plot's scales: a y axis rounded out to whole ticks, and how far apart x ticks stand.

/// A y axis: its range, rounded out to whole ticks, and the ticks' step.
pub(super) struct Axis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) step: f64,
    pub(super) decimals: usize,
}

impl Axis {
    /// An axis over 0 and every value, with 4 to 8 ticks.
    pub(super) fn covering(values: impl Iterator<Item = f64>) -> Axis {
        let (mut lo, mut hi) = values.fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if hi <= lo {
            // No values, or all of them 0: any unit range shows the flat line.
            hi = lo + 1.0;
        }
        let step = nice_step((hi - lo) / 5.0);
        lo = (lo / step).floor() * step;
        hi = (hi / step).ceil() * step;
        let decimals = (-step.log10().floor()).max(0.0) as usize;
        Axis { lo, hi, step, decimals }
    }

    pub(super) fn ticks(&self) -> impl Iterator<Item = f64> + '_ {
        let count = ((self.hi - self.lo) / self.step).round() as usize;
        (0..=count).map(move |k| self.lo + k as f64 * self.step)
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
pub(super) fn nice_step(raw: f64) -> f64 {
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * power).find(|&s| s >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * power)
}

/// Sentences between x ticks: every one for short documents, thinning to about 15 labels.
pub(super) fn x_tick_step(n: usize) -> usize {
    let mut power = 1;
    loop {
        for m in [1, 2, 5] {
            if n.div_ceil(m * power) <= 15 {
                return m * power;
            }
        }
        power *= 10;
    }
}
