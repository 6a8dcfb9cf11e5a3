use super::*;
use proptest::prelude::*;

/// `optimal_cuts` with nothing to interrupt it.
fn cuts_of(vectors: &Embeddings, penalty: f64, fits: impl Fn(usize, usize) -> bool) -> Cuts {
    optimal_cuts(vectors, penalty, &[], fits, &|| Ok(())).unwrap()
}

/// Unit vectors from rows, normalised.
fn unit_rows(rows: &[Vec<f32>]) -> Embeddings {
    let dim = rows[0].len();
    let mut data = Vec::with_capacity(rows.len() * dim);
    for row in rows {
        let start = data.len();
        data.extend_from_slice(row);
        normalize(&mut data[start..]);
    }
    Embeddings::new(dim, data)
}

/// `lengths[t]` sentences on topic t: each sentence is its topic's axis plus a little of its
/// own axis (dimension `topics + i`), so sentences on one topic are alike but not identical.
fn topics(lengths: &[usize]) -> Embeddings {
    let total: usize = lengths.iter().sum();
    let dim = lengths.len() + total;
    let mut rows = Vec::new();
    for (topic, &len) in lengths.iter().enumerate() {
        for _ in 0..len {
            let mut row = vec![0f32; dim];
            row[topic] = 1.0;
            row[lengths.len() + rows.len()] = 0.4;
            rows.push(row);
        }
    }
    unit_rows(&rows)
}

fn cut_gaps(cuts: &Cuts) -> Vec<usize> {
    (0..cuts.is_cut.len()).filter(|&g| cuts.is_cut[g]).collect()
}

#[test]
fn cuts_exactly_at_the_topic_changes() {
    let cuts = cuts_of(&topics(&[4, 3, 5, 4]), DEFAULT_PENALTY, |_, _| true);
    assert_eq!(cut_gaps(&cuts), vec![3, 6, 11]);
    assert_eq!(cuts.threshold, DEFAULT_PENALTY);
    for gap in 0..cuts.scores.len() {
        assert_eq!(cuts.is_meaning_cut(gap), cuts.is_cut[gap], "gap {gap}: score {}", cuts.scores[gap]);
    }
}

#[test]
fn an_extra_penalty_keeps_a_cut_from_its_gap_unless_the_gain_pays_it() {
    // Gap 3 is a topic change: cutting there gains more than the penalty. A small extra
    // penalty on that gap (it lies inside a paragraph) leaves the cut; one above the surplus
    // moves it.
    let vectors = topics(&[4, 3, 5, 4]);
    let plain = cuts_of(&vectors, DEFAULT_PENALTY, |_, _| true);
    assert_eq!(cut_gaps(&plain), vec![3, 6, 11]);
    let surplus = plain.scores[3] - DEFAULT_PENALTY;
    let with_extra = |extra_at_3: f64| {
        let mut extra = vec![0.0; 15];
        extra[3] = extra_at_3;
        optimal_cuts(&vectors, DEFAULT_PENALTY, &extra, |_, _| true, &|| Ok(())).unwrap()
    };
    let kept = with_extra(0.05);
    assert_eq!(cut_gaps(&kept), vec![3, 6, 11]);
    // The extra is part of the gap's score, which the size guards and chunk_explain read.
    assert!((kept.scores[3] - (plain.scores[3] - 0.05)).abs() < 1e-9);
    assert!(kept.is_meaning_cut(3));
    assert!(!cut_gaps(&with_extra(surplus + 0.05)).contains(&3));
    // An empty list is no extra penalty anywhere.
    assert_eq!(optimal_cuts(&vectors, DEFAULT_PENALTY, &[], |_, _| true, &|| Ok(())).unwrap(), plain);
}

#[test]
fn without_topic_changes_chunks_are_about_four_penalties_squared_long() {
    // Units unrelated to each other (after centring, a document on one topic with nothing
    // else to tell its sentences apart looks the same): m chunks of n units score
    // √(n·m) − m·penalty, best at n/m = 4·penalty² ≈ 6.8 units.
    let unrelated = topics(&vec![1; 60]);
    let gaps = cut_gaps(&cuts_of(&unrelated, DEFAULT_PENALTY, |_, _| true));
    let mut first = 0;
    for &gap in gaps.iter().chain(std::iter::once(&59)) {
        assert!((5..=9).contains(&(gap + 1 - first)), "run {first}..={gap}: {gaps:?}");
        first = gap + 1;
    }
}

#[test]
fn identical_units_are_never_cut() {
    let same = unit_rows(&vec![vec![0.3, 0.4, 0.5]; 9]);
    let cuts = cuts_of(&same, DEFAULT_PENALTY, |_, _| true);
    assert!(cut_gaps(&cuts).is_empty());
    assert!(cuts.scores.iter().all(|s| s.abs() < 1e-9), "{:?}", cuts.scores);
}

