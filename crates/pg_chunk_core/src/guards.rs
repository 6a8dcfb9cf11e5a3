//! Size guards: merge runs below `min_size`, split runs above `max_size`, force-split single
//! units above the hard cap, and add overlap without breaking the cap.

use crate::size::{fitting_prefix, measure, Size, TokenCounter, UnitSizes};

/// Units `first..=last` taken together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Index of the run's first unit.
    pub first: usize,
    /// Index of its last unit (inclusive).
    pub last: usize,
}

/// Runs from the cut gaps: gap `g` (after unit `g`) starts a new run at unit `g + 1`.
pub fn runs_from_cuts(unit_count: usize, is_cut: &[bool]) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut first = 0;
    for (gap, _) in is_cut.iter().enumerate().filter(|(_, cut)| **cut) {
        runs.push(Run { first, last: gap });
        first = gap + 1;
    }
    if unit_count > 0 {
        runs.push(Run { first, last: unit_count - 1 });
    }
    runs
}

/// Merges each run below `min` into the neighbour across the smaller seam distance (the more
/// similar side; docs/design.md, "Size guards: merge, then split"), as long as the merged run stays within `max`. `seams[g]`
/// is the distance at gap `g`. A short last run thus joins the run before it.
pub fn merge_undersized(runs: &[Run], sizes: &UnitSizes<'_>, seams: &[f64], min: Size, max: Size) -> Vec<Run> {
    let undersized = |r: Run| sizes.run(r.first, r.last, min.unit) < min.value;
    let fits = |a: Run, b: Run| sizes.fits(a.first, b.last, max);
    let mut merged: Vec<Run> = Vec::with_capacity(runs.len());
    let mut next = 0;
    while next < runs.len() {
        let mut current = runs[next];
        next += 1;
        while undersized(current) {
            let left = merged.last().filter(|l| fits(**l, current)).map(|l| seams[l.last]);
            let right = runs.get(next).filter(|r| fits(current, **r)).map(|_| seams[current.last]);
            // On equal seams the smaller neighbour wins, which keeps sizes even.
            let left_is_closer = |l: f64, r: f64| {
                let smaller_left = || {
                    sizes.run(merged[merged.len() - 1].first, merged[merged.len() - 1].last, min.unit)
                        <= sizes.run(runs[next].first, runs[next].last, min.unit)
                };
                l < r || (l == r && smaller_left())
            };
            match (left, right) {
                (Some(l), Some(r)) if left_is_closer(l, r) => {
                    current.first = merged.pop().map_or(current.first, |l| l.first)
                }
                (Some(_), None) => current.first = merged.pop().map_or(current.first, |l| l.first),
                (_, Some(_)) => {
                    current.last = runs[next].last;
                    next += 1;
                }
                (None, None) => break,
            }
        }
        merged.push(current);
    }
    merged
}

/// Splits a run above `max` at the deepest gap whose left part is within half a target of
/// `target` (the valley that best respects both meaning and size), falling back to the last
/// gap that keeps the left part within `target`. Single units above `max` are left for
/// [`force_split`]. Only gaps whose left part fits `max` are looked at, so this is linear in
/// the run's length.
pub fn split_oversized(run: Run, sizes: &UnitSizes<'_>, seams: &[f64], target: Size, max: Size) -> Vec<Run> {
    let (band_low, band_high) = (target.value / 2, target.value.saturating_add(target.value / 2));
    let mut pieces = Vec::new();
    let mut rest = run;
    while rest.first < rest.last && !sizes.fits(rest.first, rest.last, max) {
        let mut deepest: Option<usize> = None;
        let mut within_target = rest.first;
        for gap in rest.first..rest.last {
            if !sizes.fits(rest.first, gap, max) {
                break;
            }
            let left = sizes.run(rest.first, gap, target.unit);
            if left <= target.value {
                within_target = gap;
            }
            if left > band_high {
                break;
            }
            if left >= band_low && deepest.is_none_or(|d| seams[gap] > seams[d]) {
                deepest = Some(gap);
            }
        }
        let gap = deepest.unwrap_or(within_target);
        pieces.push(Run { first: rest.first, last: gap });
        rest.first = gap + 1;
    }
    pieces.push(rest);
    pieces
}

/// Cuts one over-long piece of text (`doc[start..end]`) into pieces within `max`, each ending
/// at the last word boundary before the cap (or inside a word that alone exceeds it).
/// Returns byte ranges with surrounding whitespace trimmed.
pub fn force_split(doc: &str, start: usize, end: usize, max: Size, tokens: &dyn TokenCounter) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut at = start;
    while at < end {
        let rest = &doc[at..end];
        let skip = rest.len() - rest.trim_start().len();
        at += skip;
        if at >= end {
            break;
        }
        let rest = &doc[at..end];
        let len = fitting_prefix(rest, max, tokens);
        let piece = rest[..len].trim_end();
        pieces.push((at, at + piece.len()));
        at += len;
    }
    pieces
}

/// The earliest of `candidate_starts` (sorted ascending, all ≤ `start`) from which
/// `doc[candidate..end]` still fits `max`; `start` itself when none does.
pub fn widest_fitting_start(
    doc: &str,
    candidate_starts: &[usize],
    start: usize,
    end: usize,
    max: Size,
    tokens: &dyn TokenCounter,
) -> usize {
    candidate_starts
        .iter()
        .copied()
        .find(|&s| s < start && measure(&doc[s..end], max.unit, tokens) <= max.value)
        .unwrap_or(start)
}

/// Byte offsets of the word starts that lie within `chars` characters before `start`,
/// not before `floor`, earliest first.
pub fn word_starts_before(doc: &str, start: usize, chars: usize, floor: usize) -> Vec<usize> {
    let window_start = doc[floor..start].char_indices().rev().take(chars).last().map_or(start, |(i, _)| floor + i);
    let mut previous_is_space = window_start == 0 || doc[..window_start].ends_with(char::is_whitespace);
    let mut starts = Vec::new();
    for (i, c) in doc[window_start..start].char_indices() {
        if !c.is_whitespace() && previous_is_space {
            starts.push(window_start + i);
        }
        previous_is_space = c.is_whitespace();
    }
    starts
}

#[cfg(test)]
#[path = "guards_tests.rs"]
mod tests;
