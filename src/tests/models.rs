//! SQL behaviour of the embedding functions and models, run inside PostgreSQL by
//! `cargo pgrx test`. They use the models the installer put in the model directory.

#[pgrx::pg_schema]
mod tests {
    use crate::tests::support::{one, sqlstate_and_message};
    use pgrx::prelude::*;

    /// Registers a model whose file does not exist.
    fn register_missing_model() {
        Spi::run(
            "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension)
             VALUES ('missing-model', 'transformer', 'nowhere/model.onnx', 'nowhere/tokenizer.json', 384)",
        )
        .unwrap();
    }

    #[pg_test]
    fn embed_returns_unit_vectors_of_the_model_dimension() {
        assert_eq!(one::<i32>("SELECT vector_dims(knowledge.embed('A cat sleeps in the sun.'))"), 384);
        assert_eq!(
            one::<i32>("SELECT vector_dims(knowledge.embed('A cat sleeps in the sun.', 'potion-base-8m'))"),
            256
        );
        assert_eq!(one::<i32>("SELECT vector_dims(knowledge.embed('A cat sleeps in the sun.', 'lexical'))"), 256);
        let norm = one::<f64>("SELECT vector_norm(knowledge.embed('A cat sleeps in the sun.'))");
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        assert!(one::<bool>("SELECT knowledge.embed(NULL) IS NULL"));
    }

    #[pg_test]
    fn similar_sentences_are_closer_than_unrelated_ones() {
        for model in ["all-minilm-l6-v2", "potion-base-8m"] {
            let query = format!(
                "SELECT (knowledge.embed('The cat sleeps on the sofa.', '{model}') <=> knowledge.embed('A kitten naps on the couch.', '{model}'))
                      < (knowledge.embed('The cat sleeps on the sofa.', '{model}') <=> knowledge.embed('Interest rates rose in March.', '{model}'))"
            );
            assert!(one::<bool>(&query), "{model}");
        }
    }

    #[pg_test]
    fn embed_batch_keeps_order_and_nulls() {
        let rows = one::<i64>("SELECT count(*) FROM knowledge.embed_batch(ARRAY['one', NULL, 'three'])");
        assert_eq!(rows, 3);
        assert_eq!(
            one::<i32>(
                "SELECT ordinality FROM knowledge.embed_batch(ARRAY['one', NULL, 'three']) WHERE embedding IS NULL"
            ),
            2
        );
        let same = "SELECT (SELECT embedding FROM knowledge.embed_batch(ARRAY['first text', 'a much longer second text than the first']) WHERE ordinality = 2)
                    = knowledge.embed('a much longer second text than the first')";
        assert!(one::<bool>(same));
    }

    #[pg_test]
    fn token_count_uses_the_model_tokenizer() {
        assert_eq!(one::<i32>("SELECT knowledge.token_count('hello world')"), 2);
        assert!(one::<i32>("SELECT knowledge.token_count('unbelievably tokenised')") > 2);
        let matches = "SELECT token_count = knowledge.token_count(content) FROM knowledge.chunk('A short note about cats. Just two sentences.')";
        assert!(one::<bool>(matches));
    }

    #[pg_test]
    fn semantic_chunking_with_minilm_finds_topics_in_plain_prose() {
        let doc = "Honeybees live in colonies with a single queen. Workers forage for nectar and pollen. \
                   The waggle dance tells other bees where flowers are. Beekeepers inspect hives for eggs. \
                   PostgreSQL is a relational database system. It stores tables as heaps of pages. \
                   Vacuum removes old row versions. The planner chooses between index and sequential scans.";
        let cfg = r#"{"inline_threshold": 0, "min_size": 0, "smoothing": 0, "threshold": {"type": "percentile", "value": 90}}"#;
        let second =
            one::<String>(&format!("SELECT content FROM knowledge.chunk('{doc}', '{cfg}') WHERE chunk_index = 1"));
        assert!(second.starts_with("PostgreSQL is"), "{second}");
    }

    #[pg_test]
    fn a_second_chunking_of_a_document_embeds_nothing_new() {
        let doc =
            "Cats purr. Dogs bark. Birds sing at dawn. Fish swim in schools. Cows graze in fields. Bees make honey.";
        Spi::run(&format!("SELECT count(*) FROM knowledge.chunk('{doc}', '{{\"inline_threshold\": 0}}')")).unwrap();
        let embedded = "SELECT sentences_embedded FROM knowledge.embedding_stats() WHERE model = 'all-minilm-l6-v2'";
        let hits = "SELECT cache_hits FROM knowledge.embedding_stats() WHERE model = 'all-minilm-l6-v2'";
        let (before, hits_before) = (one::<i64>(embedded), one::<i64>(hits));
        Spi::run(&format!(
            "SELECT count(*) FROM knowledge.chunk('{doc}', '{{\"inline_threshold\": 0, \"max_size\": 60}}')"
        ))
        .unwrap();
        assert_eq!(one::<i64>(embedded), before, "no sentence embedded again");
        assert_eq!(one::<i64>(hits) - hits_before, 6, "all six sentences came from the cache");
        assert!(one::<i64>("SELECT loads FROM knowledge.embedding_stats() WHERE model = 'all-minilm-l6-v2'") >= 1);
    }