#[test]
fn the_penalty_sets_how_different_halves_must_be() {
    let doc = topics(&[5, 5]);
    assert_eq!(cut_gaps(&cuts_of(&doc, 0.5, |_, _| true)), vec![4]);
    assert!(cut_gaps(&cuts_of(&doc, 100.0, |_, _| true)).is_empty(), "a huge penalty keeps one chunk");
    // No penalty: cutting never loses coherence, so every gap is cut.
    assert_eq!(cut_gaps(&cuts_of(&doc, 0.0, |_, _| true)).len(), 9);
}

#[test]
fn size_limits_force_cuts_that_are_flagged_as_such() {
    let doc = topics(&[6, 6]);
    let at_most_four = |first: usize, last: usize| last - first < 4;
    let cuts = cuts_of(&doc, DEFAULT_PENALTY, at_most_four);
    let gaps = cut_gaps(&cuts);
    let mut first = 0;
    for &gap in gaps.iter().chain(std::iter::once(&11)) {
        assert!(gap - first < 4, "run {first}..={gap} is longer than 4: {gaps:?}");
        first = gap + 1;
    }
    assert!(gaps.contains(&5), "the topic change is still a cut: {gaps:?}");
    assert!(cuts.is_meaning_cut(5));
    assert!(gaps.iter().any(|&g| !cuts.is_meaning_cut(g)), "the other cuts are for size: {:?}", cuts.scores);
}

#[test]
fn a_chunk_holds_at_most_max_run_units() {
    let doc = unit_rows(&vec![vec![1.0, 0.0]; 600]);
    let gaps = cut_gaps(&cuts_of(&doc, DEFAULT_PENALTY, |_, _| true));
    let mut first = 0;
    for &gap in gaps.iter().chain(std::iter::once(&599)) {
        assert!(gap + 1 - first <= MAX_RUN_UNITS);
        first = gap + 1;
    }
    assert_eq!(gaps.len(), 2, "600 units need 3 chunks: {gaps:?}");
}

#[test]
fn zero_vectors_are_neutral() {
    let mut rows: Vec<Vec<f32>> =
        (0..8).map(|i| if i < 4 { vec![1.0, 0.1, 0.0] } else { vec![0.0, 0.1, 1.0] }).collect();
    rows[2] = vec![0.0; 3];
    let cuts = cuts_of(&unit_rows(&rows), DEFAULT_PENALTY, |_, _| true);
    assert_eq!(cut_gaps(&cuts), vec![3]);
}

#[test]
fn short_documents_have_no_gaps() {
    let one = unit_rows(&[vec![1.0, 0.0]]);
    let cuts = cuts_of(&one, DEFAULT_PENALTY, |_, _| true);
    assert!(cuts.is_cut.is_empty() && cuts.scores.is_empty());
    assert!(cuts_of(&Embeddings::new(2, vec![]), DEFAULT_PENALTY, |_, _| true).is_cut.is_empty());
}

/// Total coherence minus penalties of the runs `is_cut` makes; None if a run does not fit.
fn objective(prefix: &PrefixSums, is_cut: &[bool], penalty: f64, fits: &dyn Fn(usize, usize) -> bool) -> Option<f64> {
    let n = is_cut.len() + 1;
    let (mut total, mut first) = (0.0, 0);
    for end in 1..=n {
        if end == n || is_cut[end - 1] {
            if first + 1 < end && !fits(first, end - 1) {
                return None;
            }
            total += prefix.coherence(first, end) - penalty;
            first = end;
        }
    }
    Some(total)
}

proptest! {
    /// Dynamic programming finds the best of all 2^(n−1) segmentations, and no gap inside a
    /// chosen chunk would gain more than the penalty by being cut.
    #[test]
    fn matches_brute_force(
        rows in prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 4), 2..9),
        penalty in 0.0f64..3.0,
        longest in 1usize..6,
    ) {
        let vectors = unit_rows(&rows);
        let fits = move |first: usize, last: usize| last - first < longest;
        let cuts = cuts_of(&vectors, penalty, fits);
        let prefix = PrefixSums::centred(&vectors, &|| Ok(())).unwrap();
        let found = objective(&prefix, &cuts.is_cut, penalty, &fits).expect("every run fits");
        let n = rows.len();
        for mask in 0u32..(1 << (n - 1)) {
            let is_cut: Vec<bool> = (0..n - 1).map(|g| mask & (1 << g) != 0).collect();
            if let Some(total) = objective(&prefix, &is_cut, penalty, &fits) {
                prop_assert!(total <= found + 1e-9, "{is_cut:?} scores {total} > {found}");
            }
        }
        for gap in 0..n - 1 {
            if !cuts.is_cut[gap] {
                let first = (0..=gap).rev().find(|&i| i == 0 || cuts.is_cut[i - 1]).unwrap();
                let last = (gap + 1..n).find(|&i| i == n - 1 || cuts.is_cut[i]).unwrap();
                prop_assert!(fits(first, last));
                prop_assert!(cuts.scores[gap] <= penalty + 1e-9, "uncut gap {gap} gains {}", cuts.scores[gap]);
            }
        }
    }
}
