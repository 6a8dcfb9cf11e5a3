//! Loading a `tokenizer.json` the way pg_chunk needs it: no padding and no truncation from the
//! file (we pad per batch and truncate at the registered `max_tokens`), and no rayon threads.

use std::borrow::Cow;
use std::path::Path;

use tokenizers::decoders::DecoderWrapper;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{Encoding, PostProcessor, TokenizerImpl, TruncationDirection};

use crate::error::{require_file, EmbedError};
use crate::tokenizer_model::TokenizerModel;
use crate::ModelFile;

/// A `tokenizer.json` as pg_chunk loads it: `tokenizers`' pipeline, with a Unigram or WordPiece
/// vocabulary held compactly (tokenizer_model.rs).
pub(crate) type Tokenizer =
    TokenizerImpl<TokenizerModel, NormalizerWrapper, PreTokenizerWrapper, PostProcessorWrapper, DecoderWrapper>;

/// Loads `path` with the file's own padding and truncation removed; also returns the id to pad
/// with (the file's padding id, else `[PAD]`, else 0 — masked positions do not change the
/// result, but a real pad id keeps inputs identical to what Python feeds).
pub(crate) fn load_plain_tokenizer(path: &Path) -> Result<(Tokenizer, u32), EmbedError> {
    // tokenizers parallelises batch calls with rayon unless told not to; a Postgres backend must
    // not start a thread pool. We only encode one text at a time, but this also covers any
    // internal use.
    tokenizers::utils::parallelism::set_parallelism(false);
    require_file(path, ModelFile::Tokenizer)?;
    let mut tokenizer = Tokenizer::from_file(path)
        .map_err(|error| EmbedError::InvalidModel(format!("cannot read tokenizer {}: {error}", path.display())))?;
    let pad_id =
        tokenizer.get_padding().map(|padding| padding.pad_id).or_else(|| tokenizer.token_to_id("[PAD]")).unwrap_or(0);
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(None)
        .map_err(|error| EmbedError::InvalidModel(format!("tokenizer {}: {error}", path.display())))?;
    Ok((tokenizer, pad_id))
}

/// `text` encoded for the model: at most `max_tokens` ids, special tokens included, cut at the
/// end (what was cut is in `overflowing`). The same as a copy of `tokenizer` with right-hand
/// truncation at `max_tokens` would give, without that copy: a tokenizer can be large (e5's
/// 250,000-piece vocabulary takes about 280 MiB in `tokenizers`), and one per model is enough.
pub(crate) fn encode_truncated(tokenizer: &Tokenizer, text: &str, max_tokens: usize) -> tokenizers::Result<Encoding> {
    let mut encoding = tokenizer.encode_fast(text, false)?;
    let added = tokenizer.get_post_processor().map_or(0, |processor| processor.added_tokens(false));
    let room = max_tokens.saturating_sub(added);
    if encoding.len() > room {
        encoding.truncate(room, 0, TruncationDirection::Right);
    }
    tokenizer.post_process(encoding, None, true)
}

pub(crate) fn tokenizing_error(error: tokenizers::Error) -> EmbedError {
    EmbedError::InvalidModel(format!("tokenizing failed: {error}"))
}

/// `text` with the role's prefix (e5's `query: `) in front; borrowed when there is none.
pub(crate) fn with_prefix<'a>(prefix: &str, text: &'a str) -> Cow<'a, str> {
    if prefix.is_empty() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{prefix}{text}"))
    }
}
