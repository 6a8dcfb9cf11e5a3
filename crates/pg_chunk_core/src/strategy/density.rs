//! `strategy: "information_density"` (docs/strategies.md, "topic_coherence and information_density"): sentences are
//! added to a chunk until its information content, the Shannon entropy of its characters, runs above the document's
//! average by [`DENSITY_FACTOR`].
//!
//! The rules:
//! - The document's average is the mean of its sentences' character entropies
//!   ([`char_entropy`], bits per character). Not the entropy of the whole document: the entropy
//!   of a mixture is at least the mean of its parts', so no chunk of a varied document could
//!   ever pass 120% of it and the rule would never fire.
//! - A chunk closes after the sentence that takes its entropy (of its whole text, whitespace
//!   between sentences included) above `DENSITY_FACTOR` × average, provided it has reached
//!   `min_size`; the next chunk's split_reason is `density`. It also closes before a sentence
//!   that would take it past `max_size` (`size`). The first chunk is `start`.
//! - A sentence alone above `max_size` is cut at words into `forced` chunks; the chunk after it
//!   starts with `size`.
//! - Then chunks below `min_size` merge into the neighbour across the lower seam, the entropy
//!   difference of the two sentences at the gap, when the merged chunk fits `max_size`.
//!
//! What to expect: a chunk's entropy grows with its length and levels off near the text's
//! typical value (about 4.2 bits for English prose, above the mean of single sentences, which
//! are too short to show their whole alphabet). In uniform prose the threshold is rarely passed
//! and chunks fill up to `max_size`; a chunk closes early where the text turns varied: numbers,
//! identifiers, a second script.

use std::collections::BTreeMap;

use super::topic::{assemble, Piece};
use super::{Chunk, SplitReason};
use crate::config::ChunkConfig;
use crate::error::ChunkError;
use crate::guards::{force_split, Run};
use crate::measures::char_entropy;
use crate::sentences::split_sentences_interruptible;
use crate::size::{TokenCounter, UnitSizes};

/// A chunk closes once its entropy passes this multiple of the document average (docs/strategies.md,
/// "topic_coherence and information_density").
pub const DENSITY_FACTOR: f64 = 1.2;

pub fn density_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<Chunk>, ChunkError> {
    let units = split_sentences_interruptible(doc, interrupt)?;
    if units.is_empty() {
        return Ok(vec![]);
    }
    let sizes = UnitSizes::new(doc, &units, tokens);
    let (min, max) = (cfg.min_size, cfg.max_size);
    let entropies = units
        .iter()
        .map(|u| interrupt().map(|()| char_entropy(u.text(doc))))
        .collect::<Result<Vec<f64>, ChunkError>>()?;
    let limit = DENSITY_FACTOR * entropies.iter().sum::<f64>() / entropies.len() as f64;
    let seams: Vec<f64> = entropies.windows(2).map(|w| (w[0] - w[1]).abs()).chain([0.0]).collect();

    let mut pieces: Vec<Piece> = Vec::new();
    let mut chunk_chars = CharCounts::default();
    let mut next_reason = SplitReason::Start;
    for i in 0..units.len() {
        interrupt()?;
        if !sizes.fits(i, i, max) {
            pieces.extend(
                force_split(doc, units[i].start, units[i].end, max, tokens)
                    .into_iter()
                    .map(|(s, e)| Piece::Forced(s, e)),
            );
            next_reason = SplitReason::Size;
            continue;
        }
        let reason = match pieces.last_mut() {
            // A chunk that passed the limit (with min_size) closes whatever the next sentence's
            // size: density is checked first.
            Some(Piece::Packed(run, _))
                if chunk_chars.entropy() > limit && sizes.run(run.first, run.last, min.unit) >= min.value =>
            {
                SplitReason::Density
            }
            Some(Piece::Packed(run, _)) if !sizes.fits(run.first, i, max) => SplitReason::Size,
            Some(Piece::Packed(run, _)) => {
                chunk_chars.add(&doc[units[run.last].end..units[i].end]);
                run.last = i;
                continue;
            }
            _ => next_reason,
        };
        pieces.push(Piece::Packed(Run { first: i, last: i }, reason));
        chunk_chars = CharCounts::default();
        chunk_chars.add(units[i].text(doc));
    }
    assemble(doc, &units, &sizes, &pieces, &seams, cfg, tokens, interrupt)
}

/// Character counts of a growing chunk, so that its entropy after each added sentence costs
/// the sentence, not the whole chunk again (`char_entropy` on the chunk text would make a
/// chunking with a large `max_size` quadratic). Agrees with [`char_entropy`] on the same text.
/// A BTreeMap sums the terms in one fixed order, so a chunk exactly at the threshold is
/// decided the same way on every run.
#[derive(Default)]
struct CharCounts {
    counts: BTreeMap<char, usize>,
    total: usize,
}

impl CharCounts {
    fn add(&mut self, text: &str) {
        for c in text.chars() {
            *self.counts.entry(c).or_default() += 1;
            self.total += 1;
        }
    }

    /// H = −Σ p(c) log₂ p(c) in bits per character; 0 for no text.
    fn entropy(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let total = self.total as f64;
        self.counts.values().map(|&n| n as f64 / total).map(|p| -p * p.log2()).sum()
    }
}

#[cfg(test)]
#[path = "density_tests.rs"]
mod tests;
