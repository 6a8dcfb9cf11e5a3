//! A WordPiece model for `tokenizers`, with the vocabulary in a `PieceTable` (pieces.rs).
//!
//! `tokenizers`' own WordPiece keeps its vocabulary twice, as a map from piece to id and one back,
//! of `String`s: about 7.7 MB for all-MiniLM-L6-v2's 30,522 pieces or potion-base-8M's 29,528, in
//! every backend that loads the model. The table, with its hash index, holds the same in about
//! 0.7 MB.
//!
//! The segmentation is `tokenizers`' `WordPiece::tokenize` step for step (0.22): a word of more
//! than `max_input_chars_per_word` characters is one unknown token; otherwise the longest piece
//! from the current position is taken, shortening a character at a time, with
//! `continuing_subword_prefix` before every piece but the first; if some position has no piece,
//! the whole word is one unknown token. Tests compare the two on random text and on the installed
//! models. Only vocabularies whose ids are 0..n-1, each once, and whose pieces are distinct are
//! taken (tokenizer_model.rs); others keep `tokenizers`' model, whose `id_to_token` and
//! `get_vocab_size` differ for them.

use tokenizers::models::wordpiece::{Error as WordPieceError, WordPieceTrainer};
use tokenizers::models::TrainerWrapper;
use tokenizers::{Model, Token};

use crate::pieces::{vocabulary_methods, PieceTable};

pub(crate) struct CompactWordPiece {
    pieces: PieceTable,
    unknown_token: String,
    /// Its id, if the vocabulary has it; without it an unknown word is an error, as in
    /// `tokenizers`.
    unknown_id: Option<u32>,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
}

/// `tokenizers`' `WordPieceBuilder` defaults, for fields a `tokenizer.json` leaves out.
pub(crate) const DEFAULT_UNKNOWN_TOKEN: &str = "[UNK]";
pub(crate) const DEFAULT_CONTINUING_SUBWORD_PREFIX: &str = "##";
pub(crate) const DEFAULT_MAX_INPUT_CHARS_PER_WORD: usize = 100;

impl CompactWordPiece {
    /// From the pieces in id order; `None` if two are spelled alike (see the module comment).
    pub(crate) fn new<S: AsRef<str>>(
        pieces: impl IntoIterator<Item = S>,
        unknown_token: String,
        continuing_subword_prefix: String,
        max_input_chars_per_word: usize,
    ) -> Result<Option<Self>, String> {
        let pieces = PieceTable::new(pieces)?.with_hash_index();
        if !pieces.all_distinct() {
            return Ok(None);
        }
        let unknown_id = pieces.lookup(&unknown_token);
        Ok(Some(CompactWordPiece {
            pieces,
            unknown_token,
            unknown_id,
            continuing_subword_prefix,
            max_input_chars_per_word,
        }))
    }

    /// The token unknown words become (`[UNK]`), whether or not the vocabulary has it.
    pub(crate) fn unknown_token(&self) -> &str {
        &self.unknown_token
    }

    /// The whole of `word` as the unknown token.
    fn unknown_word(&self, word: &str) -> tokenizers::Result<Vec<Token>> {
        let id = self.unknown_id.ok_or(WordPieceError::MissingUnkToken)?;
        Ok(vec![Token::new(id, self.unknown_token.clone(), (0, word.len()))])
    }

    /// The id of `word[start..end]`, with the continuing-subword prefix unless it starts the word.
    fn lookup(&self, word: &str, start: usize, end: usize) -> Option<u32> {
        if start == 0 {
            self.pieces.lookup(&word[..end])
        } else {
            self.pieces.lookup_joined(&self.continuing_subword_prefix, &word[start..end])
        }
    }
}

impl Model for CompactWordPiece {
    type Trainer = TrainerWrapper;

    fn tokenize(&self, word: &str) -> tokenizers::Result<Vec<Token>> {
        if word.chars().count() > self.max_input_chars_per_word {
            return self.unknown_word(word);
        }
        let mut tokens = Vec::new();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let id = loop {
                if let Some(id) = self.lookup(word, start, end) {
                    break id;
                }
                end -= word[start..end].chars().next_back().map_or(1, char::len_utf8);
                if end == start {
                    return self.unknown_word(word);
                }
            };
            tokens.push(Token::new(id, self.pieces.piece(id).to_string(), (start, end)));
            start = end;
        }
        Ok(tokens)
    }

    vocabulary_methods!("WordPiece");

    fn get_trainer(&self) -> TrainerWrapper {
        WordPieceTrainer::builder().build().into()
    }
}

#[cfg(test)]
#[path = "wordpiece_tests.rs"]
mod tests;
