use super::*;
use crate::curve::Embeddings;
use crate::lexical::LexicalEmbedder;
use crate::strategy::SplitReason;
use serde_json::{json, Value};

#[test]
fn each_filter_rule_drops_what_it_names_and_keeps_the_rest() {
    let table_of_words =
        "| Name | Description |\n|------|-------------|\n| foo | does the thing well enough for everyone |";
    let cjk = "周末我在家包饺子，先把面粉和水揉成光滑的面团。然后把馅料包进去。";
    let cases: &[(&str, Option<&str>)] = &[
        // separator: no letter or digit at all
        ("---", Some("separator")),
        ("***", Some("separator")),
        ("```", Some("separator")),
        ("===", Some("separator")),
        ("___", Some("separator")),
        ("* * *\n\n- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -", Some("separator")),
        ("-- see below --", Some("short")),
        ("--- 1 ---", Some("drawing")),
        // heading: every non-empty line is an ATX heading
        ("# Title", Some("heading")),
        (
            "## PostgreSQL indexes and the many uses they have in practice\n\n   ### Another heading line, long enough",
            Some("heading"),
        ),
        ("#", Some("separator")),
        ("# Heading\nA paragraph under the heading with enough meaningful words to keep it.", None),
        ("#hashtag is not a heading but a word in a sentence with enough meaningful words.", None),
        ("####### Seven hashes make no heading, so this line reads as ordinary prose text.", None),
        // drawing: box drawing, or ASCII frames with few letters
        ("┌──────────┐\n│ web      │\n└──────────┘", Some("drawing")),
        ("├── src\n│   ├── main.rs\n│   └── lib.rs\n└── Cargo.toml", Some("drawing")),
        ("+-----+      +------+\n| web |----->| db   |\n+-----+      +------+", Some("drawing")),
        (table_of_words, None),
        ("Bees build wax comb -- and store honey | for the long winter = cold.", None),
        // short: under 50 columns, a CJK character counting 2
        ("Short but real words here.", Some("short")),
        ("Alpha bravo charlie delta echo foxtrot golf hotel", Some("short")),
        ("Alpha bravo charlie delta echo foxtrot golf hotel.", None),
        (cjk, None),
        // few_words: under 5 distinct keywords
        ("It is what it is, and so it was, and so it will be, for all of us.", Some("few_words")),
        ("The alpha and the bravo and the charlie and the delta and so on it.", Some("few_words")),
        ("The alpha and the bravo and the charlie and the delta and the echo.", None),
        ("Bees build wax comb and store honey for the long winter.", None),
    ];
    for (text, want) in cases {
        assert_eq!(drop_reason(text).map(DropReason::as_str), *want, "{text:?}");
        assert_eq!(keep(text), want.is_none(), "{text:?}");
    }
    assert_eq!(meaningful_words(cjk), cjk.chars().filter(|c| is_ideograph(*c)).count());
}

/// Records each batch it is asked to embed.
struct Recording {
    batches: Vec<Vec<String>>,
}

impl Embedder for Recording {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        self.batches.push(texts.iter().map(|t| t.to_string()).collect());
        LexicalEmbedder::new().embed(texts)
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        Ok(())
    }
}

fn number(chunk: &Chunk, key: &str) -> f64 {
    chunk.metadata[key].as_f64().unwrap_or_else(|| panic!("{key}: {:?}", chunk.metadata.get(key)))
}

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[test]
fn metadata_on_a_tiny_document() {
    let doc = "The cat sat on the mat. The cat ate the fish. Volcanoes erupt.";
    let two = "The cat sat on the mat. The cat ate the fish.";
    let third = doc.find("Volcanoes").unwrap();
    let mut chunks = vec![
        Chunk::new(0, two.len(), SplitReason::Start, Some(0)),
        Chunk::new(third, doc.len(), SplitReason::Topic, Some(2)),
    ];
    let mut embedder = Recording { batches: vec![] };
    add_quality_metadata(doc, &mut chunks, &mut embedder).unwrap();
    // Only the chunk of two sentences needs vectors: one call with its two sentences.
    assert_eq!(embedder.batches, [["The cat sat on the mat.", "The cat ate the fish."]]);

    // {cat, sat, mat} and {cat, ate, fish}: one shared of five.
    assert_eq!(number(&chunks[0], "topic_coherence"), 0.2);
    // TF-IDF over the two sentences: "cat" weighs 1, the others 1 + ln 1.5, so
    // cos = 1 / (1 + 2 (1 + ln 1.5)²) ≈ 0.2020.
    let idf = 1.0 + 1.5f64.ln();
    assert_eq!(number(&chunks[0], "semantic_density"), round(1.0 / (1.0 + 2.0 * idf * idf)));
    let vectors = LexicalEmbedder::new().embed(&["The cat sat on the mat.", "The cat ate the fish."]).unwrap();
    assert_eq!(number(&chunks[0], "semantic_density"), round(1.0 - cosine_distance(vectors.row(0), vectors.row(1))));
    let entropy = char_entropy(two);
    assert_eq!(number(&chunks[0], "entropy"), round(entropy));
    let importance = 0.4 * (1.0 / (1.0 + 2.0 * idf * idf)) + 0.3 * 0.2 + 0.3 * entropy / ENTROPY_CEILING;
    assert_eq!(number(&chunks[0], "importance_score"), round(importance));

    // One sentence is coherent with itself.
    assert_eq!((number(&chunks[1], "topic_coherence"), number(&chunks[1], "semantic_density")), (1.0, 1.0));
    let entropy = char_entropy("Volcanoes erupt.");
    assert_eq!(number(&chunks[1], "importance_score"), round(0.7 + 0.3 * entropy / ENTROPY_CEILING));
}

