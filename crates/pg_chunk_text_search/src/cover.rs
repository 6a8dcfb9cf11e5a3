//! Which chunks can reach a BM25 score: the text leg's exact top k without scoring every chunk
//! that holds a lexeme of the query (WAND's idea, asked of PostgreSQL's GIN index).
//!
//! A term adds less than `idf · (k1 + 1)` to any chunk's score ([`term_bound`]), so a chunk
//! whose score is at least `s` holds a set of the query's terms whose bounds add up to at least
//! `s`. [`cover`] lists such sets so that every chunk that can score `s` holds all the terms of
//! one of them: each set becomes a conjunction (`a & b & c`), which GIN answers by stepping
//! through its rarest lexeme's postings and skipping in the others', so the chunks read are
//! about the ones that can score `s`, not every chunk holding a common word.

/// More than a term of inverse document frequency `idf` can add to any chunk's BM25 score:
/// `tf · (k1 + 1) / (tf + k1 · …) < k1 + 1` for every `tf` and length (k1 = 0: exactly `idf`,
/// so "at most"). A millionth over, so that a sum of bounds stays above a score summed in
/// another order.
pub fn term_bound(idf: f64, k1: f64) -> f64 {
    idf * (k1 + 1.0) * 1.000001
}

/// Sets of terms (indexes into `bounds`, each set in increasing index order) such that every
/// set of terms whose bounds add up to at least `score` contains one of them; no set is empty.
///
/// The sets are the ones a search from the largest bound down finds first: each term added
/// while the set's sum is below `score`, so removing a set's last term takes it below. When
/// there would be more than `limit` of them (a long query of common words), each term that can
/// still reach `score` with every smaller bound added is a set of its own (MaxScore's
/// essential terms): fewer, broader sets that still cover. A `score` that is not a positive
/// number covers every term alone. Sums are held to `score` less a billionth of it, so that
/// the order bounds are added in cannot leave a set out.
pub fn cover(bounds: &[f64], score: f64, limit: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..bounds.len()).collect();
    order.sort_by(|&a, &b| bounds[b].total_cmp(&bounds[a]).then(a.cmp(&b)));
    if score.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        // Zero, negative or NaN: every term alone.
        return order.into_iter().map(|i| vec![i]).collect();
    }
    // suffix[i]: the bounds of order[i..] added up.
    let mut suffix = vec![0.0; order.len() + 1];
    for i in (0..order.len()).rev() {
        suffix[i] = suffix[i + 1] + bounds[order[i]];
    }
    let score = score * (1.0 - 1e-9);
    let mut sets = Vec::new();
    let mut chosen = Vec::new();
    if !search(&order, bounds, &suffix, score, limit, 0, 0.0, &mut chosen, &mut sets) {
        sets = (0..order.len()).take_while(|&i| suffix[i] >= score).map(|i| vec![order[i]]).collect();
    }
    for set in &mut sets {
        set.sort_unstable();
    }
    sets
}

/// Adds to `sets` every set that extends `chosen` with terms from `order[from..]`; false once
/// `sets` would pass `limit`.
#[allow(clippy::too_many_arguments)]
fn search(
    order: &[usize],
    bounds: &[f64],
    suffix: &[f64],
    score: f64,
    limit: usize,
    from: usize,
    total: f64,
    chosen: &mut Vec<usize>,
    sets: &mut Vec<Vec<usize>>,
) -> bool {
    for i in from..order.len() {
        if total + suffix[i] < score {
            // No later term can complete the set either: the suffix only shrinks.
            break;
        }
        let sum = total + bounds[order[i]];
        chosen.push(order[i]);
        let within = if sum >= score {
            sets.push(chosen.clone());
            sets.len() <= limit
        } else {
            search(order, bounds, suffix, score, limit, i + 1, sum, chosen, sets)
        };
        chosen.pop();
        if !within {
            return false;
        }
    }
    true
}

#[cfg(test)]
#[path = "cover_tests.rs"]
mod tests;
