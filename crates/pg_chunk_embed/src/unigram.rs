//! A SentencePiece Unigram model for `tokenizers`, with the vocabulary in three flat arrays.
//!
//! `tokenizers`' own Unigram model keeps its pieces in a byte trie whose every node holds a hash
//! map: for multilingual-e5-small's 250,002 pieces that is about 280 MiB in every backend that
//! loads the model. Here the pieces are one string, their ends and scores two vectors, and a
//! list of ids in byte order answers both lookups (binary search) and the prefix search of the
//! Viterbi pass (the range of pieces sharing a prefix narrows a byte at a time): about 10 MiB.
//!
//! The segmentation is `tokenizers`' `Unigram::encode_optimized` step for step (0.22: the same
//! scores, ties kept by the shorter piece, unknown characters scored `min_score - 10` and runs of
//! them fused into one token), so ids are identical; tests compare the two on random text and
//! on e5's fixture sentences. Only models without `byte_fallback` are taken; others keep
//! `tokenizers`' model.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use tokenizers::models::unigram::UnigramTrainer;
use tokenizers::models::{ModelWrapper, TrainerWrapper};
use tokenizers::{Model, Token};

/// What `tokenizers` scores an unknown character below the lowest piece.
const UNKNOWN_PENALTY: f64 = 10.0;

pub(crate) struct CompactUnigram {
    /// Every piece, in id order, end to end.
    text: String,
    /// Piece `id` ends at `ends[id]` in `text` (and starts where the one before ends).
    ends: Vec<u32>,
    scores: Vec<f64>,
    /// Ids in the byte order of their pieces; of pieces spelled alike only the last id, as a
    /// map filled in id order keeps it.
    by_piece: Vec<u32>,
    unknown_id: Option<u32>,
    min_score: f64,
}

impl CompactUnigram {
    /// From the model's pieces and scores in id order, as `tokenizer.json` lists them.
    pub(crate) fn new(vocabulary: Vec<(String, f64)>, unknown_id: Option<usize>) -> Result<Self, String> {
        if let Some(id) = unknown_id {
            if id >= vocabulary.len() {
                return Err(format!("unk_id {id} is outside the vocabulary of {} pieces", vocabulary.len()));
            }
        }
        if vocabulary.len() > u32::MAX as usize {
            return Err("vocabulary too large".into());
        }
        let mut text = String::with_capacity(vocabulary.iter().map(|(piece, _)| piece.len()).sum());
        let mut ends = Vec::with_capacity(vocabulary.len());
        let mut scores = Vec::with_capacity(vocabulary.len());
        for (piece, score) in &vocabulary {
            text.push_str(piece);
            ends.push(u32::try_from(text.len()).map_err(|_| "vocabulary too large".to_string())?);
            scores.push(*score);
        }
        let min_score = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let mut model = CompactUnigram {
            text,
            ends,
            scores,
            by_piece: Vec::new(),
            unknown_id: unknown_id.map(|id| id as u32),
            min_score,
        };
        let mut by_piece: Vec<u32> = (0..vocabulary.len() as u32).collect();
        by_piece.sort_by(|&a, &b| model.piece(a).as_bytes().cmp(model.piece(b).as_bytes()).then(b.cmp(&a)));
        by_piece.dedup_by(|later, kept| model.piece(*later) == model.piece(*kept));
        model.by_piece = by_piece;
        Ok(model)
    }

    fn piece(&self, id: u32) -> &str {
        let end = self.ends[id as usize] as usize;
        let start = if id == 0 { 0 } else { self.ends[id as usize - 1] as usize };
        &self.text[start..end]
    }

    fn lookup(&self, piece: &str) -> Option<u32> {
        self.by_piece
            .binary_search_by(|&id| self.piece(id).as_bytes().cmp(piece.as_bytes()))
            .ok()
            .map(|index| self.by_piece[index])
    }

    /// Calls `found(length, id)` for each piece that `bytes` starts with, shortest first.
    fn for_each_prefix(&self, bytes: &[u8], mut found: impl FnMut(usize, u32)) {
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

    /// The pieces of the best segmentation (Viterbi), runs of unknown characters fused.
    fn segment<'s>(&self, sentence: &'s str) -> Result<Vec<&'s str>, String> {
        #[derive(Clone, Copy)]
        struct Best {
            id: u32,
            score: f64,
            starts_at: Option<usize>,
        }
        let unknown_score = self.min_score - UNKNOWN_PENALTY;
        let mut best = vec![Best { id: 0, score: 0.0, starts_at: None }; sentence.len() + 1];
        let offer = |best: &mut Vec<Best>, end: usize, start: usize, id: u32, score: f64| {
            let node = &mut best[end];
            if node.starts_at.is_none() || score > node.score {
                *node = Best { id, score, starts_at: Some(start) };
            }
        };
        let mut start = 0;
        while start < sentence.len() {
            let here = best[start].score;
            let char_length = sentence[start..].chars().next().map_or(1, char::len_utf8);
            let mut covers_one_char = false;
            self.for_each_prefix(&sentence.as_bytes()[start..], |length, id| {
                offer(&mut best, start + length, start, id, self.scores[id as usize] + here);
                covers_one_char |= length == char_length;
            });
            if !covers_one_char {
                let unknown = self
                    .unknown_id
                    .ok_or("the text has a character the vocabulary lacks, and the model has no unk_id")?;
                offer(&mut best, start + char_length, start, unknown, unknown_score + here);
            }
            start += char_length;
        }
        let mut pieces = Vec::new();
        let mut end = sentence.len();
        let mut unknown_run_end = None;
        while end > 0 {
            let node = best[end];
            let start = node.starts_at.expect("every character boundary is reached");
            if Some(node.id) == self.unknown_id {
                unknown_run_end.get_or_insert(end);
            } else {
                if let Some(run_end) = unknown_run_end.take() {
                    pieces.push(&sentence[end..run_end]);
                }
                pieces.push(&sentence[start..end]);
            }
            end = start;
        }
        if let Some(run_end) = unknown_run_end {
            pieces.push(&sentence[..run_end]);
        }
        pieces.reverse();
        Ok(pieces)
    }
}

