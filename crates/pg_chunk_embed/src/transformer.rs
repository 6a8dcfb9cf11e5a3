//! A transformer sentence encoder run by ONNX Runtime: tokenize (truncating at `max_tokens`),
//! batch by length, run, pool (mean or CLS), normalise — as sentence-transformers does.

use std::path::Path;

use memmap2::Mmap;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::{Session, SessionInputValue};
use ort::value::{TensorElementType, TensorRef, ValueType};

use crate::batching::{length_sorted_batches, pad_batch, place_row, PaddedBatch, TokenizedInputs};
use crate::error::{require_file, EmbedError};
use crate::pooling::{cls_pool, l2_normalize, mean_pool};
use crate::tokenize::{encode_truncated, load_plain_tokenizer, tokenizing_error, with_prefix};
use crate::word_cache::WordTokenizer;
use crate::ModelFile;
use crate::{runtime, EmbedOutput, ModelSpec, Pooling, Role, RuntimeOptions, SentenceModel};

const INPUT_IDS: &str = "input_ids";
const ATTENTION_MASK: &str = "attention_mask";
const TOKEN_TYPE_IDS: &str = "token_type_ids";
const DEFAULT_OUTPUT: &str = "last_hidden_state";

pub(crate) struct TransformerModel {
    spec: ModelSpec,
    session: Session,
    /// The model's tokenizer, without a limit of its own: `count_tokens` counts whole texts, and
    /// model inputs are cut at `max_tokens` by `encode_truncated`.
    tokenizer: WordTokenizer,
    pad_id: u32,
    /// BERT exports declare `token_type_ids`; others (DistilBERT, many e5 exports) do not, and
    /// ONNX Runtime refuses an input the graph does not declare.
    feeds_token_type_ids: bool,
    output_name: String,
    /// Whether each text runs alone (see `quantizes_activations_per_run`).
    one_text_per_run: bool,
}

/// Whether the graph quantizes its activations with one scale a run (ONNX Runtime's dynamic
/// quantization: DynamicQuantizeLinear, DynamicQuantizeMatMul). Such a graph takes one scale for a
/// whole input tensor, so a text's vector would depend on the texts batched with it and on their
/// padding (cosine as low as 0.965 between all-MiniLM-L6-v2 quantized so, alone and in a batch of
/// 16); run alone, every text gets the same vector wherever it is embedded. (The installed integer
/// models quantize per token with QuantizeLinear, which batches exactly: scripts/int8/README.md.) The op
/// names are looked for in the file's bytes: an ONNX file names each node's operator in plain
/// text. The file is mapped, not read, so a graph with its weights inside costs no copy.
fn quantizes_activations_per_run(model_file: &Path) -> Result<bool, EmbedError> {
    let cannot_read =
        |error: std::io::Error| EmbedError::Runtime(format!("cannot read model {}: {error}", model_file.display()));
    let file = std::fs::File::open(model_file).map_err(cannot_read)?;
    // SAFETY: read-only, and only for this search; model files are replaced by renaming, not
    // rewritten in place.
    let file = unsafe { Mmap::map(&file) }.map_err(cannot_read)?;
    Ok(memchr::memmem::find(&file, b"DynamicQuantize").is_some())
}

/// Writes `output`, `model` as ONNX Runtime optimises it at the "extended" level (the highest
/// whose result runs on any x86-64 CPU), with its weights in `<output>.data` beside it. A
/// session over the copy with `optimize_graph` off skips the optimisation, and ONNX Runtime maps
/// the weights file instead of building float32 weights in each process, so that a session
/// starts several times faster and a backend holds less (bench/README.md, "Decisions"). An Add
/// followed by LayerNormalization is left as it is, not fused into SkipLayerNormalization, which
/// this ONNX Runtime runs slower on CPU (scripts/int8/README.md, "The MiniLM graph"). The copy
/// belongs to the ONNX Runtime release that wrote it.
pub fn optimize_transformer(library_path: &Path, model: &Path, output: &Path) -> Result<(), EmbedError> {
    require_file(model, ModelFile::Model)?;
    let weights_name = output
        .file_name()
        .map(|name| format!("{}.data", name.to_string_lossy()))
        .ok_or_else(|| EmbedError::Runtime(format!("{} is not a file name", output.display())))?;
    let environment = runtime::environment(library_path)?;
    let mut builder = Session::builder(&environment)?
        .with_optimization_level(GraphOptimizationLevel::Level2)?
        .with_intra_threads(1)?
        .with_config_entry("session.optimized_model_external_initializers_file_name", &weights_name)?
        .with_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")?
        .with_config_entry("optimization.disable_specified_optimizers", "SkipLayerNormFusion")?
        .with_optimized_model_path(output)?;
    builder
        .commit_from_file(model)
        .map_err(|error| EmbedError::Runtime(format!("cannot optimise model {}: {error}", model.display())))?;
    require_file(output, ModelFile::OptimisedModel)?;
    require_file(&output.with_file_name(weights_name), ModelFile::OptimisedWeights)
}

