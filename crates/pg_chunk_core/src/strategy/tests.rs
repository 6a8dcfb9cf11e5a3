use super::test_support::{chunk_checked, texts};
use super::*;
use crate::curve::Embeddings;
use crate::explain::explain_semantic;
use crate::lexical::{lexical_embeddings, LexicalEmbedder};
use crate::sentences::{split_sentences, INTERRUPT_EVERY_BYTES};
use crate::size::{measure, EstimatedTokens, SizeUnit};
use proptest::prelude::{prop, prop_assert_eq, prop_oneof, proptest, ProptestConfig};
use proptest::strategy::Strategy as _;
use serde_json::{json, Value};
use std::cell::Cell;

fn chunk(doc: &str, cfg: Value) -> Vec<Chunk> {
    chunk_checked(doc, &cfg).1
}

fn check_invariants(doc: &str, cfg: &ChunkConfig, chunks: &[Chunk]) {
    if let Err(broken) = crate::invariants::check_chunks(doc, cfg, chunks, &EstimatedTokens) {
        panic!("{broken}");
    }
}

/// Three topics of six sentences each, with their own vocabulary. The configurations that
/// expect exact cuts use `smoothing: 0`: ±1 smoothing blurs a boundary by one sentence.
fn three_topics() -> String {
    let topics = [
        [
            "The cat and the kitten sleep.",
            "A cat and a kitten purr softly.",
            "Every kitten follows the cat.",
            "The cat feeds the kitten milk.",
            "A kitten and a cat play with yarn.",
            "The old cat watches the kitten.",
        ],
        [
            "The Rust compiler checks borrows.",
            "Rust borrows are checked by the compiler.",
            "The compiler rejects bad Rust borrows.",
            "Cargo runs the Rust compiler.",
            "Rust compiler errors explain borrows.",
            "The borrow checker is part of the Rust compiler.",
        ],
        [
            "Bakers knead bread dough with flour.",
            "Bread dough needs flour and yeast.",
            "Flour and yeast make bread dough rise.",
            "Bakers bake the bread dough at dawn.",
            "Rye flour makes dark bread dough.",
            "Fresh bread comes from flour dough.",
        ],
    ];
    topics.iter().map(|t| t.join(" ")).collect::<Vec<_>>().join(" ")
}

#[test]
fn semantic_cuts_where_the_vocabulary_changes() {
    let doc = three_topics();
    let chunks = chunk(
        &doc,
        json!({"inline_threshold": 0, "min_size": 100, "smoothing": 0, "threshold": {"type": "percentile", "value": 85}}),
    );
    let got = texts(&doc, &chunks);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[0].starts_with("The cat and") && got[0].ends_with("watches the kitten."), "{got:#?}");
    assert!(got[1].starts_with("The Rust compiler") && got[2].starts_with("Bakers knead"), "{got:#?}");
    assert_eq!(chunks[1].split_reason.as_str(), "threshold");
}

#[test]
fn the_default_optimal_segmentation_finds_the_topics_untuned() {
    let doc = three_topics();
    let chunks = chunk(&doc, json!({"inline_threshold": 0, "min_size": 100}));
    let got = texts(&doc, &chunks);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[1].starts_with("The Rust compiler") && got[2].starts_with("Bakers knead"), "{got:#?}");
    assert_eq!((chunks[1].split_reason.as_str(), chunks[2].split_reason.as_str()), ("threshold", "threshold"));
}

