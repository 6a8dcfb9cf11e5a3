//! Embedding texts with a loaded model through the per-backend cache, and the adapter that lets
//! the chunking core use a model as its embedder and token counter.

use crate::errors::Error;
use crate::gucs;
use crate::models::{record, with_model, LEXICAL};
use crate::stored_vectors::StoredVectors;
use crate::vector::Vector;
use pg_chunk_core::curve::Embeddings;
use pg_chunk_core::embed::Embedder;
use pg_chunk_core::lexical::lexical_embeddings;
use pg_chunk_core::size::TokenCounter;
use pg_chunk_core::ChunkError;
use pg_chunk_embed::{EmbedError, EmbeddingCache, Role, SentenceModel};
use pgrx::PgLogLevel;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::Instant;

thread_local! {
    /// Embeddings this backend computed, by model, role and text; sized by
    /// pg_chunk.embedding_cache_mb (rebuilt empty when the setting changes).
    static CACHE: RefCell<(usize, EmbeddingCache)> = RefCell::new((0, EmbeddingCache::new(0)));
}

/// Vectors for `texts` in order, and how many inputs the model truncated at its max_tokens.
pub struct Embedded {
    pub vectors: Embeddings,
    pub truncated: usize,
}

/// Embeds `texts` with `model`, taking what it can from the cache and embedding each missing
/// distinct text once. Checks for query cancel between inference batches.
pub fn embed_texts(
    name: &str,
    model: &mut dyn SentenceModel,
    texts: &[&str],
    role: Role,
) -> Result<Embedded, EmbedError> {
    let dim = model.spec().dimension;
    let key = format!("{name}/{role}");
    let mut data = vec![0f32; texts.len() * dim];
    // Texts not in the cache, each once, with every position it fills.
    let mut missing: Vec<&str> = Vec::new();
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut hits = 0;
    with_cache(|cache| {
        for (i, text) in texts.iter().enumerate() {
            match cache.get(&key, text) {
                Some(vector) if vector.len() == dim => {
                    data[i * dim..(i + 1) * dim].copy_from_slice(vector);
                    hits += 1;
                }
                _ => positions
                    .entry(text)
                    .or_insert_with(|| {
                        missing.push(text);
                        Vec::new()
                    })
                    .push(i),
            }
        }
    });
    let started = Instant::now();
    let mut truncated = 0;
    let (mut stored_hits, mut embedded) = (0, 0);
    if !missing.is_empty() {
        let stored = StoredVectors::open(name, model.spec(), role).unwrap_or_else(|e| raise(e));
        let fill = |text: &str, vector: &[f32], data: &mut [f32]| {
            for &i in &positions[text] {
                data[i * dim..(i + 1) * dim].copy_from_slice(vector);
            }
            with_cache(|cache| cache.insert(&key, text, vector.to_vec()));
        };
        if let Some(stored) = &stored {
            let found = stored.find(&missing, dim).unwrap_or_else(|e| raise(e));
            let mut still_missing = Vec::new();
            for (text, vector) in missing.into_iter().zip(found) {
                match vector {
                    Some(vector) => {
                        fill(text, &vector, &mut data);
                        stored_hits += 1;
                    }
                    None => still_missing.push(text),
                }
            }
            missing = still_missing;
        }
        if !missing.is_empty() {
            let output = model.embed(&missing, role, gucs::batch_size(), &mut || {
                pgrx::check_for_interrupts!();
            })?;
            if output.dimension != dim {
                return Err(EmbedError::DimensionMismatch { expected: dim, found: output.dimension });
            }
            truncated = output.truncated;
            embedded = missing.len();
            for (text, vector) in missing.iter().zip(output.vectors.chunks_exact(dim)) {
                fill(text, vector, &mut data);
            }
            if let Some(stored) = &stored {
                stored.save(&missing, &output.vectors, dim).unwrap_or_else(|e| raise(e));
            }
        }
    }
    record(name, |stats| {
        stats.sentences_embedded += embedded as i64;
        stats.cache_hits += hits;
        stats.stored_hits += stored_hits;
        stats.embed_ms += started.elapsed().as_secs_f64() * 1000.0;
    });
    Ok(Embedded { vectors: Embeddings::new(dim, data), truncated })
}

/// Raises `error` (an embedder's caller expects model errors only; the store's are rare).
fn raise(error: Error) -> ! {
    error.report("embed_texts").report(PgLogLevel::ERROR);
    unreachable!("an ERROR does not return")
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
        (lexical_embeddings(&texts), 0)
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

/// Empties this backend's cache (a model it holds vectors of was loaded again, changed).
pub fn forget_cached_vectors() {
    with_cache(|cache| cache.clear());
}

fn with_cache<R>(f: impl FnOnce(&mut EmbeddingCache) -> R) -> R {
    CACHE.with_borrow_mut(|(capacity, cache)| {
        let wanted = gucs::embedding_cache_bytes();
        if *capacity != wanted {
            *cache = EmbeddingCache::new(wanted);
            *capacity = wanted;
        }
        f(cache)
    })
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
}

impl TokenCounter for ModelAdapter<'_> {
    fn count_tokens(&self, text: &str) -> usize {
        // A model's tokenizer takes seconds over a large document, called once per sentence or
        // chunk: answer a cancel or statement_timeout between calls (a flag test when none is due).
        pgrx::check_for_interrupts!();
        self.model.borrow().count_tokens(text)
    }
}