impl TransformerModel {
    pub(crate) fn load(spec: &ModelSpec, runtime_options: &RuntimeOptions) -> Result<Self, EmbedError> {
        require_file(&spec.model_file, ModelFile::Model)?;
        let (tokenizer, pad_id) = load_plain_tokenizer(&spec.tokenizer_file)?;
        let environment = runtime::environment(&runtime_options.library_path)?;
        let optimization =
            if spec.optimize_graph { GraphOptimizationLevel::All } else { GraphOptimizationLevel::Disable };
        let mut builder = Session::builder(&environment)?
            .with_optimization_level(optimization)?
            .with_intra_threads(runtime_options.threads.max(1))?
            .with_inter_threads(1)?
            // Spinning threads would burn CPU between runs in a backend that does other work.
            .with_intra_op_spinning(false)?
            .with_inter_op_spinning(false)?;
        // The session starts its intra-op pool (when threads > 1) while committing.
        let session =
            runtime::with_signals_blocked(|| builder.commit_from_file(&spec.model_file)).map_err(|error| {
                EmbedError::Runtime(format!("cannot load model {}: {error}", spec.model_file.display()))
            })?;
        let feeds_token_type_ids = check_inputs(&session, &spec.model_file)?;
        let output_name = spec.output_name.clone().unwrap_or_else(|| DEFAULT_OUTPUT.to_string());
        check_output(&session, &spec.model_file, &output_name, spec.dimension)?;
        let one_text_per_run = quantizes_activations_per_run(&spec.model_file)?;
        Ok(TransformerModel {
            spec: spec.clone(),
            session,
            tokenizer: WordTokenizer::new(tokenizer),
            pad_id,
            feeds_token_type_ids,
            output_name,
            one_text_per_run,
        })
    }

    /// Runs one padded batch; returns `rows × dimension` sentence vectors in batch order.
    fn run_batch(&mut self, batch: &PaddedBatch) -> Result<Vec<f32>, EmbedError> {
        if batch.columns == 0 {
            // Only empty texts and a tokenizer that adds no special tokens: nothing to run.
            // Zero vectors, as mean pooling over no tokens gives.
            return Ok(vec![0.0; batch.rows * self.spec.dimension]);
        }
        let shape = [batch.rows as i64, batch.columns as i64];
        let mut inputs: Vec<(&str, SessionInputValue<'_>)> = vec![
            (INPUT_IDS, TensorRef::from_array_view((shape, &batch.ids[..]))?.into()),
            (ATTENTION_MASK, TensorRef::from_array_view((shape, &batch.attention_mask[..]))?.into()),
        ];
        if self.feeds_token_type_ids {
            inputs.push((TOKEN_TYPE_IDS, TensorRef::from_array_view((shape, &batch.type_ids[..]))?.into()));
        }
        let outputs = self.session.run(inputs)?;
        let output = outputs
            .get(&self.output_name)
            .ok_or_else(|| EmbedError::Runtime(format!("the run returned no output {}", self.output_name)))?;
        let (output_shape, values) = output.try_extract_tensor::<f32>()?;
        let dimension = self.spec.dimension;
        let found_dimension = output_shape.last().copied().unwrap_or(0) as usize;
        if found_dimension != dimension {
            return Err(EmbedError::DimensionMismatch { expected: dimension, found: found_dimension });
        }
        let mut sentence_vectors = match output_shape[..] {
            // token vectors: pool them
            [rows, tokens, _] if rows as usize == batch.rows && tokens as usize == batch.columns => {
                let block = batch.columns * dimension;
                let mut pooled = Vec::with_capacity(batch.rows * dimension);
                for (row, token_vectors) in values.chunks_exact(block).enumerate() {
                    let mask = &batch.attention_mask[row * batch.columns..(row + 1) * batch.columns];
                    pooled.extend(match self.spec.pooling {
                        Pooling::Mean => mean_pool(token_vectors, mask, dimension),
                        Pooling::Cls => cls_pool(token_vectors, dimension),
                    });
                }
                pooled
            }
            // already sentence embeddings
            [rows, _] if rows as usize == batch.rows => values.to_vec(),
            _ => {
                return Err(EmbedError::InvalidModel(format!(
                    "output {} has shape {:?} for a batch of {} × {} tokens",
                    self.output_name,
                    &output_shape[..],
                    batch.rows,
                    batch.columns
                )))
            }
        };
        if self.spec.normalize {
            sentence_vectors.chunks_exact_mut(dimension).for_each(l2_normalize);
        }
        Ok(sentence_vectors)
    }
}

