//! Embeddings seen from a client: parity with the Python reference, fresh backends, errors
//! that depend on per-backend state, cancel, and concurrency.

use pg_chunk_client_tests::{connect, connect_collecting_notices, connection_string, sqlstate_of, TEST_DATABASE};
use postgres::error::DbError;
use postgres::Client;
use std::sync::{Arc, Mutex};
use std::thread;

/// The embedding of `text` as floats, parsed from pgvector's text form.
fn embedding(client: &mut Client, text: &str, model: &str) -> Vec<f32> {
    let row = client.query_one("SELECT knowledge.embed($1, $2)::text", &[&text, &model]).unwrap();
    let literal: String = row.get(0);
    literal.trim_matches(['[', ']']).split(',').map(|x| x.parse().unwrap()).collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

fn parity_fixture() -> (Vec<String>, serde_json::Map<String, serde_json::Value>) {
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/parity.json")).unwrap(),
    )
    .unwrap();
    let sentences: Vec<String> = serde_json::from_value(fixture["sentences"].clone()).unwrap();
    assert!(sentences.len() >= 50);
    (sentences, fixture["embeddings"].as_object().unwrap().clone())
}

/// The fixture's float32 reference for a model folder is what this registration computes.
fn float_registration(fixture_model: &str) -> String {
    match fixture_model {
        "all-minilm-l6-v2" => "all-minilm-l6-v2-float".into(),
        other => other.into(),
    }
}

#[test]
fn sql_embeddings_equal_the_python_onnxruntime_reference() {
    let (sentences, embeddings) = parity_fixture();
    let mut client = connect();
    for (fixture_model, reference) in &embeddings {
        let model = float_registration(fixture_model);
        let reference: Vec<Vec<f32>> = serde_json::from_value(reference.clone()).unwrap();
        for (sentence, expected) in sentences.iter().zip(&reference) {
            let got = embedding(&mut client, sentence, &model);
            let similarity = cosine(&got, expected);
            assert!(similarity >= 0.9999, "{model}: cosine {similarity} for {sentence:?}");
        }
    }
}

/// Mean and least cosine between two models' SQL embeddings of the same sentences.
fn agreement(client: &mut Client, sentences: &[String], model: &str, float: &str) -> (f64, f64) {
    let cosines: Vec<f64> = sentences
        .iter()
        .map(|sentence| cosine(&embedding(client, sentence, model), &embedding(client, sentence, float)))
        .collect();
    (cosines.iter().sum::<f64>() / cosines.len() as f64, cosines.iter().copied().fold(1.0, f64::min))
}

#[test]
fn integer_models_agree_with_their_float_copies() {
    // The integer models' quality gate (docs/design.md, "Integer kernels"): mean cosine >= 0.99 and least >= 0.98 to the float model, on the
    // parity sentences (MiniLM) and on the e5 fixture's English, Chinese and Hindi ones.
    let (sentences, _) = parity_fixture();
    let e5: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/e5_parity.json")).unwrap(),
    )
    .unwrap();
    let e5_sentences: Vec<String> = serde_json::from_value(e5["all_sentences"].clone()).unwrap();
    let mut client = connect();
    let files: Vec<String> = client
        .query("SELECT model_file FROM knowledge.models WHERE name IN ('all-minilm-l6-v2', 'multilingual-e5-small') ORDER BY name", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(
        files,
        ["all-minilm-l6-v2/model.int8.onnx", "multilingual-e5-small/model.int8.onnx"],
        "the defaults are the integer copies"
    );
    for (model, texts) in [("all-minilm-l6-v2", &sentences), ("multilingual-e5-small", &e5_sentences)] {
        let float = format!("{model}-float");
        let (mean, least) = agreement(&mut client, texts, model, &float);
        assert!(
            mean >= 0.99 && least >= 0.98,
            "{model} against {float} over {} sentences: mean cosine {mean:.4}, least {least:.4}",
            texts.len()
        );
        // Not the same computation under two names.
        assert!(least < 0.9999, "{model}: least cosine {least} to {float}");
    }
}

