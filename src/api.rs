//! The SQL functions of schema `knowledge` (the schema comes from pg_chunk.control).
//!
//! Volatility: STABLE, not IMMUTABLE, because results depend on the embedding model a cfg
//! names, and a model can be re-registered; PARALLEL SAFE because each call only reads its
//! arguments. STRICT: a NULL document or cfg gives no rows.

use crate::catalog;
use crate::cfg::Cfg;
use crate::chunking::{chunk_rows, notice_wide_chunks, sql_int, with_chunking_model, ChunkRow};
use crate::embedding::{check_for_cancel, embed_optional};
use crate::errors::Error;
use crate::gucs;
use crate::models::{self, with_model, LEXICAL};
use crate::vector::Vector;
use pg_chunk_core::config::Strategy;
use pg_chunk_core::explain::plot::{render_svg, PlotLabels};
use pg_chunk_core::offsets::CharCursor;
use pg_chunk_core::sentences::split_sentences_interruptible;
use pg_chunk_core::size::{EstimatedTokens, TokenCounter};
use pg_chunk_core::{explain_semantic, ChunkConfig, ChunkError};
use pg_chunk_embed::Role;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Chunks `doc` with the strategy `cfg.strategy` names (semantic by default).
#[pg_extern(stable, parallel_safe, strict)]
fn chunk(
    doc: &str,
    cfg: default!(Cfg, "'{}'"),
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
    let rows = cfg.parse().map_err(Error::from).and_then(|cfg| chunk_rows_with_notice(doc, &cfg));
    rows.map(TableIterator::new).map_err(|e| e.report("chunk"))
}

/// Chunks `doc` where its meaning changes; `cfg.strategy`, if given, must be "semantic".
#[pg_extern(stable, parallel_safe, strict)]
fn semantic_chunk(
    doc: &str,
    cfg: default!(Cfg, "'{}'"),
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
    let rows = semantic_config(&cfg).map_err(Error::from).and_then(|cfg| chunk_rows_with_notice(doc, &cfg));
    rows.map(TableIterator::new).map_err(|e| e.report("semantic_chunk"))
}

/// The sentences (and headings and list items) of `doc`, the units semantic chunking cuts between.
#[pg_extern(immutable, parallel_safe, strict)]
fn split_sentences(
    doc: &str,
) -> Result<
    TableIterator<
        'static,
        (name!(sentence_index, i32), name!(content, String), name!(char_offset, i32), name!(char_length, i32)),
    >,
    ErrorReport,
> {
    let units =
        split_sentences_interruptible(doc, &check_for_cancel).map_err(|e| Error::from(e).report("split_sentences"))?;
    let mut cursor = CharCursor::new(doc);
    let rows: Vec<_> = units
        .into_iter()
        .enumerate()
        .map(|(i, unit)| {
            let text = unit.text(doc);
            (sql_int(i), text.to_string(), sql_int(cursor.char_offset(unit.start)), sql_int(text.chars().count()))
        })
        .collect();
    Ok(TableIterator::new(rows))
}

/// One row per sentence: the distance curve, the threshold, and where and why chunks start.
/// `score` is what the method compared with `threshold` at the gap before the sentence (the
/// smoothed distance, or for optimal segmentation the coherence gained by cutting there).
#[pg_extern(stable, parallel_safe, strict)]
fn chunk_explain(
    doc: &str,
    cfg: default!(Cfg, "'{}'"),
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
            name!(score, Option<f64>),
        ),
    >,
    ErrorReport,
> {
    let cfg = semantic_config(&cfg).map_err(|e| Error::from(e).report("chunk_explain"))?;
    let (explanation, sizes) = with_chunking_model(&cfg, None, &|fitted, embedder, tokens| {
        Ok((explain_semantic(doc, fitted, embedder, tokens)?, (fitted.min_size, fitted.target_size, fitted.max_size)))
    })
    .map_err(|e| e.report("chunk_explain"))?;
    if cfg.explicit_sizes.max.is_none() && sizes.2 != cfg.max_size {
        let (min, target, max) = sizes;
        let model = cfg.model.clone().unwrap_or_else(gucs::default_model);
        let message = format!("sizes from the model: max_size is unset, so chunks are capped at the {max} that model \"{model}\" reads of a passage (min_size {min}, target_size {target})");
        ereport!(NOTICE, PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION, message);
    }
    let threshold = Some(explanation.threshold).filter(|t| t.is_finite());
    let mut cursor = CharCursor::new(doc);
    let rows: Vec<_> = explanation
        .sentences
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let char_length = sql_int(s.span.text(doc).chars().count());
            (
                sql_int(i),
                sql_int(cursor.char_offset(s.span.start)),
                char_length,
                s.distance,
                s.smoothed_distance,
                threshold,
                s.is_cut,
                s.reason_text(),
                s.score,
            )
        })
        .collect();
    Ok(TableIterator::new(rows))
}

