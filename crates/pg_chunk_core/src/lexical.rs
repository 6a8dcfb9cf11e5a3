//! The model-free embedder (`model: "lexical"`): TF-IDF over hashed word features, with the
//! document's own units as the corpus. Deterministic, needs no file, and good enough to find
//! where the vocabulary changes.

use crate::curve::{normalize, Embeddings};
use crate::embed::Embedder;
use crate::error::ChunkError;

/// Feature buckets. 256 keeps a 10 MB document's vectors (~80k units) near 80 MB while
/// collisions stay rare within one unit's few dozen words.
pub const LEXICAL_DIM: usize = 256;

pub struct LexicalEmbedder;

impl Embedder for LexicalEmbedder {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        Ok(lexical_embeddings(texts))
    }
}

/// One unit-length TF-IDF vector per text (a zero vector for a text without words).
pub fn lexical_embeddings(texts: &[&str]) -> Embeddings {
    let mut data = vec![0f32; texts.len() * LEXICAL_DIM];
    let mut document_frequency = vec![0u32; LEXICAL_DIM];
    for (row, text) in data.chunks_exact_mut(LEXICAL_DIM).zip(texts) {
        for_each_feature(text, |bucket| row[bucket] += 1.0);
        for (df, tf) in document_frequency.iter_mut().zip(row.iter()) {
            *df += u32::from(*tf > 0.0);
        }
    }
    // Smoothed IDF as in scikit-learn: ln((1 + n) / (1 + df)) + 1.
    let n = texts.len() as f32;
    let idf: Vec<f32> = document_frequency.iter().map(|&df| ((1.0 + n) / (1.0 + df as f32)).ln() + 1.0).collect();
    for row in data.chunks_exact_mut(LEXICAL_DIM) {
        row.iter_mut().zip(&idf).for_each(|(x, w)| *x *= w);
        normalize(row);
    }
    Embeddings::new(LEXICAL_DIM, data)
}

/// Calls `f` with the bucket of each feature of `text`: lowercased words of letters and
/// digits, and each ideograph on its own (Chinese and Japanese have no spaces).
fn for_each_feature(text: &str, mut f: impl FnMut(usize)) {
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = FNV_OFFSET;
    let mut in_word = false;
    let feed = |hash: &mut u64, c: char| {
        for lower in c.to_lowercase() {
            *hash = (*hash ^ u64::from(lower)).wrapping_mul(FNV_PRIME);
        }
    };
    for c in text.chars() {
        let ideograph = matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF);
        // Marks (Devanagari vowel signs, combining accents) belong to the word they follow.
        let word_char = !ideograph && (c.is_alphanumeric() || (in_word && is_mark(c)));
        if word_char {
            feed(&mut hash, c);
            in_word = true;
            continue;
        }
        if in_word {
            f((hash % LEXICAL_DIM as u64) as usize);
            hash = FNV_OFFSET;
            in_word = false;
        }
        if ideograph {
            let mut h = FNV_OFFSET;
            feed(&mut h, c);
            f((h % LEXICAL_DIM as u64) as usize);
        }
    }
    if in_word {
        f((hash % LEXICAL_DIM as u64) as usize);
    }
}

/// Combining marks of the Devanagari and general combining blocks.
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0900..=0x0903 | 0x093A..=0x094F | 0x0951..=0x0957 | 0x0962..=0x0963)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::cosine_distance;

    #[test]
    fn shared_vocabulary_is_closer_than_different_vocabulary() {
        let texts = ["The cat sat on the mat.", "A cat and a mat.", "Quantum chromodynamics of quarks."];
        let e = lexical_embeddings(&texts);
        assert!(cosine_distance(e.row(0), e.row(1)) < cosine_distance(e.row(0), e.row(2)));
    }

    #[test]
    fn vectors_are_unit_length_or_zero_and_deterministic() {
        let texts = ["Hello world", "!!! ...", "中文文本", "नमस्ते दुनिया"];
        let e = lexical_embeddings(&texts);
        for i in 0..texts.len() {
            let norm: f32 = e.row(i).iter().map(|x| x * x).sum();
            assert!((norm - 1.0).abs() < 1e-5 || norm == 0.0, "row {i} norm {norm}");
        }
        assert!(e.row(1).iter().all(|x| *x == 0.0), "punctuation carries no features");
        assert_eq!(e, lexical_embeddings(&texts));
    }

    #[test]
    fn case_does_not_matter() {
        let e = lexical_embeddings(&["Database Index", "database index"]);
        assert!(cosine_distance(e.row(0), e.row(1)) < 1e-6);
    }
}
