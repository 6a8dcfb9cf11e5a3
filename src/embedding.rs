//! Embedding texts with a loaded model through the per-backend cache (`vector_cache`) and the
//! stored vectors, and the adapter that lets the chunking core use a model as its embedder and
//! token counter, with a backend's interrupt check.

use crate::errors::Error;
use crate::gucs;
use crate::heap;
use crate::models::{record, with_model, LEXICAL};
use crate::stored_vectors::{embedding_scope, raise, StoredVectors};
use crate::vector::Vector;
use crate::vector_cache::with_cache;
use pg_chunk_core::curve::Embeddings;
use pg_chunk_core::embed::Embedder;
use pg_chunk_core::lexical::lexical_embeddings;
use pg_chunk_core::size::TokenCounter;
use pg_chunk_core::ChunkError;
use pg_chunk_embed::reuse::{embed_reusing, Embedding};
use pg_chunk_embed::{EmbedError, Role, SentenceModel};
use std::cell::{Cell, RefCell};
use std::time::Instant;

/// Vectors for `texts` in order, and how many inputs the model truncated at its max_tokens.
pub struct Embedded {
    pub vectors: Embeddings,
    pub truncated: usize,
}

/// Embeds `texts` with `model`, through this backend's cache and, while the store embeds,
/// knowledge_internal.stored_vectors (`reuse::embed_reusing`: each missing distinct text once). Checks
/// for query cancel between inference batches.
pub fn embed_texts(
    name: &str,
    model: &mut dyn SentenceModel,
    texts: &[&str],
    role: Role,
) -> Result<Embedded, EmbedError> {
    let spec = model.spec().clone();
    let started = Instant::now();
    // Opened only when the cache misses a text.
    let open_store = || StoredVectors::open(name, &spec, role).unwrap_or_else(|e| raise(e));
    let scope = embedding_scope();
    let embedding = Embedding { name, scope: &scope, model, role, batch_size: gucs::batch_size() };
    let reused = with_cache(|cache| {
        embed_reusing(embedding, texts, cache, open_store, &mut || {
            pgrx::check_for_interrupts!();
        })
    })?;
    record(name, |stats| {
        stats.sentences_embedded += reused.embedded as i64;
        stats.cache_hits += reused.cache_hits as i64;
        stats.stored_hits += reused.stored_hits as i64;
        stats.embed_ms += started.elapsed().as_secs_f64() * 1000.0;
    });
    heap::trim_after_transaction_if_large(std::mem::size_of_val(reused.vectors.as_slice()));
    Ok(Embedded { vectors: Embeddings::new(spec.dimension, reused.vectors), truncated: reused.truncated })
}

/// Vectors for the non-NULL inputs (NULL for NULL ones), embedded in one batched call, and how
/// many inputs the model truncated.
pub struct EmbeddedRows {
    pub vectors: Vec<Option<Vector>>,
    pub truncated: usize,
}

/// Embeds `inputs` with the model `name` (a registered model or lexical), skipping NULLs.
pub fn embed_optional(inputs: &[Option<&str>], name: &str, role: Role) -> Result<EmbeddedRows, Error> {
    let texts: Vec<&str> = inputs.iter().flatten().copied().collect();
    let (vectors, truncated) = if name == LEXICAL {
        (lexical_embeddings(&texts, &check_for_cancel)?, 0)
    } else {
        let embedded = with_model(name, |m| embed_texts(name, m, &texts, role))?.map_err(|e| Error::Embed {
            source: e,
            model: name.to_string(),
            setting: "knowledge.models",
        })?;
        (embedded.vectors, embedded.truncated)
    };
    let mut rows = vectors.data.chunks_exact(vectors.dim.max(1)).map(|v| Some(Vector(v.to_vec())));
    let vectors = inputs.iter().map(|input| input.and_then(|_| rows.next().flatten())).collect();
    Ok(EmbeddedRows { vectors, truncated })
}

/// The chunking core's interrupt check (`Embedder::check_interrupt`) in a backend: a pending
/// cancel or statement_timeout raises its ERROR (57014) right here. pgrx turns the ERROR into a
/// Rust panic that unwinds through the core's frames (none catches it, and no C frame lies in
/// between) and raises it again at the SQL function's boundary, so this never returns `Err`.
pub fn check_for_cancel() -> Result<(), ChunkError> {
    pgrx::check_for_interrupts!();
    Ok(())
}

/// A loaded model seen by the chunking core: it embeds sentences (as passages) and counts
/// tokens. The core borrows it as embedder and token counter at once, hence the RefCell.
pub struct ModelAdapter<'a> {
    name: &'a str,
    model: RefCell<&'a mut dyn SentenceModel>,
    truncated: Cell<usize>,
}

impl<'a> ModelAdapter<'a> {
    pub fn new(name: &'a str, model: &'a mut dyn SentenceModel) -> ModelAdapter<'a> {
        ModelAdapter { name, model: RefCell::new(model), truncated: Cell::new(0) }
    }

    /// Inputs truncated at the model's max_tokens so far.
    pub fn truncated(&self) -> usize {
        self.truncated.get()
    }
}

impl Embedder for &ModelAdapter<'_> {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        let mut model = self.model.borrow_mut();
        // The model's error goes through the core whole, and comes out of it (errors.rs) as the
        // error `embed` gives for it, with the same SQLSTATE.
        let embedded = embed_texts(self.name, &mut **model, texts, Role::Passage)
            .map_err(|e| ChunkError::embedder(Error::embed(e, model.spec())))?;
        self.truncated.set(self.truncated.get() + embedded.truncated);
        Ok(embedded.vectors)
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        check_for_cancel()
    }
}

impl TokenCounter for ModelAdapter<'_> {
    fn count_tokens(&self, text: &str) -> usize {
        // A model's tokenizer takes seconds over a large document, called once per sentence or
        // chunk: answer a cancel or statement_timeout between calls (a flag test when none is due).
        pgrx::check_for_interrupts!();
        self.model.borrow().count_tokens(text)
    }
}