/// `chunk_explain` as an SVG picture: the score curve, the threshold, the cuts and the chunks.
/// An empty document gives a picture that says so, not NULL.
#[pg_extern(stable, parallel_safe, strict)]
fn chunk_plot(doc: &str, cfg: default!(Cfg, "'{}'")) -> Result<String, ErrorReport> {
    let cfg = semantic_config(&cfg).map_err(|e| Error::from(e).report("chunk_plot"))?;
    // Labelled from the configuration the closure gets, which a model fallback may have changed.
    let svg = with_chunking_model(&cfg, None, &|cfg, embedder, tokens| {
        let explanation = explain_semantic(doc, cfg, embedder, tokens)?;
        let model = cfg.model.clone().unwrap_or_else(gucs::default_model);
        Ok(render_svg(&explanation, &PlotLabels::for_config(cfg, &model)))
    });
    svg.map_err(|e| e.report("chunk_plot"))
}

/// `chunk_rows`, with a NOTICE when chunks are longer than the model reads.
fn chunk_rows_with_notice(doc: &str, cfg: &ChunkConfig) -> Result<Vec<ChunkRow>, Error> {
    let rows = chunk_rows(doc, cfg, None)?;
    notice_wide_chunks(cfg, None, rows.iter().map(|row| row.4 as usize));
    Ok(rows)
}

/// `cfg` with the semantic strategy, refusing any other that it names.
fn semantic_config(cfg: &Cfg) -> Result<ChunkConfig, ChunkError> {
    let parsed = cfg.parse()?;
    if parsed.strategy != Strategy::Semantic {
        return Err(ChunkError::config(
            "strategy",
            &cfg.json()?["strategy"],
            "this function always uses the semantic strategy; call knowledge.chunk for others",
        ));
    }
    Ok(parsed)
}

/// The embedding of `input` with `model` (default: pg_chunk.default_model) as pgvector's
/// `vector`. `role` picks the model's query or passage prefix (e5's "query: " / "passage: ");
/// NULL means passage, as a NULL model means the default one.
#[pg_extern(stable, parallel_safe)]
fn embed(
    input: Option<&str>,
    model: default!(Option<&str>, "NULL"),
    role: default!(Option<&str>, "'passage'"),
) -> Result<Option<Vector>, ErrorReport> {
    let Some(input) = input else { return Ok(None) };
    let mut rows = embed_inputs(&[Some(input)], model, role).map_err(|e| e.report("embed"))?;
    Ok(rows.pop().flatten())
}

/// Embeddings of many inputs at once, batched; `ordinality` is the 1-based position in
/// `inputs` (a NULL input gets a NULL embedding).
#[pg_extern(stable, parallel_safe)]
fn embed_batch(
    inputs: Option<Vec<Option<String>>>,
    model: default!(Option<&str>, "NULL"),
    role: default!(Option<&str>, "'passage'"),
) -> Result<TableIterator<'static, (name!(ordinality, i32), name!(embedding, Option<Vector>))>, ErrorReport> {
    let inputs = inputs.unwrap_or_default();
    let texts: Vec<Option<&str>> = inputs.iter().map(Option::as_deref).collect();
    let vectors = embed_inputs(&texts, model, role).map_err(|e| e.report("embed_batch"))?;
    Ok(TableIterator::new(vectors.into_iter().enumerate().map(|(i, v)| (sql_int(i + 1), v))))
}

/// Tokens in `input` as `model`'s tokenizer counts them (no special tokens); an estimate for
/// `lexical`.
#[pg_extern(stable, parallel_safe)]
fn token_count(input: Option<&str>, model: default!(Option<&str>, "NULL")) -> Result<Option<i32>, ErrorReport> {
    let Some(input) = input else { return Ok(None) };
    let name = model.map_or_else(gucs::default_model, str::to_string);
    if name == LEXICAL {
        return Ok(Some(sql_int(EstimatedTokens.count_tokens(input))));
    }
    with_model(&name, |m| sql_int(m.count_tokens(input))).map(Some).map_err(|e| e.report("token_count"))
}

