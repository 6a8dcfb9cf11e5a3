//! The SQL functions the knowledge store (src/sql/store_*.sql) is built on: chunks with their
//! embeddings, the fingerprint of a model's weights, and cfg validation for chunk_configs. They
//! are in schema knowledge_internal (src/sql/models.sql says why).

use crate::catalog;
use crate::cfg::Cfg;
use crate::chunking::{chunk_rows, notice_wide_chunks};
use crate::embedding::embed_optional;
use crate::errors::Error;
use crate::gucs;
use crate::models::{self, LEXICAL};
use crate::stored_vectors;
use crate::vector::Vector;
use pg_chunk_core::strategy::embedded_text;
use pg_chunk_embed::Role;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::JsonB;
use std::borrow::Cow;

/// The chunks of several documents as `knowledge.chunk(doc, cfg)` gives them, with their
/// document ids, each embedded by `model` (NULL: `cfg.model`, else pg_chunk.default_model) as a
/// passage. Where `model` is not the model `cfg` cuts with, the chunks are sized for `model` and
/// their token_count is in its tokens (`with_chunking_model`'s reader), so that a cfg without
/// max_size gives chunks `model` reads whole. Chunks longer than the model's max_tokens (an
/// explicit max_size can make them) are embedded from their start; unlike
/// `embed`, that raises no NOTICE, since long chunks are normal here. All the chunks go to the
/// model together, so a batch of short documents fills inference batches that each document
/// alone would leave half empty (knowledge_internal.write_chunks; knowledge_internal.embed_chunks
/// is the one-document form, in SQL).
#[pg_extern(stable, parallel_safe, schema = "knowledge_internal")]
fn embed_chunks_batch(
    document_ids: Option<Vec<Option<i64>>>,
    docs: Option<Vec<Option<String>>>,
    cfg: default!(Option<Cfg>, "'{}'"),
    model: default!(Option<&str>, "NULL"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(document_id, i64),
            name!(chunk_index, i32),
            name!(content, String),
            name!(char_offset, i32),
            name!(char_length, i32),
            name!(token_count, i32),
            name!(metadata, JsonB),
            name!(model, String),
            name!(embedding, Option<Vector>),
        ),
    >,
    ErrorReport,
> {
    embedded_chunk_rows(document_ids, docs, cfg, model, "embed_chunks_batch")
}

/// What knowledge_internal.write_chunks stores for chunk config `config`: embed_chunks_batch, each
/// text's vector looked up in knowledge_internal.stored_vectors first (among those stored for
/// `config`) and saved there when it had to be embedded (docs/store.md, "Reuse: an edit embeds
/// what it changed"). Volatile: it writes that table.
#[pg_extern(volatile, schema = "knowledge_internal")]
fn embed_config_chunks(
    config: &str,
    document_ids: Option<Vec<Option<i64>>>,
    docs: Option<Vec<Option<String>>>,
    cfg: default!(Option<Cfg>, "'{}'"),
    model: default!(Option<&str>, "NULL"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(document_id, i64),
            name!(chunk_index, i32),
            name!(content, String),
            name!(char_offset, i32),
            name!(char_length, i32),
            name!(token_count, i32),
            name!(metadata, JsonB),
            name!(model, String),
            name!(embedding, Option<Vector>),
        ),
    >,
    ErrorReport,
> {
    stored_vectors::while_storing(config, || embedded_chunk_rows(document_ids, docs, cfg, model, "embed_config_chunks"))
}

/// embed_config_chunks as releases up to 0.4.0 call it, without a config (their vectors are
/// stored for none): a library serves the SQL of earlier releases until `ALTER EXTENSION pg_chunk
/// UPDATE` (catalog.rs), and their knowledge_internal.write_chunks calls this. Not in this
/// release's SQL.
#[pg_extern(volatile, schema = "knowledge_internal", sql = false)]
fn embed_chunks_stored(
    document_ids: Option<Vec<Option<i64>>>,
    docs: Option<Vec<Option<String>>>,
    cfg: default!(Option<Cfg>, "'{}'"),
    model: default!(Option<&str>, "NULL"),
) -> Result<
    TableIterator<
        'static,
        (
            name!(document_id, i64),
            name!(chunk_index, i32),
            name!(content, String),
            name!(char_offset, i32),
            name!(char_length, i32),
            name!(token_count, i32),
            name!(metadata, JsonB),
            name!(model, String),
            name!(embedding, Option<Vector>),
        ),
    >,
    ErrorReport,
> {
    stored_vectors::while_storing("", || embedded_chunk_rows(document_ids, docs, cfg, model, "embed_chunks_stored"))
}

type EmbeddedChunkTable = TableIterator<'static, (i64, i32, String, i32, i32, i32, JsonB, String, Option<Vector>)>;

fn embedded_chunk_rows(
    document_ids: Option<Vec<Option<i64>>>,
    docs: Option<Vec<Option<String>>>,
    cfg: Option<Cfg>,
    model: Option<&str>,
    function: &'static str,
) -> Result<EmbeddedChunkTable, ErrorReport> {
    catalog::check_library_serves_sql().map_err(|e| e.report(function))?;
    let (Some(ids), Some(docs), Some(cfg)) = (document_ids, docs, cfg) else {
        return Ok(TableIterator::new(Vec::new()));
    };
    if ids.len() != docs.len() {
        let message = format!("document_ids has {} elements and docs {}; they must match", ids.len(), docs.len());
        return Err(Error::InvalidArgument(message).report(function));
    }
    // A NULL id or document has no chunks.
    let pairs: Vec<(i64, &str)> =
        ids.iter().zip(&docs).filter_map(|(id, doc)| Some(((*id)?, doc.as_deref()?))).collect();
    let rows = chunks_of_documents(&pairs, &cfg, model).map_err(|e| e.report(function))?;
    Ok(TableIterator::new(rows.into_iter().map(
        |(id, (index, content, offset, length, tokens, metadata, model, vector))| {
            (id, index, content, offset, length, tokens, metadata, model, vector)
        },
    )))
}

type EmbeddedChunkRow = (i32, String, i32, i32, i32, JsonB, String, Option<Vector>);

fn chunks_of_documents(
    docs: &[(i64, &str)],
    cfg: &Cfg,
    model: Option<&str>,
) -> Result<Vec<(i64, EmbeddedChunkRow)>, Error> {
    let cfg = cfg.parse()?;
    let model = model.map(str::to_string).or_else(|| cfg.model.clone()).unwrap_or_else(gucs::default_model);
    let mut chunks = Vec::new();
    for &(id, doc) in docs {
        chunks.extend(chunk_rows(doc, &cfg, Some(&model))?.into_iter().map(|row| (id, row)));
    }
    notice_wide_chunks(&cfg, Some(&model), chunks.iter().map(|(_, row)| row.4 as usize));
    // A chunk's context (a split function's signature, a section's heading path) goes before
    // it in the text that is embedded; its content stays exact.
    let texts: Vec<Cow<'_, str>> = chunks
        .iter()
        .map(|(_, (_, content, _, _, _, metadata))| {
            embedded_text(metadata.0.get("context").and_then(|c| c.as_str()), content)
        })
        .collect();
    let texts: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_ref())).collect();
    let embedded = embed_optional(&texts, &model, Role::Passage)?;
    Ok(chunks
        .into_iter()
        .zip(embedded.vectors)
        .map(|((id, (index, content, offset, length, tokens, metadata)), vector)| {
            (id, (index, content, offset, length, tokens, metadata, model.clone(), vector))
        })
        .collect())
}

