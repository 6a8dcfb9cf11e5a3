//! What the strategies' tests share: chunking a document with the model-free embedder and
//! estimated tokens, checked against the contract every strategy keeps.

use super::{chunk_document, Chunk};
use crate::config::ChunkConfig;
use crate::invariants::check_chunks;
use crate::lexical::LexicalEmbedder;
use crate::size::EstimatedTokens;
use serde_json::Value;

/// `doc` chunked with `cfg`, after `check_chunks` found nothing wrong (it panics otherwise).
pub fn chunk_checked(doc: &str, cfg: &Value) -> (ChunkConfig, Vec<Chunk>) {
    let cfg = ChunkConfig::parse(cfg).unwrap_or_else(|e| panic!("{cfg}: {e}"));
    let chunks = chunk_document(doc, &cfg, &mut LexicalEmbedder, &EstimatedTokens).unwrap();
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
    chunks.iter().map(|c| c.split_reason).collect()
}
