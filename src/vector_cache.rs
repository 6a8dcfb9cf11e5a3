//! This backend's cache of embeddings (a backend is a single-threaded process: a `thread_local!`
//! with a `RefCell`), filled by `embedding` and emptied by `models` when a model is loaded again.

use crate::gucs;
use pg_chunk_embed::EmbeddingCache;
use std::cell::RefCell;

thread_local! {
    /// Embeddings this backend computed, by model, role and text; sized by
    /// pg_chunk.embedding_cache_mb (rebuilt empty when the setting changes).
    static CACHE: RefCell<(usize, EmbeddingCache)> = RefCell::new((0, EmbeddingCache::new(0)));
}

/// Empties this backend's cache (a model it holds vectors of was loaded again, changed).
pub fn forget_cached_vectors() {
    with_cache(|cache| cache.clear());
}

/// Runs `f` with this backend's cache, sized by pg_chunk.embedding_cache_mb. The cache stays
/// borrowed while `f` embeds and queries knowledge_internal.stored_vectors; should that query embed in
/// turn (a user's trigger or policy), the inner call gets an empty cache, not a borrow panic.
pub fn with_cache<R>(f: impl FnOnce(&mut EmbeddingCache) -> R) -> R {
    CACHE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut held) => {
            let (capacity, cache) = &mut *held;
            let wanted = gucs::embedding_cache_bytes();
            if *capacity != wanted {
                *cache = EmbeddingCache::new(wanted);
                *capacity = wanted;
            }
            f(cache)
        }
        Err(_) => f(&mut EmbeddingCache::new(0)),
    })
}
