use super::*;
use crate::lexical::LexicalEmbedder;
use crate::sentences::split_sentences;
use crate::size::EstimatedTokens;
use crate::strategy::chunk_document;
use crate::strategy::test_support::{chunk_checked, real_texts_and_sizes, reasons, texts, with_strategy, SAMPLE};
use serde_json::{json, Value};

/// Chunks `doc` with the topic strategy through `chunk_document` and checks the contract.
fn chunk(doc: &str, cfg: Value) -> Vec<Chunk> {
    chunk_checked(doc, &with_strategy("topic_coherence", cfg)).1
}

#[test]
fn a_sentence_continues_the_chunk_at_exactly_the_threshold() {
    // The first sentence has 8 keywords. The second shares 3 of them and adds 2, so Jaccard is
    // 3 / 10 = 0.3 (continues); with one more new word it is 3 / 11 (cut).
    let first = "Alpha bravo charlie delta echo foxtrot golf hotel.";
    let cases = [
        (
            "Alpha bravo charlie india juliet.",
            vec![format!("{first} Alpha bravo charlie india juliet.")],
            vec!["start"],
        ),
        (
            "Alpha bravo charlie india juliet kilo.",
            vec![first.to_string(), "Alpha bravo charlie india juliet kilo.".to_string()],
            vec!["start", "topic"],
        ),
    ];
    for (second, want, want_reasons) in cases {
        let doc = format!("{first} {second}");
        let chunks = chunk(&doc, json!({"min_size": 0}));
        assert_eq!(texts(&doc, &chunks), want, "{second}");
        assert_eq!(reasons(&chunks), want_reasons, "{second}");
    }
    assert_eq!(jaccard(&keywords(first), &keywords("Alpha bravo charlie india juliet.")), COHERENCE_THRESHOLD);
}

#[test]
fn the_chunk_keeps_the_union_of_its_keywords() {
    // The third sentence shares nothing with the second but enough with the first.
    let doc = "Alpha bravo charlie. Alpha bravo delta. Charlie alpha echo.";
    assert_eq!(texts(doc, &chunk(doc, json!({"min_size": 0}))), [doc]);
}

#[test]
fn sentences_without_keywords_join_the_current_chunk() {
    let cases = [
        // After a chunk: "So it is!" has no keywords and stays; the next topic cuts.
        (
            "Alpha bravo charlie. So it is! Delta echo foxtrot.",
            vec!["Alpha bravo charlie. So it is!", "Delta echo foxtrot."],
        ),
        // Before any keyword: the chunk has no topic yet and takes the next sentence.
        ("Oh. Ah. Alpha bravo charlie. Alpha bravo delta.", vec!["Oh. Ah. Alpha bravo charlie. Alpha bravo delta."]),
        // "Yes" is a keyword (3 letters, no stopword): it cuts like any other topic.
        ("Alpha bravo charlie. Yes! Delta echo foxtrot.", vec!["Alpha bravo charlie.", "Yes!", "Delta echo foxtrot."]),
        // Numbers of one or two digits and stopwords are no keywords either.
        (
            "Alpha bravo charlie. It is 42. So it is. Alpha bravo charlie.",
            vec!["Alpha bravo charlie. It is 42. So it is. Alpha bravo charlie."],
        ),
    ];
    for (doc, want) in cases {
        assert_eq!(texts(doc, &chunk(doc, json!({"min_size": 0}))), want, "{doc}");
    }
}

#[test]
fn the_cap_cuts_a_coherent_chunk_and_force_splits_a_long_sentence() {
    let doc = "Alpha bravo charlie. Alpha bravo charlie. Alpha bravo charlie.";
    let chunks = chunk(doc, json!({"max_size": 45, "min_size": 0}));
    assert_eq!(texts(doc, &chunks), ["Alpha bravo charlie. Alpha bravo charlie.", "Alpha bravo charlie."]);
    assert_eq!(reasons(&chunks), ["start", "size"]);

    let long = format!("Alpha {} end.", "bravo ".repeat(20).trim());
    let doc = format!("Alpha bravo charlie. {long} Alpha bravo charlie.");
    let chunks = chunk(&doc, json!({"max_size": 40, "min_size": 0}));
    assert_eq!(
        reasons(&chunks),
        ["start", "forced", "forced", "forced", "forced", "size"],
        "{:#?}",
        texts(&doc, &chunks)
    );
}

#[test]
fn an_undersized_chunk_merges_across_the_more_coherent_seam() {
    // "Echo foxtrot golf." is cut from both sides, but shares "echo" with the right (seam
    // 1 − 1/7) and nothing with the left (seam 1): it joins the right.
    let left = "Alpha bravo charlie delta lima mike november.";
    let right = "Echo oscar papa quebec romeo.";
    let doc = format!("{left} Echo foxtrot golf. {right}");
    let chunks = chunk(&doc, json!({"min_size": 25}));
    assert_eq!(texts(&doc, &chunks), [left.to_string(), format!("Echo foxtrot golf. {right}")]);
    assert_eq!(reasons(&chunks), ["start", "topic"]);
    // Without the shared word both seams are 1: the smaller neighbour wins.
    let doc = format!("{left} Xray foxtrot golf. {right}");
    let chunks = chunk(&doc, json!({"min_size": 25}));
    assert_eq!(texts(&doc, &chunks), [left.to_string(), format!("Xray foxtrot golf. {right}")]);
}