/// What this backend has done with each model: loads and their time, sentences embedded,
/// cache hits and time spent embedding.
#[pg_extern(volatile, parallel_safe)]
fn embedding_stats() -> TableIterator<
    'static,
    (
        name!(model, String),
        name!(loads, i64),
        name!(load_ms, f64),
        name!(sentences_embedded, i64),
        name!(cache_hits, i64),
        name!(embed_ms, f64),
        name!(stored_hits, i64),
        name!(chunks_written, i64),
    ),
> {
    TableIterator::new(models::stats().into_iter().map(|(name, s)| {
        (name, s.loads, s.load_ms, s.sentences_embedded, s.cache_hits, s.embed_ms, s.stored_hits, s.chunks_written)
    }))
}

/// Loads `model` (NULL: pg_chunk.default_model) into this backend, so that the first call that
/// embeds does not pay for it: for a connection pool's connect hook. Returns the milliseconds
/// the load took, 0 where the model was already loaded as it is registered (a changed row,
/// file or pg_chunk.threads loads it again, as any use would). `lexical` loads nothing.
/// Volatile: it changes this backend's state.
#[pg_extern(volatile)]
fn prewarm(model: default!(Option<&str>, "NULL")) -> Result<f64, ErrorReport> {
    let name = model.map_or_else(gucs::default_model, str::to_string);
    if name == LEXICAL {
        return Ok(0.0);
    }
    models::prewarm(&name).map_err(|e| e.report("prewarm"))
}

/// The version of this backend's pg_chunk library and that of the SQL installed in the database
/// (`pg_extension.extversion`). They differ between installing a new library and `ALTER
/// EXTENSION pg_chunk UPDATE`; a library older than the SQL is refused (catalog.rs), and this
/// function, never refused, shows both.
#[pg_extern(stable, parallel_safe)]
fn version() -> Result<TableIterator<'static, (name!(library, String), name!(sql, Option<String>))>, ErrorReport> {
    let sql = catalog::installed_sql_version().map_err(|e| e.report("version"))?;
    Ok(TableIterator::once((catalog::LIBRARY_VERSION.to_string(), sql)))
}

/// Reports, once per call of `embed` or `embed_batch`, the inputs longer than the model reads:
/// their vectors represent only the start of each. A NOTICE with SQLSTATE 01004
/// (string_data_right_truncation): the caller chose the texts and can embed shorter ones.
fn notice_truncation(model: &str, max_tokens: usize, truncated: usize, inputs: usize) {
    if truncated > 0 {
        let message = format!("{truncated} of {inputs} input(s) are longer than model \"{model}\" reads ({max_tokens} tokens, special tokens and prefix included): their vectors represent only the start of each such text");
        ErrorReport::new(PgSqlErrorCode::ERRCODE_WARNING_STRING_DATA_RIGHT_TRUNCATION, message, "notice_truncation")
            .set_detail("The rest of such a text does not count in its vector: a search cannot find it by what it says past its start.")
            .set_hint("Embed shorter texts: knowledge.chunk cuts a long text into chunks the model reads whole.")
            .report(PgLogLevel::NOTICE);
    }
}

/// Embeds the inputs in one batched call with `model` (NULL: the default model), with a NOTICE
/// if the model read only the start of any (`notice_truncation`).
fn embed_inputs(
    inputs: &[Option<&str>],
    model: Option<&str>,
    role: Option<&str>,
) -> Result<Vec<Option<Vector>>, Error> {
    let role = match role.map(str::parse::<Role>) {
        None => Role::Passage,
        Some(Ok(role)) => role,
        Some(Err(unknown)) => {
            let value = format!("\"{}\"", unknown.value);
            return Err(ChunkError::config("role", value, "must be \"query\" or \"passage\"").into());
        }
    };
    let name = model.map_or_else(gucs::default_model, str::to_string);
    let embedded = embed_optional(inputs, &name, role)?;
    if embedded.truncated > 0 {
        let max_tokens = with_model(&name, |model| model.spec().max_tokens)?;
        notice_truncation(&name, max_tokens, embedded.truncated, inputs.iter().flatten().count());
    }
    Ok(embedded.vectors)
}
