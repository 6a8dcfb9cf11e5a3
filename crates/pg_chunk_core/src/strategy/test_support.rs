//! What the strategies' tests share: chunking a document with the model-free embedder and
//! estimated tokens, checked against the contract every strategy keeps.

use super::{chunk_document, Chunk};
use crate::config::ChunkConfig;
use crate::curve::Embeddings;
use crate::embed::Embedder;
use crate::error::ChunkError;
use crate::invariants::check_chunks;
use crate::lexical::LexicalEmbedder;
use crate::size::EstimatedTokens;
use serde_json::{json, Value};

pub const SAMPLE: &str = include_str!("../../tests/fixtures/sample.txt");
pub const ZH_EN: &str = include_str!("../../../../tests/fixtures/zh_en_topics.txt");
pub const HI_EN: &str = include_str!("../../../../tests/fixtures/hi_en_topics.txt");

/// Real documents (English; Chinese and Hindi mixed with English) with cfgs of every kind of
/// size, tight and loose, and every kind of overlap.
pub fn real_texts_and_sizes() -> impl Iterator<Item = (&'static str, Value)> {
    let sizes = [json!(300), json!(1000), json!(1500), json!("100 words"), json!("200 tokens"), json!(40)];
    let overlaps = [json!(0), json!("1 sentences"), json!(20)];
    [SAMPLE, ZH_EN, HI_EN].into_iter().flat_map(move |doc| {
        let overlaps = overlaps.clone();
        sizes.clone().into_iter().flat_map(move |max| {
            overlaps.clone().into_iter().map(move |overlap| (doc, json!({"max_size": max, "overlap": overlap})))
        })
    })
}

/// The model-free embedder, counting the texts it is asked to embed.
pub struct CountingEmbedder(pub usize);

impl Embedder for CountingEmbedder {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        self.0 += texts.len();
        LexicalEmbedder::new().embed(texts)
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        Ok(())
    }
}

/// `doc` chunked with `cfg`, after `check_chunks` found nothing wrong (it panics otherwise).
pub fn chunk_checked(doc: &str, cfg: &Value) -> (ChunkConfig, Vec<Chunk>) {
    let cfg = ChunkConfig::parse(cfg).unwrap_or_else(|e| panic!("{cfg}: {e}"));
    let chunks = chunk_document(doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
    if let Err(broken) = check_chunks(doc, &cfg, &chunks, &EstimatedTokens) {
        panic!("{broken}\nin {doc:?}");
    }
    (cfg, chunks)
}

/// `cfg` with `"strategy"` set.
pub fn with_strategy(strategy: &str, cfg: Value) -> Value {
    let mut cfg = cfg;
    cfg["strategy"] = Value::from(strategy);
    cfg
}

pub fn texts<'a>(doc: &'a str, chunks: &[Chunk]) -> Vec<&'a str> {
    chunks.iter().map(|c| c.text(doc)).collect()
}

pub fn reasons(chunks: &[Chunk]) -> Vec<&'static str> {
    chunks.iter().map(|c| c.split_reason.as_str()).collect()
}
