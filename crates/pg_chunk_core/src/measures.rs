//! Model-free measures of a stretch of text (docs/strategies.md, "Quality metadata"): its keywords, the Jaccard overlap
//! of two keyword sets, and Shannon entropy. The keyword and entropy strategies cut with them;
//! the quality metadata and the adaptive strategy's score report them.

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;

use crate::lexical::STOPWORDS;
use crate::sentences::INTERRUPT_EVERY_BYTES;

/// Lowercased words of at least 3 letters or digits that are not English function words.
pub fn keywords(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|word| STOPWORDS.binary_search(&word.as_bytes()).is_err())
        .collect()
}

/// |a ∩ b| / |a ∪ b|; 0 when both are empty.
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// Shannon entropy of the text's characters, in bits per character (character level, as in docs/strategies.md,
/// "Quality metadata"):
/// H = −Σ p(c) log₂ p(c). Whitespace counts as a character; an empty text has 0.
pub fn char_entropy(text: &str) -> f64 {
    let Ok(entropy) = char_entropy_interruptible(text, &|| Ok::<(), Infallible>(()));
    entropy
}

/// [`char_entropy`], calling `interrupt` every [`INTERRUPT_EVERY_BYTES`] of the text and stopping
/// with its error: a whole document's entropy takes tens of milliseconds at 5 MB.
pub fn char_entropy_interruptible<E>(text: &str, interrupt: &dyn Fn() -> Result<(), E>) -> Result<f64, E> {
    // Ordered, so that the sum is the same in every run to the last bit.
    let mut counts: BTreeMap<char, usize> = BTreeMap::new();
    let mut total = 0usize;
    let mut next_interrupt_check = 0;
    for (i, c) in text.char_indices() {
        if i >= next_interrupt_check {
            interrupt()?;
            next_interrupt_check = i + INTERRUPT_EVERY_BYTES;
        }
        *counts.entry(c).or_default() += 1;
        total += 1;
    }
    if total == 0 {
        return Ok(0.0);
    }
    Ok(counts
        .values()
        .map(|&n| {
            let p = n as f64 / total as f64;
            -p * p.log2()
        })
        .sum())
}

#[cfg(test)]
#[path = "measures_tests.rs"]
mod tests;
