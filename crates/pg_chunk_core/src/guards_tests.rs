use super::*;
use crate::sentences::Span;
use crate::size::{EstimatedTokens, SizeUnit};

/// A document of units that are each `lengths[i]` characters of 'x', one space apart.
fn units_of(lengths: &[usize]) -> (String, Vec<Span>) {
    let mut doc = String::new();
    let mut spans = Vec::new();
    for &n in lengths {
        if !doc.is_empty() {
            doc.push(' ');
        }
        let start = doc.len();
        doc.push_str(&"x".repeat(n));
        spans.push(Span { start, end: doc.len() });
    }
    (doc, spans)
}

fn sizes_of(lengths: &[usize]) -> UnitSizes<'static> {
    let (doc, spans) = units_of(lengths);
    // Leaked: a few bytes per test, so that the sizes can borrow them for the test's length.
    UnitSizes::new(doc.leak(), spans.leak(), &EstimatedTokens)
}

fn run(first: usize, last: usize) -> Run {
    Run { first, last }
}

#[test]
fn runs_follow_the_cuts() {
    assert_eq!(runs_from_cuts(4, &[false, true, false]), vec![run(0, 1), run(2, 3)]);
    assert_eq!(runs_from_cuts(1, &[]), vec![run(0, 0)]);
    assert_eq!(runs_from_cuts(0, &[]), vec![]);
    assert_eq!(runs_from_cuts(3, &[true, true]), vec![run(0, 0), run(1, 1), run(2, 2)]);
}

#[test]
fn undersized_run_merges_toward_the_more_similar_side() {
    // The example in docs/design.md, "Size guards: merge, then split": the middle run is short; its left seam is closer.
    let sizes = sizes_of(&[100, 10, 100]);
    let runs = [run(0, 0), run(1, 1), run(2, 2)];
    let (min, max) = (Size::chars(40), Size::chars(500));
    assert_eq!(merge_undersized(&runs, &sizes, &[0.1, 0.9], min, max), vec![run(0, 1), run(2, 2)]);
    assert_eq!(merge_undersized(&runs, &sizes, &[0.9, 0.1], min, max), vec![run(0, 0), run(1, 2)]);
}

#[test]
fn merging_never_breaks_the_cap_and_a_short_tail_joins_its_predecessor() {
    let sizes = sizes_of(&[100, 10, 100]);
    let runs = [run(0, 0), run(1, 1), run(2, 2)];
    // Left is more similar but would exceed 110 chars; right would too: stays alone.
    assert_eq!(merge_undersized(&runs, &sizes, &[0.1, 0.9], Size::chars(40), Size::chars(110)), runs.to_vec());
    // Only the right side fits.
    let sizes = sizes_of(&[200, 10, 50]);
    assert_eq!(
        merge_undersized(&runs, &sizes, &[0.1, 0.9], Size::chars(40), Size::chars(100)),
        vec![run(0, 0), run(1, 2)]
    );
    // A short tail.
    let sizes = sizes_of(&[100, 100, 5]);
    assert_eq!(
        merge_undersized(&runs, &sizes, &[0.5, 0.5], Size::chars(40), Size::chars(500)),
        vec![run(0, 0), run(1, 2)]
    );
}

#[test]
fn a_run_of_tiny_units_merges_until_it_reaches_the_minimum() {
    let sizes = sizes_of(&[5; 10]);
    let runs: Vec<Run> = (0..10).map(|i| run(i, i)).collect();
    let merged = merge_undersized(&runs, &sizes, &[0.5; 9], Size::chars(17), Size::chars(1000));
    // 5+1+5+1+5 = 17 characters make the minimum; the short tail joins the last run.
    assert_eq!(merged, vec![run(0, 2), run(3, 5), run(6, 9)]);
}

#[test]
fn oversized_run_splits_at_the_deepest_valley_inside_the_band() {
    // Ten 99-char units; max 500, target 300 → band 150..=450 chars of left part.
    let sizes = sizes_of(&[99; 10]);
    let mut seams = vec![0.1; 9];
    seams[0] = 0.95; // outside the band (left part 99 chars): ignored
    seams[3] = 0.8; // left part 399 chars: inside the band, the deepest there
    let pieces = split_oversized(run(0, 9), &sizes, &seams, Size::chars(300), Size::chars(500));
    assert_eq!(pieces[0], run(0, 3));
    for p in &pieces {
        assert!(sizes.fits(p.first, p.last, Size::chars(500)), "{p:?}");
    }
    assert_eq!(pieces.last().unwrap().last, 9);
}

#[test]
fn without_a_valley_in_the_band_the_split_falls_back_to_the_target() {
    let sizes = sizes_of(&[99; 10]);
    // A flat curve: the first gap in the band wins ties, nothing deeper exists.
    let pieces = split_oversized(run(0, 9), &sizes, &[0.2; 9], Size::chars(300), Size::chars(500));
    assert!(pieces.iter().all(|p| sizes.fits(p.first, p.last, Size::chars(500))));
    // A band that no gap can reach (target 10 chars, units of 99): cut after the first unit.
    let pieces = split_oversized(run(0, 9), &sizes, &[0.2; 9], Size::chars(10), Size::chars(250));
    assert_eq!(pieces[0], run(0, 0));
    assert!(pieces.iter().all(|p| sizes.fits(p.first, p.last, Size::chars(250))));
}

#[test]
fn a_single_unit_is_never_split_by_runs() {
    let sizes = sizes_of(&[1000]);
    assert_eq!(split_oversized(run(0, 0), &sizes, &[], Size::chars(100), Size::chars(200)), vec![run(0, 0)]);
}

#[test]
fn force_split_cuts_at_word_boundaries_within_the_cap() {
    let doc = "The quick brown fox jumps over the lazy dog again and again";
    let pieces = force_split(doc, 0, doc.len(), Size::chars(16), &EstimatedTokens);
    let texts: Vec<&str> = pieces.iter().map(|&(s, e)| &doc[s..e]).collect();
    assert_eq!(texts, ["The quick brown", "fox jumps over", "the lazy dog", "again and again"]);
    let words = force_split(doc, 0, doc.len(), Size { value: 4, unit: SizeUnit::Words }, &EstimatedTokens);
    assert_eq!(&doc[words[0].0..words[0].1], "The quick brown fox");
}

#[test]
fn force_split_cuts_inside_a_word_with_no_boundary() {
    let doc = "中".repeat(25);
    let pieces = force_split(&doc, 0, doc.len(), Size::chars(10), &EstimatedTokens);
    let lens: Vec<usize> = pieces.iter().map(|&(s, e)| doc[s..e].chars().count()).collect();
    assert_eq!(lens, [10, 10, 5]);
}

#[test]
fn overlap_reaches_back_to_word_starts_that_fit() {
    let doc = "alpha beta gamma delta";
    let start = doc.find("delta").unwrap();
    let candidates = word_starts_before(doc, start, 12, 0);
    let words: Vec<&str> = candidates.iter().map(|&s| &doc[s..s + 4]).collect();
    assert_eq!(words, ["beta", "gamm"]);
    let from = widest_fitting_start(doc, &candidates, start, doc.len(), Size::chars(12), &EstimatedTokens);
    assert_eq!(&doc[from..], "gamma delta");
    assert_eq!(widest_fitting_start(doc, &candidates, start, doc.len(), Size::chars(5), &EstimatedTokens), start);
}