    #[pg_test]
    fn a_missing_model_file_raises_58p01_naming_the_path_and_setting() {
        register_missing_model();
        let (code, message) = sqlstate_and_message("SELECT knowledge.embed('x', 'missing-model')");
        assert_eq!(code, "58P01");
        assert!(message.contains("nowhere/model.onnx") && message.contains("pg_chunk.model_dir"), "{message}");
    }

    #[pg_test]
    fn fallback_chunks_without_the_model_and_warns() {
        register_missing_model();
        let doc = "One topic sentence here. Another sentence on it. A third one follows. And a fourth to end.";
        let chunk = |fallback: &str| {
            sqlstate_and_message(&format!("SELECT * FROM knowledge.chunk('{doc}', '{{\"model\": \"missing-model\", \"fallback\": \"{fallback}\"}}')")).0
        };
        assert_eq!(chunk("error"), "58P01");
        assert_eq!(chunk("lexical"), "00000");
        assert_eq!(chunk("fixed"), "00000");
        let fixed = format!("SELECT metadata->>'split_reason' FROM knowledge.chunk('{doc}', '{{\"model\": \"missing-model\", \"fallback\": \"fixed\"}}') LIMIT 1");
        assert_eq!(one::<String>(&fixed), "window");
    }

    #[pg_test]
    fn unknown_roles_raise_22023() {
        assert_eq!(sqlstate_and_message("SELECT knowledge.embed('x', NULL, 'question')").0, "22023");
    }

    #[pg_test]
    fn only_superusers_change_models_and_settings_but_anyone_uses_them() {
        Spi::run("CREATE ROLE chunk_plain_user").unwrap();
        Spi::run("SET ROLE chunk_plain_user").unwrap();
        let insert = "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension) VALUES ('evil', 'static', 'a', 'b', 3)";
        let results = [
            sqlstate_and_message(insert).0,
            sqlstate_and_message("UPDATE knowledge.models SET model_file = 'x'").0,
            sqlstate_and_message("SET pg_chunk.model_dir = '/etc'").0,
            sqlstate_and_message("SET pg_chunk.onnxruntime_library = '/tmp/evil.so'").0,
            // Writing documents without their chunks, or taking more cores than allowed.
            sqlstate_and_message("SET pg_chunk.maintain_chunks = off").0,
            sqlstate_and_message("SET pg_chunk.max_threads = 64").0,
            sqlstate_and_message("SET pg_chunk.threads = 64").0,
            sqlstate_and_message("SELECT count(*) FROM knowledge.models").0,
            sqlstate_and_message("SELECT count(*) FROM knowledge.chunk('Any role may chunk. And embed.')").0,
            sqlstate_and_message("SELECT knowledge.embed('any role may embed')").0,
        ];
        Spi::run("RESET ROLE").unwrap();
        assert_eq!(results, ["42501", "42501", "42501", "42501", "42501", "42501", "00000", "00000", "00000", "00000"]);
    }

    #[pg_test]
    fn model_files_must_stay_inside_the_model_directory() {
        for file in ["/etc/passwd", "../../etc/passwd", "a/../../b"] {
            let insert = format!("INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension) VALUES ('escape', 'static', '{file}', 't.json', 3)");
            assert_eq!(sqlstate_and_message(&insert).0, "23514", "{file}");
        }
    }

    #[pg_test]
    fn a_models_row_with_an_unknown_kind_or_pooling_is_an_error_not_a_default() {
        // Only past the table's CHECKs (dropped here, inside the test's transaction).
        Spi::run(
            "ALTER TABLE knowledge.models DROP CONSTRAINT models_kind_check, DROP CONSTRAINT models_pooling_check",
        )
        .unwrap();
        Spi::run("UPDATE knowledge.models SET kind = 'magic' WHERE name = 'potion-base-8m'").unwrap();
        let (state, message) = sqlstate_and_message("SELECT knowledge.embed('x', 'potion-base-8m')");
        assert_eq!(state, "42P17", "{message}");
        assert!(message.contains("unknown kind \"magic\""), "{message}");
        Spi::run("UPDATE knowledge.models SET kind = 'static', pooling = 'max' WHERE name = 'potion-base-8m'").unwrap();
        let (state, message) = sqlstate_and_message("SELECT knowledge.embed('x', 'potion-base-8m')");
        assert_eq!((state.as_str(), message.contains("unknown pooling \"max\"")), ("42P17", true), "{message}");
    }
}
