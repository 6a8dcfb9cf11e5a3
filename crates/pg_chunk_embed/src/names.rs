//! The closed sets `knowledge.models` and the SQL functions name: a model's kind, its pooling, a
//! text's role. Each `as_str` is the one spelling; `FromStr` reads it back.

use std::fmt;
use std::str::FromStr;

/// A name outside its closed set: `what` says which set (`"kind"`), `value` is the name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} \"{value}\"")]
pub struct UnknownName {
    /// The set the name was looked up in.
    pub what: &'static str,
    /// The name as given.
    pub value: String,
}

/// `as_str`, `Display`, `FromStr` and `ALL` for an enum of unit variants and their names.
macro_rules! names {
    ($name:ident ($what:literal) { $($variant:ident = $text:literal,)+ }) => {
        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The name SQL shows and takes.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<$name, UnknownName> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownName { what: $what, value: s.to_string() }),
                }
            }
        }
    };
}

/// How a model turns text into a vector (`knowledge.models.kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelKind {
    /// An ONNX transformer run by ONNX Runtime.
    Transformer,
    /// A model2vec table: the average of its tokens' rows.
    Static,
}

names!(ModelKind ("kind") { Transformer = "transformer", Static = "static", });

/// How a transformer's token vectors become one sentence vector (`knowledge.models.pooling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pooling {
    /// Average of the token vectors where attention_mask = 1 ([CLS] and [SEP] included), as
    /// sentence-transformers' `Pooling(pooling_mode_mean_tokens=True)`.
    Mean,
    /// The first token's vector.
    Cls,
}

names!(Pooling ("pooling") { Mean = "mean", Cls = "cls", });

/// Which side of a search a text is on; selects the spec's query or passage prefix (SQL
/// argument `role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A search's question.
    Query,
    /// A text that is searched: a chunk, a sentence.
    Passage,
}

names!(Role ("role") { Query = "query", Passage = "passage", });

/// Which file an [`EmbedError::MissingFile`](crate::EmbedError::MissingFile) is about; its
/// name is part of the error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelFile {
    /// `knowledge.models.model_file`.
    Model,
    /// `knowledge.models.tokenizer_file`.
    Tokenizer,
    /// The ONNX Runtime shared library (`pg_chunk.onnxruntime_library`).
    RuntimeLibrary,
    /// What `optimize_transformer` wrote: the graph.
    OptimisedModel,
    /// What `optimize_transformer` wrote: the graph's external weights.
    OptimisedWeights,
}

names!(ModelFile ("file") {
    Model = "model file",
    Tokenizer = "tokenizer file",
    RuntimeLibrary = "ONNX Runtime library",
    OptimisedModel = "optimised model file",
    OptimisedWeights = "optimised model weights",
});

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
