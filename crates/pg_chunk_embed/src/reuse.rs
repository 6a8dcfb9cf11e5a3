//! Embedding the texts of one call, each distinct text at most once: a vector comes from the
//! backend's [`EmbeddingCache`] first, then from the vectors a store kept ([`VectorStore`]), and
//! only the rest from the model; what the model made goes to the store and the cache.

use crate::{EmbedError, EmbeddingCache, Role, SentenceModel};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// Vectors kept between calls by someone other than this backend (the knowledge store's table).
pub trait VectorStore {
    /// The stored vector of each text, in order; `None` where there is none of the model's
    /// dimension.
    fn find(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>>;
    /// Keeps the vectors just made for `texts` (`vectors`: one row per text, in order).
    fn save(&self, texts: &[&str], vectors: &[f32]);
}

/// The vectors of one call's texts and where they came from.
#[derive(Debug, PartialEq)]
pub struct Reused {
    /// One row of the model's dimension per input text, in input order.
    pub vectors: Vec<f32>,
    /// Inputs the model cut at its max_tokens.
    pub truncated: usize,
    /// Inputs whose vector was in the cache (a repeated text counts each time).
    pub cache_hits: usize,
    /// Distinct texts whose vector the store had.
    pub stored_hits: usize,
    /// Distinct texts the model embedded.
    pub embedded: usize,
}

/// How model `name` embeds texts for one call: as `role`, in batches of `batch_size`, calling
/// `between_batches` between them (see [`SentenceModel::embed`]) and every `batch_size` texts of
/// the cache's look-ups and stores.
pub struct Embedding<'a> {
    /// The name the cache keys the model's vectors by.
    pub name: &'a str,
    /// Whose vectors these are (a chunk config of the store, say): the cache keeps each scope's
    /// apart, as the store's keys do, so that no scope learns from a hit what another embedded.
    pub scope: &'a str,
    /// The loaded model.
    pub model: &'a mut dyn SentenceModel,
    /// Which prefix the texts get.
    pub role: Role,
    /// Inputs per inference batch.
    pub batch_size: usize,
}

/// The vectors of `texts`: from `cache`, then from the store `open_store` gives (it is called
/// only when the cache misses some text), then from the model, each distinct missing text
/// embedded once. What the model made is saved to the store and the cache.
pub fn embed_reusing<S: VectorStore>(
    embedding: Embedding<'_>,
    texts: &[&str],
    cache: &mut EmbeddingCache,
    open_store: impl FnOnce() -> Option<S>,
    between_batches: &mut dyn FnMut(),
) -> Result<Reused, EmbedError> {
    let Embedding { name, scope, model, role, batch_size } = embedding;
    let dim = model.spec().dimension;
    let key = format!("{name}/{role}/{scope}");
    let mut data = vec![0f32; texts.len() * dim];
    // Texts not in the cache, each once, with every position it fills.
    let mut missing: Vec<&str> = Vec::new();
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut reused = Reused { vectors: Vec::new(), truncated: 0, cache_hits: 0, stored_hits: 0, embedded: 0 };
    for (i, text) in texts.iter().enumerate() {
        at_batch_start(i, batch_size, between_batches);
        match cache.get(&key, text) {
            Some(vector) if vector.len() == dim => {
                data[i * dim..(i + 1) * dim].copy_from_slice(vector);
                reused.cache_hits += 1;
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
    let mut fill = |text: &str, vector: &[f32], cache: &mut EmbeddingCache| {
        for &i in &positions[text] {
            data[i * dim..(i + 1) * dim].copy_from_slice(vector);
        }
        cache.insert(&key, text, vector.to_vec());
    };
    let store = if missing.is_empty() { None } else { open_store() };
    if let Some(store) = &store {
        let found = store.find(&missing);
        let mut still_missing = Vec::new();
        for (i, (text, vector)) in missing.into_iter().zip(found).enumerate() {
            at_batch_start(i, batch_size, between_batches);
            match vector.filter(|v| v.len() == dim) {
                Some(vector) => {
                    fill(text, &vector, cache);
                    reused.stored_hits += 1;
                }
                None => still_missing.push(text),
            }
        }
        missing = still_missing;
    }
    if !missing.is_empty() {
        let output = model.embed(&missing, role, batch_size, between_batches)?;
        if output.dimension != dim {
            return Err(EmbedError::DimensionMismatch { expected: dim, found: output.dimension });
        }
        reused.truncated = output.truncated;
        reused.embedded = missing.len();
        for (i, (text, vector)) in missing.iter().zip(output.vectors.chunks_exact(dim)).enumerate() {
            at_batch_start(i, batch_size, between_batches);
            fill(text, vector, cache);
        }
        if let Some(store) = &store {
            store.save(&missing, &output.vectors);
        }
    }
    reused.vectors = data;
    Ok(reused)
}

/// Calls `between_batches` before text `index` of a loop when it starts a batch's worth of texts:
/// a large document's look-ups and stores take as long as a static model's embedding (100,000
/// sentences: 0.3 s to cache), and a cancel should stop them as it stops the model.
fn at_batch_start(index: usize, batch_size: usize, between_batches: &mut dyn FnMut()) {
    if index.is_multiple_of(batch_size.max(1)) {
        between_batches();
    }
}

/// The key a store keeps `text`'s vector under, for a model of vector identity `identity`
/// (files::vector_identity), `scope` (the chunk config whose vector it is: a text another config
/// embedded does not match) and `role`: the first 16 bytes of a sha256 (a collision among 2^40
/// stored texts has odds of about 10^-15), which lets a 384-dimension row fit five to a page.
pub fn stored_vector_key(identity: &[u8; 32], scope: &str, role: Role, text: &str) -> [u8; 16] {
    let mut hasher = Sha256::new();
    hasher.update(identity);
    hasher.update((scope.len() as u64).to_le_bytes());
    hasher.update(scope.as_bytes());
    hasher.update(role.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(text.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&hasher.finalize()[..16]);
    key
}

#[cfg(test)]
#[path = "reuse_tests.rs"]
mod tests;
