//! Tests against the real models and ONNX Runtime. They need two environment variables and fail
//! (never skip) without them:
//! - `PG_CHUNK_MODEL_DIR`: a directory with `all-minilm-l6-v2/{model.onnx,tokenizer.json}` and
//!   `potion-base-8m/{model.safetensors,tokenizer.json}`;
//! - `PG_CHUNK_ONNXRUNTIME`: the path of `libonnxruntime.so`.

use pg_chunk_embed::{
    load_model, onnxruntime_version, optimize_transformer, EmbedError, EmbedOutput, ModelSpec, Role, RuntimeOptions,
    SentenceModel,
};

mod support;
use support::{e5_spec, int8_spec, minilm_spec, potion_spec};

fn runtime() -> RuntimeOptions {
    support::runtime_with_threads(1)
}

fn load(spec: &ModelSpec) -> Box<dyn SentenceModel> {
    load_model(spec, &runtime()).unwrap_or_else(|error| panic!("loading {}: {error}", spec.name))
}

fn embed(model: &mut dyn SentenceModel, texts: &[&str], batch_size: usize) -> EmbedOutput {
    model.embed(texts, Role::Passage, batch_size, &mut || {}).expect("embed")
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f32]) -> f32 {
    dot(a, a).sqrt()
}

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

const SIMILAR_A: &str = "The cat sat on the mat.";
const SIMILAR_B: &str = "A cat is sitting on a rug.";
const UNRELATED: &str = "Quarterly revenue rose by eight percent in Europe.";

/// Texts of very different token lengths, so length sorting reorders them.
fn mixed_lengths() -> Vec<String> {
    let mut texts = Vec::new();
    for i in 0..37 {
        let words = (i * 7) % 41 + 1;
        let text: Vec<String> = (0..words).map(|w| format!("word{} river{}", (i + w) % 13, w % 5)).collect();
        texts.push(text.join(" "));
    }
    texts
}

fn long_text(words: usize) -> String {
    (0..words).map(|i| format!("token{}", i % 50)).collect::<Vec<_>>().join(" ")
}

#[test]
fn minilm_vectors_are_384_d_and_unit_norm() {
    let mut model = load(&minilm_spec());
    let output = embed(model.as_mut(), &[SIMILAR_A, "", UNRELATED], 16);
    assert_eq!(output.dimension, 384);
    assert_eq!(output.vectors.len(), 3 * 384);
    for row in output.rows() {
        assert!((norm(row) - 1.0).abs() < 1e-4, "norm {}", norm(row));
        assert!(row.iter().all(|v| v.is_finite()));
    }
    assert_eq!(output.truncated, 0);
}

#[test]
fn minilm_without_graph_optimisation_gives_the_same_vectors() {
    let optimised = minilm_spec();
    let plain = ModelSpec { optimize_graph: false, ..optimised.clone() };
    let texts = mixed_lengths();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let expected = embed(load(&optimised).as_mut(), &texts, 16);
    let got = embed(load(&plain).as_mut(), &texts, 16);
    for (index, (a, b)) in expected.rows().zip(got.rows()).enumerate() {
        let cosine = dot(a, b) / (norm(a) * norm(b));
        assert!(cosine >= 0.999, "text {index}: cosine {cosine}");
    }
}

