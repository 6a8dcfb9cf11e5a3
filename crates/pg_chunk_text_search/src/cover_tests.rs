use super::*;

/// Bounds from a fixed pseudo-random sequence (xorshift), from 0.5 to 10.5.
fn bounds(seed: u64, n: usize) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            0.5 + (x % 10_000) as f64 / 1_000.0
        })
        .collect()
}

/// Every subset of the terms (as a bit mask) whose bounds add up to at least `score` holds all
/// the terms of one of `sets`; each set reaches `score` unless it is one of the broad ones.
fn check_covers(bounds: &[f64], score: f64, sets: &[Vec<usize>]) {
    assert!(sets.iter().all(|s| !s.is_empty()), "an empty set matches every chunk");
    for mask in 1u32..(1 << bounds.len()) {
        let sum: f64 = (0..bounds.len()).filter(|i| mask & (1 << i) != 0).map(|i| bounds[i]).sum();
        if sum >= score {
            assert!(
                sets.iter().any(|s| s.iter().all(|&i| mask & (1 << i) != 0)),
                "terms {mask:b} reach {score} with {sum} but hold no set of {sets:?} (bounds {bounds:?})"
            );
        }
    }
}

#[test]
fn every_set_of_terms_that_can_reach_the_score_holds_a_listed_set() {
    for seed in 1..200 {
        let n = 1 + (seed as usize % 9);
        let b = bounds(seed, n);
        let total: f64 = b.iter().sum();
        for share in [0.05, 0.2, 0.35, 0.5, 0.7, 0.9, 1.0] {
            let score = total * share;
            let sets = cover(&b, score, usize::MAX);
            check_covers(&b, score, &sets);
            for set in &sets {
                let sum: f64 = set.iter().map(|&i| b[i]).sum();
                assert!(sum >= score, "set {set:?} sums to {sum} < {score}");
                // Minimal by its last term: without its smallest bound it falls short.
                let least = set.iter().map(|&i| b[i]).fold(f64::INFINITY, f64::min);
                assert!(sum - least < score, "set {set:?} is not minimal for {score}");
            }
        }
    }
}

#[test]
fn past_the_limit_the_essential_terms_cover_alone() {
    // Eight equal bounds, any four reach the score: 70 sets, more than the limit.
    let b = vec![1.0; 8];
    let sets = cover(&b, 4.0, 20);
    assert_eq!(sets, (0..5).map(|i| vec![i]).collect::<Vec<_>>(), "the five terms that can still reach 4");
    check_covers(&b, 4.0, &sets);
    assert_eq!(cover(&b, 4.0, 70).len(), 70);
    for seed in 1..100 {
        let b = bounds(seed, 9);
        let score = b.iter().sum::<f64>() * 0.4;
        check_covers(&b, score, &cover(&b, score, 3));
    }
}

#[test]
fn a_score_no_terms_reach_needs_no_chunk_and_a_zero_score_every_term() {
    let b = [3.0, 1.0, 2.0];
    assert!(cover(&b, 6.5, 64).is_empty());
    assert_eq!(cover(&b, 6.0, 64), vec![vec![0, 1, 2]]);
    for score in [0.0, -1.0, f64::NAN] {
        assert_eq!(cover(&b, score, 64), vec![vec![0], vec![2], vec![1]], "score {score}");
    }
    assert!(cover(&[], 1.0, 64).is_empty());
}

#[test]
fn a_term_bound_is_above_any_score_the_term_adds() {
    use crate::bm25::{idf, Bm25};
    let idf = idf(1000.0, 10.0);
    for k1 in [0.0, 0.5, 1.2, 10.0] {
        for (tf, length) in [(1usize, 1usize), (50, 50), (1, 400)] {
            let tf_f = tf as f64;
            let bm25 = Bm25 { k1, b: 0.75, average_length: 100.0 };
            let saturation = bm25.k1 * (1.0 - bm25.b + bm25.b * length as f64 / bm25.average_length);
            let added = idf * tf_f * (k1 + 1.0) / (tf_f + saturation);
            assert!(added < term_bound(idf, k1), "k1 {k1}, tf {tf}, length {length}");
        }
    }
}
