//! Token ids word by word, remembered. For tokenizers whose normalizer and pre-tokenizer never
//! join text across ASCII whitespace (BERT's: the vocabularies of all-MiniLM-L6-v2 and
//! potion-base-8M), a text's ids without special tokens are its words' ids one after another.
//! Prose repeats its words, so most words are then a hash lookup instead of a pass through
//! normalisation, pre-tokenization and WordPiece, which cost more than everything else a static
//! model does. Other tokenizers (e5's SentencePiece, which marks word starts) encode whole texts.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::tokenize::Tokenizer;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;

use crate::error::EmbedError;
use crate::tokenize::tokenizing_error;

/// Words longer than this are encoded each time (rare, and they would bloat the cache).
const LONGEST_CACHED_WORD: usize = 64;
/// The cache starts afresh when it holds this many words (a few MB).
const MOST_CACHED_WORDS: usize = 100_000;

pub(crate) struct WordTokenizer {
    tokenizer: Tokenizer,
    /// Whether encoding word by word gives the same ids as encoding the whole text.
    wordwise: bool,
    cache: RefCell<HashMap<Box<str>, Box<[u32]>>>,
}

impl WordTokenizer {
    /// `tokenizer` must add no padding or truncation of its own (see `load_plain_tokenizer`).
    pub(crate) fn new(tokenizer: Tokenizer) -> WordTokenizer {
        let wordwise = splits_only_within_words(&tokenizer);
        WordTokenizer { tokenizer, wordwise, cache: RefCell::new(HashMap::new()) }
    }

    /// Calls `f` with each token id of `text`, without special tokens, in order.
    /// The tokenizer itself, for encoding whole texts as the model reads them.
    pub(crate) fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    pub(crate) fn for_each_id(&self, text: &str, mut f: impl FnMut(u32)) -> Result<(), EmbedError> {
        if !self.wordwise {
            self.encode(text)?.iter().for_each(|&id| f(id));
            return Ok(());
        }
        let mut cache = self.cache.borrow_mut();
        for word in text.split(is_ascii_whitespace).filter(|word| !word.is_empty()) {
            if word.len() > LONGEST_CACHED_WORD {
                self.encode(word)?.iter().for_each(|&id| f(id));
                continue;
            }
            if let Some(ids) = cache.get(word) {
                ids.iter().for_each(|&id| f(id));
                continue;
            }
            let ids = self.encode(word)?.into_boxed_slice();
            ids.iter().for_each(|&id| f(id));
            if cache.len() >= MOST_CACHED_WORDS {
                cache.clear();
            }
            cache.insert(word.into(), ids);
        }
        Ok(())
    }

    /// Token count without special tokens. An encoding error (none is known for a `&str`) counts
    /// as 0 tokens rather than failing a count that callers use only for sizing.
    pub(crate) fn count(&self, text: &str) -> usize {
        let mut count = 0;
        match self.for_each_id(text, |_| count += 1) {
            Ok(()) => count,
            Err(_) => 0,
        }
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let encoding = self.tokenizer.encode_fast(text, false).map_err(tokenizing_error)?;
        Ok(encoding.get_ids().to_vec())
    }
}

/// The four ASCII whitespace characters that every tokenizer accepted by
/// `splits_only_within_words` treats as a word boundary.
fn is_ascii_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Whether nothing in `tokenizer` joins text across ASCII whitespace: normalizers that work
/// character by character, pre-tokenizers that split at whitespace, and no added token that
/// contains whitespace (added tokens are matched before pre-tokenization).
fn splits_only_within_words(tokenizer: &Tokenizer) -> bool {
    fn normalizer_ok(normalizer: &NormalizerWrapper) -> bool {
        match normalizer {
            NormalizerWrapper::BertNormalizer(_)
            | NormalizerWrapper::Lowercase(_)
            | NormalizerWrapper::StripAccents(_)
            | NormalizerWrapper::NFC(_)
            | NormalizerWrapper::NFD(_)
            | NormalizerWrapper::NFKC(_)
            | NormalizerWrapper::NFKD(_) => true,
            NormalizerWrapper::Sequence(sequence) => sequence.as_ref().iter().all(normalizer_ok),
            _ => false,
        }
    }
    fn pre_tokenizer_ok(pre_tokenizer: &PreTokenizerWrapper) -> bool {
        match pre_tokenizer {
            PreTokenizerWrapper::BertPreTokenizer(_)
            | PreTokenizerWrapper::Whitespace(_)
            | PreTokenizerWrapper::WhitespaceSplit(_) => true,
            PreTokenizerWrapper::Sequence(sequence) => sequence.as_ref().iter().all(pre_tokenizer_ok),
            _ => false,
        }
    }
    tokenizer.get_normalizer().is_none_or(normalizer_ok)
        && tokenizer.get_pre_tokenizer().is_some_and(pre_tokenizer_ok)
        && tokenizer.get_added_tokens_decoder().values().all(|token| !token.content.contains(is_ascii_whitespace))
}

#[cfg(test)]
#[path = "word_cache_tests.rs"]
mod tests;
