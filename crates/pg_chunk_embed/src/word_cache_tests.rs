use super::*;
use crate::tokenize::load_plain_tokenizer;

fn tokenizer(model: &str) -> Tokenizer {
    let dir = std::env::var_os("PG_CHUNK_MODEL_DIR")
        .expect("PG_CHUNK_MODEL_DIR names the installed models (scripts/test.sh sets it)");
    load_plain_tokenizer(&std::path::Path::new(&dir).join(model).join("tokenizer.json")).unwrap().0
}

/// Texts where joining across whitespace could show: control and format characters, Unicode
/// spaces, combining marks right after a space, CJK, emoji, long words, added tokens.
const TEXTS: &[&str] = &[
    "The quick brown fox jumps over the lazy dog. The dog sleeps.",
    "Hello,world!  Tabs\there,\r\nCRLF and\nnew lines; (parentheses) [brackets] {braces}.",
    "naïve café résumé Ångström ÉCOLE straße",
    "e \u{301}clair a\u{300} la \u{308}",
    "North\u{85}east zero\u{200b}width non\u{a0}breaking ideographic\u{3000}space line\u{2028}separator",
    "control\u{1}chars\u{7f}here \u{feff}bom",
    "中文分词测试，日本語のテキスト、한국어 텍스트",
    "emoji 🙂👍🏽 family 👨‍👩‍👧 flags 🇩🇪",
    "supercalifragilisticexpialidocious-and-then-some-more-words-glued-together-with-hyphens-beyond-sixty-four-bytes",
    "tokens [MASK] and x[MASK]y and [CLS][SEP] [UNK] [PAD]",
    "Numbers 3.14159 1,000,000 2026-11-30 12:34 $5 50% #tag @user https://example.org/a?b=c",
    "العربية نص من اليمين إلى اليسار עברית",
    "",
    "   ",
];

#[test]
fn word_by_word_ids_equal_whole_text_ids() {
    for model in ["potion-base-8m", "all-minilm-l6-v2"] {
        let words = WordTokenizer::new(tokenizer(model));
        assert!(words.wordwise, "{model} has a BERT tokenizer");
        for round in 0..2 {
            // The second round answers from the cache.
            for text in TEXTS {
                let mut ids = Vec::new();
                words.for_each_id(text, |id| ids.push(id)).unwrap();
                let whole = words.encode(text).unwrap();
                assert_eq!(ids, whole, "{model}, round {round}: {text:?}");
                assert_eq!(words.count(text), whole.len());
            }
        }
    }
}

#[test]
fn sentencepiece_tokenizers_encode_whole_texts() {
    let words = WordTokenizer::new(tokenizer("multilingual-e5-small"));
    assert!(!words.wordwise, "Metaspace marks word starts: words cannot be encoded apart");
    let mut ids = Vec::new();
    words.for_each_id("query: how are you", |id| ids.push(id)).unwrap();
    assert_eq!(ids, words.encode("query: how are you").unwrap());
    assert!(words.cache.borrow().is_empty());
}
