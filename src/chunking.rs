//! Runs the chunking core with the model a cfg names: the lexical embedder, or a registered
//! model loaded in this backend, with `cfg.fallback` when the model cannot be loaded.

use crate::embedding::ModelAdapter;
use crate::errors::Error;
use crate::gucs;
use crate::models::{with_model, LEXICAL};
use pg_chunk_core::config::Fallback;
use pg_chunk_core::embed::Embedder;
use pg_chunk_core::lexical::LexicalEmbedder;
use pg_chunk_core::size::{EstimatedTokens, TokenCounter};
use pg_chunk_core::{ChunkConfig, ChunkError};
use pgrx::prelude::*;
use serde_json::json;

/// Calls `f` with the configuration to use and the embedder and token counter for it.
pub fn with_chunking_model<R>(cfg: &ChunkConfig, f: impl Fn(&ChunkConfig, &mut dyn Embedder, &dyn TokenCounter) -> Result<R, ChunkError>) -> Result<R, Error> {
    let name = cfg.model.clone().unwrap_or_else(gucs::default_model);
    if name == LEXICAL {
        return Ok(f(cfg, &mut LexicalEmbedder, &EstimatedTokens)?);
    }
    let outcome = with_model(&name, |model| {
        let adapter = ModelAdapter::new(&name, model);
        let mut embedder = &adapter;
        let result = f(cfg, &mut embedder, &adapter);
        (result, adapter.truncated())
    });
    match outcome {
        Ok((result, truncated)) => {
            notice_truncation(&name, truncated);
            Ok(result?)
        }
        Err(err @ Error::Embed { .. }) if cfg.fallback != Fallback::Error => {
            ereport!(WARNING, PgSqlErrorCode::ERRCODE_WARNING, format!("{err}; chunking with fallback \"{}\" instead", fallback_name(cfg.fallback)));
            let fallback_cfg = fallback_config(cfg)?;
            Ok(f(&fallback_cfg, &mut LexicalEmbedder, &EstimatedTokens)?)
        }
        Err(err) => Err(err),
    }
}

/// Reports, once per call, that some inputs were longer than the model takes.
pub fn notice_truncation(model: &str, truncated: usize) {
    if truncated > 0 {
        ereport!(NOTICE, PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION, format!("{truncated} input(s) were longer than model \"{model}\" takes and were truncated to its max_tokens"));
    }
}

fn fallback_name(fallback: Fallback) -> &'static str {
    match fallback {
        Fallback::Error => "error",
        Fallback::Lexical => "lexical",
        Fallback::Fixed => "fixed",
    }
}

/// The configuration a fallback chunks with: the same one with the lexical model, or the
/// seed design's fixed fallback (350 characters, overlap 50) within the same document limit.
fn fallback_config(cfg: &ChunkConfig) -> Result<ChunkConfig, ChunkError> {
    match cfg.fallback {
        Fallback::Fixed => {
            ChunkConfig::parse(&json!({"strategy": "fixed", "model": LEXICAL, "max_document_size": cfg.max_document_size}))
        }
        Fallback::Lexical | Fallback::Error => Ok(ChunkConfig { model: Some(LEXICAL.to_string()), ..cfg.clone() }),
    }
}
