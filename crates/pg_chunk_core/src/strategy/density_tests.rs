use super::*;
use crate::sentences::split_sentences;
use crate::strategy::test_support::{
    chunk_checked, real_texts_and_sizes, reasons, texts, with_strategy, HI_EN, SAMPLE, ZH_EN,
};
use serde_json::{json, Value};

/// Chunks `doc` with the density strategy through `chunk_document` and checks the contract.
fn chunk(doc: &str, cfg: Value) -> Vec<Chunk> {
    chunk_checked(doc, &with_strategy("information_density", cfg)).1
}

/// The document average the strategy compares with: the mean of the sentences' entropies.
fn limit(doc: &str) -> f64 {
    let units = split_sentences(doc);
    DENSITY_FACTOR * units.iter().map(|u| char_entropy(u.text(doc))).sum::<f64>() / units.len() as f64
}

#[test]
fn incremental_counts_agree_with_char_entropy() {
    let pieces = ["", "aaaa", "The quick brown fox. ", "中文句子。", "  hi\n\n", "3.14159 x²"];
    let mut counts = CharCounts::default();
    let mut text = String::new();
    for piece in pieces {
        counts.add(piece);
        text.push_str(piece);
        assert!((counts.entropy() - char_entropy(&text)).abs() < 1e-12, "{text:?}");
    }
    assert_eq!(CharCounts::default().entropy(), 0.0);
}

/// Three plain sentences, one varied one, three plain ones.
const LOW: &str = "Aaaa aaaa aaaa aaaa.";
const HIGH: &str = "Xylophones quiz big jumpy dwarf knights.";

fn low_high_low() -> String {
    [LOW, LOW, LOW, HIGH, LOW, LOW, LOW].join(" ")
}

#[test]
fn a_chunk_closes_after_the_sentence_that_takes_it_past_the_threshold() {
    let doc = low_high_low();
    let first = [LOW, LOW, LOW, HIGH].join(" ");
    let limit = limit(&doc);
    // The premise: plain sentences stay below 120% of the average, the varied one passes it.
    assert!(char_entropy(&[LOW, LOW, LOW].join(" ")) <= limit && char_entropy(&first) > limit);

    let chunks = chunk(&doc, json!({"min_size": 0}));
    assert_eq!(texts(&doc, &chunks), [first.clone(), [LOW, LOW, LOW].join(" ")]);
    assert_eq!(reasons(&chunks), ["start", "density"]);

    // Below min_size a chunk does not close on entropy: with min_size one past the first
    // chunk, it closes one sentence later, still above the limit.
    let min = first.chars().count() + 1;
    let longer = [LOW, LOW, LOW, HIGH, LOW].join(" ");
    assert!(char_entropy(&longer) > limit);
    let chunks = chunk(&doc, json!({"min_size": min, "max_size": 150}));
    assert_eq!(texts(&doc, &chunks), [longer, [LOW, LOW].join(" ")]);
    assert_eq!(reasons(&chunks), ["start", "density"]);
    // The rest is below min_size: with room under max_size it merges back.
    assert_eq!(texts(&doc, &chunk(&doc, json!({"min_size": min}))), [doc.as_str()]);
}

#[test]
fn uniform_text_never_passes_the_threshold() {
    let doc = [LOW; 12].join(" ");
    let chunks = chunk(&doc, json!({"min_size": 0}));
    assert_eq!(texts(&doc, &chunks), [doc.as_str()]);
    // Only the cap cuts it.
    let chunks = chunk(&doc, json!({"min_size": 0, "max_size": 100}));
    assert!(chunks.len() > 2 && reasons(&chunks)[1..].iter().all(|r| *r == "size"), "{:?}", reasons(&chunks));
}

#[test]
fn a_sentence_above_the_cap_is_force_split() {
    let long = format!("Alpha {} end.", "bravo ".repeat(20).trim());
    let doc = format!("{LOW} {long} {LOW}");
    let chunks = chunk(&doc, json!({"max_size": 40, "min_size": 0}));
    assert_eq!(
        reasons(&chunks),
        ["start", "forced", "forced", "forced", "forced", "size"],
        "{:#?}",
        texts(&doc, &chunks)
    );
}

#[test]
fn real_text_keeps_the_contract_at_every_size() {
    for (doc, cfg) in real_texts_and_sizes() {
        assert!(!chunk(doc, cfg).is_empty());
    }
}

#[test]
fn density_cuts_on_real_text_follow_the_rule() {
    // English prose levels off near 4.2 bits, below 120% of its sentences' mean (4.9): only the
    // cap cuts it. Mixing two scripts raises a chunk's entropy past the limit within a few
    // sentences.
    let english = chunk(SAMPLE, json!({}));
    assert!(reasons(&english)[1..].iter().all(|r| *r == "size"), "{:?}", reasons(&english));
    for doc in [ZH_EN, HI_EN] {
        let cfg = ChunkConfig::parse(&json!({"strategy": "information_density"})).unwrap();
        let chunks = chunk(doc, json!({}));
        assert!(chunks.iter().any(|c| c.split_reason.as_str() == "density"), "{:?}", reasons(&chunks));
        let limit = limit(doc);
        for pair in chunks.windows(2).filter(|pair| pair[1].split_reason.as_str() == "density") {
            let closed = pair[0].text(doc);
            assert!(char_entropy(closed) > limit && closed.chars().count() >= cfg.min_size.value, "{closed:?}");
            // It closed at the first sentence that passed the limit, not later.
            let units = split_sentences(closed);
            let shorter = &closed[..units[units.len() - 2].end];
            assert!(char_entropy(shorter) <= limit || shorter.chars().count() < cfg.min_size.value, "{shorter:?}");
        }
    }
}

#[test]
fn empty_and_blank_documents_give_no_chunks() {
    for doc in ["", "  \n\n\t"] {
        assert!(chunk(doc, json!({})).is_empty());
    }
}
