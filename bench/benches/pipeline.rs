//! Throughput of the pure pipeline on 1 MB of English prose (see bench/README.md).
//! Run: cargo bench -p pg_chunk_bench --bench pipeline

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use pg_chunk_bench::english_prose;
use pg_chunk_core::lexical::LexicalEmbedder;
use pg_chunk_core::sentences::split_sentences;
use pg_chunk_core::size::EstimatedTokens;
use pg_chunk_core::{chunk_document, ChunkConfig};
use serde_json::json;

const MB: usize = 1 << 20;

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 20)]
fn split_sentences_1mb(bencher: Bencher) {
    let doc = english_prose(MB);
    bencher.counter(BytesCount::new(doc.len())).bench(|| split_sentences(black_box(&doc)));
}

/// `semantic` is the default (optimal segmentation); `semantic-threshold` the percentile rule it replaced
/// (docs/design.md, "Percentile breakpoints and valleys").
#[divan::bench(sample_count = 20, args = ["semantic", "semantic-threshold", "fixed", "recursive"])]
fn chunk_1mb(bencher: Bencher, strategy: &str) {
    let doc = english_prose(MB);
    let cfg = match strategy {
        "semantic-threshold" => json!({"strategy": "semantic", "method": "threshold"}),
        _ => json!({ "strategy": strategy }),
    };
    let cfg = ChunkConfig::parse(&cfg).unwrap();
    bencher
        .counter(BytesCount::new(doc.len()))
        .bench(|| chunk_document(black_box(&doc), &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap());
}
