//! The hostile cfgs, and the functions that take a cfg crossed with each of them.

use super::{doc, Check, Expect, Matrix, BAD_CFG, MISFIT, OK, ONE_ROW, TOO_BIG, UNKNOWN};
use pg_chunk_client_tests::sample_document;
use std::rc::Rc;

/// (label, cfg as JSON text, expected from knowledge.chunk, expected from the semantic-only
/// functions semantic_chunk, chunk_explain and chunk_plot). Run on the sample document with the
/// lexical model as pg_chunk.default_model.
fn cfgs() -> Vec<(String, String, Expect, Expect)> {
    let same = |label: &str, cfg: &str, expect: Expect| (label.to_string(), cfg.to_string(), expect, expect);
    let not_semantic = |label: &str, cfg: &str| (label.to_string(), cfg.to_string(), OK, BAD_CFG);
    let mut cfgs = vec![
        // Valid, if odd.
        same("empty object", "{}", OK),
        same(
            "every key null",
            r#"{"strategy": null, "method": null, "penalty": null, "mid_paragraph_penalty": null, "threshold": null, "smoothing": null, "min_size": null, "target_size": null, "max_size": null, "overlap": null, "model": null, "fallback": null, "inline_threshold": null, "max_document_size": null, "language": null}"#,
            OK,
        ),
        same("strategy null", r#"{"strategy": null}"#, OK),
        not_semantic("strategy fixed", r#"{"strategy": "fixed"}"#),
        not_semantic("strategy recursive", r#"{"strategy": "recursive"}"#),
        not_semantic("fixed, max_size 1, no overlap", r#"{"strategy": "fixed", "max_size": 1, "overlap": 0}"#),
        same("max_size 1", r#"{"max_size": 1}"#, OK),
        same("max_size i32::MAX", r#"{"max_size": 2147483647}"#, OK),
        same("max_size 1 token", r#"{"max_size": "1 tokens"}"#, OK),
        same("max_size i32::MAX tokens", r#"{"max_size": "2147483647 tokens"}"#, OK),
        same("max_size 1 word", r#"{"max_size": "1 words"}"#, OK),
        same("max_size object, unit null", r#"{"max_size": {"value": 10, "unit": null}}"#, OK),
        same("duplicate key, last wins", r#"{"max_size": 5, "max_size": 500}"#, OK),
        same("min_size 0", r#"{"min_size": 0, "max_size": 1}"#, OK),
        same("penalty 0", r#"{"penalty": 0}"#, OK),
        same("penalty 100", r#"{"penalty": 100}"#, OK),
        same("penalty -0.0", r#"{"penalty": -0.0}"#, OK),
        same("penalty 1e-300", r#"{"penalty": 1e-300}"#, OK),
        same("penalty 1e-400 (underflows to 0)", r#"{"penalty": 1e-400}"#, OK),
        same("mid_paragraph_penalty 0", r#"{"mid_paragraph_penalty": 0}"#, OK),
        same("mid_paragraph_penalty 100", r#"{"mid_paragraph_penalty": 100, "penalty": 0}"#, OK),
        same("smoothing 0", r#"{"smoothing": 0}"#, OK),
        same("smoothing 50", r#"{"smoothing": 50, "method": "threshold"}"#, OK),
        same("threshold by name", r#"{"threshold": "gradient"}"#, OK),
        same("threshold value omitted", r#"{"threshold": {"type": "percentile"}}"#, OK),
        same("threshold value null", r#"{"threshold": {"type": "stddev", "value": null}}"#, OK),
        same("percentile 0", r#"{"threshold": {"type": "percentile", "value": 0}}"#, OK),
        same("percentile 100", r#"{"threshold": {"type": "percentile", "value": 100}}"#, OK),
        same("similarity -1", r#"{"threshold": {"type": "similarity", "value": -1}}"#, OK),
        same("similarity 1", r#"{"threshold": {"type": "similarity", "value": 1}}"#, OK),
        same("stddev -10", r#"{"threshold": {"type": "stddev", "value": -10}}"#, OK),
        same("interquartile 10", r#"{"threshold": {"type": "interquartile", "value": 10}}"#, OK),
        same("overlap 1000 sentences", r#"{"overlap": "1000 sentences"}"#, OK),
        same("overlap just below max_size", r#"{"overlap": 1999}"#, OK),
        same("inline_threshold i32::MAX", r#"{"inline_threshold": 2147483647}"#, OK),
        same("inline_threshold 0", r#"{"inline_threshold": 0}"#, OK),
        same("max_document_size 1 GB", r#"{"max_document_size": 1073741824}"#, OK),
        same("unknown language kept", r#"{"language": "klingon"}"#, OK),
        same("fallback fixed", r#"{"fallback": "fixed"}"#, OK),
        same("fallback null", r#"{"fallback": null}"#, OK),
        // Not an object.
        same("array", "[]", BAD_CFG),
        same("array of object", "[{}]", BAD_CFG),
        same("string", r#""semantic""#, BAD_CFG),
        same("number", "1", BAD_CFG),
        same("boolean", "true", BAD_CFG),
        same("JSON null", "null", BAD_CFG),
        // Unknown keys.
        same("unknown key", r#"{"bogus": 1}"#, BAD_CFG),
        same("key in capitals", r#"{"MAX_SIZE": 5}"#, BAD_CFG),
        same("empty key", r#"{"": 1}"#, BAD_CFG),
        same("key with trailing space", r#"{"max_size ": 5}"#, BAD_CFG),
        same("nested unknown key", r#"{"a": {"b": {"c": {}}}}"#, BAD_CFG),
        same("unknown key in threshold", r#"{"threshold": {"type": "percentile", "value": 92, "extra": 1}}"#, BAD_CFG),
        same("unknown key in size", r#"{"max_size": {"value": 10, "units": "words"}}"#, BAD_CFG),
        // Wrong types.
        same("strategy number", r#"{"strategy": 1}"#, BAD_CFG),
        same("strategy array", r#"{"strategy": ["fixed"]}"#, BAD_CFG),
        same("strategy object", r#"{"strategy": {"name": "fixed"}}"#, BAD_CFG),
        same("strategy in capitals", r#"{"strategy": "FIXED"}"#, BAD_CFG),
        same("strategy empty", r#"{"strategy": ""}"#, BAD_CFG),
        same("method unknown", r#"{"method": "best"}"#, BAD_CFG),
        same("method number", r#"{"method": 1}"#, BAD_CFG),
        same("penalty string", r#"{"penalty": "1.3"}"#, BAD_CFG),
        same("mid_paragraph_penalty string", r#"{"mid_paragraph_penalty": "0.5"}"#, BAD_CFG),
        same("mid_paragraph_penalty negative", r#"{"mid_paragraph_penalty": -0.5}"#, BAD_CFG),
        same(
            "mid_paragraph_penalty with threshold",
            r#"{"mid_paragraph_penalty": 0.5, "threshold": "gradient"}"#,
            BAD_CFG,
        ),
        same("penalty boolean", r#"{"penalty": true}"#, BAD_CFG),
        same("penalty array", r#"{"penalty": [1]}"#, BAD_CFG),
        same("smoothing fraction", r#"{"smoothing": 1.5}"#, BAD_CFG),
        same("smoothing string", r#"{"smoothing": "1"}"#, BAD_CFG),
        same("max_size boolean", r#"{"max_size": true}"#, BAD_CFG),
        same("max_size array", r#"{"max_size": []}"#, BAD_CFG),
        same("max_size pair array", r#"{"max_size": [300, "words"]}"#, BAD_CFG),
        same("max_size fraction", r#"{"max_size": 1.5}"#, BAD_CFG),
        same("max_size words in letters", r#"{"max_size": "ten words"}"#, BAD_CFG),
        same("max_size unknown unit", r#"{"max_size": "10 bytes"}"#, BAD_CFG),
        same("max_size three parts", r#"{"max_size": "10 words extra"}"#, BAD_CFG),
        same("max_size blank string", r#"{"max_size": "  "}"#, BAD_CFG),
        same("max_size object unknown unit", r#"{"max_size": {"value": 10, "unit": "pages"}}"#, BAD_CFG),
        same("max_size object without value", r#"{"max_size": {"unit": "words"}}"#, BAD_CFG),
        same("max_size object value null", r#"{"max_size": {"value": null}}"#, BAD_CFG),
        same("max_size object value string", r#"{"max_size": {"value": "10"}}"#, BAD_CFG),
        same("max_size object unit number", r#"{"max_size": {"value": 10, "unit": 5}}"#, BAD_CFG),
        same("max_size object nested", r#"{"max_size": {"value": {"value": 1}}}"#, BAD_CFG),
        same("overlap array", r#"{"overlap": ["1", "sentences"]}"#, BAD_CFG),
        same("overlap unknown unit", r#"{"overlap": "1 paragraphs"}"#, BAD_CFG),
        same("threshold array", r#"{"threshold": []}"#, BAD_CFG),
        same("threshold array of object", r#"{"threshold": [{"type": "percentile"}]}"#, BAD_CFG),
        same("threshold number", r#"{"threshold": 92}"#, BAD_CFG),
        same("threshold type null", r#"{"threshold": {"type": null}}"#, BAD_CFG),
        same("threshold type unknown", r#"{"threshold": {"type": "median"}}"#, BAD_CFG),
        same("threshold name in capitals", r#"{"threshold": "PERCENTILE"}"#, BAD_CFG),
        same("fallback unknown", r#"{"fallback": "none"}"#, BAD_CFG),
        same("fallback boolean", r#"{"fallback": true}"#, BAD_CFG),
        same("model number", r#"{"model": 5}"#, BAD_CFG),
        same("model array", r#"{"model": ["lexical"]}"#, BAD_CFG),
        same("language number", r#"{"language": 5}"#, BAD_CFG),
        same("language empty", r#"{"language": ""}"#, BAD_CFG),
        same("language array", r#"{"language": []}"#, BAD_CFG),
        // Negative, zero and huge.
        same("max_size -1", r#"{"max_size": -1}"#, BAD_CFG),
        same("max_size 0", r#"{"max_size": 0}"#, BAD_CFG),
        same("max_size i32::MAX + 1", r#"{"max_size": 2147483648}"#, BAD_CFG),
        same("max_size 2^64", r#"{"max_size": 18446744073709551616}"#, BAD_CFG),
        same("max_size 1e20", r#"{"max_size": 1e20}"#, BAD_CFG),
        same("max_size huge string", r#"{"max_size": "99999999999999999999999 chars"}"#, BAD_CFG),
        same("max_size negative string", r#"{"max_size": "-5 words"}"#, BAD_CFG),
        same("min_size -1", r#"{"min_size": -1}"#, BAD_CFG),
        same("target_size 0", r#"{"target_size": 0}"#, BAD_CFG),
        same("overlap -1", r#"{"overlap": -1}"#, BAD_CFG),
        same("inline_threshold -1", r#"{"inline_threshold": -1}"#, BAD_CFG),
        same("inline_threshold i32::MAX + 1", r#"{"inline_threshold": 2147483648}"#, BAD_CFG),
        same("max_document_size -1", r#"{"max_document_size": -1}"#, BAD_CFG),
        same("max_document_size 0", r#"{"max_document_size": 0}"#, BAD_CFG),
        same("max_document_size 1 GB + 1", r#"{"max_document_size": 1073741825}"#, BAD_CFG),
        same("smoothing -1", r#"{"smoothing": -1}"#, BAD_CFG),
        same("smoothing 51", r#"{"smoothing": 51}"#, BAD_CFG),
        same("smoothing i64::MAX", r#"{"smoothing": 9223372036854775807}"#, BAD_CFG),
        same("penalty -0.001", r#"{"penalty": -0.001}"#, BAD_CFG),
        same("penalty 100.0001", r#"{"penalty": 100.0001}"#, BAD_CFG),
        same("penalty 1e308", r#"{"penalty": 1e308}"#, BAD_CFG),
        same("percentile 101", r#"{"threshold": {"type": "percentile", "value": 101}}"#, BAD_CFG),
        same("similarity 1.5", r#"{"threshold": {"type": "similarity", "value": 1.5}}"#, BAD_CFG),
        // NaN and infinity, as strings and as numbers beyond f64.
        same("penalty \"NaN\"", r#"{"penalty": "NaN"}"#, BAD_CFG),
        same("penalty \"Infinity\"", r#"{"penalty": "Infinity"}"#, BAD_CFG),
        same("penalty \"-Infinity\"", r#"{"penalty": "-Infinity"}"#, BAD_CFG),
        same("max_size \"NaN\"", r#"{"max_size": "NaN"}"#, BAD_CFG),
        same("similarity \"NaN\"", r#"{"threshold": {"type": "similarity", "value": "NaN"}}"#, BAD_CFG),
        same("stddev \"inf\"", r#"{"threshold": {"type": "stddev", "value": "inf"}}"#, BAD_CFG),
        same("penalty 1e400", r#"{"penalty": 1e400}"#, BAD_CFG),
        same("penalty -1e400", r#"{"penalty": -1e400}"#, BAD_CFG),
        same("max_size 1e400", r#"{"max_size": 1e400}"#, BAD_CFG),
        same("percentile 1e400", r#"{"threshold": {"type": "percentile", "value": 1e400}}"#, BAD_CFG),
        same("unknown key 1e400", r#"{"bogus": 1e400}"#, BAD_CFG),
        // Contradictions.
        same("min_size above max_size", r#"{"min_size": 100, "max_size": 10}"#, BAD_CFG),
        same("target_size above max_size", r#"{"target_size": 100, "max_size": 10}"#, BAD_CFG),
        same("min_size above target_size", r#"{"min_size": 50, "target_size": 40, "max_size": 100}"#, BAD_CFG),
        same("tokens min above tokens max", r#"{"max_size": "10 tokens", "min_size": "20 tokens"}"#, BAD_CFG),
        same("optimal with threshold", r#"{"method": "optimal", "threshold": "percentile"}"#, BAD_CFG),
        same("threshold with penalty", r#"{"method": "threshold", "penalty": 1}"#, BAD_CFG),
        same("fixed with sentence overlap", r#"{"strategy": "fixed", "overlap": "1 sentences"}"#, BAD_CFG),
        same("recursive with sentence overlap", r#"{"strategy": "recursive", "overlap": "2 sentences"}"#, BAD_CFG),
        same("fixed overlap = max_size", r#"{"strategy": "fixed", "overlap": 350}"#, BAD_CFG),
        same("fixed max_size 1 with default overlap", r#"{"strategy": "fixed", "max_size": 1}"#, BAD_CFG),
        same("semantic overlap = max_size", r#"{"overlap": 2000}"#, BAD_CFG),
        // Models.
        same("unknown model", r#"{"model": "nope"}"#, UNKNOWN),
        same(
            "unknown model with lexical fallback",
            r#"{"model": "nope", "fallback": "lexical"}"#,
            Expect::OneOf(&["42704", "00000"]),
        ),
        same("model empty", r#"{"model": ""}"#, BAD_CFG),
        same("model blank", r#"{"model": "   "}"#, BAD_CFG),
        same("model lexical with a space", r#"{"model": "lexical "}"#, UNKNOWN),
        same("model registered with the wrong dimension", r#"{"model": "potion-384"}"#, MISFIT),
        same("wrong dimension, lexical fallback", r#"{"model": "potion-384", "fallback": "lexical"}"#, OK),
        same("wrong dimension, fixed fallback", r#"{"model": "potion-384", "fallback": "fixed"}"#, OK),
        same("model file missing", r#"{"model": "missing-file"}"#, Expect::Fails("58P01")),
        same("model file missing, lexical fallback", r#"{"model": "missing-file", "fallback": "lexical"}"#, OK),
        same("tokenizer of another model", r#"{"model": "tok-swapped"}"#, MISFIT),
        // Limits.
        same("max_document_size 1", r#"{"max_document_size": 1}"#, TOO_BIG),
    ];
    // Deep nesting: a depth serde_json takes, depths it refuses (128 and more), and one that
    // PostgreSQL's own jsonb parser may refuse.
    for depth in [100usize, 200, 1_000, 10_000] {
        let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        cfgs.push(same(&format!("max_size nested {depth} deep"), &format!(r#"{{"max_size": {nested}}}"#), BAD_CFG));
        cfgs.push(same(&format!("array {depth} deep"), &nested, BAD_CFG));
        let objects = format!("{}1{}", r#"{"a": "#.repeat(depth), "}".repeat(depth));
        cfgs.push(same(&format!("unknown key, objects {depth} deep"), &objects, BAD_CFG));
    }
    let very_deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    cfgs.push(same("array 100000 deep", &very_deep, Expect::OneOf(&["22023", "54001"])));
    // Not JSON at all: PostgreSQL's jsonb input refuses it (22P02), or its \u0000 (22P05).
    cfgs.push(same("not JSON", "{max_size: 5}", Expect::Fails("22P02")));
    cfgs.push(same("truncated JSON", r#"{"max_size":"#, Expect::Fails("22P02")));
    cfgs.push(same("NUL escape in a key", r#"{"\u0000": 1}"#, Expect::Fails("22P05")));
    cfgs
}

/// The functions that take a cfg, crossed with every cfg, on the sample document.
pub(super) fn cfgs_by_functions(m: &mut Matrix) {
    let sample = doc(&sample_document());
    for (label, cfg, chunk, semantic) in cfgs() {
        let params = vec![sample.clone(), Some(Rc::from(cfg.as_str()))];
        m.add(format!("chunk × cfg {label}"), "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, $2::text::jsonb) ORDER BY chunk_index", params.clone(), Check::Spans, chunk);
        m.add(format!("semantic_chunk × cfg {label}"), "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.semantic_chunk($1::text, $2::text::jsonb) ORDER BY chunk_index", params.clone(), Check::Spans, semantic);
        m.add(format!("chunk_explain × cfg {label}"), "SELECT sentence_index, char_offset, char_length, distance, smoothed_distance, threshold, score FROM knowledge.chunk_explain($1::text, $2::text::jsonb) ORDER BY sentence_index", params.clone(), Check::Explain, semantic);
        let plot = if matches!(semantic, Expect::Ok(_)) { ONE_ROW } else { semantic };
        m.add(
            format!("chunk_plot × cfg {label}"),
            "SELECT knowledge.chunk_plot($1::text, $2::text::jsonb)",
            params.clone(),
            Check::Svg,
            plot,
        );
        // A chunk config with this cfg rechunks the store's documents with it at once.
        m.add(
            format!("chunk_configs insert × cfg {label}"),
            "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('cfg-case', $1::text::jsonb, 'lexical')",
            vec![Some(Rc::from(cfg.as_str()))],
            Check::StoreExact,
            chunk,
        )
        .rolled_back(&[]);
    }
}