#[test]
fn a_missing_onnx_runtime_raises_58p01_naming_the_setting() {
    // A fresh backend that has not loaded ONNX Runtime yet.
    let mut client = connect();
    client.batch_execute("SET pg_chunk.onnxruntime_library = '/nonexistent/libonnxruntime.so'").unwrap();
    let err = client.query_one("SELECT knowledge.embed('x', 'all-minilm-l6-v2')", &[]).unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code().code(), "58P01", "{db:?}");
    assert!(
        db.message().contains("/nonexistent/libonnxruntime.so")
            && db.message().contains("pg_chunk.onnxruntime_library"),
        "{}",
        db.message()
    );
    // The static model needs no runtime and still works in the same backend.
    let ok = client.query_one("SELECT vector_dims(knowledge.embed('x', 'potion-base-8m'))", &[]).unwrap();
    assert_eq!(ok.get::<_, i32>(0), 256);
}

#[test]
fn statement_timeout_stops_a_long_embed_batch() {
    let mut client = connect();
    client.batch_execute("SET statement_timeout = '500ms'").unwrap();
    // 5,000 distinct sentences take MiniLM well over 10 s on one thread.
    let inputs: Vec<String> = (0..5000)
        .map(|i| format!("Sentence number {i} talks about topic {} at some length.", i * 7919 % 1000))
        .collect();
    let started = std::time::Instant::now();
    let err = client.query("SELECT count(*) FROM knowledge.embed_batch($1)", &[&inputs]).unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("57014"), "{err}");
    // Cancel is checked between batches of 16 sentences, so it lands within a batch's time.
    assert!(started.elapsed().as_secs_f64() < 5.0, "took {:?}", started.elapsed());
    client.batch_execute("RESET statement_timeout").unwrap();
    assert_eq!(sqlstate_of(&mut client, "SELECT knowledge.embed('still alive')"), "00000");
}

