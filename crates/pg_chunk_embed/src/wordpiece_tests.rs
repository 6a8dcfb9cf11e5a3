use super::*;
use crate::tokenize::load_plain_tokenizer;
use crate::tokenizer_model::TokenizerModel;
use tokenizers::models::wordpiece::WordPiece;

/// A small vocabulary with continuation pieces, multibyte characters and shared prefixes; the
/// unknown token comes last so that ids and lookups are not trivially aligned.
const PIECES: &[&str] = &[
    "a", "b", "ab", "abc", "##a", "##b", "##c", "##bc", "##abc", "é", "##é", "éa", "中", "中文", "##文", "##中文", "x",
    "##x", "##xé", "#", "##", "###", "c", "[UNK]",
];

fn library(pieces: &[&str], longest: usize) -> WordPiece {
    WordPiece::builder()
        .vocab(WordPiece::read_bytes(pieces.join("\n").as_bytes()).unwrap())
        .max_input_chars_per_word(longest)
        .build()
        .unwrap()
}

fn compact(pieces: &[&str], longest: usize) -> CompactWordPiece {
    CompactWordPiece::new(pieces, "[UNK]".into(), "##".into(), longest).unwrap().unwrap()
}

/// Each token's id, value and offsets.
type Tokens = Vec<(u32, String, (usize, usize))>;

fn tokens(model: &impl Model, word: &str) -> Result<Tokens, String> {
    match model.tokenize(word) {
        Ok(tokens) => Ok(tokens.into_iter().map(|token| (token.id, token.value, token.offsets)).collect()),
        Err(error) => Err(error.to_string()),
    }
}

fn random_words(count: usize) -> Vec<String> {
    let alphabet = ['a', 'b', 'c', 'é', '中', '文', 'x', '#', 'ü', '𝄞'];
    let mut state = 2026u64;
    (0..count)
        .map(|length| {
            (0..length % 17)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    alphabet[(state >> 33) as usize % alphabet.len()]
                })
                .collect()
        })
        .collect()
}

#[test]
fn tokenizes_as_tokenizers_does_on_random_words() {
    // 12 characters at most: longer words are one unknown token.
    let (library, compact) = (library(PIECES, 12), compact(PIECES, 12));
    let mut pieces_seen = 0;
    for word in random_words(2000) {
        let want = tokens(&library, &word);
        assert_eq!(tokens(&compact, &word), want, "{word:?}");
        pieces_seen += want.unwrap().iter().filter(|token| token.1 != "[UNK]").count();
    }
    assert!(pieces_seen > 500, "the words must mostly be made of pieces, not unknown");
}

#[test]
fn without_the_unknown_token_an_unknown_word_is_the_same_error() {
    let pieces = &PIECES[..PIECES.len() - 1];
    let (library, compact) = (library(pieces, 12), compact(pieces, 12));
    for word in ["", "abc", "ab中文", "ü", "aaaaaaaaaaaaa"] {
        assert_eq!(tokens(&compact, word), tokens(&library, word), "{word:?}");
    }
    assert!(tokens(&compact, "ü").is_err());
}

#[test]
fn answers_vocabulary_questions_as_tokenizers_does() {
    let (library, compact) = (library(PIECES, 100), compact(PIECES, 100));
    assert_eq!(compact.get_vocab(), library.get_vocab());
    assert_eq!(compact.get_vocab_size(), library.get_vocab_size());
    for id in 0..PIECES.len() as u32 + 2 {
        assert_eq!(compact.id_to_token(id), library.id_to_token(id), "{id}");
    }
    for token in PIECES.iter().copied().chain(["", "abcd", "##", "##d", "[unk]"]) {
        assert_eq!(compact.token_to_id(token), library.token_to_id(token), "{token:?}");
    }
    assert!(CompactWordPiece::new(["a", "b", "a"], "[UNK]".into(), "##".into(), 100).unwrap().is_none());
}

/// Texts beyond the fixture: empty, characters
/// no vocabulary has, accents, CJK, tabs, special tokens written out.
const AWKWARD: &[&str] = &[
    "",
    " ",
    "𝄞",
    "a 𝄞 b 𝄞𝄞x",
    "naïve café résumé Ångström ÉCOLE straße Ærøskøbing",
    "e\u{301}clair a\u{300} la\u{308}",
    "中文分词测试，日本語のテキスト、한국어 텍스트",
    "tabs\tand\nnew\r\nlines\u{b}and\u{c}feeds",
    "emoji 🙂👍🏽 family 👨‍👩‍👧 flags 🇩🇪",
    "[CLS] [SEP] [UNK] [PAD] [MASK] x[MASK]y ##ing ## #",
    "unbelievably antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "Numbers 3.14159 1,000,000 2026-11-30 $5 50% #tag @user https://example.org/a?b=c",
];

/// Words of about 100 characters (the models' `max_input_chars_per_word`), on both sides.
fn long_words() -> Vec<String> {
    vec![
        "a".repeat(100),
        "a".repeat(101),
        "supercalifragilistic".repeat(6),
        format!("{} end", "é".repeat(101)),
        "ab".repeat(49) + "é",
        "中".repeat(150),
        // Characters that stay two bytes after BERT's normalisation: a limit in bytes would show.
        "дом".repeat(20),
        "д".repeat(100),
        "д".repeat(101),
        "αβγ".repeat(30),
    ]
}

#[test]
fn the_installed_word_piece_tokenizers_give_the_ids_and_offsets_of_tokenizers_own() {
    let dir = std::env::var_os("PG_CHUNK_MODEL_DIR")
        .expect("PG_CHUNK_MODEL_DIR names the installed models (scripts/test.sh sets it)");
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/parity.json")).unwrap(),
    )
    .unwrap();
    let mut texts: Vec<String> = serde_json::from_value(fixture["sentences"].clone()).unwrap();
    assert!(texts.len() >= 50);
    texts.extend(AWKWARD.iter().map(|text| text.to_string()));
    texts.extend(long_words());
    for model in ["all-minilm-l6-v2", "potion-base-8m"] {
        let file = std::path::Path::new(&dir).join(model).join("tokenizer.json");
        let ours = load_plain_tokenizer(&file).unwrap().0;
        assert!(matches!(ours.get_model(), TokenizerModel::WordPiece(_)), "{model}");
        let mut library = tokenizers::Tokenizer::from_file(&file).unwrap();
        library.with_padding(None).with_truncation(None).unwrap();
        for text in &texts {
            for special in [true, false] {
                let want = library.encode(text.as_str(), special).unwrap();
                let got = ours.encode(text.as_str(), special).unwrap();
                assert_eq!(
                    (got.get_ids(), got.get_offsets(), got.get_tokens()),
                    (want.get_ids(), want.get_offsets(), want.get_tokens()),
                    "{model}: {text:?}"
                );
            }
        }
        assert_eq!(ours.get_vocab(true), library.get_vocab(true), "{model}");
        assert_eq!(ours.get_vocab_size(true), library.get_vocab_size(true), "{model}");
        for id in (0..library.get_vocab_size(true) as u32 + 2).step_by(97) {
            assert_eq!(ours.id_to_token(id), library.id_to_token(id), "{model}: {id}");
        }
    }
}
