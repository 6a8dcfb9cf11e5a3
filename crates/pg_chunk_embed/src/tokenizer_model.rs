//! The model of a `tokenizer.json`: a Unigram or WordPiece vocabulary in compact form
//! (unigram.rs, wordpiece.rs), any other as `tokenizers` has it.
//!
//! The model object is read from the file's text without building a `serde_json::Value` of it
//! (for a 30,000-piece vocabulary that would be about 3.5 MB more at load): it is taken as raw
//! JSON, its few fields are read from that, and the vocabulary's pieces are borrowed from the
//! text wherever they have no escapes. A model left to `tokenizers` is parsed by it from the same
//! raw text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use tokenizers::models::{ModelWrapper, TrainerWrapper};
use tokenizers::{Model, Token};

use crate::unigram::CompactUnigram;
use crate::wordpiece::{
    CompactWordPiece, DEFAULT_CONTINUING_SUBWORD_PREFIX, DEFAULT_MAX_INPUT_CHARS_PER_WORD, DEFAULT_UNKNOWN_TOKEN,
};

/// The model of a `tokenizer.json` as pg_chunk holds it.
#[allow(clippy::large_enum_variant)] // one per loaded model
pub(crate) enum TokenizerModel {
    Library(ModelWrapper),
    Unigram(CompactUnigram),
    WordPiece(CompactWordPiece),
}

/// The fields of a model object that choose and build a compact model, each as raw JSON and read
/// only once the type says it is wanted (another type may give the same name another meaning).
#[derive(Deserialize)]
struct ModelFields<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    vocab: Option<&'a RawValue>,
    #[serde(borrow)]
    unk_id: Option<&'a RawValue>,
    #[serde(borrow)]
    byte_fallback: Option<&'a RawValue>,
    #[serde(borrow)]
    unk_token: Option<&'a RawValue>,
    #[serde(borrow)]
    continuing_subword_prefix: Option<&'a RawValue>,
    #[serde(borrow)]
    max_input_chars_per_word: Option<&'a RawValue>,
}

/// A piece of a vocabulary, borrowed from the file's text unless it had escapes.
#[derive(Deserialize)]
struct Piece<'a>(#[serde(borrow)] Cow<'a, str>);

impl AsRef<str> for Piece<'_> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A field's value; `None` if it is absent or `null`.
fn read<'a, T: Deserialize<'a>>(field: Option<&'a RawValue>) -> Result<Option<T>, String> {
    field.map_or(Ok(None), |raw| serde_json::from_str::<Option<T>>(raw.get()).map_err(|error| error.to_string()))
}

/// The vocabulary, which every model has.
fn read_vocabulary<'a, T: Deserialize<'a>>(fields: &ModelFields<'a>) -> Result<T, String> {
    read(fields.vocab)?.ok_or_else(|| "the model has no vocab".to_string())
}

impl TokenizerModel {
    /// The model of `raw`, a model object: compact where one is made for it, else `tokenizers`'.
    fn from_raw(raw: &RawValue) -> Result<Self, String> {
        let fields: ModelFields = serde_json::from_str(raw.get()).map_err(|error| error.to_string())?;
        let compact = match read::<Cow<str>>(fields.kind)?.as_deref() {
            Some("Unigram") => Self::unigram(&fields)?,
            Some("WordPiece") => Self::word_piece(&fields)?,
            _ => None,
        };
        match compact {
            Some(model) => Ok(model),
            None => serde_json::from_str(raw.get()).map(TokenizerModel::Library).map_err(|error| error.to_string()),
        }
    }

    /// A compact Unigram model, unless the model falls back to bytes for unknown characters.
    fn unigram(fields: &ModelFields) -> Result<Option<Self>, String> {
        if read::<bool>(fields.byte_fallback)? == Some(true) {
            return Ok(None);
        }
        let vocabulary: Vec<(Piece, f64)> = read_vocabulary(fields)?;
        let unknown_id: Option<usize> = read(fields.unk_id)?;
        CompactUnigram::new(vocabulary, unknown_id).map(|model| Some(TokenizerModel::Unigram(model)))
    }

    /// A compact WordPiece model, if the vocabulary's ids are 0..n-1, each once, and its pieces
    /// distinct; fields left out take `WordPieceBuilder`'s defaults.
    fn word_piece(fields: &ModelFields) -> Result<Option<Self>, String> {
        let PieceIds(mut vocabulary) = read_vocabulary(fields)?;
        vocabulary.sort_unstable_by_key(|&(_, id)| id);
        if vocabulary.iter().enumerate().any(|(index, &(_, id))| id as usize != index) {
            return Ok(None);
        }
        let unknown_token = read(fields.unk_token)?.unwrap_or_else(|| DEFAULT_UNKNOWN_TOKEN.to_string());
        let prefix =
            read(fields.continuing_subword_prefix)?.unwrap_or_else(|| DEFAULT_CONTINUING_SUBWORD_PREFIX.to_string());
        let longest = read(fields.max_input_chars_per_word)?.unwrap_or(DEFAULT_MAX_INPUT_CHARS_PER_WORD);
        let model = CompactWordPiece::new(vocabulary.iter().map(|(piece, _)| piece), unknown_token, prefix, longest)?;
        Ok(model.map(TokenizerModel::WordPiece))
    }
}

/// A WordPiece vocabulary, `{"piece": id, ...}`, as its entries in file order.
struct PieceIds<'a>(Vec<(Piece<'a>, u32)>);

impl<'de: 'a, 'a> Deserialize<'de> for PieceIds<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<'a>(std::marker::PhantomData<Piece<'a>>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Entries<'a> {
            type Value = PieceIds<'a>;
            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("a map from pieces to ids")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(PieceIds(entries))
            }
        }
        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for TokenizerModel {
    /// Reads JSON text only (`serde_json::from_str` or `from_slice`, as `tokenizers` loads a file).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        TokenizerModel::from_raw(raw).map_err(D::Error::custom)
    }
}

/// `$call` on the model inside whichever variant `$model` is.
macro_rules! each_variant {
    ($self:expr, $model:ident => $call:expr) => {
        match $self {
            TokenizerModel::Library($model) => $call,
            TokenizerModel::Unigram($model) => $call,
            TokenizerModel::WordPiece($model) => $call,
        }
    };
}

impl Model for TokenizerModel {
    type Trainer = TrainerWrapper;

    fn tokenize(&self, sequence: &str) -> tokenizers::Result<Vec<Token>> {
        each_variant!(self, model => model.tokenize(sequence))
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        each_variant!(self, model => model.token_to_id(token))
    }
    fn id_to_token(&self, id: u32) -> Option<String> {
        each_variant!(self, model => model.id_to_token(id))
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        each_variant!(self, model => model.get_vocab())
    }
    fn get_vocab_size(&self) -> usize {
        each_variant!(self, model => model.get_vocab_size())
    }
    fn save(&self, folder: &Path, prefix: Option<&str>) -> tokenizers::Result<Vec<PathBuf>> {
        each_variant!(self, model => model.save(folder, prefix))
    }
    fn get_trainer(&self) -> TrainerWrapper {
        each_variant!(self, model => model.get_trainer())
    }
}

#[cfg(test)]
#[path = "tokenizer_model_tests.rs"]
mod tests;
