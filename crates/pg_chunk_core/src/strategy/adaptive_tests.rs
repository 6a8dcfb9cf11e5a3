use super::*;
use crate::invariants::check_chunks;
use crate::lexical::LexicalEmbedder;
use crate::size::EstimatedTokens;
use crate::strategy::chunk_document;
use crate::strategy::SplitReason;

use crate::strategy::test_support::{CountingEmbedder, SAMPLE};
const HINDI_ENGLISH: &str = include_str!("../../../../tests/fixtures/hi_en_topics.txt");
const CHINESE_ENGLISH: &str = include_str!("../../../../tests/fixtures/zh_en_topics.txt");

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// A chunk of `doc[start..end]` whose own text starts at `core_start`.
fn chunk(start: usize, core_start: usize, end: usize) -> Chunk {
    let mut c = Chunk::new(start, end, SplitReason::Size, None);
    c.core_start = core_start;
    c
}

/// Byte ranges of the sentences of `doc`, found by their text.
fn chunks_of(doc: &str, texts: &[&str]) -> Vec<Chunk> {
    texts
        .iter()
        .map(|t| {
            let start = doc.find(t).unwrap();
            chunk(start, start, start + t.len())
        })
        .collect()
}

/// Sentences starting with `A` point one way, with `B` another, anything else nowhere.
struct TwoDirections;

impl Embedder for TwoDirections {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        let row = |t: &&str| match t.chars().next() {
            Some('A') => [1.0, 0.0],
            Some('B') => [0.0, 1.0],
            _ => [0.0, 0.0],
        };
        Ok(Embeddings::new(2, texts.iter().flat_map(row).collect()))
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        Ok(())
    }
}

const AABB: &str = "Apples are red. Apricots are orange. Bananas are yellow. Blueberries are blue.";

#[test]
fn size_variance_is_the_squared_coefficient_of_variation_clamped() {
    let cases: [(&[f64], f64); 5] =
        [(&[], 0.0), (&[50.0], 0.0), (&[40.0, 40.0, 40.0], 0.0), (&[10.0, 30.0], 0.25), (&[1.0, 1.0, 1.0, 97.0], 1.0)];
    for (lengths, want) in cases {
        assert!(close(size_variance(lengths), want), "{lengths:?}: {}", size_variance(lengths));
    }
}

#[test]
fn percentile_ranks_run_from_least_to_most_similar_with_ties_sharing() {
    let cases: [(&[f64], &[f64]); 5] = [
        (&[], &[]),
        (&[0.3], &[0.5]),
        (&[0.1, 0.9, 0.5], &[0.0, 1.0, 0.5]),
        (&[1.0, 0.0, 1.0], &[0.75, 0.0, 0.75]),
        (&[0.2, 0.2], &[0.5, 0.5]),
    ];
    for (values, want) in cases {
        assert_eq!(percentile_ranks(values), want, "{values:?}");
    }
}

#[test]
fn boundary_coherence_rewards_cuts_between_unlike_sentences() {
    let sentences = SentenceVectors::new(AABB, &mut TwoDirections).unwrap();
    // Similarities 1, 0, 1 between neighbours: ranks ¾, 0, ¾.
    assert_eq!(sentences.rank, [0.75, 0.0, 0.75]);
    let cases: [(&[&str], f64); 4] = [
        // Both chunks: within ¾, across 0.
        (&["Apples are red. Apricots are orange.", "Bananas are yellow. Blueberries are blue."], (1.0 + 0.75) / 2.0),
        // d = ½ − ¾, 0 − ¾, ½ − ¾ (a one-sentence chunk counts ½, the mean rank).
        (
            &["Apples are red.", "Apricots are orange. Bananas are yellow.", "Blueberries are blue."],
            (1.0 + (-0.25 - 0.75 - 0.25) / 3.0) / 2.0,
        ),
        // One chunk: nothing across, within is the mean of ¾, 0, ¾.
        (&[AABB], (1.0 + 0.5) / 2.0),
        // Every sentence alone: d = ½ − ¾, ½ − ⅜, ½ − ⅜, ½ − ¾.
        (
            &["Apples are red.", "Apricots are orange.", "Bananas are yellow.", "Blueberries are blue."],
            (1.0 + (-0.25 + 0.125 + 0.125 - 0.25) / 4.0) / 2.0,
        ),
    ];
    for (texts, want) in cases {
        let got = boundary_coherence(&chunks_of(AABB, texts), &sentences);
        assert!(close(got, want), "{texts:?}: {got}, want {want}");
    }
}

