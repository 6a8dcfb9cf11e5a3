//! A tokenizer vocabulary in three flat arrays: every piece in one string, where each ends, and
//! the ids in the byte order of their pieces.
//!
//! `tokenizers` keeps a vocabulary as hash maps of `String`s (WordPiece: two of them, about 7.7 MB
//! for BERT's 30,522 pieces) or as a trie of hash maps (Unigram: about 280 MiB for e5's 250,002
//! pieces). Here a piece costs its bytes and eight bytes more, and a binary search over the sorted
//! ids answers both a lookup and the prefix search of Unigram's Viterbi pass. A table whose
//! lookups are many and mostly misses (WordPiece's greedy longest match tries every shorter
//! candidate) can add a hash index, four bytes for each of twice as many slots as pieces, which
//! answers a lookup with one hash and usually one comparison.

use std::cmp::Ordering;
use std::collections::HashMap;

pub(crate) struct PieceTable {
    /// Every piece, in id order, end to end.
    text: String,
    /// Piece `id` ends at `ends[id]` in `text` (and starts where the one before ends).
    ends: Vec<u32>,
    /// Ids in the byte order of their pieces; of pieces spelled alike only the last id, as a
    /// map filled in id order keeps it.
    by_piece: Vec<u32>,
    /// If built: answers `lookup` and `lookup_joined` instead of the binary search.
    hash_index: Option<HashIndex>,
}

/// Open addressing over a table's ids, twice as many slots as ids (a power of two), probed
/// linearly. A slot holds an id in its low `id_bits` bits (all ones where it is free) and bits of
/// the piece's hash above them, so that a probe compares pieces only where those bits agree.
struct HashIndex {
    slots: Vec<u32>,
    id_bits: u32,
}

impl HashIndex {
    fn new(table: &PieceTable) -> HashIndex {
        let id_bits = u32::BITS - (table.ends.len() as u32).leading_zeros();
        let mut index = HashIndex { slots: Vec::new(), id_bits };
        index.slots = vec![index.id_mask(); (table.by_piece.len() * 2).next_power_of_two().max(2)];
        for &id in &table.by_piece {
            let (mut slot, tag) = index.place(hash([table.piece(id).as_bytes(), b""]));
            while index.slots[slot] & index.id_mask() != index.id_mask() {
                slot = (slot + 1) & (index.slots.len() - 1);
            }
            index.slots[slot] = tag | id;
        }
        index
    }

    /// The bits of a slot that hold an id; all ones, which no id is, in a free slot.
    fn id_mask(&self) -> u32 {
        ((1u64 << self.id_bits) - 1) as u32
    }

    /// Where the probe for `hash` starts, and the bits it leaves above the id. The hash is first
    /// multiplied by 2^64 / φ: the top bits of the product, which choose the slot, depend on
    /// every bit of the hash (FNV's own top bits barely see the last byte).
    fn place(&self, hash: u64) -> (usize, u32) {
        let mixed = hash.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let slot = (mixed >> (64 - self.slots.len().trailing_zeros())) as usize;
        (slot, mixed as u32 & !self.id_mask())
    }

    /// The id whose piece `equals(id)` among those that hash to `hash`.
    fn find(&self, hash: u64, equals: impl Fn(u32) -> bool) -> Option<u32> {
        let (mut slot, tag) = self.place(hash);
        loop {
            let entry = self.slots[slot];
            let id = entry & self.id_mask();
            if id == self.id_mask() {
                return None;
            }
            if entry & !self.id_mask() == tag && equals(id) {
                return Some(id);
            }
            slot = (slot + 1) & (self.slots.len() - 1);
        }
    }
}

/// FNV-1a (64 bits) over the bytes of `parts` one after another: short pieces hash in a few
/// nanoseconds, and a prefix and a rest hash as their concatenation would.
fn hash([prefix, rest]: [&[u8]; 2]) -> u64 {
    let step = |hash: u64, &byte: &u8| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    rest.iter().fold(prefix.iter().fold(0xcbf2_9ce4_8422_2325, step), step)
}

/// Whether `piece` is `parts` one after another.
fn equals_joined(piece: &[u8], [prefix, rest]: [&[u8]; 2]) -> bool {
    piece.len() == prefix.len() + rest.len() && piece[..prefix.len()] == *prefix && piece[prefix.len()..] == *rest
}

impl PieceTable {
    /// From the pieces in id order.
    pub(crate) fn new<S: AsRef<str>>(pieces: impl IntoIterator<Item = S>) -> Result<Self, String> {
        let too_large = || "vocabulary too large".to_string();
        let mut text = String::new();
        let mut ends = Vec::new();
        for piece in pieces {
            text.push_str(piece.as_ref());
            ends.push(u32::try_from(text.len()).map_err(|_| too_large())?);
        }
        let count = u32::try_from(ends.len()).map_err(|_| too_large())?;
        text.shrink_to_fit();
        ends.shrink_to_fit();
        let mut table = PieceTable { text, ends, by_piece: Vec::new(), hash_index: None };
        let mut by_piece: Vec<u32> = (0..count).collect();
        by_piece.sort_by(|&a, &b| table.piece(a).as_bytes().cmp(table.piece(b).as_bytes()).then(b.cmp(&a)));
        by_piece.dedup_by(|later, kept| table.piece(*later) == table.piece(*kept));
        by_piece.shrink_to_fit();
        table.by_piece = by_piece;
        Ok(table)
    }

