//! After any strategy (docs/strategies.md, "Quality metadata"): quality metadata per chunk (cfg `metadata`) and the
//! post-filters that drop chunks not worth retrieving (cfg `filters`).

use crate::names::named_enum;
use std::collections::HashMap;

use super::Chunk;
use crate::curve::cosine_distance;
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::measures::{char_entropy, jaccard, keywords};
use crate::sentences::split_sentences;
use pg_chunk_ideograph::is_ideograph;

/// Entropy that scores 1 in `importance_score`: log₂ 95, text spread evenly over the printable
/// ASCII characters. English prose has about 4.2 bits (0.64), code about 4.7; text above the
/// ceiling (a CJK alphabet has thousands of characters) scores 1. A constant rather than the
/// document's largest entropy, so that a chunk's score does not depend on its neighbours and
/// scores compare across documents.
pub const ENTROPY_CEILING: f64 = 6.569_855_608_330_948;

/// Weights of `importance_score` = 0.4 · semantic_density + 0.3 · topic_coherence +
/// 0.3 · entropy / ENTROPY_CEILING, each term clamped to 0..1: meaning holding together counts
/// most; keyword overlap and information content equally.
pub const SEMANTIC_WEIGHT: f64 = 0.4;
pub const TOPIC_WEIGHT: f64 = 0.3;
pub const ENTROPY_WEIGHT: f64 = 0.3;

/// Sets `entropy`, `topic_coherence`, `semantic_density` and `importance_score` in each chunk's
/// metadata, rounded to 4 decimals and always finite:
/// - `entropy`: [`char_entropy`] of the chunk's text, bits per character (0 for no text);
/// - `topic_coherence`: mean Jaccard of the keyword sets of consecutive sentences in the chunk
///   (0 for two sentences without keywords); 1 for a chunk of one sentence;
/// - `semantic_density`: mean cosine similarity of consecutive sentences' embeddings, −1..1
///   (0 next to a sentence with no features: a zero vector); 1 for a chunk of one sentence;
/// - `importance_score`: the weighted sum above, 0..1.
///
/// A chunk's sentences are those of its own text (overlap included), so a chunk that cuts
/// through a sentence is measured on what it holds. All sentences of the document's chunks go
/// to `embedder` in one call, each distinct text once (a hierarchical parent repeats its
/// children's); no call is made when no chunk has two sentences.
pub fn add_quality_metadata(doc: &str, chunks: &mut [Chunk], embedder: &mut dyn Embedder) -> Result<(), ChunkError> {
    let mut chunk_sentences: Vec<Vec<&str>> = Vec::with_capacity(chunks.len());
    for chunk in chunks.iter() {
        embedder.check_interrupt()?;
        let text = chunk.text(doc);
        chunk_sentences.push(split_sentences(text).iter().map(|s| s.text(text)).collect());
    }
    let mut batch: Vec<&str> = Vec::new();
    let mut row_of: HashMap<&str, usize> = HashMap::new();
    for sentence in chunk_sentences.iter().filter(|s| s.len() >= 2).flatten() {
        row_of.entry(sentence).or_insert_with(|| {
            batch.push(sentence);
            batch.len() - 1
        });
    }
    let vectors = if batch.is_empty() { None } else { Some(embedder.embed(&batch)?) };
    if let Some(vectors) = &vectors {
        if vectors.len() != batch.len() {
            return Err(ChunkError::Embedding(format!(
                "embedder returned {} vectors for {} sentences",
                vectors.len(),
                batch.len()
            )));
        }
    }

    for (chunk, sentences) in chunks.iter_mut().zip(&chunk_sentences) {
        embedder.check_interrupt()?;
        let entropy = char_entropy(chunk.text(doc));
        let keyword_sets: Vec<_> = sentences.iter().map(|s| keywords(s)).collect();
        let topic_coherence = mean_of_pairs(keyword_sets.windows(2).map(|pair| jaccard(&pair[0], &pair[1])));
        let semantic_density = match &vectors {
            Some(vectors) if sentences.len() >= 2 => mean_of_pairs(sentences.windows(2).map(|pair| {
                let similarity = 1.0 - cosine_distance(vectors.row(row_of[pair[0]]), vectors.row(row_of[pair[1]]));
                // A vector with NaN in it says as little as a zero vector.
                if similarity.is_finite() {
                    similarity
                } else {
                    0.0
                }
            })),
            _ => 1.0,
        };
        let importance = SEMANTIC_WEIGHT * semantic_density.clamp(0.0, 1.0)
            + TOPIC_WEIGHT * topic_coherence.clamp(0.0, 1.0)
            + ENTROPY_WEIGHT * (entropy / ENTROPY_CEILING).clamp(0.0, 1.0);
        for (key, value) in [
            ("entropy", entropy),
            ("topic_coherence", topic_coherence),
            ("semantic_density", semantic_density),
            ("importance_score", importance),
        ] {
            chunk.metadata.insert(key.to_string(), round4(value).into());
        }
    }
    Ok(())
}