impl SentenceModel for TransformerModel {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    fn embed(
        &mut self,
        texts: &[&str],
        role: Role,
        batch_size: usize,
        between_batches: &mut dyn FnMut(),
    ) -> Result<EmbedOutput, EmbedError> {
        let prefix = self.spec.prefix(role).to_string();
        // Tokenizing every input before the first batch takes seconds for a large document:
        // give the caller its check every batch's worth of inputs here too.
        let mut inputs = TokenizedInputs::new();
        let mut truncated = 0;
        for (i, text) in texts.iter().enumerate() {
            if i % batch_size.max(1) == 0 {
                between_batches();
            }
            let encoding =
                encode_truncated(self.tokenizer.tokenizer(), with_prefix(&prefix, text).as_ref(), self.spec.max_tokens)
                    .map_err(tokenizing_error)?;
            inputs.push(encoding.get_ids(), encoding.get_type_ids());
            // The truncating tokenizer moves what it cut into `overflowing`.
            truncated += usize::from(!encoding.get_overflowing().is_empty());
        }
        let lengths = inputs.lengths();

        let dimension = self.spec.dimension;
        let mut vectors = vec![0.0f32; texts.len() * dimension];
        let run_size = if self.one_text_per_run { 1 } else { batch_size };
        for batch in length_sorted_batches(&lengths, run_size) {
            between_batches();
            let rows: Vec<(&[u32], &[u32])> = batch.iter().map(|&index| inputs.row(index)).collect();
            let padded = pad_batch(&rows, self.pad_id);
            let batch_vectors = self.run_batch(&padded)?;
            for (&index, vector) in batch.iter().zip(batch_vectors.chunks_exact(dimension)) {
                place_row(&mut vectors, dimension, index, vector);
            }
        }
        Ok(EmbedOutput { dimension, vectors, truncated })
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer.count(text)
    }

    fn passage_window(&self) -> usize {
        // What the model adds around a one-token passage: [CLS] and [SEP], and the prefix (whose
        // trailing space joins the passage's first token, as it does in every real input).
        let probe = "a";
        let added = encode_truncated(
            self.tokenizer.tokenizer(),
            with_prefix(self.spec.prefix(Role::Passage), probe).as_ref(),
            self.spec.max_tokens,
        )
        .map_or(self.spec.max_tokens, |encoding| encoding.len())
        .saturating_sub(self.count_tokens(probe));
        self.spec.max_tokens.saturating_sub(added)
    }
}

/// Checks the graph's inputs are ones we feed, as int64; returns whether it takes token_type_ids.
fn check_inputs(session: &Session, model_file: &Path) -> Result<bool, EmbedError> {
    let mut names = Vec::new();
    for input in session.inputs() {
        let name = input.name();
        if ![INPUT_IDS, ATTENTION_MASK, TOKEN_TYPE_IDS].contains(&name) {
            return Err(EmbedError::InvalidModel(format!(
                "model {} has an input {name}; pg_chunk feeds only {INPUT_IDS}, {ATTENTION_MASK} and {TOKEN_TYPE_IDS}",
                model_file.display()
            )));
        }
        if !matches!(input.dtype(), ValueType::Tensor { ty: TensorElementType::Int64, .. }) {
            return Err(EmbedError::InvalidModel(format!(
                "model {} input {name} is {}; pg_chunk feeds int64",
                model_file.display(),
                input.dtype()
            )));
        }
        names.push(name);
    }
    for required in [INPUT_IDS, ATTENTION_MASK] {
        if !names.contains(&required) {
            return Err(EmbedError::InvalidModel(format!("model {} has no input {required}", model_file.display())));
        }
    }
    Ok(names.contains(&TOKEN_TYPE_IDS))
}

/// Checks the output exists, is a float tensor of rank 2 or 3, and (when the graph says) has
/// the registered dimension.
fn check_output(session: &Session, model_file: &Path, name: &str, dimension: usize) -> Result<(), EmbedError> {
    let Some(output) = session.outputs().iter().find(|output| output.name() == name) else {
        let available: Vec<&str> = session.outputs().iter().map(|output| output.name()).collect();
        return Err(EmbedError::InvalidModel(format!(
            "model {} has no output {name}; its outputs are {available:?} (choose one with output_name)",
            model_file.display()
        )));
    };
    let ValueType::Tensor { ty: TensorElementType::Float32, shape, .. } = output.dtype() else {
        return Err(EmbedError::InvalidModel(format!(
            "model {} output {name} is {}; expected a float32 tensor",
            model_file.display(),
            output.dtype()
        )));
    };
    if !(2..=3).contains(&shape.len()) {
        return Err(EmbedError::InvalidModel(format!(
            "model {} output {name} has {} dimensions; expected 3 (token vectors) or 2 (sentence vectors)",
            model_file.display(),
            shape.len()
        )));
    }
    // -1 marks a dimension the graph leaves open; it is checked on the first run instead.
    match shape.last() {
        Some(&found) if found > 0 && found as usize != dimension => {
            Err(EmbedError::DimensionMismatch { expected: dimension, found: found as usize })
        }
        _ => Ok(()),
    }
}