#[test]
fn an_optimised_copy_with_separate_weights_gives_the_same_vectors() {
    let original = minilm_spec();
    let dir = std::env::temp_dir().join(format!("pg_chunk-optimised-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("model.optimized.onnx");
    optimize_transformer(&runtime().library_path, &original.model_file, &copy).expect("optimise");
    assert!(dir.join("model.optimized.onnx.data").is_file(), "weights in a file of their own");
    assert!(std::fs::metadata(&copy).unwrap().len() < 1_000_000, "the graph alone is small");
    let optimised = ModelSpec { model_file: copy, optimize_graph: false, ..original.clone() };
    let texts = mixed_lengths();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let expected = embed(load(&original).as_mut(), &texts, 16);
    let got = embed(load(&optimised).as_mut(), &texts, 16);
    std::fs::remove_dir_all(&dir).unwrap();
    for (index, (a, b)) in expected.rows().zip(got.rows()).enumerate() {
        let cosine = dot(a, b) / (norm(a) * norm(b));
        assert!(cosine >= 0.9999, "text {index}: cosine {cosine}");
    }
}

#[test]
fn optimising_a_missing_model_names_it() {
    let missing = std::path::Path::new("/nonexistent/model.onnx");
    let error = optimize_transformer(&runtime().library_path, missing, &std::env::temp_dir().join("never.onnx"))
        .expect_err("a missing model cannot be optimised");
    assert!(error.to_string().contains("/nonexistent/model.onnx"), "{error}");
}

#[test]
fn minilm_puts_similar_sentences_closer_than_unrelated_ones() {
    let mut model = load(&minilm_spec());
    let output = embed(model.as_mut(), &[SIMILAR_A, SIMILAR_B, UNRELATED], 16);
    let similar = dot(output.row(0), output.row(1));
    let unrelated = dot(output.row(0), output.row(2));
    assert!(similar > unrelated + 0.2, "similar {similar}, unrelated {unrelated}");
}

#[test]
fn minilm_batch_size_does_not_change_vectors() {
    let mut model = load(&minilm_spec());
    let texts = mixed_lengths();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let one_at_a_time = embed(model.as_mut(), &texts, 1);
    let batched = embed(model.as_mut(), &texts, 16);
    let difference = max_difference(&one_at_a_time.vectors, &batched.vectors);
    assert!(difference < 1e-5, "max difference {difference}");
}

#[test]
fn integer_models_give_a_text_the_same_vector_alone_and_in_any_batch() {
    // Both installed integer graphs quantize each token's activations on their own, so batching
    // leaves every vector as it is, to the last bit.
    for spec in [int8_spec(minilm_spec()), int8_spec(e5_spec())] {
        let mut model = load(&spec);
        let texts = mixed_lengths();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let one_at_a_time = embed(model.as_mut(), &texts, 1);
        let batched = embed(model.as_mut(), &texts, 16);
        assert_eq!(one_at_a_time.vectors, batched.vectors, "{}", spec.name);
        let alone = embed(model.as_mut(), &texts[5..6], 16);
        assert_eq!(alone.vectors, one_at_a_time.rows().nth(5).unwrap(), "{}", spec.name);
    }
}

/// How many runs of the model embedding `mixed_lengths()` in batches of up to 16 takes. The
/// caller's check runs before every batch (and every batch's worth of tokenized texts), so it
/// counts the runs.
fn runs_for_mixed_lengths(spec: &ModelSpec) -> usize {
    let texts = mixed_lengths();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut model = load(spec);
    let mut checks = 0;
    model.embed(&texts, Role::Passage, 16, &mut || checks += 1).expect("embed");
    checks - texts.len().div_ceil(16)
}

#[test]
fn integer_models_run_texts_in_batches() {
    for spec in [int8_spec(minilm_spec()), int8_spec(e5_spec())] {
        // Batches follow the cost model (batching.rs): 18 runs for MiniLM's 37 lengths (3-83 tokens).
        let runs = runs_for_mixed_lengths(&spec);
        assert!(runs < mixed_lengths().len() * 2 / 3, "{}: {runs} runs", spec.name);
    }
}

#[test]
fn a_graph_that_quantizes_per_run_runs_one_text_at_a_time() {
    // ONNX Runtime's dynamic quantization takes one scale a run, so such a graph's vectors would
    // depend on their batch (transformer.rs). The copy is MiniLM's integer graph with a later
    // doc_string naming the operator (protobuf keeps the last value of a field), its weights file
    // beside it (linked or copied: ONNX Runtime refuses a symbolic link that leaves the model's
    // folder): the graph still runs, and its bytes say DynamicQuantize.
    let spec = int8_spec(minilm_spec());
    let dir = std::env::temp_dir().join(format!("pg_chunk-per-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join(spec.model_file.file_name().unwrap());
    let mut bytes = std::fs::read(&spec.model_file).unwrap();
    let doc = b"quantized by DynamicQuantizeMatMul";
    bytes.extend_from_slice(&[0x32, doc.len() as u8]);
    bytes.extend_from_slice(doc);
    std::fs::write(&copy, bytes).unwrap();
    let data = spec.model_file.with_extension("onnx.data");
    let data_copy = dir.join(data.file_name().unwrap());
    if std::fs::hard_link(&data, &data_copy).is_err() {
        std::fs::copy(&data, &data_copy).unwrap();
    }
    let runs = runs_for_mixed_lengths(&ModelSpec { model_file: copy, ..spec });
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(runs, mixed_lengths().len());
}

#[test]
fn minilm_restores_input_order_when_lengths_vary() {
    let mut model = load(&minilm_spec());
    let texts = mixed_lengths();
    let forward: Vec<&str> = texts.iter().map(String::as_str).collect();
    let backward: Vec<&str> = forward.iter().rev().copied().collect();
    let forward_output = embed(model.as_mut(), &forward, 8);
    let backward_output = embed(model.as_mut(), &backward, 8);
    let n = texts.len();
    for (i, &text) in forward.iter().enumerate() {
        let difference = max_difference(forward_output.row(i), backward_output.row(n - 1 - i));
        assert!(difference < 1e-5, "text {i}: {difference}");
        // and each row is that text's own vector
        let alone = embed(model.as_mut(), &[text], 1);
        assert!(max_difference(forward_output.row(i), alone.row(0)) < 1e-5, "text {i}");
    }
}

#[test]
fn minilm_counts_truncated_inputs_and_tokens() {
    let mut model = load(&minilm_spec());
    let long = long_text(400);
    let output = embed(model.as_mut(), &[SIMILAR_A, &long, UNRELATED], 16);
    assert_eq!(output.truncated, 1);
    assert!((norm(output.row(1)) - 1.0).abs() < 1e-4);
    // count_tokens counts the whole text, without special tokens or a cap
    assert!(model.count_tokens(&long) > 256, "{}", model.count_tokens(&long));
    assert_eq!(model.count_tokens("hello world"), 2);
    assert_eq!(model.count_tokens("The quick brown fox jumps over the lazy dog."), 10);
    assert_eq!(model.count_tokens(""), 0);
}

#[test]
fn minilm_a_text_cut_at_max_tokens_equals_its_cut_version() {
    // max_tokens 8 = [CLS] + 6 words + [SEP]
    let mut spec = minilm_spec();
    spec.max_tokens = 8;
    let mut model = load(&spec);
    let output = embed(model.as_mut(), &["one two three four five six seven eight", "one two three four five six"], 4);
    assert_eq!(output.truncated, 1);
    assert!(max_difference(output.row(0), output.row(1)) < 1e-5);
}

#[test]
fn prefixes_follow_the_role() {
    let mut spec = minilm_spec();
    spec.query_prefix = Some("query: ".into());
    spec.passage_prefix = Some("passage: ".into());
    let mut model = load(&spec);
    let as_query = model.embed(&[SIMILAR_A], Role::Query, 4, &mut || {}).unwrap();
    let as_passage = model.embed(&[SIMILAR_A], Role::Passage, 4, &mut || {}).unwrap();
    assert!(max_difference(as_query.row(0), as_passage.row(0)) > 1e-3);

    let mut plain = load(&minilm_spec());
    let spelled_out = embed(plain.as_mut(), &["query: The cat sat on the mat."], 4);
    assert!(max_difference(as_query.row(0), spelled_out.row(0)) < 1e-5);
}

#[test]
fn between_batches_runs_before_every_batch_and_every_batch_of_tokenizing() {
    // The transformer tokenizes every input up front (to sort by length), the static model
    // batch by batch: 3 batches of 4, and for the transformer 3 batches' worth of tokenizing.
    for (spec, want) in [(minilm_spec(), 6), (potion_spec(), 3)] {
        let mut model = load(&spec);
        let texts = vec![SIMILAR_A; 10];
        let mut calls = 0;
        model.embed(&texts, Role::Passage, 4, &mut || calls += 1).unwrap();
        assert_eq!(calls, want, "{}", spec.name);
        let empty = model.embed(&[], Role::Passage, 4, &mut || calls += 1).unwrap();
        assert!(empty.vectors.is_empty() && empty.truncated == 0);
    }
}

#[test]
fn minilm_rejects_a_wrong_dimension_and_an_unknown_output() {
    let mut spec = minilm_spec();
    spec.dimension = 128;
    let result = load_model(&spec, &runtime()).and_then(|mut model| model.embed(&["x"], Role::Passage, 1, &mut || {}));
    assert!(matches!(result, Err(EmbedError::DimensionMismatch { expected: 128, found: 384 })), "{result:?}");

    let mut spec = minilm_spec();
    spec.output_name = Some("no_such_output".into());
    match load_model(&spec, &runtime()) {
        Err(EmbedError::InvalidModel(message)) => {
            assert!(message.contains("no_such_output") && message.contains("last_hidden_state"), "{message}")
        }
        other => panic!("expected InvalidModel, got {:?}", other.err()),
    }
}

#[test]
fn potion_vectors_are_256_d_unit_norm_and_meaningful() {
    let mut model = load(&potion_spec());
    let output = embed(model.as_mut(), &[SIMILAR_A, SIMILAR_B, UNRELATED], 2);
    assert_eq!(output.dimension, 256);
    assert_eq!(output.vectors.len(), 3 * 256);
    for row in output.rows() {
        assert!((norm(row) - 1.0).abs() < 1e-4, "norm {}", norm(row));
    }
    let similar = dot(output.row(0), output.row(1));
    let unrelated = dot(output.row(0), output.row(2));
    assert!(similar > unrelated + 0.1, "similar {similar}, unrelated {unrelated}");
    assert_eq!(model.count_tokens("hello world"), 2);
}

#[test]
fn potion_truncates_at_max_tokens_and_gives_zero_for_no_tokens() {
    let mut spec = potion_spec();
    spec.max_tokens = 6;
    let mut model = load(&spec);
    let output =
        embed(model.as_mut(), &["one two three four five six seven eight", "one two three four five six", ""], 4);
    assert_eq!(output.truncated, 1);
    assert!(max_difference(output.row(0), output.row(1)) < 1e-6);
    assert!(output.row(2).iter().all(|&v| v == 0.0));
}

#[test]
fn missing_files_are_reported_with_their_path() {
    let mut cases = Vec::new();
    for spec in [minilm_spec(), potion_spec()] {
        let mut missing_model = spec.clone();
        missing_model.model_file = spec.model_file.with_file_name("absent.bin");
        cases.push(missing_model);
        let mut missing_tokenizer = spec.clone();
        missing_tokenizer.tokenizer_file = spec.tokenizer_file.with_file_name("absent.json");
        cases.push(missing_tokenizer);
    }
    for spec in cases {
        match load_model(&spec, &runtime()) {
            Err(error @ EmbedError::MissingFile { .. }) => {
                assert!(error.to_string().contains("absent."), "{error}");
            }
            other => panic!("{}: expected MissingFile, got {:?}", spec.name, other.err()),
        }
    }
}

#[test]
fn a_bogus_runtime_library_is_an_error_not_a_panic() {
    let nowhere = RuntimeOptions { library_path: "/nonexistent/libonnxruntime.so".into(), threads: 1 };
    match load_model(&minilm_spec(), &nowhere) {
        Err(EmbedError::MissingFile { path, .. }) => assert_eq!(path, nowhere.library_path),
        other => panic!("expected MissingFile, got {:?}", other.err()),
    }
    // An existing file that is not a library. If another test already loaded the real runtime,
    // the error says so instead; either way it is a Runtime error.
    let not_a_library = RuntimeOptions { library_path: minilm_spec().tokenizer_file, threads: 1 };
    let result = load_model(&minilm_spec(), &not_a_library);
    assert!(matches!(result, Err(EmbedError::Runtime(_))), "{:?}", result.err());
    assert!(matches!(onnxruntime_version(&not_a_library.library_path), Err(EmbedError::Runtime(_))));
}

#[test]
fn the_runtime_reports_a_compatible_version() {
    let version = onnxruntime_version(&runtime().library_path).expect("version");
    assert!(version.starts_with("1."), "{version}");
}

#[test]
fn static_models_never_touch_onnx_runtime() {
    let nowhere = RuntimeOptions { library_path: "/nonexistent/libonnxruntime.so".into(), threads: 1 };
    let mut model = load_model(&potion_spec(), &nowhere).expect("static model loads without a runtime");
    assert_eq!(embed(model.as_mut(), &[SIMILAR_A], 1).dimension, 256);
}

#[test]
fn a_passage_of_the_window_is_read_whole_and_one_token_more_is_cut() {
    // MiniLM adds [CLS] and [SEP]; e5 also its "passage: " prefix; potion nothing.
    // "passage: " is two tokens before the passage's own ("▁passage", ":").
    let cases = [(minilm_spec(), 254), (support::e5_spec(), 512 - 2 - 2), (potion_spec(), 512)];
    for (spec, expected) in cases {
        let mut model = load(&spec);
        let window = model.passage_window();
        assert_eq!(window, expected, "{}", spec.name);
        // "word" is one token in all three vocabularies.
        let fits = vec!["word"; window].join(" ");
        let over = vec!["word"; window + 1].join(" ");
        assert_eq!(model.count_tokens(&fits), window, "{}", spec.name);
        assert_eq!(embed(model.as_mut(), &[&fits], 1).truncated, 0, "{}", spec.name);
        assert_eq!(embed(model.as_mut(), &[&over], 1).truncated, 1, "{}", spec.name);
    }
}
