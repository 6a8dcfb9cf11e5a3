//! Runs the chunking core with the model a cfg names: the lexical embedder, or a registered
//! model loaded in this backend, with `cfg.fallback` when the model cannot be loaded. Builds the
//! rows of `knowledge.chunk`, which `api` returns and `store` embeds.

use crate::embedding::{check_for_cancel, ModelAdapter};
use crate::errors::Error;
use crate::gucs;
use crate::models::{with_model, with_models, LEXICAL};
use pg_chunk_core::chunk_document;
use pg_chunk_core::config::Fallback;
use pg_chunk_core::embed::Embedder;
use pg_chunk_core::lexical::LexicalEmbedder;
use pg_chunk_core::offsets::CharCursor;
use pg_chunk_core::size::{EstimatedTokens, TokenCounter};
use pg_chunk_core::{ChunkConfig, ChunkError};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::json;

/// The function `with_chunking_model` runs: it gets the configuration to use, and the embedder
/// and token counter for it.
pub type ChunkingRun<'f, R> = dyn Fn(&ChunkConfig, &mut dyn Embedder, &dyn TokenCounter) -> Result<R, ChunkError> + 'f;

/// Runs `f` with the model the cfg names. With a model, a cfg that sets no max_size gets chunks
/// the model reads whole (`ChunkConfig::model_window`, `ChunkConfig::for_model_window`).
/// `reader` names the model that embeds the chunks where that is another one (a store config
/// whose cfg names a model of its own, to cut with): the chunks are then sized for the reader's
/// window and counted in its tokens, while the cfg's model still finds where the meaning changes.
pub fn with_chunking_model<R>(cfg: &ChunkConfig, reader: Option<&str>, f: &ChunkingRun<'_, R>) -> Result<R, Error> {
    let name = cfg.model.clone().unwrap_or_else(gucs::default_model);
    let reader = reader.filter(|reader| *reader != name && *reader != LEXICAL);
    // The chunking run, sized for the window of the model whose tokens `counter` counts.
    let run = |embedder: &mut dyn Embedder, window: usize, counter: &dyn TokenCounter| {
        cfg.for_model_window(cfg.model_window(window)).and_then(|fitted| f(&fitted, embedder, counter))
    };
    let outcome = match reader {
        None if name == LEXICAL => {
            return Ok(f(cfg, &mut LexicalEmbedder::with_interrupt(check_for_cancel), &EstimatedTokens)?);
        }
        Some(reader) if name == LEXICAL => with_model(reader, |reading| {
            let window = reading.passage_window();
            let counter = ModelAdapter::new(reader, reading);
            (run(&mut LexicalEmbedder::with_interrupt(check_for_cancel), window, &counter), (0, 0))
        }),
        None => with_model(&name, |model| {
            let window = model.passage_window();
            let adapter = ModelAdapter::new(&name, model);
            (run(&mut &adapter, window, &adapter), (adapter.truncated(), window))
        }),
        Some(reader) => with_models([&name, reader], |model, reading| {
            let (window, sentence_window) = (reading.passage_window(), model.passage_window());
            let (adapter, counter) = (ModelAdapter::new(&name, model), ModelAdapter::new(reader, reading));
            (run(&mut &adapter, window, &counter), (adapter.truncated(), sentence_window))
        }),
    };
    match outcome {
        Ok((result, (long_sentences, sentence_window))) => {
            debug_long_sentences(&name, sentence_window, long_sentences);
            // A model failing while chunking comes out as its own error (errors.rs), with the
            // SQLSTATE `embed` gives.
            Ok(result?)
        }
        Err(err @ Error::Embed { .. }) if cfg.fallback != Fallback::Error && name != LEXICAL => {
            ereport!(
                WARNING,
                PgSqlErrorCode::ERRCODE_WARNING,
                format!("{err}; chunking with fallback \"{}\" instead", cfg.fallback)
            );
            with_chunking_model(&fallback_config(cfg)?, reader, f)
        }
        Err(err) => Err(err),
    }
}

