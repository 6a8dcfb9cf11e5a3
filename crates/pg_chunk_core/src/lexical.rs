//! The model-free embedder (`model: "lexical"`): TF-IDF over hashed word features, with the
//! document's own units as the corpus. Deterministic, needs no file, and good enough to find
//! where the vocabulary changes.

use crate::curve::{normalize, Embeddings};
use crate::embed::Embedder;
use crate::error::ChunkError;
use pg_chunk_ideograph::is_ideograph;

/// Feature buckets. 256 keeps a 10 MB document's vectors (~80k units) near 80 MB while
/// collisions stay rare within one unit's few dozen words.
pub const LEXICAL_DIM: usize = 256;

/// The model-free embedder (`model: "lexical"`): [`lexical_embeddings`] of a document's units,
/// stopped by `interrupt`, the caller's check ([`Embedder::check_interrupt`]; a backend passes
/// PostgreSQL's). [`LexicalEmbedder::new`] has none.
pub struct LexicalEmbedder<F = fn() -> Result<(), ChunkError>> {
    interrupt: F,
}

impl LexicalEmbedder {
    /// A lexical embedder that nothing interrupts.
    pub fn new() -> Self {
        LexicalEmbedder { interrupt: || Ok(()) }
    }
}

impl Default for LexicalEmbedder {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Fn() -> Result<(), ChunkError>> LexicalEmbedder<F> {
    /// A lexical embedder that calls `interrupt` as it goes and stops with its error.
    pub fn with_interrupt(interrupt: F) -> Self {
        LexicalEmbedder { interrupt }
    }
}

impl<F: Fn() -> Result<(), ChunkError>> Embedder for LexicalEmbedder<F> {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        lexical_embeddings(texts, &self.interrupt)
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        (self.interrupt)()
    }
}

/// One unit-length TF-IDF vector per text (a zero vector for a text without words). Calls
/// `interrupt` before each text in each of its two passes (a sentence takes about 2 µs), and
/// stops with its error.
pub fn lexical_embeddings(
    texts: &[&str],
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Embeddings, ChunkError> {
    let mut data = vec![0f32; texts.len() * LEXICAL_DIM];
    let mut document_frequency = vec![0u32; LEXICAL_DIM];
    for (row, text) in data.chunks_exact_mut(LEXICAL_DIM).zip(texts) {
        interrupt()?;
        for_each_feature(text, |bucket| row[bucket] += 1.0);
        for (df, tf) in document_frequency.iter_mut().zip(row.iter()) {
            *df += u32::from(*tf > 0.0);
        }
    }
    // Smoothed IDF as in scikit-learn: ln((1 + n) / (1 + df)) + 1.
    let n = texts.len() as f32;
    let idf: Vec<f32> = document_frequency.iter().map(|&df| ((1.0 + n) / (1.0 + df as f32)).ln() + 1.0).collect();
    for row in data.chunks_exact_mut(LEXICAL_DIM) {
        interrupt()?;
        row.iter_mut().zip(&idf).for_each(|(x, w)| *x *= w);
        normalize(row);
    }
    Ok(Embeddings::new(LEXICAL_DIM, data))
}

/// Calls `f` with the bucket of each feature of `text`: lowercased words of letters and
/// digits other than English function words, with a plural `s` dropped, and each ideograph on
/// its own (Chinese and Japanese have no spaces).
fn for_each_feature(text: &str, mut f: impl FnMut(usize)) {
    let mut word_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let ideograph = is_ideograph(c);
        // Marks (Devanagari vowel signs, combining accents) belong to the word they follow.
        if !ideograph && (c.is_alphanumeric() || (word_start.is_some() && is_mark(c))) {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(start) = word_start.take() {
            word_feature(&text[start..i], &mut f);
        }
        if ideograph {
            f(bucket(&text[i..i + c.len_utf8()]));
        }
    }
    if let Some(start) = word_start {
        word_feature(&text[start..], &mut f);
    }
}

fn word_feature(word: &str, f: &mut impl FnMut(usize)) {
    let mut lower = [0u8; 8];
    if word.len() <= lower.len() && word.is_ascii() {
        lower[..word.len()].copy_from_slice(word.as_bytes());
        lower.make_ascii_lowercase();
        if STOPWORDS.binary_search(&&lower[..word.len()]).is_ok() {
            return;
        }
    }
    f(bucket(plural_stem(word)));
}

/// "bees" → "bee", "volcanoes" → "volcano"; "glass" and "bus" keep their s.
fn plural_stem(word: &str) -> &str {
    let Some(stem) = word.strip_suffix(['s', 'S']) else { return word };
    if stem.len() < 3 || stem.ends_with(['s', 'S']) {
        return word;
    }
    match stem.strip_suffix(['e', 'E']) {
        Some(o_stem) if o_stem.ends_with(['o', 'O']) => o_stem,
        _ => stem,
    }
}

/// FNV-1a over the lowercased characters, folded into [`LEXICAL_DIM`] buckets.
fn bucket(word: &str) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for lower in word.chars().flat_map(char::to_lowercase) {
        hash = (hash ^ u64::from(lower)).wrapping_mul(0x0100_0000_01b3);
    }
    (hash % LEXICAL_DIM as u64) as usize
}

/// English function words (sorted, for binary search): they say nothing about the topic, and
/// in one sentence's handful of words they would dominate the similarity.
pub(crate) const STOPWORDS: &[&[u8]] = &[
    b"a", b"about", b"after", b"all", b"also", b"an", b"and", b"any", b"are", b"as", b"at", b"be", b"because", b"been",
    b"before", b"being", b"between", b"both", b"but", b"by", b"can", b"could", b"did", b"do", b"does", b"each", b"for",
    b"from", b"had", b"has", b"have", b"he", b"her", b"here", b"him", b"his", b"how", b"i", b"if", b"in", b"into",
    b"is", b"it", b"its", b"just", b"may", b"more", b"most", b"much", b"must", b"no", b"not", b"of", b"on", b"one",
    b"only", b"or", b"other", b"our", b"out", b"over", b"she", b"should", b"so", b"some", b"such", b"than", b"that",
    b"the", b"their", b"them", b"then", b"there", b"these", b"they", b"this", b"those", b"through", b"to", b"too",
    b"under", b"up", b"very", b"was", b"we", b"were", b"what", b"when", b"where", b"which", b"while", b"who", b"why",
    b"will", b"with", b"would", b"you", b"your",
];

/// Combining marks of the Devanagari and general combining blocks.
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0900..=0x0903 | 0x093A..=0x094F | 0x0951..=0x0957 | 0x0962..=0x0963)
}

#[cfg(test)]
#[path = "lexical_tests.rs"]
mod tests;
