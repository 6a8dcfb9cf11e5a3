//! A per-backend LRU cache of embeddings, keyed by model name and text, bounded in bytes.
//!
//! Repeated texts are common (a re-chunked document whose sentences did not change, a query typed
//! twice), and an embedding costs milliseconds while a lookup costs a hash. The owner keeps one in
//! a `thread_local!`; nothing here is shared between backends.
//!
//! Recency is a queue of stamped uses: every get or insert pushes (key, new stamp) and records the
//! stamp on the entry; eviction pops from the front and skips uses whose stamp is no longer the
//! entry's. The queue is compacted when stale uses outnumber live ones, so every operation is
//! O(1) amortised.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Bytes counted per entry on top of its text and vector: map slots, keys and the recency queue.
/// An estimate; what matters is that the bound grows with the number of entries too.
pub const ENTRY_OVERHEAD_BYTES: usize = 64;

/// The cache: vectors by model key and text, least recently used evicted first.
pub struct EmbeddingCache {
    capacity_bytes: usize,
    bytes: usize,
    len: usize,
    next_stamp: u64,
    models: HashMap<Arc<str>, HashMap<Arc<str>, CachedVector>>,
    recency: VecDeque<Use>,
}

struct CachedVector {
    vector: Vec<f32>,
    /// The stamp of this entry's latest use; older uses of it in the queue are stale.
    stamp: u64,
}

struct Use {
    model: Arc<str>,
    text: Arc<str>,
    stamp: u64,
}

/// What an entry counts against the capacity.
pub fn entry_bytes(text: &str, dimension: usize) -> usize {
    text.len() + 4 * dimension + ENTRY_OVERHEAD_BYTES
}

impl EmbeddingCache {
    /// A cache holding at most `capacity_bytes` (as counted by [`entry_bytes`]); 0 disables it.
    pub fn new(capacity_bytes: usize) -> Self {
        EmbeddingCache {
            capacity_bytes,
            bytes: 0,
            len: 0,
            next_stamp: 0,
            models: HashMap::new(),
            recency: VecDeque::new(),
        }
    }

    /// The cached vector, marking it most recently used.
    pub fn get(&mut self, model: &str, text: &str) -> Option<&[f32]> {
        let (model_key, texts) = self.models.get_key_value(model)?;
        let (text_key, _) = texts.get_key_value(text)?;
        let (model_key, text_key) = (model_key.clone(), text_key.clone());
        self.compact_if_stale();
        let stamp = self.take_stamp();
        self.recency.push_back(Use { model: model_key, text: text_key, stamp });
        let entry = self.models.get_mut(model)?.get_mut(text)?;
        entry.stamp = stamp;
        Some(&entry.vector)
    }

    /// Stores `vector`, replacing any entry for the same key and evicting least recently used
    /// entries until it fits. A single entry larger than the whole capacity is not stored.
    pub fn insert(&mut self, model: &str, text: &str, vector: Vec<f32>) {
        self.remove(model, text);
        let cost = entry_bytes(text, vector.len());
        if cost > self.capacity_bytes {
            return;
        }
        while self.bytes + cost > self.capacity_bytes {
            self.evict_least_recent();
        }
        self.compact_if_stale();
        let model_key = match self.models.get_key_value(model) {
            Some((key, _)) => key.clone(),
            None => Arc::from(model),
        };
        let text_key: Arc<str> = Arc::from(text);
        let stamp = self.take_stamp();
        self.recency.push_back(Use { model: model_key.clone(), text: text_key.clone(), stamp });
        self.models.entry(model_key).or_default().insert(text_key, CachedVector { vector, stamp });
        self.bytes += cost;
        self.len += 1;
    }

    /// Changes the bound, evicting least recently used entries if the cache is now over it.
    pub fn set_capacity(&mut self, capacity_bytes: usize) {
        self.capacity_bytes = capacity_bytes;
        while self.bytes > self.capacity_bytes {
            self.evict_least_recent();
        }
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.models.clear();
        self.recency.clear();
        self.bytes = 0;
        self.len = 0;
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held, as counted by [`entry_bytes`].
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The bound, in bytes as counted by [`entry_bytes`].
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    fn take_stamp(&mut self) -> u64 {
        self.next_stamp += 1;
        self.next_stamp
    }

    fn remove(&mut self, model: &str, text: &str) {
        let Some(texts) = self.models.get_mut(model) else {
            return;
        };
        if let Some(entry) = texts.remove(text) {
            self.bytes -= entry_bytes(text, entry.vector.len());
            self.len -= 1;
            if texts.is_empty() {
                self.models.remove(model);
            }
        }
        // Its uses in the queue are now stale and get skipped or compacted away.
    }

    fn evict_least_recent(&mut self) {
        while let Some(oldest) = self.recency.pop_front() {
            if self.is_live(&oldest) {
                self.remove(&oldest.model, &oldest.text);
                return;
            }
        }
        // Unreachable while every entry has its latest use in the queue (an empty queue means an
        // empty cache). Should that ever break, start over rather than loop in `insert`.
        self.clear();
    }

    fn is_live(&self, recorded: &Use) -> bool {
        self.models
            .get(&recorded.model)
            .and_then(|texts| texts.get(&recorded.text))
            .is_some_and(|entry| entry.stamp == recorded.stamp)
    }

    /// Drops stale uses once they outnumber live ones, keeping the queue O(len).
    fn compact_if_stale(&mut self) {
        if self.recency.len() <= 2 * self.len + 16 {
            return;
        }
        let recency = std::mem::take(&mut self.recency);
        self.recency = recency.into_iter().filter(|recorded| self.is_live(recorded)).collect();
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
