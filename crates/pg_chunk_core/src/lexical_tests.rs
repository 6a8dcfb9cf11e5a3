use super::*;
use crate::curve::cosine_distance;

/// The vectors of `texts`, with nothing to interrupt them.
fn vectors(texts: &[&str]) -> Embeddings {
    lexical_embeddings(texts, &|| Ok(())).unwrap()
}

#[test]
fn shared_vocabulary_is_closer_than_different_vocabulary() {
    let texts = ["The cat sat on the mat.", "A cat and a mat.", "Quantum chromodynamics of quarks."];
    let e = vectors(&texts);
    assert!(cosine_distance(e.row(0), e.row(1)) < cosine_distance(e.row(0), e.row(2)));
}

#[test]
fn vectors_are_unit_length_or_zero_and_deterministic() {
    let texts = ["Hello world", "!!! ...", "中文文本", "नमस्ते दुनिया"];
    let e = vectors(&texts);
    for i in 0..texts.len() {
        let norm: f32 = e.row(i).iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-5 || norm == 0.0, "row {i} norm {norm}");
    }
    assert!(e.row(1).iter().all(|x| *x == 0.0), "punctuation carries no features");
    assert_eq!(e, vectors(&texts));
}

#[test]
fn stopwords_are_sorted_and_ignored_and_plurals_fold() {
    assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]), "binary search needs a sorted list");
    let e = vectors(&["The bees and the volcanoes", "bee volcano"]);
    assert!(cosine_distance(e.row(0), e.row(1)) < 1e-6);
    let none = vectors(&["the and of"]);
    assert!(none.row(0).iter().all(|x| *x == 0.0));
}

#[test]
fn case_does_not_matter() {
    let e = vectors(&["Database Index", "database index"]);
    assert!(cosine_distance(e.row(0), e.row(1)) < 1e-6);
}
