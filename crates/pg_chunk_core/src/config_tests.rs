use super::*;
use serde_json::json;

fn parse(v: Value) -> Result<ChunkConfig, ChunkError> {
    ChunkConfig::parse(&v)
}

/// The key an error names, to check that each bad input blames the right key.
fn blamed_key(v: Value) -> String {
    match parse(v.clone()) {
        Err(ChunkError::InvalidConfig { key, .. }) => key,
        other => panic!("{v} should be rejected, got {other:?}"),
    }
}

#[test]
fn defaults_are_semantic_optimal_with_char_sizes() {
    let cfg = parse(json!({})).unwrap();
    assert_eq!(cfg.strategy, Strategy::Semantic);
    assert_eq!(
        cfg.boundaries,
        Boundaries::Optimal { penalty: DEFAULT_PENALTY, mid_paragraph_penalty: DEFAULT_MID_PARAGRAPH_PENALTY }
    );
    assert_eq!(cfg.smoothing, 1);
    assert_eq!((cfg.min_size, cfg.target_size, cfg.max_size), (Size::chars(200), Size::chars(1000), Size::chars(2000)));
    assert_eq!(cfg.overlap, Overlap::None);
    assert_eq!(cfg.max_document_size, 10 * 1024 * 1024);
    assert_eq!(cfg.inline_threshold, 3000);
    assert_eq!(cfg, ChunkConfig::default());
}

#[test]
fn strategy_defaults_follow_the_design() {
    let fixed = parse(json!({"strategy": "fixed"})).unwrap();
    assert_eq!((fixed.max_size, fixed.overlap), (Size::chars(350), Overlap::Chars(50)));
    let recursive = parse(json!({"strategy": "recursive"})).unwrap();
    assert_eq!(
        (recursive.min_size, recursive.max_size, recursive.overlap),
        (Size::chars(500), Size::chars(1500), Overlap::Chars(100))
    );
}

#[test]
fn sizes_accept_numbers_strings_and_objects() {
    let words = Size { value: 300, unit: SizeUnit::Words };
    for v in [json!("300 words"), json!({"value": 300, "unit": "words"})] {
        assert_eq!(parse(json!({ "max_size": v })).unwrap().max_size, words);
    }
    assert_eq!(parse(json!({"max_size": 800})).unwrap().max_size, Size::chars(800));
    let tokens = parse(json!({"max_size": "256 tokens"})).unwrap();
    assert_eq!(tokens.max_size.unit, SizeUnit::Tokens);
    // Unset sizes follow an explicit max_size's unit and scale.
    assert_eq!(
        (tokens.min_size, tokens.target_size),
        (Size { value: 25, unit: SizeUnit::Tokens }, Size { value: 128, unit: SizeUnit::Tokens })
    );
}

#[test]
fn thresholds_parse_with_and_without_values() {
    let cases = [
        (json!({"type": "percentile", "value": 95}), Threshold::Percentile(95.0)),
        (json!({"type": "similarity", "value": 0.75}), Threshold::Similarity(0.75)),
        (json!("stddev"), Threshold::StdDev(3.0)),
        (json!({"type": "interquartile"}), Threshold::Interquartile(1.5)),
        (json!({"type": "gradient", "value": 90.5}), Threshold::Gradient(90.5)),
    ];
    for (v, want) in cases {
        assert_eq!(parse(json!({ "threshold": v })).unwrap().boundaries, Boundaries::Threshold(want));
    }
}

#[test]
fn method_picks_optimal_segmentation_or_a_threshold() {
    let percentile_92 = Boundaries::Threshold(Threshold::Percentile(92.0));
    assert_eq!(parse(json!({"method": "threshold"})).unwrap().boundaries, percentile_92);
    assert_eq!(
        parse(json!({"method": "optimal", "penalty": 2})).unwrap().boundaries,
        Boundaries::Optimal { penalty: 2.0, mid_paragraph_penalty: DEFAULT_MID_PARAGRAPH_PENALTY }
    );
    assert_eq!(
        parse(json!({"penalty": 0.5})).unwrap().boundaries,
        Boundaries::Optimal { penalty: 0.5, mid_paragraph_penalty: DEFAULT_MID_PARAGRAPH_PENALTY }
    );
    assert_eq!(
        parse(json!({"mid_paragraph_penalty": 0.8})).unwrap().boundaries,
        Boundaries::Optimal { penalty: DEFAULT_PENALTY, mid_paragraph_penalty: 0.8 }
    );
    // A threshold alone means the threshold method, as before optimal segmentation existed.
    let stddev = json!({"threshold": {"type": "stddev", "value": 2}});
    assert_eq!(parse(stddev).unwrap().boundaries, Boundaries::Threshold(Threshold::StdDev(2.0)));
}

#[test]
fn overlap_takes_sentences_or_chars() {
    assert_eq!(parse(json!({"overlap": "2 sentences"})).unwrap().overlap, Overlap::Sentences(2));
    assert_eq!(parse(json!({"overlap": 120})).unwrap().overlap, Overlap::Chars(120));
    assert_eq!(parse(json!({"overlap": 0})).unwrap().overlap, Overlap::None);
}

#[test]
fn fallback_defaults_to_error() {
    assert_eq!(parse(json!({})).unwrap().fallback, Fallback::Error);
    assert_eq!(parse(json!({"fallback": "lexical"})).unwrap().fallback, Fallback::Lexical);
    assert_eq!(parse(json!({"fallback": "fixed"})).unwrap().fallback, Fallback::Fixed);
}

