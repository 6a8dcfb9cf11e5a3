//! The closed sets `knowledge.models` and the SQL functions name: a model's kind, its pooling, a
//! text's role. Each `as_str` is the one spelling; `FromStr` reads it back.

use pg_chunk_names::named_enum;
pub use pg_chunk_names::UnknownName;

named_enum! {
    /// How a model turns text into a vector (`knowledge.models.kind`).
    pub enum ModelKind ("kind") {
        /// An ONNX transformer run by ONNX Runtime.
        Transformer = "transformer",
        /// A model2vec table: the average of its tokens' rows.
        Static = "static",
    }
}

named_enum! {
    /// How a transformer's token vectors become one sentence vector (`knowledge.models.pooling`).
    pub enum Pooling ("pooling") {
        /// Average of the token vectors where attention_mask = 1 ([CLS] and [SEP] included), as
        /// sentence-transformers' `Pooling(pooling_mode_mean_tokens=True)`.
        Mean = "mean",
        /// The first token's vector.
        Cls = "cls",
    }
}

named_enum! {
    /// Which side of a search a text is on; selects the spec's query or passage prefix (SQL
    /// argument `role`).
    pub enum Role ("role") {
        /// A search's question.
        Query = "query",
        /// A text that is searched: a chunk, a sentence.
        Passage = "passage",
    }
}

named_enum! {
    /// Which file an [`EmbedError::MissingFile`](crate::EmbedError::MissingFile) is about; its
    /// name is part of the error message.
    pub enum ModelFile ("file") {
        /// `knowledge.models.model_file`.
        Model = "model file",
        /// `knowledge.models.tokenizer_file`.
        Tokenizer = "tokenizer file",
        /// The ONNX Runtime shared library (`pg_chunk.onnxruntime_library`).
        RuntimeLibrary = "ONNX Runtime library",
        /// What `optimize_transformer` wrote: the graph.
        OptimisedModel = "optimised model file",
        /// What `optimize_transformer` wrote: the graph's external weights.
        OptimisedWeights = "optimised model weights",
    }
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