/// Six paragraphs of five sentences, no two sentences sharing a word: nothing in the
/// vocabulary says where to cut, so the size of chunks and the paragraphs decide.
fn unrelated_paragraphs() -> String {
    let sentence = |i: usize| {
        let words: Vec<String> = (0..6).map(|w| format!("w{}x{}", i, w)).collect();
        let mut text = words.join(" ");
        text[..1].make_ascii_uppercase();
        text + "."
    };
    (0..6).map(|p| (0..5).map(|s| sentence(p * 5 + s)).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n\n")
}

#[test]
fn optimal_cuts_fall_at_blank_lines_unless_the_meaning_changes_inside_a_paragraph() {
    let doc = unrelated_paragraphs();
    let at_blank_line = |chunks: &[Chunk]| chunks[1..].iter().all(|c| doc[..c.start].ends_with("\n\n"));
    let default = chunk(&doc, json!({"inline_threshold": 0}));
    assert!(default.len() > 1 && at_blank_line(&default), "{:#?}", texts(&doc, &default));
    let without = chunk(&doc, json!({"inline_threshold": 0, "mid_paragraph_penalty": 0}));
    assert!(without.len() > 1 && !at_blank_line(&without), "{:#?}", texts(&doc, &without));
    // A document without blank lines says nothing about paragraphs and is cut as without it.
    let flat = doc.replace("\n\n", " ");
    assert_eq!(
        chunk(&flat, json!({"inline_threshold": 0})),
        chunk(&flat, json!({"inline_threshold": 0, "mid_paragraph_penalty": 0}))
    );
    // A clear change of topic inside a paragraph is still cut: here the only blank line is in
    // the middle of the second topic.
    let doc = three_topics().replace(" Cargo runs", "\n\nCargo runs");
    let got = texts(&doc, &chunk(&doc, json!({"inline_threshold": 0, "min_size": 100})));
    assert!(got.iter().any(|c| c.starts_with("The Rust compiler")), "{got:#?}");
    assert!(got.iter().any(|c| c.starts_with("Bakers knead")), "{got:#?}");
}

#[test]
fn short_documents_stay_whole_and_empty_ones_give_nothing() {
    let doc = "  One sentence. Another one.  ";
    let chunks = chunk(doc, json!({}));
    assert_eq!(texts(doc, &chunks), ["One sentence. Another one."]);
    assert_eq!(chunks[0].split_reason.as_str(), "inline");
    for empty in ["", "   ", "\n\n\t "] {
        for strategy in crate::config::Strategy::ALL.iter().map(|s| s.as_str()) {
            assert!(chunk(empty, json!({ "strategy": strategy })).is_empty(), "{strategy}");
        }
    }
}

#[test]
fn a_sentence_above_the_cap_is_force_split_and_marked() {
    let long = "word ".repeat(100);
    let doc = format!("Short start here. {} End.", long.trim());
    let chunks = chunk(&doc, json!({"max_size": 120, "min_size": 10, "inline_threshold": 0}));
    assert!(chunks.iter().filter(|c| c.split_reason.as_str() == "forced").count() >= 4, "{:#?}", texts(&doc, &chunks));
}

#[test]
fn max_size_in_words_and_tokens_is_a_hard_cap() {
    let doc = three_topics();
    for max in ["12 words", "20 tokens"] {
        let chunks = chunk(&doc, json!({"max_size": max, "inline_threshold": 0}));
        assert!(chunks.len() > 3, "{max}: {}", chunks.len());
    }
}

#[test]
fn every_threshold_type_runs_on_real_text() {
    let doc = three_topics();
    for threshold in ["percentile", "similarity", "stddev", "interquartile", "gradient"] {
        chunk(&doc, json!({"threshold": threshold, "inline_threshold": 0, "min_size": 0}));
    }
}

#[test]
fn sentence_overlap_repeats_the_previous_sentence() {
    let doc = three_topics();
    let cfg = json!({"inline_threshold": 0, "min_size": 100, "smoothing": 0, "threshold": {"type": "percentile", "value": 85}, "overlap": "1 sentences"});
    let chunks = chunk(&doc, cfg);
    assert!(
        doc[chunks[1].start..chunks[1].core_start].trim() == "The old cat watches the kitten.",
        "{:?}",
        texts(&doc, &chunks)
    );
    assert_eq!(chunks[0].start, chunks[0].core_start);
}

#[test]
fn char_overlap_never_breaks_the_cap() {
    let doc = three_topics();
    let chunks = chunk(&doc, json!({"inline_threshold": 0, "max_size": 200, "overlap": 150}));
    assert!(chunks.iter().skip(1).any(|c| c.start < c.core_start), "some chunk has room for overlap");
}

#[test]
fn fixed_windows_overlap_at_word_starts() {
    let doc = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
    let chunks = chunk(doc, json!({"strategy": "fixed", "max_size": 20, "overlap": 6}));
    assert_eq!(
        texts(doc, &chunks),
        ["alpha beta gamma", "gamma delta epsilon", "zeta eta theta iota", "iota kappa lambda mu"]
    );
}

#[test]
fn recursive_packs_paragraphs_then_sentences() {
    let doc = "First paragraph is short.\n\nSecond paragraph is short too.\n\nThird one has two sentences. It is longer than the cap allows in one piece.";
    let chunks = chunk(doc, json!({"strategy": "recursive", "max_size": 60, "min_size": 0, "overlap": 0}));
    assert_eq!(
        texts(doc, &chunks),
        [
            "First paragraph is short.\n\nSecond paragraph is short too.",
            "Third one has two sentences.",
            "It is longer than the cap allows in one piece."
        ]
    );
    assert_eq!(
        chunks.iter().map(|c| c.split_reason.as_str()).collect::<Vec<_>>(),
        ["paragraph", "sentence", "sentence"]
    );
    // A Markdown heading on the next line ends a paragraph too (sentences::paragraph_breaks).
    let doc = "Intro sentence here. Another one follows.\n## Next part\nIts text is here.";
    let chunks = chunk(doc, json!({"strategy": "recursive", "max_size": 50, "min_size": 0, "overlap": 0}));
    assert_eq!(texts(doc, &chunks), ["Intro sentence here. Another one follows.", "## Next part\nIts text is here."]);
    assert_eq!(chunks[1].split_reason.as_str(), "paragraph");
}

#[test]
fn documents_above_the_limit_are_refused() {
    let cfg = ChunkConfig::parse(&json!({"max_document_size": 10})).unwrap();
    let err = chunk_document("eleven char", &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap_err();
    assert_eq!(err, ChunkError::DocumentTooLarge { size: 11, limit: 10 });
}

#[test]
fn explain_reports_every_sentence_and_agrees_with_chunking() {
    let doc = three_topics();
    let cfg = ChunkConfig::parse(&json!({"inline_threshold": 0, "min_size": 100, "smoothing": 0, "threshold": {"type": "percentile", "value": 85}})).unwrap();
    let explanation = explain_semantic(&doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
    let chunks = chunk_document(&doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
    assert_eq!(explanation.sentences.len(), 18);
    let cut_at: Vec<usize> = explanation.sentences.iter().filter(|s| s.is_cut).map(|s| s.span.start).collect();
    assert_eq!(cut_at, chunks.iter().map(|c| c.start).collect::<Vec<_>>());
    assert_eq!(explanation.sentences[0].distance, None);
    assert_eq!(explanation.sentences[6].reason_text().as_deref(), Some("threshold"));
    assert!(explanation.threshold.is_finite());
    for s in &explanation.sentences[1..] {
        assert_eq!(s.score, s.smoothed_distance, "a percentile rule scores the smoothed distance");
    }
}

#[test]
fn explain_scores_optimal_cuts_against_the_penalty() {
    let doc = three_topics();
    let cfg = ChunkConfig::parse(&json!({"inline_threshold": 0, "min_size": 100, "penalty": 1.0})).unwrap();
    let explanation = explain_semantic(&doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
    assert_eq!(explanation.threshold, 1.0);
    for (i, s) in explanation.sentences.iter().enumerate().skip(1) {
        let score = s.score.unwrap();
        assert_eq!(s.is_cut, score > 1.0, "sentence {i}: score {score}, {:?}", s.reason);
        assert_eq!(s.is_cut, i == 6 || i == 12, "sentence {i}");
    }
    assert_eq!(explanation.paragraph_penalty, 0.0, "no blank line: no paragraphs, no extra penalty");
}

#[test]
fn explain_says_what_a_cut_inside_a_paragraph_costs_more() {
    let doc = unrelated_paragraphs();
    let explain = |cfg: Value| {
        let cfg = ChunkConfig::parse(&cfg).unwrap();
        explain_semantic(&doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap().paragraph_penalty
    };
    assert_eq!(explain(json!({"inline_threshold": 0})), 0.5, "the default");
    assert_eq!(explain(json!({"inline_threshold": 0, "mid_paragraph_penalty": 0.8})), 0.8);
    assert_eq!(explain(json!({"inline_threshold": 0, "mid_paragraph_penalty": 0})), 0.0);
    let threshold = json!({"inline_threshold": 0, "threshold": {"type": "percentile", "value": 85}});
    assert_eq!(explain(threshold), 0.0, "a threshold rule has none");
}

fn size_strategy() -> impl proptest::strategy::Strategy<Value = Value> {
    (1usize..400, prop::sample::select(vec!["chars", "words", "tokens"]))
        .prop_map(|(n, unit)| json!(format!("{n} {unit}")))
}

fn doc_strategy() -> impl proptest::strategy::Strategy<Value = String> {
    let fragment = prop::sample::select(vec![
        "The cat sat. ",
        "Rust borrows! ",
        "e.g. this ",
        "3.14 ",
        "中文句子。",
        "हिन्दी वाक्य। ",
        "\n\n",
        "- item\n",
        "# Head\n",
        "…",
        "\"Quoted.\" ",
        "😀 ",
        "x",
        " ",
        "loooooooooooooooongword ",
    ]);
    prop_oneof![prop::collection::vec(fragment, 0..120).prop_map(|v| v.concat()), "\\PC{0,300}"]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn invariants_hold_for_any_text_and_config(
        doc in doc_strategy(),
        strategy in prop::sample::select(crate::config::Strategy::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>()),
        max in size_strategy(),
        threshold in prop::sample::select(vec!["optimal", "percentile", "similarity", "stddev", "interquartile", "gradient"]),
        smoothing in 0usize..3,
        overlap in prop::sample::select(vec![json!(0), json!("1 sentences"), json!(10)]),
    ) {
        let max_unit_is_chars = max.as_str().unwrap().ends_with("chars");
        let mut cfg = json!({"strategy": strategy, "max_size": max, "smoothing": smoothing, "inline_threshold": 0, "min_size": 0, "target_size": 1});
        if threshold != "optimal" {
            cfg["threshold"] = json!(threshold);
        }
        let overlap_ok = match (&overlap, strategy) {
            (Value::String(_), "fixed" | "recursive" | "code" | "markdown") => false,
            (Value::Number(n), _) => !max_unit_is_chars || n.as_u64().unwrap() < cfg["max_size"].as_str().unwrap().split(' ').next().unwrap().parse::<u64>().unwrap(),
            _ => true,
        };
        if overlap_ok {
            cfg["overlap"] = overlap;
        } else {
            cfg["overlap"] = json!(0);
        }
        let parsed = ChunkConfig::parse(&cfg).unwrap();
        let first = chunk_document(&doc, &parsed, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
        check_invariants(&doc, &parsed, &first);
        let again = chunk_document(&doc, &parsed, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
        prop_assert_eq!(first, again, "deterministic");
    }
}

#[test]
fn units_of_words_and_chars_measure_as_documented() {
    assert_eq!(measure("a b  c", SizeUnit::Chars, &EstimatedTokens), 6);
    assert_eq!(measure("a b  c", SizeUnit::Words, &EstimatedTokens), 3);
}

#[test]
fn a_chunks_context_goes_before_it_only_in_the_embedded_text() {
    assert_eq!(super::embedded_text(None, "body"), "body");
    assert_eq!(super::embedded_text(Some("def f():"), "    return 1"), "def f():\n    return 1");
    let doc = "def f():\n    x = 1\n\n    return x\n";
    let start = doc.find("return").unwrap();
    let mut chunk = Chunk::new(start, doc.len() - 1, SplitReason::BlankLine, None);
    chunk.context = Some("def f():".into());
    assert_eq!((chunk.text(doc), chunk.embedded_text(doc).as_ref()), ("return x", "def f():\nreturn x"));
}

// The caller's interrupt check (`Embedder::check_interrupt`) reaches the long loops of a
// chunking call, and an error from it stops the call and comes back as it was.

/// The lexical embedder, with a check that counts its calls and says stop from call `stop_at` on.
struct Interrupting {
    checks: Cell<usize>,
    stop_at: Option<usize>,
    /// How many checks were made when `embed` was first called.
    checks_before_embedding: Option<usize>,
}

impl Interrupting {
    fn new(stop_at: Option<usize>) -> Interrupting {
        Interrupting { checks: Cell::new(0), stop_at, checks_before_embedding: None }
    }
}

impl Embedder for Interrupting {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        self.checks_before_embedding.get_or_insert(self.checks.get());
        lexical_embeddings(texts, &|| self.check_interrupt())
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        self.checks.set(self.checks.get() + 1);
        match self.stop_at {
            Some(stop_at) if self.checks.get() >= stop_at => Err(cancelled()),
            _ => Ok(()),
        }
    }
}

fn cancelled() -> ChunkError {
    ChunkError::embedder(std::io::Error::other("canceling statement due to user request"))
}

/// About 150 KB of sentences that all differ: three of the splitter's intervals.
fn large_document() -> String {
    let words = ["bees", "lava", "bread", "vacuum", "glaciers", "rivers", "engines", "orchards", "comets", "ledgers"];
    let mut doc = String::new();
    let mut i = 0;
    while doc.len() < 150_000 {
        doc.push_str(&format!("Note {i} says {} and {} meet {} times. ", words[i % 10], words[(i / 10) % 10], i % 97));
        if i % 7 == 6 {
            doc.push_str("\n\n");
        }
        i += 1;
    }
    doc
}

fn chunk_with(doc: &str, cfg: &Value, embedder: &mut Interrupting) -> Result<Vec<Chunk>, ChunkError> {
    let cfg = ChunkConfig::parse(cfg).unwrap();
    chunk_document(doc, &cfg, embedder, &EstimatedTokens)
}

#[test]
fn splitting_and_segmentation_check_for_interrupts_as_they_go() {
    let doc = large_document();
    let units = split_sentences(&doc).len();
    for method in ["optimal", "threshold"] {
        let cfg = json!({"method": method, "max_size": 400});
        let mut embedder = Interrupting::new(None);
        chunk_with(&doc, &cfg, &mut embedder).unwrap();
        let before = embedder.checks_before_embedding.unwrap();
        assert!(before >= doc.len() / INTERRUPT_EVERY_BYTES, "{method}: {before} checks while splitting");
        // The lexical vectors check twice a sentence; the rest are the segmentation's.
        let after = embedder.checks.get() - before;
        assert!(after > 2 * units, "{method}: {after} checks after splitting {units} sentences");
    }
}

/// Strategies that embed nothing check as they walk the document, at least once for each chunk
/// they make, besides the check before each chunk's token count.
#[test]
fn strategies_without_embeddings_check_for_interrupts_as_they_go() {
    let doc = large_document();
    for strategy in ["fixed", "recursive", "markdown", "code", "topic_coherence", "information_density"] {
        let mut embedder = Interrupting::new(None);
        let chunks = chunk_with(&doc, &json!({"strategy": strategy, "max_size": 300}), &mut embedder).unwrap();
        let own = embedder.checks.get() - chunks.len();
        assert!(own >= chunks.len(), "{strategy}: {own} checks of its own for {} chunks", chunks.len());
    }
}

#[test]
fn an_interrupt_stops_chunking_with_its_error() {
    let doc = large_document();
    let cfgs = [
        json!({"method": "optimal", "max_size": 400}),
        json!({"method": "threshold", "max_size": 400}),
        json!({"strategy": "recursive"}),
        json!({"strategy": "topic_coherence"}),
        json!({"strategy": "information_density"}),
        json!({"strategy": "hierarchical"}),
        json!({"strategy": "adaptive", "max_size": 400}),
        json!({"strategy": "fixed", "max_size": 300, "overlap": 50}),
        json!({"strategy": "markdown"}),
        json!({"strategy": "code"}),
        json!({"max_size": 400, "metadata": true, "filters": true}),
    ];
    for cfg in cfgs {
        let mut uninterrupted = Interrupting::new(None);
        chunk_with(&doc, &cfg, &mut uninterrupted).unwrap();
        let total = uninterrupted.checks.get();
        for stop_at in [1, total.div_ceil(2), total] {
            let mut embedder = Interrupting::new(Some(stop_at));
            assert_eq!(chunk_with(&doc, &cfg, &mut embedder), Err(cancelled()), "{cfg}, stopped at check {stop_at}");
            assert_eq!(embedder.checks.get(), stop_at, "{cfg}: no work after the check that said stop");
            if stop_at == 1 {
                assert_eq!(embedder.checks_before_embedding, None, "{cfg}: stopped while splitting");
            }
        }
    }
}
