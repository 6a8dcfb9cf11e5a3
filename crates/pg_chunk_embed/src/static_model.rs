//! A model2vec static model (e.g. potion-base-8M): a sentence vector is the average of its tokens'
//! rows in an embedding table, computed as model2vec's `StaticModel.encode` does — tokens without
//! special tokens, [UNK] dropped, at most `max_tokens` kept, mean, then L2 normalisation.
//! No ONNX Runtime involved; fast enough (thousands of sentences a second on one core) to embed
//! every sentence of a document for semantic chunking.

use memmap2::Mmap;
use tokenizers::models::ModelWrapper;

use crate::error::{require_file, EmbedError};
use crate::pooling::l2_normalize;
use crate::safetensors::{read_embedding_table, EmbeddingTable, FileBytes};
use crate::tokenize::{load_plain_tokenizer, with_prefix, Tokenizer};
use crate::tokenizer_model::TokenizerModel;
use crate::word_cache::WordTokenizer;
use crate::ModelFile;
use crate::{EmbedOutput, ModelSpec, Role, SentenceModel};

pub(crate) struct StaticModel {
    spec: ModelSpec,
    /// No truncation: model2vec drops [UNK] first and then keeps `max_tokens`, which we do by hand.
    tokenizer: WordTokenizer,
    table: EmbeddingTable,
    unknown_token_id: Option<u32>,
}

impl StaticModel {
    pub(crate) fn load(spec: &ModelSpec) -> Result<Self, EmbedError> {
        require_file(&spec.model_file, ModelFile::Model)?;
        let (tokenizer, _pad_id) = load_plain_tokenizer(&spec.tokenizer_file)?;
        // Mapped, not read: the table is the page cache's, one copy for every backend.
        let cannot_read = |error: std::io::Error| {
            EmbedError::InvalidModel(format!("cannot read {}: {error}", spec.model_file.display()))
        };
        let file = std::fs::File::open(&spec.model_file).map_err(cannot_read)?;
        // SAFETY: the mapping is read-only, and the installer replaces a model file by renaming a
        // new one into place, so a mapped file keeps its contents (one truncated in place while
        // mapped would fault on access).
        let file = unsafe { Mmap::map(&file) }.map_err(cannot_read)?;
        let table = read_embedding_table(FileBytes::Mapped(file), &spec.model_file.display().to_string())?;
        if table.dimension != spec.dimension {
            return Err(EmbedError::DimensionMismatch { expected: spec.dimension, found: table.dimension });
        }
        let vocabulary = tokenizer.get_vocab_size(true);
        if vocabulary > table.rows {
            return Err(EmbedError::InvalidModel(format!(
                "tokenizer {} has {vocabulary} tokens but the table in {} has only {} rows",
                spec.tokenizer_file.display(),
                spec.model_file.display(),
                table.rows
            )));
        }
        let unknown_token_id = unknown_token(&tokenizer).and_then(|token| tokenizer.token_to_id(&token));
        Ok(StaticModel { spec: spec.clone(), tokenizer: WordTokenizer::new(tokenizer), table, unknown_token_id })
    }

    /// One text's vector, written into `output`; returns whether the text was truncated.
    fn embed_one(&self, text: &str, output: &mut [f32]) -> Result<bool, EmbedError> {
        let mut kept = 0usize;
        let mut truncated = false;
        let mut outside = None;
        output.fill(0.0);
        self.tokenizer.for_each_id(text, |id| {
            if Some(id) == self.unknown_token_id || truncated || outside.is_some() {
                return;
            }
            if kept == self.spec.max_tokens {
                truncated = true;
                return;
            }
            let Some(row) = self.table.row(id as usize) else {
                outside = Some(id);
                return;
            };
            for (total, &value) in output.iter_mut().zip(row) {
                *total += value;
            }
            kept += 1;
        })?;
        if let Some(id) = outside {
            return Err(EmbedError::InvalidModel(format!("token id {id} is outside the embedding table")));
        }
        // A text with no known tokens stays a zero vector, as in model2vec.
        if kept > 0 {
            let count = kept as f32;
            for total in output.iter_mut() {
                *total /= count;
            }
        }
        if self.spec.normalize {
            l2_normalize(output);
        }
        Ok(truncated)
    }
}

impl SentenceModel for StaticModel {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// Batches here only pace the `between_batches` calls: a static model costs the same per text
    /// whatever its neighbours, so there is no sorting by length.
    fn embed(
        &mut self,
        texts: &[&str],
        role: Role,
        batch_size: usize,
        between_batches: &mut dyn FnMut(),
    ) -> Result<EmbedOutput, EmbedError> {
        let dimension = self.table.dimension;
        let prefix = self.spec.prefix(role).to_string();
        let mut vectors = vec![0.0f32; texts.len() * dimension];
        let mut truncated = 0;
        for (batch_texts, batch_vectors) in
            texts.chunks(batch_size.max(1)).zip(vectors.chunks_mut(batch_size.max(1) * dimension))
        {
            between_batches();
            for (text, output) in batch_texts.iter().zip(batch_vectors.chunks_exact_mut(dimension)) {
                let input = with_prefix(&prefix, text);
                if self.embed_one(&input, output)? {
                    truncated += 1;
                }
            }
        }
        Ok(EmbedOutput { dimension, vectors, truncated })
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer.count(text)
    }

    fn passage_window(&self) -> usize {
        // No special tokens; the prefix's tokens come first.
        self.spec.max_tokens.saturating_sub(self.count_tokens(self.spec.prefix(Role::Passage)))
    }
}

/// The tokenizer's unknown token, as model2vec reads it (`tokenizer.model.unk_token`); Unigram
/// models have none there, and model2vec then drops nothing.
fn unknown_token(tokenizer: &Tokenizer) -> Option<String> {
    match tokenizer.get_model() {
        TokenizerModel::Library(ModelWrapper::WordPiece(model)) => Some(model.unk_token.clone()),
        TokenizerModel::WordPiece(model) => Some(model.unknown_token().to_string()),
        TokenizerModel::Library(ModelWrapper::WordLevel(model)) => Some(model.unk_token.clone()),
        TokenizerModel::Library(ModelWrapper::BPE(model)) => model.unk_token.clone(),
        TokenizerModel::Library(ModelWrapper::Unigram(_)) | TokenizerModel::Unigram(_) => None,
    }
}

#[cfg(test)]
#[path = "static_model_tests.rs"]
mod tests;