/// Three topics of six sentences each (strategy/tests.rs), and the byte offsets they start at.
fn three_topics() -> (String, [usize; 3]) {
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
    let paragraphs: Vec<String> = topics.iter().map(|t| t.join(" ")).collect();
    let doc = paragraphs.join(" ");
    let second = paragraphs[0].len() + 1;
    (doc, [0, second, second + paragraphs[1].len() + 1])
}

#[test]
fn three_topics_are_cut_at_the_topic_changes() {
    let (doc, starts) = three_topics();
    for cfg in [json!({}), json!({"min_size": 0}), json!({"min_size": 150}), json!({"max_size": "30 words"})] {
        let chunks = chunk(&doc, cfg.clone());
        let topic_of = |at: usize| starts.iter().rposition(|&s| s <= at).unwrap();
        for c in &chunks {
            assert_eq!(topic_of(c.start), topic_of(c.end - 1), "{cfg}: {:?} spans two topics", c.text(&doc));
        }
        for start in starts {
            assert!(
                chunks.iter().any(|c| c.start == start),
                "{cfg}: no chunk starts at {start}: {:#?}",
                texts(&doc, &chunks)
            );
        }
        assert_eq!(
            chunks
                .iter()
                .filter(|c| starts[1..].contains(&c.start))
                .map(|c| c.split_reason.as_str())
                .collect::<Vec<_>>(),
            ["topic", "topic"],
            "{cfg}"
        );
    }
    // With the default min_size (100 chars) the cat and bread topics are one chunk each.
    let chunks = chunk(&doc, json!({}));
    assert!(chunks[0].text(&doc).ends_with("The old cat watches the kitten."), "{:#?}", texts(&doc, &chunks));
    assert_eq!(chunks.last().map(|c| c.start), Some(starts[2]));
}

#[test]
fn real_text_keeps_the_contract_at_every_size() {
    for (doc, cfg) in real_texts_and_sizes() {
        assert!(!chunk(doc, cfg).is_empty());
    }
}

#[test]
fn real_prose_reaches_min_size_through_merging() {
    // Consecutive sentences of real prose rarely share 30% of their keywords, so the walk
    // makes chunks of a sentence or two; merging brings every chunk but the last to min_size.
    let cfg = ChunkConfig::parse(&json!({"strategy": "topic_coherence"})).unwrap();
    let chunks = chunk(SAMPLE, json!({}));
    let sentences = split_sentences(SAMPLE).len();
    assert!(chunks.len() > 5 && chunks.len() < sentences, "{} chunks of {sentences} sentences", chunks.len());
    for c in &chunks[..chunks.len() - 1] {
        assert!(c.text(SAMPLE).chars().count() >= cfg.min_size.value, "{:?}", c.text(SAMPLE));
    }
    // The second and third subjects start new chunks: their first sentences share no keyword
    // with either side, and the blank line before them decides the merge.
    for subject in ["PostgreSQL is an", "Volcanoes form"] {
        let at = SAMPLE.find(subject).unwrap();
        assert!(chunks.iter().any(|c| c.start == at), "{subject}: {:#?}", texts(SAMPLE, &chunks));
    }
}

#[test]
fn empty_and_blank_documents_give_no_chunks() {
    for doc in ["", "  \n\n\t"] {
        assert!(chunk(doc, json!({})).is_empty());
    }
}

mod any_text {
    use super::*;
    use proptest::prelude::{prop, prop_assert, prop_assert_eq, prop_oneof, proptest, ProptestConfig};
    use proptest::strategy::Strategy as _;

    fn doc_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        let fragment = prop::sample::select(vec![
            "The cat sat. ",
            "Rust borrows! ",
            "Cat borrows rust. ",
            "e.g. this ",
            "3.14 ",
            "中文句子。",
            "हिन्दी वाक्य। ",
            "\n\n",
            "- item\n",
            "# Head\n",
            "---\n",
            "│ box │\n",
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
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Topic and density chunks keep the contract on any text and size, deterministically,
        /// and their metadata is finite.
        #[test]
        fn topic_and_density_keep_the_contract(
            doc in doc_strategy(),
            strategy in prop::sample::select(vec!["topic_coherence", "information_density"]),
            max in 1usize..300,
            unit in prop::sample::select(vec!["chars", "words", "tokens"]),
            min_quarters in 0usize..4,
            filters in proptest::bool::ANY,
        ) {
            let min = max * min_quarters / 4;
            let sizes = [("max_size", max), ("min_size", min), ("target_size", min.max(1))].map(|(key, n)| (key, json!(format!("{n} {unit}"))));
            let mut cfg = json!({"strategy": strategy, "metadata": true, "filters": filters});
            for (key, size) in sizes {
                cfg[key] = size;
            }
            let cfg = ChunkConfig::parse(&cfg).unwrap();
            let first = chunk_document(&doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
            if let Err(broken) = crate::invariants::check_chunks(&doc, &cfg, &first, &EstimatedTokens) {
                panic!("{broken}");
            }
            for c in &first {
                prop_assert!(c.metadata.values().all(|v| v.as_f64().is_some_and(f64::is_finite)), "{:?}", c.metadata);
            }
            let again = chunk_document(&doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
            prop_assert_eq!(first, again, "deterministic");
        }
    }
}
