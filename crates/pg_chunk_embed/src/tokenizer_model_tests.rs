use super::*;

fn kind(json: &str) -> &'static str {
    match serde_json::from_str::<TokenizerModel>(json).unwrap() {
        TokenizerModel::Library(_) => "library",
        TokenizerModel::Unigram(_) => "unigram",
        TokenizerModel::WordPiece(_) => "wordpiece",
    }
}

#[test]
fn a_tokenizer_json_with_a_unigram_model_gets_the_compact_one_and_others_the_library_s() {
    let unigram = r#"{"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]}"#;
    assert!(matches!(serde_json::from_str::<TokenizerModel>(unigram).unwrap(), TokenizerModel::Unigram(_)));
    let fallback = r#"{"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]], "byte_fallback": true}"#;
    assert!(matches!(serde_json::from_str::<TokenizerModel>(fallback).unwrap(), TokenizerModel::Library(_)));
    let word_level = r#"{"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}"#;
    assert!(matches!(serde_json::from_str::<TokenizerModel>(word_level).unwrap(), TokenizerModel::Library(_)));
    assert!(serde_json::from_str::<TokenizerModel>(r#"{"type": "Unigram", "unk_id": 5, "vocab": []}"#).is_err());
}

#[test]
fn a_word_piece_model_is_compact_only_when_its_ids_are_0_to_n_1_each_once_and_its_pieces_distinct() {
    let fields = r###""unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100"###;
    let model = |vocab: &str| format!(r#"{{"type": "WordPiece", {fields}, "vocab": {vocab}}}"#);
    assert_eq!(kind(&model(r###"{"[UNK]": 0, "a": 1, "##b": 2}"###)), "wordpiece");
    assert_eq!(kind(&model(r###"{"##b": 2, "[UNK]": 0, "a": 1}"###)), "wordpiece");
    assert_eq!(kind(&model(r#"{}"#)), "wordpiece");
    // A gap, an id twice, a piece twice (a map keeps its last id): tokenizers' model, whose
    // get_vocab_size and id_to_token differ from the table's there.
    assert_eq!(kind(&model(r#"{"[UNK]": 0, "a": 2}"#)), "library");
    assert_eq!(kind(&model(r#"{"[UNK]": 0, "a": 0}"#)), "library");
    assert_eq!(kind(&model(r#"{"[UNK]": 0, "a": 1, "a": 2}"#)), "library");
    // Without a type, tokenizers guesses the kind from the fields.
    assert_eq!(kind(&format!(r#"{{{fields}, "vocab": {{"[UNK]": 0}}}}"#)), "library");
    assert!(serde_json::from_str::<TokenizerModel>(&format!(r#"{{"type": "WordPiece", {fields}}}"#)).is_err());
    assert!(serde_json::from_str::<TokenizerModel>(&model(r#"{"a": -1}"#)).is_err());
    assert!(serde_json::from_str::<TokenizerModel>(&model(r#"["a"]"#)).is_err());
}

#[test]
fn a_word_piece_model_reads_escaped_pieces_and_takes_the_builder_s_defaults_for_absent_fields() {
    let json = r###"{"vocab": {"[UNK]": 0, "caf\u00e9": 1, "\"q\"": 2, "##\\": 3}, "type": "WordPiece"}"###;
    let TokenizerModel::WordPiece(model) = serde_json::from_str::<TokenizerModel>(json).unwrap() else {
        panic!("compact expected");
    };
    assert_eq!(model.token_to_id("café"), Some(1));
    assert_eq!(model.token_to_id("\"q\""), Some(2));
    assert_eq!(model.unknown_token(), "[UNK]");
    let ids = |word: &str| model.tokenize(word).unwrap().into_iter().map(|token| token.id).collect::<Vec<_>>();
    assert_eq!(ids("café\\\\"), [1, 3, 3]);
    assert_eq!(ids(&"é".repeat(101)), [0]);
    let custom = r#"{"type": "WordPiece", "unk_token": "<?>", "continuing_subword_prefix": "~",
        "max_input_chars_per_word": 3, "vocab": {"<?>": 0, "a": 1, "~a": 2}}"#;
    let TokenizerModel::WordPiece(model) = serde_json::from_str::<TokenizerModel>(custom).unwrap() else {
        panic!("compact expected");
    };
    let ids = |word: &str| model.tokenize(word).unwrap().into_iter().map(|token| token.id).collect::<Vec<_>>();
    assert_eq!((ids("aaa"), ids("aaaa"), ids("ab")), (vec![1, 2, 2], vec![0], vec![0]));
}

#[test]
fn other_models_are_left_to_tokenizers_whatever_their_fields() {
    let bpe = r#"{"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
        "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "vocab": {"a": 0, "b": 1, "ab": 2},
        "merges": [["a", "b"]]}"#;
    let TokenizerModel::Library(model) = serde_json::from_str::<TokenizerModel>(bpe).unwrap() else {
        panic!("tokenizers' BPE expected");
    };
    assert_eq!(model.tokenize("ab").unwrap()[0].id, 2);
}