/// Counts `chunks` rows that knowledge_internal.write_chunks inserted with `model`'s vectors, for this
/// backend's knowledge.embedding_stats().
#[pg_extern(volatile, strict, schema = "knowledge_internal")]
fn count_chunks_written(model: &str, chunks: i64) {
    models::record(model, |stats| stats.chunks_written += chunks);
}

/// pg_chunk.maintain_chunks, as the triggers of src/sql/store_triggers.sql read it. Calling it
/// loads pg_chunk in the backend first, which defines the setting: a value set before that, as an unknown
/// placeholder, by a role that may not set it, is then refused (a WARNING) and the default
/// holds. `current_setting` alone would read the placeholder. Every trigger that writes chunks
/// calls it first, so a library older than the installed SQL is refused there (catalog.rs).
#[pg_extern(stable, parallel_safe, schema = "knowledge_internal")]
fn maintains_chunks() -> Result<bool, ErrorReport> {
    catalog::check_library_serves_sql().map_err(|e| e.report("maintains_chunks"))?;
    Ok(gucs::maintain_chunks())
}

/// The sha256 of the weights file `model` is registered with (NULL for lexical, which has
/// none): knowledge.embedding_runs records it, so each stored vector says which weights made it.
#[pg_extern(volatile, parallel_safe, strict, schema = "knowledge_internal")]
fn model_file_sha256(model: &str) -> Result<Option<String>, ErrorReport> {
    if model == LEXICAL {
        return Ok(None);
    }
    models::model_file_sha256(model).map(Some).map_err(|e| e.report("model_file_sha256"))
}

/// True for a cfg that knowledge.chunk accepts; otherwise raises 22023 naming the key, as
/// knowledge.chunk would. knowledge.chunk_configs checks its cfg column with it.
#[pg_extern(immutable, parallel_safe, strict, schema = "knowledge_internal")]
fn check_chunk_config(cfg: Cfg) -> Result<bool, ErrorReport> {
    cfg.parse().map(|_| true).map_err(|e| Error::from(e).report("check_chunk_config"))
}