#[test]
fn a_cut_inside_a_sentence_counts_as_fully_similar() {
    let sentences = SentenceVectors::new(AABB, &mut TwoDirections).unwrap();
    let inside = AABB.find("are yellow").unwrap();
    let chunks = [chunk(0, 0, inside - 1), chunk(inside, inside, AABB.len())];
    assert_eq!(sentences.across(inside), Some(1.0));
    assert_eq!(sentences.across(AABB.find("Bananas").unwrap()), Some(0.0));
    // Chunk 0 holds the two A sentences whole: ¾ − 1; chunk 1 holds one whole sentence: ½ − 1.
    assert!(close(boundary_coherence(&chunks, &sentences), (1.0 + (-0.25 - 0.5) / 2.0) / 2.0));
}

#[test]
fn density_is_mean_chunk_entropy_over_the_document_entropy() {
    let doc = "aaaa bbbb";
    let cases = [(vec![chunk(0, 0, 4), chunk(5, 5, 9)], 0.0), (vec![chunk(0, 0, 9)], 1.0)];
    for (chunks, want) in cases {
        assert!(close(density(doc, &chunks, &|| Ok(())).unwrap(), want), "{chunks:?}");
    }
    assert!(close(density("abab", &[chunk(0, 0, 2), chunk(2, 2, 4)], &|| Ok(())).unwrap(), 1.0));
    assert_eq!(
        density("aaaa", &[chunk(0, 0, 4)], &|| Ok(())).unwrap(),
        1.0,
        "a document without information loses none"
    );
}

#[test]
fn overlap_is_the_fraction_of_characters_repeated_from_the_previous_chunk() {
    let doc = "aaaa bbbb cccc";
    let none = [chunk(0, 0, 4), chunk(5, 5, 9), chunk(10, 10, 14)];
    assert_eq!(overlap_ratio(doc, &none, 12.0), 0.0);
    let repeated = [chunk(0, 0, 9), chunk(5, 10, 14)];
    assert!(close(overlap_ratio(doc, &repeated, 18.0), 4.0 / 18.0));
    let score =
        quality_score(doc, &repeated, &SentenceVectors::new(doc, &mut TwoDirections).unwrap(), &|| Ok(())).unwrap();
    assert!(close(score.overlap, 4.0 / 18.0));
}

#[test]
fn the_total_weighs_the_terms_as_the_design_does() {
    let cases = [
        (QualityScore { size_variance: 0.0, boundary_coherence: 1.0, density: 1.0, overlap: 0.1 }, 1.0),
        (QualityScore { size_variance: 1.0, boundary_coherence: 0.0, density: 0.0, overlap: 1.0 }, 0.2 * 0.1),
        (
            QualityScore { size_variance: 0.25, boundary_coherence: 0.5, density: 0.8, overlap: 0.0 },
            0.3 * 0.75 + 0.3 * 0.5 + 0.2 * 0.8 + 0.2 * 0.9,
        ),
    ];
    for (score, want) in cases {
        assert!(close(score.total(), want), "{score:?}: {}", score.total());
    }
}

#[test]
fn the_split_at_the_topic_change_scores_higher() {
    let sentences = SentenceVectors::new(AABB, &mut TwoDirections).unwrap();
    let good = chunks_of(AABB, &["Apples are red. Apricots are orange.", "Bananas are yellow. Blueberries are blue."]);
    let bad =
        chunks_of(AABB, &["Apples are red.", "Apricots are orange. Bananas are yellow.", "Blueberries are blue."]);
    let score = |chunks: &[Chunk]| quality_score(AABB, chunks, &sentences, &|| Ok(())).unwrap().total();
    assert!(score(&good) > score(&bad));
}

#[test]
fn the_highest_score_wins_and_ties_go_to_the_earlier_strategy() {
    let s = CANDIDATES;
    let cases: [(&[(Strategy, f64)], usize); 4] = [
        (&[(s[0], 0.5), (s[1], 0.7), (s[2], 0.6), (s[3], 0.1)], 1),
        (&[(s[0], 0.5), (s[1], 0.5), (s[2], 0.5), (s[3], 0.5)], 0),
        (&[(s[0], 0.4), (s[1], 0.6), (s[2], 0.6), (s[3], 0.6)], 1),
        (&[(s[0], 0.1), (s[1], 0.2), (s[2], 0.3), (s[3], 0.30001)], 3),
    ];
    for (scores, want) in cases {
        assert_eq!(best_candidate(scores), want, "{scores:?}");
    }
    assert_eq!(s.map(Strategy::as_str), ["semantic", "topic_coherence", "information_density", "recursive"]);
}

