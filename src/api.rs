//! The SQL functions of schema `knowledge` (the schema comes from pg_chunk.control).
//!
//! Volatility: STABLE, not IMMUTABLE, because results depend on the embedding model a cfg
//! names, and a model can be re-registered; PARALLEL SAFE because each call only reads its
//! arguments. STRICT: a NULL document or cfg gives no rows.

use crate::errors::report;
use pg_chunk_core::config::Strategy;
use pg_chunk_core::embed::Embedder;
use pg_chunk_core::lexical::LexicalEmbedder;
use pg_chunk_core::offsets::CharCursor;
use pg_chunk_core::sentences::split_sentences as split_units;
use pg_chunk_core::size::EstimatedTokens;
use pg_chunk_core::{chunk_document, explain_semantic, ChunkConfig, ChunkError};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

/// Chunks `doc` with the strategy `cfg.strategy` names (semantic by default).
#[pg_extern(stable, parallel_safe, strict)]
fn chunk(
    doc: &str,
    cfg: default!(JsonB, "'{}'"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(chunk_index, i32),
            name!(content, String),
            name!(char_offset, i32),
            name!(char_length, i32),
            name!(token_count, i32),
            name!(metadata, JsonB),
        ),
    >,
    ErrorReport,
> {
    let cfg = ChunkConfig::parse(&cfg.0).map_err(|e| report(e, "chunk"))?;
    chunk_rows(doc, &cfg).map(TableIterator::new).map_err(|e| report(e, "chunk"))
}

/// Chunks `doc` where its meaning changes; `cfg.strategy`, if given, must be "semantic".
#[pg_extern(stable, parallel_safe, strict)]
fn semantic_chunk(
    doc: &str,
    cfg: default!(JsonB, "'{}'"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(chunk_index, i32),
            name!(content, String),
            name!(char_offset, i32),
            name!(char_length, i32),
            name!(token_count, i32),
            name!(metadata, JsonB),
        ),
    >,
    ErrorReport,
> {
    let cfg = semantic_config(&cfg.0).map_err(|e| report(e, "semantic_chunk"))?;
    chunk_rows(doc, &cfg).map(TableIterator::new).map_err(|e| report(e, "semantic_chunk"))
}

/// The sentences (and headings and list items) of `doc`, the units semantic chunking cuts between.
#[pg_extern(immutable, parallel_safe, strict)]
fn split_sentences(
    doc: &str,
) -> TableIterator<'static, (name!(sentence_index, i32), name!(content, String), name!(char_offset, i32), name!(char_length, i32))> {
    let mut cursor = CharCursor::new(doc);
    let rows: Vec<_> = split_units(doc)
        .into_iter()
        .enumerate()
        .map(|(i, unit)| {
            let text = unit.text(doc);
            (sql_int(i), text.to_string(), sql_int(cursor.char_offset(unit.start)), sql_int(text.chars().count()))
        })
        .collect();
    TableIterator::new(rows)
}

/// One row per sentence: the distance curve, the threshold, and where and why chunks start.
#[pg_extern(stable, parallel_safe, strict)]
fn chunk_explain(
    doc: &str,
    cfg: default!(JsonB, "'{}'"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(sentence_index, i32),
            name!(char_offset, i32),
            name!(char_length, i32),
            name!(distance, Option<f64>),
            name!(smoothed_distance, Option<f64>),
            name!(threshold, Option<f64>),
            name!(is_cut, bool),
            name!(reason, Option<String>),
        ),
    >,
    ErrorReport,
> {
    let cfg = semantic_config(&cfg.0).map_err(|e| report(e, "chunk_explain"))?;
    let mut embedder = embedder_for(&cfg).map_err(|e| report(e, "chunk_explain"))?;
    let explanation = explain_semantic(doc, &cfg, embedder.as_mut(), &EstimatedTokens).map_err(|e| report(e, "chunk_explain"))?;
    let threshold = Some(explanation.threshold).filter(|t| t.is_finite());
    let mut cursor = CharCursor::new(doc);
    let rows: Vec<_> = explanation
        .sentences
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let char_length = sql_int(s.span.text(doc).chars().count());
            (sql_int(i), sql_int(cursor.char_offset(s.span.start)), char_length, s.distance, s.smoothed_distance, threshold, s.is_cut, s.reason)
        })
        .collect();
    Ok(TableIterator::new(rows))
}

type ChunkRow = (i32, String, i32, i32, i32, JsonB);

fn chunk_rows(doc: &str, cfg: &ChunkConfig) -> Result<Vec<ChunkRow>, ChunkError> {
    let mut embedder = embedder_for(cfg)?;
    let chunks = chunk_document(doc, cfg, embedder.as_mut(), &EstimatedTokens)?;
    let mut cursor = CharCursor::new(doc);
    let mut rows = Vec::with_capacity(chunks.len());
    for (i, c) in chunks.iter().enumerate() {
        check_for_interrupts!();
        let text = c.text(doc);
        let mut metadata = json!({ "split_reason": c.split_reason });
        let overlap = c.overlap_chars(doc);
        if overlap > 0 {
            metadata["overlap_chars"] = json!(overlap);
        }
        let char_offset = sql_int(cursor.char_offset(c.start));
        rows.push((sql_int(i), text.to_string(), char_offset, sql_int(text.chars().count()), sql_int(c.token_count), JsonB(metadata)));
    }
    Ok(rows)
}

/// `cfg` with the semantic strategy, refusing any other that it names.
fn semantic_config(cfg: &Value) -> Result<ChunkConfig, ChunkError> {
    let parsed = ChunkConfig::parse(cfg)?;
    if parsed.strategy != Strategy::Semantic {
        return Err(ChunkError::config("strategy", &cfg["strategy"], "this function always uses the semantic strategy; call knowledge.chunk for others"));
    }
    Ok(parsed)
}

/// The embedder `cfg.model` names. Until the ONNX models arrive, "lexical" is the only one.
fn embedder_for(cfg: &ChunkConfig) -> Result<Box<dyn Embedder>, ChunkError> {
    match cfg.model.as_deref() {
        None | Some("lexical") => Ok(Box::new(LexicalEmbedder)),
        Some(other) => Err(ChunkError::UnknownModel(other.to_string())),
    }
}

/// SQL `int` for a count or offset. Documents are at most 1 GB (PostgreSQL's limit on a
/// value), so every offset fits; saturating keeps this total anyway.
fn sql_int(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