    /// The table with a hash index for `lookup` and `lookup_joined`.
    pub(crate) fn with_hash_index(mut self) -> Self {
        self.hash_index = Some(HashIndex::new(&self));
        self
    }

    /// How many ids there are (pieces spelled alike counted each).
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no two ids have the same piece.
    pub(crate) fn all_distinct(&self) -> bool {
        self.by_piece.len() == self.ends.len()
    }

    /// The piece of `id`; panics if there is no such id, like slice indexing.
    pub(crate) fn piece(&self, id: u32) -> &str {
        let end = self.ends[id as usize] as usize;
        let start = if id == 0 { 0 } else { self.ends[id as usize - 1] as usize };
        &self.text[start..end]
    }

    /// The piece of `id`, if there is such an id.
    pub(crate) fn get(&self, id: u32) -> Option<&str> {
        ((id as usize) < self.ends.len()).then(|| self.piece(id))
    }

    /// The id of `piece`.
    pub(crate) fn lookup(&self, piece: &str) -> Option<u32> {
        self.lookup_parts([piece.as_bytes(), b""])
    }

    /// The id of the piece `prefix` followed by `rest`, without joining them.
    pub(crate) fn lookup_joined(&self, prefix: &str, rest: &str) -> Option<u32> {
        self.lookup_parts([prefix.as_bytes(), rest.as_bytes()])
    }

    fn lookup_parts(&self, parts: [&[u8]; 2]) -> Option<u32> {
        if let Some(index) = &self.hash_index {
            return index.find(hash(parts), |id| equals_joined(self.piece(id).as_bytes(), parts));
        }
        let [prefix, rest] = parts;
        if rest.is_empty() {
            return self.find_sorted(|candidate| candidate.cmp(prefix));
        }
        self.find_sorted(|candidate| {
            let split = prefix.len().min(candidate.len());
            candidate[..split].cmp(&prefix[..split]).then_with(|| {
                if candidate.len() < prefix.len() {
                    Ordering::Less
                } else {
                    candidate[split..].cmp(rest)
                }
            })
        })
    }

    /// Binary search with `compare(piece bytes)` giving the order of a piece to the one sought.
    fn find_sorted(&self, compare: impl Fn(&[u8]) -> Ordering) -> Option<u32> {
        let index = self.by_piece.binary_search_by(|&id| compare(self.piece(id).as_bytes()));
        index.ok().map(|index| self.by_piece[index])
    }

    /// Calls `found(length, id)` for each piece that `bytes` starts with, shortest first.
    pub(crate) fn for_each_prefix(&self, bytes: &[u8], mut found: impl FnMut(usize, u32)) {
        // Invariant: by_piece[low..high] are the pieces starting with bytes[..length - 1]; the
        // one equal to it, if any, comes first (a prefix sorts before its extensions).
        let (mut low, mut high) = (0, self.by_piece.len());
        for (at, &byte) in bytes.iter().enumerate() {
            let next = |id: u32| self.piece(id).as_bytes().get(at).copied();
            let range = &self.by_piece[low..high];
            let from = range.partition_point(|&id| next(id) < Some(byte));
            let to = range.partition_point(|&id| next(id) <= Some(byte));
            (low, high) = (low + from, low + to);
            if low == high {
                return;
            }
            if self.piece(self.by_piece[low]).len() == at + 1 {
                found(at + 1, self.by_piece[low]);
            }
        }
    }

    /// Piece → id, as `tokenizers`' `get_vocab` gives it (of pieces spelled alike, the last id).
    pub(crate) fn vocab(&self) -> HashMap<String, u32> {
        self.by_piece.iter().map(|&id| (self.piece(id).to_string(), id)).collect()
    }
}

/// The `tokenizers::Model` methods that only read the vocabulary, for a model that keeps it in a
/// `pieces: PieceTable` field; `$kind` names the model in the error `save` gives.
macro_rules! vocabulary_methods {
    ($kind:literal) => {
        fn token_to_id(&self, token: &str) -> Option<u32> {
            self.pieces.lookup(token)
        }

        fn id_to_token(&self, id: u32) -> Option<String> {
            self.pieces.get(id).map(str::to_string)
        }

        fn get_vocab(&self) -> std::collections::HashMap<String, u32> {
            self.pieces.vocab()
        }

        fn get_vocab_size(&self) -> usize {
            self.pieces.len()
        }

        fn save(
            &self,
            _folder: &std::path::Path,
            _prefix: Option<&str>,
        ) -> tokenizers::Result<Vec<std::path::PathBuf>> {
            Err(concat!("pg_chunk's compact ", $kind, " model is not saved").into())
        }
    };
}
pub(crate) use vocabulary_methods;

#[cfg(test)]
#[path = "pieces_tests.rs"]
mod tests;