/// Reports, once per call, chunks longer than the model that embeds them reads (`reader`, else
/// the cfg's model), which an explicit max_size wider than the model allows (an unset one never
/// does). `token_counts` are in that model's tokens (`with_chunking_model` counts them so).
pub fn notice_wide_chunks(cfg: &ChunkConfig, reader: Option<&str>, token_counts: impl Iterator<Item = usize>) {
    let Some(max) = cfg.explicit_sizes.max else {
        return;
    };
    let name = reader.map(str::to_string).or_else(|| cfg.model.clone()).unwrap_or_else(gucs::default_model);
    if name == LEXICAL {
        return;
    }
    let Ok(window) = with_model(&name, |model| cfg.model_window(model.passage_window())) else { return };
    let (mut wide, mut all) = (0, 0);
    for tokens in token_counts {
        all += 1;
        wide += usize::from(tokens > window);
    }
    if wide > 0 {
        let message = format!("max_size {max} is wider than model \"{name}\" reads: {wide} of {all} chunks are longer than its {window} tokens, and only their first {window} tokens are embedded");
        ErrorReport::new(PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION, message, "notice_wide_chunks")
            .set_hint(format!(
                "Leave max_size unset to size chunks by the model, or set it to at most \"{window} tokens\"."
            ))
            .report(PgLogLevel::NOTICE);
    }
}

/// Reports, once per chunking call, the sentences longer than the model that embeds them reads
/// (`window` of their own tokens). Chunking embeds every sentence to find where the meaning
/// changes, and the model reads such a sentence (a table row, a line of code) by its first
/// `window` tokens; the chunks are cut from the document, so they hold it whole and lose nothing.
/// DEBUG1, not a NOTICE: whoever chunks has nothing to act on (the text is as it is, and the
/// chunks are right), and it would read like data loss on every insert of a page with a table;
/// someone studying where the cuts fall sees it with `SET client_min_messages = debug1`.
fn debug_long_sentences(model: &str, window: usize, long_sentences: usize) {
    if long_sentences > 0 {
        let message = format!("{long_sentences} sentence(s) longer than model \"{model}\" reads were embedded by their first {window} tokens to find where the meaning changes; the chunks hold them whole");
        ErrorReport::new(PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION, message, "debug_long_sentences")
            .set_detail("Chunking compares the sentences' vectors to place its cuts; a sentence longer than the model reads is compared by its start. The chunks are cut from the document, not from what was embedded.")
            .report(PgLogLevel::DEBUG1);
    }
}

/// The configuration a fallback chunks with: the same one with the lexical model, or the
/// fixed fallback (350 characters, overlap 50; docs/design.md, "Short documents and the fixed
/// fallback") within the same document limit.
fn fallback_config(cfg: &ChunkConfig) -> Result<ChunkConfig, ChunkError> {
    match cfg.fallback {
        Fallback::Fixed => ChunkConfig::parse(
            &json!({"strategy": "fixed", "model": LEXICAL, "max_document_size": cfg.max_document_size}),
        ),
        Fallback::Lexical | Fallback::Error => Ok(ChunkConfig { model: Some(LEXICAL.to_string()), ..cfg.clone() }),
    }
}

/// A row of `knowledge.chunk`: chunk_index, content, char_offset, char_length, token_count, metadata.
pub type ChunkRow = (i32, String, i32, i32, i32, JsonB);

/// The rows of `knowledge.chunk(doc, cfg)`; with a `reader`, sized for the model that will embed
/// them and counted in its tokens (`with_chunking_model`).
pub fn chunk_rows(doc: &str, cfg: &ChunkConfig, reader: Option<&str>) -> Result<Vec<ChunkRow>, Error> {
    let chunks = with_chunking_model(cfg, reader, &|cfg, embedder, tokens| chunk_document(doc, cfg, embedder, tokens))?;
    let mut cursor = CharCursor::new(doc);
    let mut rows = Vec::with_capacity(chunks.len());
    for (i, c) in chunks.iter().enumerate() {
        check_for_interrupts!();
        let text = c.text(doc);
        let mut metadata = json!({ "split_reason": c.split_reason.as_str() });
        let overlap = c.overlap_chars(doc);
        if overlap > 0 {
            metadata["overlap_chars"] = json!(overlap);
        }
        for (key, value) in &c.metadata {
            metadata[key] = value.clone();
        }
        if let Some(context) = &c.context {
            metadata["context"] = json!(context);
        }
        let char_offset = sql_int(cursor.char_offset(c.start));
        rows.push((
            sql_int(i),
            text.to_string(),
            char_offset,
            sql_int(text.chars().count()),
            sql_int(c.token_count),
            JsonB(metadata),
        ));
    }
    Ok(rows)
}

/// SQL `int` for a count or offset. Documents are at most 1 GB (PostgreSQL's limit on a
/// value), so every offset fits; saturating keeps this total anyway.
pub fn sql_int(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