#[test]
fn null_means_unset() {
    assert_eq!(parse(json!({"max_size": null, "model": null})).unwrap(), ChunkConfig::default());
}

#[test]
fn each_bad_input_names_its_key() {
    let cases = [
        (json!([]), "cfg"),
        (json!("semantic"), "cfg"),
        (json!({"colour": "blue"}), "colour"),
        (json!({"strategy": "magic"}), "strategy"),
        (json!({"strategy": 3}), "strategy"),
        (json!({"threshold": 92}), "threshold"),
        (json!({"threshold": {"type": "median"}}), "threshold.type"),
        (json!({"threshold": {"type": "percentile", "value": 101}}), "threshold.value"),
        (json!({"threshold": {"type": "percentile", "value": "high"}}), "threshold.value"),
        (json!({"threshold": {"type": "similarity", "value": 2}}), "threshold.value"),
        (json!({"threshold": {"type": "percentile", "cut": 1}}), "threshold.cut"),
        (json!({"method": "valleys"}), "method"),
        (json!({"method": 1}), "method"),
        (json!({"method": "optimal", "threshold": "percentile"}), "threshold"),
        (json!({"method": "threshold", "penalty": 1}), "penalty"),
        (json!({"threshold": "percentile", "penalty": 1}), "penalty"),
        (json!({"penalty": -1}), "penalty"),
        (json!({"penalty": "high"}), "penalty"),
        (json!({"mid_paragraph_penalty": -0.5}), "mid_paragraph_penalty"),
        (json!({"mid_paragraph_penalty": "some"}), "mid_paragraph_penalty"),
        (json!({"mid_paragraph_penalty": 101}), "mid_paragraph_penalty"),
        (json!({"method": "threshold", "mid_paragraph_penalty": 0.5}), "mid_paragraph_penalty"),
        (json!({"smoothing": -1}), "smoothing"),
        (json!({"smoothing": 1.5}), "smoothing"),
        (json!({"smoothing": 51}), "smoothing"),
        (json!({"max_size": 0}), "max_size"),
        (json!({"max_size": -5}), "max_size"),
        (json!({"max_size": "lots"}), "max_size"),
        (json!({"max_size": "10 lines"}), "max_size"),
        (json!({"max_size": "10 chars extra"}), "max_size"),
        (json!({"max_size": 3_000_000_000u64}), "max_size"),
        (json!({"max_size": true}), "max_size"),
        (json!({"max_size": {"value": 5, "size": 1}}), "max_size.size"),
        (json!({"min_size": 500, "max_size": 100}), "min_size"),
        (json!({"target_size": 900, "max_size": 500}), "target_size"),
        (json!({"min_size": 600, "target_size": 500}), "min_size"),
        (json!({"overlap": "3 pages"}), "overlap"),
        (json!({"overlap": 2000}), "overlap"),
        (json!({"strategy": "fixed", "overlap": "1 sentences"}), "overlap"),
        (json!({"model": ""}), "model"),
        (json!({"model": 7}), "model"),
        (json!({"inline_threshold": -1}), "inline_threshold"),
        (json!({"max_document_size": 0}), "max_document_size"),
        (json!({"max_document_size": 2_000_000_000u64}), "max_document_size"),
        (json!({"language": ["en"]}), "language"),
        (json!({"fallback": "retry"}), "fallback"),
        (json!({"fallback": true}), "fallback"),
    ];
    for (v, key) in cases {
        assert_eq!(blamed_key(v.clone()), key, "{v}");
    }
}

#[test]
fn the_message_quotes_key_and_value() {
    let err = parse(json!({"max_size": -5})).unwrap_err().to_string();
    assert!(err.contains("max_size") && err.contains("-5"), "{err}");
}

#[test]
fn an_unset_max_size_becomes_the_model_window() {
    let tokens = |value| Size { value, unit: SizeUnit::Tokens };
    let semantic = parse(json!({})).unwrap().for_model_window(254).unwrap();
    assert_eq!((semantic.min_size, semantic.target_size, semantic.max_size), (tokens(25), tokens(127), tokens(254)));
    let recursive = parse(json!({"strategy": "recursive"})).unwrap().for_model_window(254).unwrap();
    assert_eq!((recursive.min_size, recursive.target_size, recursive.max_size), (tokens(84), tokens(254), tokens(254)));
    // Explicit sizes stay as they are, and fixed keeps its 350 characters.
    let explicit = parse(json!({"max_size": 2000})).unwrap();
    assert_eq!(explicit.for_model_window(254).unwrap(), explicit);
    let fixed = parse(json!({"strategy": "fixed"})).unwrap();
    assert_eq!(fixed.for_model_window(254).unwrap(), fixed);
    // An explicit min or target in another unit is kept; in tokens, it must fit the window.
    let words = parse(json!({"min_size": "20 words"})).unwrap().for_model_window(254).unwrap();
    assert_eq!((words.min_size, words.max_size), (Size { value: 20, unit: SizeUnit::Words }, tokens(254)));
    match parse(json!({"target_size": "300 tokens"})).unwrap().for_model_window(254) {
        Err(ChunkError::InvalidConfig { key, reason, .. }) => {
            assert_eq!(key, "target_size");
            assert!(reason.contains("model's window"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}
