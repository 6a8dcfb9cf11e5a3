//! SQL behaviour of each function, run inside PostgreSQL by `cargo pgrx test`.

#[pgrx::pg_schema]
mod tests {
    use crate::tests::support::{one, sqlstate_of};
    use pgrx::prelude::*;

    /// A document of three topics long enough to be chunked rather than kept whole.
    const TOPICS: &str = "The cat and the kitten sleep. A cat and a kitten purr softly. Every kitten follows the cat. \
    The cat feeds the kitten milk. A kitten and a cat play with yarn. The old cat watches the kitten. \
    The Rust compiler checks borrows. Rust borrows are checked by the compiler. The compiler rejects bad Rust borrows. \
    Cargo runs the Rust compiler. Rust compiler errors explain borrows. The borrow checker is part of the Rust compiler. \
    Bakers knead bread dough with flour. Bread dough needs flour and yeast. Flour and yeast make bread dough rise. \
    Bakers bake the bread dough at dawn. Rye flour makes dark bread dough. Fresh bread comes from flour dough.";

    const TOPICS_CFG: &str = r#"{"model": "lexical", "inline_threshold": 0, "min_size": 100, "smoothing": 0, "threshold": {"type": "percentile", "value": 85}}"#;

    #[pg_test]
    fn chunk_finds_the_three_topics_with_exact_offsets() {
        let query = format!("SELECT count(*) FROM knowledge.chunk('{TOPICS}', '{TOPICS_CFG}')");
        assert_eq!(one::<i64>(&query), 3);
        let exact = format!(
            "SELECT bool_and(substr(d, char_offset + 1, char_length) = content) FROM (SELECT '{TOPICS}'::text AS d) s, knowledge.chunk(d, '{TOPICS_CFG}')"
        );
        assert_eq!(Spi::get_one::<bool>(&exact).unwrap(), Some(true));
        let second = format!("SELECT content FROM knowledge.chunk('{TOPICS}', '{TOPICS_CFG}') WHERE chunk_index = 1");
        assert!(Spi::get_one::<String>(&second).unwrap().unwrap().starts_with("The Rust compiler"));
    }

    #[pg_test]
    fn offsets_count_characters_not_bytes() {
        let doc = "这是第一句。这是第二句。नमस्ते दुनिया। Ünïcödé tëxt. 😀 emoji here!";
        for function in [
            "knowledge.chunk(d, '{\"strategy\": \"fixed\", \"max_size\": 10, \"overlap\": 3}')",
            "knowledge.split_sentences(d)",
        ] {
            let query = format!("SELECT bool_and(substr(d, char_offset + 1, char_length) = content) FROM (SELECT '{doc}'::text AS d) s, {function}");
            assert_eq!(Spi::get_one::<bool>(&query).unwrap(), Some(true), "{function}");
        }
        assert_eq!(one::<i64>(&format!("SELECT count(*) FROM knowledge.split_sentences('{doc}')")), 5);
    }

    #[pg_test]
    fn semantic_chunk_equals_chunk_with_the_default_strategy() {
        let differ = format!(
            "SELECT count(*) FROM (SELECT * FROM knowledge.chunk('{TOPICS}', '{TOPICS_CFG}') EXCEPT SELECT * FROM knowledge.semantic_chunk('{TOPICS}', '{TOPICS_CFG}')) d"
        );
        assert_eq!(one::<i64>(&differ), 0);
    }