#[test]
fn one_batch_for_the_document_each_sentence_once_and_none_when_not_needed() {
    // A parent and its child (hierarchical) share sentences: each is embedded once.
    let doc = "Alpha bravo. Charlie delta. Echo foxtrot.";
    let child_end = doc.find(" Echo").unwrap();
    let mut chunks = vec![
        Chunk::new(0, doc.len(), SplitReason::Start, Some(0)),
        Chunk::new(0, child_end, SplitReason::Start, Some(0)),
    ];
    let mut embedder = Recording { batches: vec![] };
    add_quality_metadata(doc, &mut chunks, &mut embedder).unwrap();
    assert_eq!(embedder.batches, [["Alpha bravo.", "Charlie delta.", "Echo foxtrot."]]);

    let mut single =
        vec![Chunk::new(0, 12, SplitReason::Start, Some(0)), Chunk::new(13, 27, SplitReason::Topic, Some(1))];
    let mut embedder = Recording { batches: vec![] };
    add_quality_metadata(doc, &mut single, &mut embedder).unwrap();
    assert!(embedder.batches.is_empty());
    assert_eq!(number(&single[1], "semantic_density"), 1.0);
}

/// Returns what it is told to, whatever it is asked.
struct Broken(Embeddings);

impl Embedder for Broken {
    fn embed(&mut self, _texts: &[&str]) -> Result<Embeddings, ChunkError> {
        Ok(self.0.clone())
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        Ok(())
    }
}

#[test]
fn degenerate_inputs_give_finite_numbers_or_an_error() {
    // Sentences without keywords or features: Jaccard 0, zero vectors at similarity 0.
    let doc = "... !!! ??? ...";
    let mut chunks = vec![Chunk::new(0, doc.len(), SplitReason::Start, Some(0))];
    add_quality_metadata(doc, &mut chunks, &mut LexicalEmbedder::new()).unwrap();
    for key in ["entropy", "topic_coherence", "semantic_density", "importance_score"] {
        assert!(number(&chunks[0], key).is_finite(), "{key}");
    }
    // An embedder that returns NaN: similarity counts 0, nothing is NaN.
    let doc = "Alpha bravo. Charlie delta.";
    let mut chunks = vec![Chunk::new(0, doc.len(), SplitReason::Start, Some(0))];
    add_quality_metadata(doc, &mut chunks, &mut Broken(Embeddings::new(2, vec![f32::NAN, 1.0, 1.0, 0.0]))).unwrap();
    assert_eq!(number(&chunks[0], "semantic_density"), 0.0);
    // One that returns too few vectors is an error, not a panic.
    let err = add_quality_metadata(doc, &mut chunks, &mut Broken(Embeddings::new(2, vec![1.0, 0.0]))).unwrap_err();
    assert!(matches!(err, ChunkError::Embedding(_)), "{err:?}");
}

use crate::strategy::test_support::SAMPLE;

fn chunk(doc: &str, cfg: Value) -> Vec<Chunk> {
    crate::strategy::test_support::chunk_checked(doc, &cfg).1
}

#[test]
fn every_strategy_gets_metadata_in_range_on_real_text() {
    for strategy in ["semantic", "fixed", "recursive", "topic_coherence", "information_density"] {
        let chunks = chunk(SAMPLE, json!({"strategy": strategy, "max_size": 400, "metadata": true}));
        assert!(chunks.len() > 3, "{strategy}");
        for c in &chunks {
            let get = |key: &str| number(c, key);
            assert!((0.0..=ENTROPY_CEILING).contains(&get("entropy")), "{strategy}: {:?}", c.metadata);
            assert!(
                (0.0..=1.0).contains(&get("topic_coherence")) && (-1.0..=1.0).contains(&get("semantic_density")),
                "{strategy}: {:?}",
                c.metadata
            );
            assert!((0.0..=1.0).contains(&get("importance_score")), "{strategy}: {:?}", c.metadata);
            for key in ["entropy", "topic_coherence", "semantic_density", "importance_score"] {
                assert_eq!(get(key), round(get(key)), "{key} has 4 decimals");
            }
        }
    }
    assert!(
        chunk(SAMPLE, json!({"max_size": 400})).iter().all(|c| !c.metadata.contains_key("entropy")),
        "metadata is opt-in"
    );
}

#[test]
fn filters_drop_separators_and_keep_the_prose() {
    let prose = "Honeybees live in colonies of tens of thousands of workers and a single queen.";
    let doc = format!("{prose}\n\n---\n\n# Notes\n\n{prose}\n\n┌────────┐\n│  box   │\n└────────┘\n\nToo short.");
    let cfg = json!({"strategy": "recursive", "max_size": 80, "min_size": 0, "overlap": 0});
    let all = chunk(&doc, cfg.clone());
    // Recursive packs "---" with the heading, and the box with the short line.
    let reasons: Vec<Option<&str>> = all.iter().map(|c| drop_reason(c.text(&doc)).map(DropReason::as_str)).collect();
    assert_eq!(
        reasons,
        [None, Some("short"), None, Some("drawing")],
        "{:#?}",
        all.iter().map(|c| c.text(&doc)).collect::<Vec<_>>()
    );
    let mut filtered_cfg = cfg;
    filtered_cfg["filters"] = json!(true);
    let kept = chunk(&doc, filtered_cfg);
    assert_eq!(kept.iter().map(|c| c.text(&doc)).collect::<Vec<_>>(), [prose, prose]);
    // Metadata is computed before filtering, on the chunks that remain the same.
    let with_both = chunk(
        &doc,
        json!({"strategy": "recursive", "max_size": 80, "min_size": 0, "overlap": 0, "filters": true, "metadata": true}),
    );
    assert_eq!(with_both.len(), 2);
    assert!(with_both.iter().all(|c| c.metadata.contains_key("importance_score")));
}
