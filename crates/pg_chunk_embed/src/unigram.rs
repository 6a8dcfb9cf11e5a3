//! A SentencePiece Unigram model for `tokenizers`, with the vocabulary in three flat arrays.
//!
//! `tokenizers`' own Unigram model keeps its pieces in a byte trie whose every node holds a hash
//! map: for multilingual-e5-small's 250,002 pieces that is about 280 MiB in every backend that
//! loads the model. Here the pieces are a `PieceTable` (pieces.rs: one string, their ends, and
//! ids in byte order for lookups and the prefix search of the Viterbi pass) and the scores a
//! vector: about 10 MiB.
//!
//! The segmentation is `tokenizers`' `Unigram::encode_optimized` step for step (0.22: the same
//! scores, ties kept by the shorter piece, unknown characters scored `min_score - 10` and runs of
//! them fused into one token), so ids are identical; tests compare the two on random text and
//! on e5's fixture sentences. Only models without `byte_fallback` are taken; others keep
//! `tokenizers`' model.

use tokenizers::models::unigram::UnigramTrainer;
use tokenizers::models::TrainerWrapper;
use tokenizers::{Model, Token};

use crate::pieces::{vocabulary_methods, PieceTable};

/// What `tokenizers` scores an unknown character below the lowest piece.
const UNKNOWN_PENALTY: f64 = 10.0;

pub(crate) struct CompactUnigram {
    pieces: PieceTable,
    /// By id.
    scores: Vec<f64>,
    unknown_id: Option<u32>,
    min_score: f64,
}

impl CompactUnigram {
    /// From the model's pieces and scores in id order, as `tokenizer.json` lists them.
    pub(crate) fn new<S: AsRef<str>>(vocabulary: Vec<(S, f64)>, unknown_id: Option<usize>) -> Result<Self, String> {
        if let Some(id) = unknown_id {
            if id >= vocabulary.len() {
                return Err(format!("unk_id {id} is outside the vocabulary of {} pieces", vocabulary.len()));
            }
        }
        let pieces = PieceTable::new(vocabulary.iter().map(|(piece, _)| piece.as_ref()))?;
        let scores: Vec<f64> = vocabulary.iter().map(|&(_, score)| score).collect();
        let min_score = scores.iter().copied().fold(f64::INFINITY, f64::min);
        Ok(CompactUnigram { pieces, scores, unknown_id: unknown_id.map(|id| id as u32), min_score })
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
            self.pieces.for_each_prefix(&sentence.as_bytes()[start..], |length, id| {
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
            let id = match self.pieces.lookup(piece) {
                Some(id) => id,
                None => self.unknown_id.ok_or("a fused unknown run and no unk_id")?,
            };
            tokens.push(Token::new(id, piece.to_string(), (offset, offset + piece.len())));
            offset += piece.len();
        }
        Ok(tokens)
    }

    vocabulary_methods!("Unigram");

    fn get_trainer(&self) -> TrainerWrapper {
        UnigramTrainer::default().into()
    }
}

#[cfg(test)]
#[path = "unigram_tests.rs"]
mod tests;