#[test]
fn concurrent_backends_embed_the_same_vectors() {
    let texts = ["The cat sleeps.", "Rust compiles crates.", "Bread rises overnight."];
    let reference: Vec<Vec<f32>> = {
        let mut client = connect();
        texts.iter().map(|t| embedding(&mut client, t, "all-minilm-l6-v2")).collect()
    };
    let workers: Vec<_> = (0..3)
        .map(|_| {
            thread::spawn(move || {
                let mut client = connect();
                (0..5)
                    .flat_map(|_| {
                        texts.iter().map(|t| embedding(&mut client, t, "all-minilm-l6-v2")).collect::<Vec<_>>()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for worker in workers {
        for (i, got) in worker.join().unwrap().iter().enumerate() {
            assert!(cosine(got, &reference[i % texts.len()]) > 0.99999);
        }
    }
}

/// A connection to the test database that keeps every message the server sends it whole:
/// severity, SQLSTATE, message, detail and hint.
fn connect_keeping_messages() -> (Client, Arc<Mutex<Vec<DbError>>>) {
    connect(); // the database exists from here on
    let messages = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&messages);
    let mut config: postgres::Config = connection_string(TEST_DATABASE).parse().unwrap();
    config.notice_callback(move |message| sink.lock().unwrap().push(message));
    (config.connect(postgres::NoTls).unwrap(), messages)
}

/// The messages that name `model`, as `SEVERITY SQLSTATE: message`.
fn naming(messages: &Mutex<Vec<DbError>>, model: &str) -> Vec<String> {
    let model = format!("\"{model}\"");
    let messages = messages.lock().unwrap();
    messages
        .iter()
        .filter(|m| m.message().contains(&model))
        .map(|m| format!("{} {}: {}", m.severity(), m.code().code(), m.message()))
        .collect()
}

#[test]
fn embedding_a_text_longer_than_the_model_reads_says_its_vector_holds_only_the_start() {
    let (mut client, messages) = connect_keeping_messages();
    let long = "word ".repeat(400); // about 400 tokens, above MiniLM's 256
    client
        .query(
            "SELECT count(*) FROM knowledge.embed_batch(ARRAY[$1, $1 || ' again', 'short', NULL], 'all-minilm-l6-v2')",
            &[&long],
        )
        .unwrap();
    // One NOTICE for the call, however many inputs were cut.
    assert_eq!(
        naming(&messages, "all-minilm-l6-v2"),
        ["NOTICE 01004: 2 of 3 input(s) are longer than model \"all-minilm-l6-v2\" reads (256 tokens, special tokens and prefix included): their vectors represent only the start of each such text"]
    );
    let messages = messages.lock().unwrap();
    let notice = messages.iter().find(|m| m.code().code() == "01004").unwrap();
    assert_eq!(
        notice.detail(),
        Some("The rest of such a text does not count in its vector: a search cannot find it by what it says past its start.")
    );
    assert_eq!(
        notice.hint(),
        Some("Embed shorter texts: knowledge.chunk cuts a long text into chunks the model reads whole.")
    );
}

#[test]
fn chunking_a_sentence_longer_than_the_model_reads_is_no_notice_and_loses_nothing() {
    // One sentence of about 600 tokens between two short ones, chunked under the default cfg
    // (MiniLM): the chunks are cut from the document, whole and within the model's 254 tokens,
    // while the long sentence is embedded by its first 254 tokens only to place the cuts.
    let long: String = (0..300).map(|i| format!("cell{i} ")).collect();
    let doc = format!("The table below lists the cells. {}. The table ends here.", long.trim_end());
    // The chunks' text without whitespace (which lies between them), whether each is exactly
    // its span of the document, and the longest in tokens.
    let chunk = "SELECT string_agg(regexp_replace(content, '\\s', '', 'g'), '' ORDER BY chunk_index),
                        bool_and(content = substr($1, char_offset + 1, char_length)), max(token_count)
                 FROM knowledge.chunk($1)";
    for level in ["notice", "debug1"] {
        // A connection of its own each time: a sentence its cache holds is not embedded again.
        let (mut client, messages) = connect_keeping_messages();
        client.batch_execute(&format!("SET client_min_messages = {level}")).unwrap();
        let row = client.query_one(chunk, &[&doc]).unwrap();
        assert_eq!(row.get::<_, String>(0), doc.replace(' ', ""), "the chunks hold the document whole");
        assert!(row.get::<_, bool>(1), "each chunk is its span of the document");
        assert!(row.get::<_, i32>(2) <= 254, "{}", row.get::<_, i32>(2));
        let expected: &[&str] = match level {
            "notice" => &[],
            _ => &["DEBUG 00000: 1 sentence(s) longer than model \"all-minilm-l6-v2\" reads were embedded by their first 254 tokens to find where the meaning changes; the chunks hold them whole"],
        };
        assert_eq!(naming(&messages, "all-minilm-l6-v2"), expected, "client_min_messages = {level}");
    }
}

#[test]
fn a_fallback_warns_that_it_replaced_the_model() {
    let (mut client, notices) = connect_collecting_notices();
    client.batch_execute("SET pg_chunk.onnxruntime_library = '/nonexistent/libonnxruntime.so'").unwrap();
    let rows = client
        .query("SELECT * FROM knowledge.chunk(repeat('Some words here. ', 300), '{\"fallback\": \"lexical\"}')", &[])
        .unwrap();
    assert!(!rows.is_empty());
    let got = notices.lock().unwrap().clone();
    assert!(got.iter().any(|n| n.starts_with("WARNING") && n.contains("fallback \"lexical\"")), "{got:?}");
}

#[test]
fn parallel_workers_can_embed_and_chunk() {
    // The functions are PARALLEL SAFE, so a parallel worker may run them: it looks the model up
    // in knowledge.models itself, which must be a read-only query.
    let mut client = connect();
    // (PostgreSQL 16 renamed force_parallel_mode debug_parallel_query.)
    let version: i32 = client.query_one("SELECT current_setting('server_version_num')::int", &[]).unwrap().get(0);
    let force = if version >= 160000 { "debug_parallel_query" } else { "force_parallel_mode" };
    client
        .batch_execute(&format!("SET {force} = on; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0"))
        .unwrap();
    for model in ["potion-base-8m", "all-minilm-l6-v2"] {
        let row =
            client.query_one("SELECT vector_dims(knowledge.embed('A worker embeds this.', $1))", &[&model]).unwrap();
        assert!(row.get::<_, i32>(0) > 0, "{model}");
    }
    let plan: Vec<String> = client
        .query("EXPLAIN SELECT vector_dims(knowledge.embed('A worker embeds this.', 'potion-base-8m'))", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(plan.iter().any(|line| line.contains("Gather")), "not run in a worker: {plan:?}");
    let cfg = r#"{"model": "potion-base-8m", "inline_threshold": 0}"#;
    let row = client
        .query_one(
            "SELECT count(*) FROM knowledge.chunk($1, $2::text::jsonb)",
            &[&pg_chunk_client_tests::sample_document(), &cfg],
        )
        .unwrap();
    assert!(row.get::<_, i64>(0) > 1);
}

#[test]
fn without_max_size_chunks_fit_what_the_model_reads() {
    let (mut client, notices) = connect_collecting_notices();
    let doc = pg_chunk_client_tests::prose_paragraphs().join("\n\n");
    // all-MiniLM-L6-v2 reads 256 tokens, [CLS] and [SEP] included: 254 of a chunk's own.
    let widest: i32 = client.query_one("SELECT max(token_count) FROM knowledge.chunk($1)", &[&doc]).unwrap().get(0);
    assert!(widest <= 254 && widest > 150, "the widest default chunk has {widest} tokens");
    for strategy in ["recursive", "markdown", "topic_coherence"] {
        let cfg = format!(r#"{{"strategy": "{strategy}"}}"#);
        let widest: i32 = client
            .query_one("SELECT max(token_count) FROM knowledge.chunk($1, $2::text::jsonb)", &[&doc, &cfg])
            .unwrap()
            .get(0);
        assert!(widest <= 254, "{strategy}: the widest chunk has {widest} tokens");
    }
    assert!(notices.lock().unwrap().is_empty(), "{:?}", notices.lock().unwrap());
    // An explicit max_size wider than the model: the chunks are as asked, and one NOTICE says
    // how many the model reads only in part.
    let wide: i64 = client
        .query_one("SELECT count(*) FILTER (WHERE token_count > 254) FROM knowledge.chunk($1, '{\"max_size\": 2000, \"inline_threshold\": 0}')", &[&doc])
        .unwrap()
        .get(0);
    the_wide_chunks_notice(&notices, wide);
    // Cut with potion-base-8m (which reads 510 tokens) and embedded with all-MiniLM-L6-v2, as a
    // store config whose cfg names its own model has them: the NOTICE is about the model that
    // embeds them.
    let cfg = r#"{"model": "potion-base-8m", "max_size": 2000, "inline_threshold": 0}"#;
    let wide: i64 = client
        .query_one(
            "SELECT count(*) FILTER (WHERE token_count > 254)
             FROM knowledge_internal.embed_chunks_batch(ARRAY[1::bigint], ARRAY[$1], $2::text::jsonb, 'all-minilm-l6-v2')",
            &[&doc, &cfg],
        )
        .unwrap()
        .get(0);
    assert!(the_wide_chunks_notice(&notices, wide).contains("\"all-minilm-l6-v2\""));
    // chunk_explain says where the sizes came from.
    client.query("SELECT * FROM knowledge.chunk_explain($1)", &[&doc]).unwrap();
    let got = notices.lock().unwrap().clone();
    assert!(got.iter().any(|n| n.contains("max_size is unset") && n.contains("254 tokens")), "{got:?}");
}

/// The one NOTICE collected since the last call, which says that `wide` chunks are longer than
/// all-MiniLM-L6-v2's 254 tokens; the notices are cleared.
fn the_wide_chunks_notice(notices: &std::sync::Mutex<Vec<String>>, wide: i64) -> String {
    assert!(wide > 0);
    let got = std::mem::take(&mut *notices.lock().unwrap());
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("NOTICE") && got[0].contains(&format!("{wide} of")) && got[0].contains("254 tokens"),
        "{got:?}"
    );
    got[0].clone()
}

#[test]
fn threads_above_max_threads_are_clamped_with_a_notice() {
    let (mut client, notices) = connect_collecting_notices();
    // Any role may ask for threads; pg_chunk.max_threads (superuser-only) caps them.
    client.batch_execute("SET pg_chunk.max_threads = 1; SET pg_chunk.threads = 2").unwrap();
    let dims: i32 = client
        .query_one("SELECT vector_dims(knowledge.embed('clamped threads', 'all-minilm-l6-v2'))", &[])
        .unwrap()
        .get(0);
    assert_eq!(dims, 384);
    let got = notices.lock().unwrap().clone();
    assert!(
        got.iter().any(|n| n.starts_with("NOTICE") && n.contains("pg_chunk.threads is 2") && n.contains("runs with 1")),
        "{got:?}"
    );
    // Within the cap: no notice.
    notices.lock().unwrap().clear();
    client.batch_execute("SET pg_chunk.max_threads = 2").unwrap();
    client.query_one("SELECT knowledge.embed('clamped threads', 'all-minilm-l6-v2')", &[]).unwrap();
    assert!(notices.lock().unwrap().iter().all(|n| !n.contains("max_threads")), "{:?}", notices.lock().unwrap());
}
