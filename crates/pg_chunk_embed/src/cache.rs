//! A per-backend LRU cache of embeddings, keyed by model name and text, bounded in bytes.
//!
//! Repeated texts are common (a re-chunked document whose sentences did not change, a query typed
//! twice), and an embedding costs milliseconds while a lookup costs a hash. The owner keeps one in
//! a `thread_local!`; nothing here is shared between backends.
//!
//! Recency is the `lru` crate's, over an unbounded `LruCache`: this file counts bytes and evicts
//! from the least recently used end until an entry fits, so the bound is exact in bytes as
//! [`entry_bytes`] counts them (the crate's own bound counts entries).

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

use lru::LruCache;

/// Bytes counted per entry on top of its text and vector: the map's slot, the key's length and
/// the recency list's links. An estimate; what matters is that the bound grows with the number of
/// entries too.
pub const ENTRY_OVERHEAD_BYTES: usize = 64;

/// The cache: vectors by model key and text, least recently used evicted first.
pub struct EmbeddingCache {
    capacity_bytes: usize,
    bytes: usize,
    entries: LruCache<Key, Vec<f32>>,
}

/// What an entry counts against the capacity.
pub fn entry_bytes(text: &str, dimension: usize) -> usize {
    text.len() + 4 * dimension + ENTRY_OVERHEAD_BYTES
}

impl EmbeddingCache {
    /// A cache holding at most `capacity_bytes` (as counted by [`entry_bytes`]); 0 disables it.
    pub fn new(capacity_bytes: usize) -> Self {
        EmbeddingCache { capacity_bytes, bytes: 0, entries: LruCache::unbounded() }
    }

    /// The cached vector, marking it most recently used.
    pub fn get(&mut self, model: &str, text: &str) -> Option<&[f32]> {
        self.entries.get(&(model, text) as &dyn KeyParts).map(Vec::as_slice)
    }

    /// Stores `vector`, replacing any entry for the same key and evicting least recently used
    /// entries until it fits. A single entry larger than the whole capacity is not stored.
    pub fn insert(&mut self, model: &str, text: &str, vector: Vec<f32>) {
        if let Some(old) = self.entries.pop(&(model, text) as &dyn KeyParts) {
            self.bytes -= entry_bytes(text, old.len());
        }
        let cost = entry_bytes(text, vector.len());
        if cost > self.capacity_bytes {
            return;
        }
        self.evict_until(self.capacity_bytes - cost);
        self.entries.put(Key::new(model, text), vector);
        self.bytes += cost;
    }

    /// Changes the bound, evicting least recently used entries if the cache is now over it.
    pub fn set_capacity(&mut self, capacity_bytes: usize) {
        self.capacity_bytes = capacity_bytes;
        self.evict_until(capacity_bytes);
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes held, as counted by [`entry_bytes`].
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The bound, in bytes as counted by [`entry_bytes`].
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    /// Evicts least recently used entries until at most `bytes` are held.
    fn evict_until(&mut self, bytes: usize) {
        while self.bytes > bytes {
            match self.entries.pop_lru() {
                Some((key, vector)) => self.bytes -= entry_bytes(key.text(), vector.len()),
                // Unreachable while `bytes` counts the entries held; should that ever break,
                // start over rather than loop.
                None => self.clear(),
            }
        }
    }
}

/// An entry's key: the model key and the text in one allocation, the model key first.
struct Key {
    model_and_text: Box<str>,
    model_len: usize,
}

impl Key {
    fn new(model: &str, text: &str) -> Key {
        Key { model_and_text: [model, text].concat().into_boxed_str(), model_len: model.len() }
    }

    fn text(&self) -> &str {
        &self.model_and_text[self.model_len..]
    }
}

/// A key seen as its two parts, so that a lookup borrows `(model, text)` instead of building a
/// `Key`: the map finds an entry through `Borrow<dyn KeyParts>`, which needs equal hashes and
/// equality for a `Key` and the pair it was made from.
trait KeyParts {
    fn parts(&self) -> (&str, &str);
}

impl KeyParts for Key {
    fn parts(&self) -> (&str, &str) {
        self.model_and_text.split_at(self.model_len)
    }
}

impl KeyParts for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        *self
    }
}

impl<'a> Borrow<dyn KeyParts + 'a> for Key {
    fn borrow(&self) -> &(dyn KeyParts + 'a) {
        self
    }
}

impl Hash for dyn KeyParts + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.parts().hash(state);
    }
}

impl PartialEq for dyn KeyParts + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn KeyParts + '_ {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.parts().hash(state);
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for Key {}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