impl Model for CompactUnigram {
    type Trainer = TrainerWrapper;

    fn tokenize(&self, sentence: &str) -> tokenizers::Result<Vec<Token>> {
        let mut offset = 0;
        let mut tokens = Vec::new();
        for piece in self.segment(sentence)? {
            let id = match self.lookup(piece) {
                Some(id) => id,
                None => self.unknown_id.ok_or("a fused unknown run and no unk_id")?,
            };
            tokens.push(Token::new(id, piece.to_string(), (offset, offset + piece.len())));
            offset += piece.len();
        }
        Ok(tokens)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.lookup(token)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        ((id as usize) < self.ends.len()).then(|| self.piece(id).to_string())
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        self.by_piece.iter().map(|&id| (self.piece(id).to_string(), id)).collect()
    }

    fn get_vocab_size(&self) -> usize {
        self.ends.len()
    }

    fn save(&self, _folder: &Path, _prefix: Option<&str>) -> tokenizers::Result<Vec<PathBuf>> {
        Err("pg_chunk's compact Unigram model is not saved".into())
    }

    fn get_trainer(&self) -> TrainerWrapper {
        UnigramTrainer::default().into()
    }
}

/// The model of a `tokenizer.json`: a Unigram vocabulary in compact form, any other as
/// `tokenizers` has it.
#[allow(clippy::large_enum_variant)] // one per loaded model
pub(crate) enum TokenizerModel {
    Library(ModelWrapper),
    Unigram(CompactUnigram),
}

impl<'de> Deserialize<'de> for TokenizerModel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(deserializer)?;
        let compact = value.get("type").and_then(Value::as_str) == Some("Unigram")
            && !value.get("byte_fallback").and_then(Value::as_bool).unwrap_or(false);
        if !compact {
            return ModelWrapper::deserialize(value).map(TokenizerModel::Library).map_err(D::Error::custom);
        }
        let vocabulary: Vec<(String, f64)> =
            Deserialize::deserialize(value.get("vocab").unwrap_or(&Value::Null)).map_err(D::Error::custom)?;
        let unknown_id: Option<usize> =
            Deserialize::deserialize(value.get("unk_id").unwrap_or(&Value::Null)).map_err(D::Error::custom)?;
        CompactUnigram::new(vocabulary, unknown_id).map(TokenizerModel::Unigram).map_err(D::Error::custom)
    }
}

impl Model for TokenizerModel {
    type Trainer = TrainerWrapper;

    fn tokenize(&self, sequence: &str) -> tokenizers::Result<Vec<Token>> {
        match self {
            TokenizerModel::Library(model) => model.tokenize(sequence),
            TokenizerModel::Unigram(model) => model.tokenize(sequence),
        }
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        match self {
            TokenizerModel::Library(model) => model.token_to_id(token),
            TokenizerModel::Unigram(model) => model.token_to_id(token),
        }
    }
    fn id_to_token(&self, id: u32) -> Option<String> {
        match self {
            TokenizerModel::Library(model) => model.id_to_token(id),
            TokenizerModel::Unigram(model) => model.id_to_token(id),
        }
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        match self {
            TokenizerModel::Library(model) => model.get_vocab(),
            TokenizerModel::Unigram(model) => model.get_vocab(),
        }
    }
    fn get_vocab_size(&self) -> usize {
        match self {
            TokenizerModel::Library(model) => model.get_vocab_size(),
            TokenizerModel::Unigram(model) => model.get_vocab_size(),
        }
    }
    fn save(&self, folder: &Path, prefix: Option<&str>) -> tokenizers::Result<Vec<PathBuf>> {
        match self {
            TokenizerModel::Library(model) => model.save(folder, prefix),
            TokenizerModel::Unigram(model) => model.save(folder, prefix),
        }
    }
    fn get_trainer(&self) -> TrainerWrapper {
        match self {
            TokenizerModel::Library(model) => model.get_trainer(),
            TokenizerModel::Unigram(model) => model.get_trainer(),
        }
    }
}

#[cfg(test)]
#[path = "unigram_tests.rs"]
mod tests;
