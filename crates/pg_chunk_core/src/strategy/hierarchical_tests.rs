use super::*;
use crate::invariants::check_chunks;
use crate::lexical::LexicalEmbedder;
use crate::size::{measure, EstimatedTokens};
use crate::strategy::chunk_document;

use crate::strategy::test_support::{CountingEmbedder, SAMPLE};
const HINDI_ENGLISH: &str = include_str!("../../../../tests/fixtures/hi_en_topics.txt");
const CHINESE_ENGLISH: &str = include_str!("../../../../tests/fixtures/zh_en_topics.txt");

fn config(cfg: serde_json::Value) -> ChunkConfig {
    let mut cfg = cfg;
    cfg["strategy"] = json!("hierarchical");
    ChunkConfig::parse(&cfg).unwrap()
}

fn hierarchical(doc: &str, cfg: &ChunkConfig) -> Vec<Chunk> {
    let chunks = chunk_document(doc, cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
    check_tree(doc, cfg, &chunks);
    chunks
}

fn level(chunk: &Chunk) -> &str {
    chunk.metadata["level"].as_str().unwrap()
}

/// Every rule of the module documentation, on any output.
fn check_tree(doc: &str, cfg: &ChunkConfig, chunks: &[Chunk]) {
    if let Err(broken) = check_chunks(doc, cfg, chunks, &EstimatedTokens) {
        panic!("{broken}");
    }
    let parent_cap = parent_config(cfg).max_size;
    let size = |c: &Chunk, cap: Size| measure(c.text(doc), cap.unit, &EstimatedTokens);
    let mut k = 0;
    while k < chunks.len() {
        let parent = &chunks[k];
        assert_eq!(level(parent), "parent", "chunk {k} should be a parent: {chunks:#?}");
        assert!(
            size(parent, parent_cap) <= parent_cap.value || parent.text(doc).chars().count() == 1,
            "parent {k} above {parent_cap}"
        );
        let children: Vec<usize> = (k + 1..chunks.len()).take_while(|&i| level(&chunks[i]) == "child").collect();
        assert!(!children.is_empty(), "parent {k} has no child");
        assert_eq!(parent.metadata["children"], json!(children), "parent {k}");
        for &i in &children {
            let child = &chunks[i];
            assert_eq!(child.metadata["relationships"], json!([format!("parent:{k}")]), "child {i}");
            assert!(child.start >= parent.core_start && child.end <= parent.end, "child {i} outside parent {k}");
            assert!(
                size(child, cfg.target_size) <= cfg.target_size.value || child.text(doc).chars().count() == 1,
                "child {i} above {}",
                cfg.target_size
            );
        }
        let (first, last) = (&chunks[children[0]], &chunks[children[children.len() - 1]]);
        assert_eq!((first.core_start, last.end), (parent.core_start, parent.end), "children of {k} cover its own text");
        if size(parent, cfg.target_size) <= cfg.target_size.value {
            assert_eq!(children.len(), 1, "parent {k} fits the target: one child");
            assert_eq!(
                (first.start, first.end, first.split_reason.as_str()),
                (parent.core_start, parent.end, parent.split_reason.as_str())
            );
        }
        k = children[children.len() - 1] + 1;
    }
}

/// Two sentences about bees, two about compilers, each 50 to 60 characters.
const TWO_TOPICS: &str = "Bees carry pollen from flower to flower in the meadow. \
    Worker bees bring pollen and nectar back to their hive. \
    The Rust compiler rejects code that breaks borrow rules. \
    Borrow errors from the Rust compiler name the bad line.";

#[test]
fn parents_pack_to_twice_the_target_and_children_to_the_target() {
    let cfg = config(json!({"target_size": 60, "max_size": 1000, "min_size": 0, "inline_threshold": 0}));
    let chunks = hierarchical(TWO_TOPICS, &cfg);
    let shape: Vec<(&str, &str)> =
        chunks.iter().map(|c| (level(c), c.text(TWO_TOPICS).split(' ').next().unwrap())).collect();
    assert_eq!(
        shape,
        [
            ("parent", "Bees"),
            ("child", "Bees"),
            ("child", "Worker"),
            ("parent", "The"),
            ("child", "The"),
            ("child", "Borrow")
        ]
    );
    assert_eq!(chunks[0].metadata["children"], json!([1, 2]));
    assert_eq!(chunks[3].metadata["children"], json!([4, 5]));
    for (i, parent) in [(1, 0), (2, 0), (4, 3), (5, 3)] {
        assert_eq!(chunks[i].metadata["relationships"], json!([format!("parent:{parent}")]));
    }
    assert_eq!(chunks[3].split_reason.as_str(), "threshold", "the parents split where the topic changes");
    assert_eq!(
        chunks[4].split_reason.as_str(),
        "threshold",
        "a first child begins where its parent does, for its reason"
    );
}

#[test]
fn the_parent_cap_is_twice_the_target_but_never_above_max_size() {
    let cases = [
        (json!({"target_size": 100, "max_size": 400}), Size::chars(200)),
        (json!({"target_size": 300, "max_size": 400}), Size::chars(400)),
        (json!({}), Size::chars(1000)),
        (
            json!({"target_size": "20 words", "max_size": "50 words"}),
            Size { value: 40, unit: crate::size::SizeUnit::Words },
        ),
        (json!({"target_size": "20 words", "max_size": 300}), Size::chars(300)),
    ];
    for (cfg, want) in cases {
        let cfg = config(cfg);
        assert_eq!(parent_config(&cfg).max_size, want, "{cfg:?}");
        assert_eq!(child_config(&cfg).max_size, cfg.target_size);
        hierarchical(SAMPLE, &cfg);
    }
}

#[test]
fn the_defaults_are_children_of_500_in_parents_of_1000() {
    let cfg = config(json!({}));
    assert_eq!((cfg.target_size, cfg.max_size, cfg.min_size), (Size::chars(500), Size::chars(1000), Size::chars(100)));
    let chunks = hierarchical(SAMPLE, &cfg);
    let parents = chunks.iter().filter(|c| level(c) == "parent").count();
    assert!(parents >= 4 && chunks.len() > parents * 2 - 1, "{parents} parents of {}", chunks.len());
}

#[test]
fn a_parent_that_fits_the_target_is_its_own_only_child() {
    let doc = "  A short note about bees. It has two sentences.  ";
    let chunks = hierarchical(doc, &config(json!({})));
    assert_eq!(chunks.len(), 2);
    assert_eq!((chunks[0].start, chunks[0].end), (chunks[1].start, chunks[1].end));
    assert_eq!((chunks[0].split_reason.as_str(), chunks[1].split_reason.as_str()), ("inline", "inline"));
    assert_eq!(chunks[0].metadata["children"], json!([1]));
    assert_eq!(chunks[1].metadata["relationships"], json!(["parent:0"]));
}

#[test]
fn empty_documents_give_nothing() {
    for doc in ["", "  \n\n "] {
        assert!(hierarchical(doc, &config(json!({}))).is_empty());
    }
}

#[test]
fn a_sentence_above_the_target_is_force_split_inside_its_parent() {
    let doc = format!("Short start here. {} End.", "word ".repeat(60).trim());
    let cfg = config(json!({"target_size": 100, "max_size": 400, "min_size": 0, "inline_threshold": 0}));
    let chunks = hierarchical(&doc, &cfg);
    assert!(chunks.iter().any(|c| level(c) == "child" && c.split_reason.as_str() == "forced"), "{chunks:#?}");
}

#[test]
fn overlap_stays_inside_each_level() {
    for overlap in [json!(40), json!("1 sentences")] {
        let cfg = config(json!({"target_size": 150, "max_size": 300, "overlap": overlap}));
        let chunks = hierarchical(SAMPLE, &cfg);
        assert!(chunks.iter().any(|c| c.start < c.core_start), "{overlap}: some chunk repeats text");
    }
}

#[test]
fn real_text_in_every_unit_and_size_keeps_every_rule() {
    let sizes = [json!(120), json!(300), json!(600), json!(1000), json!(2000), json!("60 words"), json!("100 tokens")];
    for doc in [SAMPLE, HINDI_ENGLISH, CHINESE_ENGLISH] {
        for max in &sizes {
            let cfg = config(json!({"max_size": max}));
            let chunks = hierarchical(doc, &cfg);
            assert!(!chunks.is_empty());
            assert_eq!(chunks, hierarchical(doc, &cfg), "deterministic");
        }
    }
}

#[test]
fn each_level_also_keeps_the_sentence_boundaries_of_the_semantic_strategy() {
    for doc in [SAMPLE, HINDI_ENGLISH, CHINESE_ENGLISH] {
        for max in [300, 1000] {
            let cfg = config(json!({"max_size": max}));
            let chunks = hierarchical(doc, &cfg);
            let mut semantic = cfg.clone();
            semantic.strategy = Strategy::Semantic;
            if let Err(broken) = check_chunks(doc, &semantic, &chunks, &EstimatedTokens) {
                panic!("{broken}");
            }
        }
    }
}

#[test]
fn sentences_are_embedded_once_for_both_levels() {
    let cfg = config(json!({"max_size": 400}));
    let mut counting = CountingEmbedder(0);
    let chunks = chunk_document(SAMPLE, &cfg, &mut counting, &EstimatedTokens).unwrap();
    assert!(chunks.len() > 4);
    assert_eq!(counting.0, crate::sentences::split_sentences(SAMPLE).len());
}

/// Found by fuzzing: a parent cut inside a long sentence, whose children the semantic strategy
/// cut again inside that sentence but called `size`.
#[test]
fn every_child_of_a_forced_parent_is_forced() {
    // The fuzzer's input (fuzz/corpus/chunker/seed-hierarchical-forced-parent), as text.
    let doc = "A\u{0}BnD.\u{d}\u{d}\u{a}\u{a}\u{9} \u{a0}\u{3000} tacalifragilisticex\u{f}\u{0}?\u{3}\u{0}\u{3}\u{1}\u{0}\u{0}@isticexpialidoction.(are!] \u{ab}Guillamets.\u{bb} \u{201e}L. 3 shows it. No. 5 r. 12. Ph.D. st here. Nnd vol.\u{0}2, pr. 24. Ph.D. student. 12. \u{17}Ph.D. studen\u{d}\u{d}\u{d}\u{d}\u{d}! ... . ! ? ?! !!! ";
    let cfg = config(
        json!({"max_size": "4 tokens", "min_size": "0 tokens", "target_size": "1 tokens", "overlap": "2 sentences", "smoothing": 2, "inline_threshold": 0}),
    );
    let chunks = hierarchical(doc, &cfg);
    let forced_parents: Vec<usize> = (0..chunks.len())
        .filter(|&i| level(&chunks[i]) == "parent" && chunks[i].split_reason.as_str() == "forced")
        .collect();
    assert!(!forced_parents.is_empty());
    for child in chunks.iter().filter(|c| level(c) == "child") {
        let parent = child.metadata["relationships"][0]
            .as_str()
            .unwrap()
            .trim_start_matches("parent:")
            .parse::<usize>()
            .unwrap();
        if forced_parents.contains(&parent) {
            assert_eq!(child.split_reason.as_str(), "forced", "{child:?}");
        }
    }
    check_tree(doc, &cfg, &chunks);
}

#[test]
fn children_are_cut_at_the_documents_sentences() {
    // Split on its own, the parent "# Head\n…" ends a sentence after "Head"; the document does
    // not, so no child may start at "…" (found by the strategies' proptest).
    let doc = "The cat sat. 中文句子。# Head\n…\n\ne.g. this e.g. this ";
    let cfg = serde_json::json!({"strategy": "hierarchical", "max_size": "3 words", "overlap": 0, "smoothing": 0, "inline_threshold": 0, "min_size": 0, "target_size": 1});
    let (_, chunks) = crate::strategy::test_support::chunk_checked(doc, &cfg);
    assert!(chunks.iter().all(|c| c.start != doc.find('…').unwrap() || c.split_reason.as_str() == "forced"));
}
