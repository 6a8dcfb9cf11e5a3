use super::*;
use crate::tokenizer_model::TokenizerModel;
use serde_json::Value;
use tokenizers::models::unigram::Unigram;

/// A small vocabulary with multibyte pieces, shared prefixes, equal scores and a duplicate.
fn vocabulary() -> Vec<(String, f64)> {
    let pieces = [
        ("<unk>", 0.0),
        ("a", -2.0),
        ("b", -2.5),
        ("ab", -3.0),
        ("abc", -4.0),
        ("c", -3.0),
        ("bc", -4.5),
        ("é", -2.0),
        ("éa", -3.5),
        ("中", -3.0),
        ("中文", -4.0),
        ("文", -3.0),
        ("▁", -1.0),
        ("▁a", -2.5),
        ("▁ab", -4.0),
        ("aa", -4.0),
        ("aaa", -6.0),
        ("ba", -4.5),
        ("cab", -5.0),
        ("b", -1.5),
        ("ca", -4.5),
    ];
    pieces.iter().map(|(p, s)| (p.to_string(), *s)).collect()
}

fn ids(model: &impl Model, text: &str) -> Vec<(u32, String)> {
    model.tokenize(text).unwrap().into_iter().map(|t| (t.id, t.value)).collect()
}

#[test]
fn segments_as_tokenizers_does_on_random_text() {
    let library = Unigram::from(vocabulary(), Some(0), false).unwrap();
    let compact = CompactUnigram::new(vocabulary(), Some(0)).unwrap();
    let alphabet = ['a', 'b', 'c', 'é', '中', '文', '▁', 'x', 'ü', '𝄞'];
    let mut state = 2026u64;
    for length in 0..400 {
        let text: String = (0..length % 23)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                alphabet[(state >> 33) as usize % alphabet.len()]
            })
            .collect();
        assert_eq!(ids(&compact, &text), ids(&library, &text), "{text:?}");
    }
}

#[test]
fn e5s_tokenizer_gives_the_ids_of_tokenizers_own_on_every_fixture_sentence() {
    let dir = std::env::var_os("PG_CHUNK_MODEL_DIR")
        .expect("PG_CHUNK_MODEL_DIR names the installed models (scripts/test.sh sets it)");
    let file = std::path::Path::new(&dir).join("multilingual-e5-small/tokenizer.json");
    let ours = crate::tokenize::load_plain_tokenizer(&file).unwrap().0;
    assert!(matches!(ours.get_model(), TokenizerModel::Unigram(_)));
    let library = tokenizers::Tokenizer::from_file(&file).unwrap();
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/e5_parity.json")).unwrap(),
    )
    .unwrap();
    let mut texts: Vec<String> = serde_json::from_value(fixture["all_sentences"].clone()).unwrap();
    texts.extend(["", " ", "𝄞𝄞 <unk> <s> x\u{200d}y", "ＡＢＣ　全角", "a\tb\nc  d"].map(String::from));
    assert!(texts.len() > 100);
    for text in &texts {
        for prefixed in [text.clone(), format!("passage: {text}")] {
            let want = library.encode(prefixed.as_str(), true).unwrap();
            let got = ours.encode(prefixed.as_str(), true).unwrap();
            assert_eq!((got.get_ids(), got.get_offsets()), (want.get_ids(), want.get_offsets()), "{prefixed:?}");
        }
    }
    assert_eq!(ours.get_vocab_size(true), library.get_vocab_size(true));
}

#[test]
fn looks_up_pieces_keeping_the_last_of_a_duplicate() {
    let compact = CompactUnigram::new(vocabulary(), Some(0)).unwrap();
    assert_eq!(compact.token_to_id("b"), Some(19));
    assert_eq!(compact.token_to_id("中文"), Some(10));
    assert_eq!(compact.token_to_id("zz"), None);
    assert_eq!(compact.id_to_token(10).as_deref(), Some("中文"));
    assert_eq!(compact.id_to_token(21), None);
    assert_eq!(compact.get_vocab_size(), 21);
    assert_eq!(compact.get_vocab().len(), 20);
}

#[test]
fn without_unk_id_an_unknown_character_is_an_error_and_a_bad_unk_id_is_refused() {
    let vocabulary: Vec<(String, f64)> = vocabulary().into_iter().skip(1).collect();
    let compact = CompactUnigram::new(vocabulary.clone(), None).unwrap();
    assert!(compact.tokenize("ab").is_ok());
    assert!(compact.tokenize("xyz").is_err());
    assert!(CompactUnigram::new(vocabulary, Some(99)).is_err());
}