fn config(cfg: serde_json::Value) -> ChunkConfig {
    let mut cfg = cfg;
    cfg["strategy"] = json!("adaptive");
    ChunkConfig::parse(&cfg).unwrap()
}

/// Adaptive output, checked against the rules of the strategy it chose; returns the report.
fn adaptive(doc: &str, cfg: &ChunkConfig) -> (Vec<Chunk>, Value) {
    let chunks = chunk_document(doc, cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
    let Some(first) = chunks.first() else { return (chunks, Value::Null) };
    let report = first.metadata["adaptive"].clone();
    assert!(chunks.iter().all(|c| c.metadata["adaptive"] == report), "one report for all chunks");
    let chosen = report["chosen"].as_str().unwrap();
    let mut chosen_cfg = cfg.clone();
    chosen_cfg.strategy = chosen.parse().unwrap();
    for check in [cfg, &chosen_cfg] {
        if let Err(broken) = check_chunks(doc, check, &chunks, &EstimatedTokens) {
            panic!("as {:?}: {broken}", check.strategy);
        }
    }
    (chunks, report)
}

#[test]
fn adaptive_returns_the_best_scoring_candidate_as_it_made_it() {
    for doc in [SAMPLE, HINDI_ENGLISH, CHINESE_ENGLISH] {
        for max in [json!(200), json!(500), json!(1000), json!(1500), json!("80 words"), json!("120 tokens")] {
            let cfg = config(json!({"max_size": max}));
            let (chunks, report) = adaptive(doc, &cfg);
            let scores = report["scores"].as_object().unwrap();
            assert_eq!(
                scores.keys().map(String::as_str).collect::<std::collections::BTreeSet<_>>(),
                std::collections::BTreeSet::from(CANDIDATES.map(Strategy::as_str))
            );
            let chosen = report["chosen"].as_str().unwrap();
            let best = scores.values().map(|v| v.as_f64().unwrap()).fold(f64::MIN, f64::max);
            assert_eq!(scores[chosen].as_f64().unwrap(), best, "{max}: {report}");
            let first_best = CANDIDATES.iter().find(|s| scores[s.as_str()].as_f64().unwrap() == best).unwrap();
            assert_eq!(chosen, first_best.as_str(), "ties go to the earlier strategy");
            for score in scores.values().map(|v| v.as_f64().unwrap()) {
                assert!((0.0..=1.0).contains(&score) && score == round4(score), "{score}");
            }
            // The chosen strategy's own chunks, untouched apart from the report.
            let mut alone = cfg.clone();
            alone.strategy = *first_best;
            let mut expected = chunk_document(doc, &alone, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
            expected.iter_mut().for_each(|c| _ = c.metadata.insert("adaptive".to_string(), report.clone()));
            assert_eq!(chunks, expected, "{max}");
            assert_eq!(adaptive(doc, &cfg).0, chunks, "deterministic");
        }
    }
}

#[test]
fn a_short_document_is_one_chunk_and_the_tie_goes_to_semantic() {
    let doc = "Bees make honey. The hive keeps it for winter.";
    let (chunks, report) = adaptive(doc, &config(json!({})));
    assert_eq!(chunks.len(), 1);
    assert_eq!(report["chosen"], "semantic");
    let scores: Vec<f64> = report["scores"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] == w[1]), "{report}");
}

#[test]
fn empty_documents_give_nothing() {
    for doc in ["", " \n\t "] {
        assert!(adaptive(doc, &config(json!({}))).0.is_empty());
    }
}

#[test]
fn sentences_are_embedded_once_for_every_candidate_and_the_score() {
    let cfg = config(json!({"max_size": 400, "inline_threshold": 0}));
    let mut counting = CountingEmbedder(0);
    chunk_document(SAMPLE, &cfg, &mut counting, &EstimatedTokens).unwrap();
    assert_eq!(counting.0, crate::sentences::split_sentences(SAMPLE).len());
}

#[test]
fn the_cache_answers_known_texts_and_passes_new_batches_through() {
    let mut counting = CountingEmbedder(0);
    let mut cache = CachedEmbedder::new(&mut counting);
    let first = cache.embed(&["Bees make honey.", "Rust compiles."]).unwrap();
    let again = cache.embed(&["Rust compiles.", "Bees make honey."]).unwrap();
    assert_eq!((again.row(0), again.row(1)), (first.row(1), first.row(0)));
    cache.embed(&["Bees make honey.", "Something new."]).unwrap();
    assert_eq!(counting.0, 4, "a batch with an unknown text goes through whole");
}