    #[pg_test]
    fn each_strategy_reports_metadata_and_token_counts() {
        for (cfg, reason) in [
            (r#"{"model": "lexical", "strategy": "fixed", "max_size": 100}"#, "window"),
            (r#"{"model": "lexical", "strategy": "recursive", "max_size": 200, "min_size": 10}"#, "sentence"),
        ] {
            let query = format!(
                "SELECT metadata->>'split_reason' FROM knowledge.chunk('{TOPICS}', '{cfg}') WHERE chunk_index = 0"
            );
            assert_eq!(Spi::get_one::<String>(&query).unwrap().as_deref(), Some(reason));
            let tokens = format!(
                "SELECT bool_and(token_count > 0 AND char_length <= 200) FROM knowledge.chunk('{TOPICS}', '{cfg}')"
            );
            assert_eq!(Spi::get_one::<bool>(&tokens).unwrap(), Some(true));
        }
    }

    #[pg_test]
    fn short_documents_are_one_inline_chunk() {
        let query = "SELECT metadata->>'split_reason' FROM knowledge.chunk('A short note. Just two sentences.')";
        assert_eq!(Spi::get_one::<String>(query).unwrap().as_deref(), Some("inline"));
    }

    #[pg_test]
    fn null_empty_and_blank_documents_give_no_rows() {
        for doc in ["NULL", "''", "'   '", "E'\\n\\n\\t'"] {
            for function in ["chunk", "semantic_chunk", "chunk_explain"] {
                assert_eq!(
                    one::<i64>(&format!("SELECT count(*) FROM knowledge.{function}({doc})")),
                    0,
                    "{function}({doc})"
                );
            }
            assert_eq!(one::<i64>(&format!("SELECT count(*) FROM knowledge.split_sentences({doc})")), 0);
        }
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge.chunk('text', NULL)"), 0);
    }

    #[pg_test]
    fn explain_has_a_row_per_sentence_and_marks_the_cuts() {
        let query = format!("SELECT count(*) FROM knowledge.chunk_explain('{TOPICS}', '{TOPICS_CFG}')");
        assert_eq!(one::<i64>(&query), 18);
        let cuts = format!(
            "SELECT array_agg(char_offset ORDER BY char_offset)::text FROM knowledge.chunk_explain('{TOPICS}', '{TOPICS_CFG}') WHERE is_cut"
        );
        let chunk_starts = format!(
            "SELECT array_agg(char_offset ORDER BY char_offset)::text FROM knowledge.chunk('{TOPICS}', '{TOPICS_CFG}')"
        );
        assert_eq!(Spi::get_one::<String>(&cuts).unwrap(), Spi::get_one::<String>(&chunk_starts).unwrap());
        let reasons = format!("SELECT string_agg(reason, ',' ORDER BY sentence_index) FROM knowledge.chunk_explain('{TOPICS}', '{TOPICS_CFG}') WHERE is_cut");
        assert_eq!(Spi::get_one::<String>(&reasons).unwrap().as_deref(), Some("start,threshold,threshold"));
        let first = format!("SELECT distance IS NULL AND score IS NULL AND threshold IS NOT NULL FROM knowledge.chunk_explain('{TOPICS}', '{TOPICS_CFG}') WHERE sentence_index = 0");
        assert_eq!(Spi::get_one::<bool>(&first).unwrap(), Some(true));
    }

    #[pg_test]
    fn the_default_method_scores_gaps_against_the_penalty() {
        let cfg = r#"{"model": "lexical", "inline_threshold": 0, "min_size": 100}"#;
        let starts = format!("SELECT string_agg(sentence_index::text, ',' ORDER BY sentence_index) FROM knowledge.chunk_explain('{TOPICS}', '{cfg}') WHERE is_cut");
        assert_eq!(Spi::get_one::<String>(&starts).unwrap().as_deref(), Some("0,6,12"));
        let agrees = format!("SELECT bool_and(is_cut = (score > threshold)) FROM knowledge.chunk_explain('{TOPICS}', '{cfg}') WHERE sentence_index > 0");
        assert_eq!(Spi::get_one::<bool>(&agrees).unwrap(), Some(true));
        let penalty = format!("SELECT DISTINCT threshold FROM knowledge.chunk_explain('{TOPICS}', '{cfg}')");
        assert_eq!(one::<f64>(&penalty), 1.3);
    }

    #[pg_test]
    fn bad_configurations_raise_22023() {
        let cases = [
            r#"{"colour": "blue"}"#,
            r#"{"strategy": "magic"}"#,
            r#"{"max_size": "ten"}"#,
            r#"{"max_size": -1}"#,
            r#"{"min_size": 900, "max_size": 100}"#,
            r#"{"threshold": {"type": "percentile", "value": 150}}"#,
            r#"{"smoothing": "wide"}"#,
            r#"{"method": "valleys"}"#,
            r#"{"method": "threshold", "penalty": 2}"#,
            r#"[1, 2]"#,
        ];
        for cfg in cases {
            for function in ["chunk", "semantic_chunk", "chunk_explain"] {
                assert_eq!(
                    sqlstate_of(&format!("SELECT * FROM knowledge.{function}('Some text.', '{cfg}')")),
                    "22023",
                    "{function} {cfg}"
                );
            }
        }
        // The semantic-only functions refuse another strategy.
        for function in ["semantic_chunk", "chunk_explain"] {
            assert_eq!(
                sqlstate_of(&format!(
                    "SELECT * FROM knowledge.{function}('Some text.', '{{\"strategy\": \"fixed\"}}')"
                )),
                "22023"
            );
        }
    }

    #[pg_test]
    fn the_error_message_names_the_key_and_value() {
        let query = "SELECT pg_temp.message_of('SELECT * FROM knowledge.chunk(''x'', ''{\"max_size\": -7}'')')";
        Spi::run(
            "CREATE FUNCTION pg_temp.message_of(q text) RETURNS text LANGUAGE plpgsql AS $$
             BEGIN EXECUTE q; RETURN NULL; EXCEPTION WHEN OTHERS THEN RETURN SQLERRM; END $$",
        )
        .unwrap();
        let message = Spi::get_one::<String>(query).unwrap().unwrap();
        assert!(message.contains("max_size") && message.contains("-7"), "{message}");
    }

    #[pg_test]
    fn documents_above_max_document_size_raise_54000() {
        assert_eq!(
            sqlstate_of("SELECT * FROM knowledge.chunk(repeat('word ', 100), '{\"max_document_size\": 100}')"),
            "54000"
        );
        assert_eq!(sqlstate_of("SELECT * FROM knowledge.chunk(repeat('x', 10485761))"), "54000");
        assert_eq!(
            sqlstate_of("SELECT * FROM knowledge.chunk(repeat('word ', 20), '{\"max_document_size\": 100}')"),
            "00000"
        );
    }

    #[pg_test]
    fn unknown_models_raise_42704() {
        for query in
            ["SELECT knowledge.embed('x', 'no-such-model')", "SELECT knowledge.token_count('x', 'no-such-model')"]
        {
            assert_eq!(sqlstate_of(query), "42704", "{query}");
        }
        let query = format!(
            "SELECT * FROM knowledge.chunk('{TOPICS}', '{{\"model\": \"no-such-model\", \"inline_threshold\": 0}}')"
        );
        assert_eq!(sqlstate_of(&query), "42704");
        let lexical = format!("SELECT * FROM knowledge.chunk('{TOPICS}', '{{\"model\": \"lexical\"}}')");
        assert_eq!(sqlstate_of(&lexical), "00000");
    }

    #[pg_test]
    fn hostile_text_never_raises_an_internal_error() {
        let docs = [
            "repeat('.', 5000)",
            "repeat('😀', 3000)",
            "repeat('a', 200000)",
            "repeat(E'\\n', 1000)",
            "E'\\u0001\\u0002 control \\u0007 chars.'",
            "repeat('مرحبا بالعالم. ', 300)",
            "repeat(E'e\\u0301', 2000)",
        ];
        for doc in docs {
            let configs = [
                r#"{"model": "lexical"}"#,
                r#"{"model": "lexical", "inline_threshold": 0, "max_size": 50}"#,
                r#"{"model": "lexical", "strategy": "fixed", "max_size": "5 tokens"}"#,
                r#"{"model": "lexical", "strategy": "recursive", "max_size": "3 words"}"#,
            ];
            for cfg in configs {
                let query = format!("SELECT * FROM knowledge.chunk({doc}, '{cfg}')");
                assert_eq!(sqlstate_of(&query), "00000", "{doc} {cfg}");
            }
        }
    }
}