/// The mean of a measure over consecutive pairs; 1 when there is no pair (one sentence is
/// perfectly coherent with itself).
fn mean_of_pairs(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(sum, count), v| (sum + v, count + 1));
    if count == 0 {
        1.0
    } else {
        sum / count as f64
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Chunks shorter than this are dropped, counted in columns: a CJK character counts 2 (it is
/// drawn two columns wide and carries about what two Latin letters do), so that a 30-character
/// Chinese sentence is not dropped as short.
pub const MIN_COLUMNS: usize = 50;
/// Chunks with fewer distinct meaningful words than this are dropped (docs/configuration.md, `filters`).
pub const MIN_MEANINGFUL_WORDS: usize = 5;
/// Box-drawing art: more than this share of the visible characters are U+2500–U+259F (box
/// drawing and block elements), or that share are those plus ASCII frame characters
/// `+ - | = _ / \` while letters and digits are under half. The second condition keeps a
/// Markdown table of words (its `|---|` row is all frame characters).
pub const DRAWING_SHARE: f64 = 0.3;

/// Whether a chunk's text is worth keeping under cfg `filters`: see [`drop_reason`].
pub fn keep(text: &str) -> bool {
    drop_reason(text).is_none()
}

named_enum! {
    /// Why cfg `filters` drops a chunk ([`drop_reason`]), the most specific rule first.
    pub enum DropReason ("drop reason") {
        /// No letter or digit at all (`---`, `***`, `` ``` ``, `===`, `___`, `* * *`).
        Separator = "separator",
        /// Every non-empty line is a Markdown ATX heading (`#` to `######`, then a space, a tab
        /// or the end of the line).
        Heading = "heading",
        /// Box-drawing or ASCII art, by [`DRAWING_SHARE`].
        Drawing = "drawing",
        /// Under [`MIN_COLUMNS`].
        Short = "short",
        /// Under [`MIN_MEANINGFUL_WORDS`] distinct keywords (lowercased words of at least 3
        /// letters or digits, stopwords removed; each CJK character counts as a word).
        FewWords = "few_words",
    }
}

/// Why `text` is dropped under cfg `filters`, or `None` when it is kept.
pub fn drop_reason(text: &str) -> Option<DropReason> {
    let text = text.trim();
    if !text.chars().any(char::is_alphanumeric) {
        return Some(DropReason::Separator);
    }
    if text.lines().filter(|line| !line.trim().is_empty()).all(is_heading_line) {
        return Some(DropReason::Heading);
    }
    if is_drawing(text) {
        return Some(DropReason::Drawing);
    }
    if text.chars().map(|c| if is_ideograph(c) { 2 } else { 1 }).sum::<usize>() < MIN_COLUMNS {
        return Some(DropReason::Short);
    }
    if meaningful_words(text) < MIN_MEANINGFUL_WORDS {
        return Some(DropReason::FewWords);
    }
    None
}

/// The Markdown ATX heading rule of sentences.rs: optional indentation, 1 to 6 `#`, then a
/// space, a tab or the end of the line.
fn is_heading_line(line: &str) -> bool {
    let line = line.trim_start();
    let hashes = line.len() - line.trim_start_matches('#').len();
    (1..=6).contains(&hashes) && matches!(line[hashes..].chars().next(), None | Some(' ' | '\t'))
}

fn is_drawing(text: &str) -> bool {
    let (mut visible, mut boxes, mut frames, mut alphanumeric) = (0usize, 0usize, 0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        visible += 1;
        if ('\u{2500}'..='\u{259F}').contains(&c) {
            boxes += 1;
        } else if matches!(c, '+' | '-' | '|' | '=' | '_' | '/' | '\\') {
            frames += 1;
        } else if c.is_alphanumeric() {
            alphanumeric += 1;
        }
    }
    let share = |n: usize| n as f64 > DRAWING_SHARE * visible as f64;
    share(boxes) || (share(boxes + frames) && 2 * alphanumeric < visible)
}

/// Distinct keywords, with each CJK character a word of its own (those scripts have no spaces,
/// so `keywords` would see a whole sentence as one word).
fn meaningful_words(text: &str) -> usize {
    let words = keywords(text).iter().filter(|w| !w.chars().any(is_ideograph)).count();
    words + text.chars().filter(|c| is_ideograph(*c)).count()
}

#[cfg(test)]
#[path = "post_tests.rs"]
mod tests;
