//! SQL behaviour of the functions the store is built on, run inside PostgreSQL by
//! `cargo pgrx test`; the store itself (triggers, search, dump) is tested over real
//! connections in tests/store.rs and tests/search.rs.

#[pgrx::pg_schema]
mod tests {
    use crate::pg_test_support::{one, sqlstate_of};
    use pgrx::prelude::*;

    const DOC: &str = "Bees cluster in winter. The queen stays warm. Volcanoes erupt when magma rises. Lava cools into basalt.";

    #[pg_test]
    fn embed_chunks_gives_the_chunks_of_chunk_with_their_embeddings() {
        let cfg = r#"{"strategy": "fixed", "max_size": 40, "overlap": 0}"#;
        let same = format!(
            "SELECT (SELECT array_agg(row(chunk_index, content, char_offset, char_length, token_count, metadata)::text ORDER BY chunk_index)
                     FROM knowledge.chunk('{DOC}', '{cfg}'))
                  = (SELECT array_agg(row(chunk_index, content, char_offset, char_length, token_count, metadata)::text ORDER BY chunk_index)
                     FROM knowledge.embed_chunks('{DOC}', '{cfg}', 'potion-base-8m'))"
        );
        assert!(one::<bool>(&same));
        let embedded = format!(
            "SELECT bool_and(model = 'potion-base-8m' AND embedding = knowledge.embed(content, 'potion-base-8m'))
             FROM knowledge.embed_chunks('{DOC}', '{cfg}', 'potion-base-8m')"
        );
        assert!(one::<bool>(&embedded));
        // Without a model argument: cfg.model, else the default model.
        let models = format!(
            "SELECT string_agg(DISTINCT model, ',') || '|' || (SELECT string_agg(DISTINCT model, ',')
                 FROM knowledge.embed_chunks('{DOC}', '{{\"model\": \"lexical\"}}'))
             FROM knowledge.embed_chunks('{DOC}')"
        );
        assert_eq!(one::<String>(&models), "all-minilm-l6-v2|lexical");
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge.embed_chunks(NULL)"), 0);
        assert_eq!(sqlstate_of(&format!("SELECT * FROM knowledge.embed_chunks('{DOC}', '{{\"bogus\": 1}}')")), "22023");
        assert_eq!(sqlstate_of(&format!("SELECT * FROM knowledge.embed_chunks('{DOC}', '{{}}', 'no-such-model')")), "42704");
    }

    #[pg_test]
    fn check_chunk_config_accepts_what_chunk_accepts() {
        assert!(one::<bool>(r#"SELECT knowledge.check_chunk_config('{"strategy": "fixed", "max_size": "50 words"}')"#));
        assert_eq!(sqlstate_of(r#"SELECT knowledge.check_chunk_config('{"max_size": "huge"}')"#), "22023");
        assert_eq!(sqlstate_of(r#"SELECT knowledge.check_chunk_config('[1, 2]')"#), "22023");
    }

    #[pg_test]
    fn model_file_sha256_fingerprints_the_weights() {
        let sha = one::<String>("SELECT knowledge.model_file_sha256('potion-base-8m')");
        assert_eq!(sha, "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2", "the pinned sha256 of scripts/models.sh");
        assert!(one::<bool>("SELECT knowledge.model_file_sha256('lexical') IS NULL"));
        assert_eq!(sqlstate_of("SELECT knowledge.model_file_sha256('no-such-model')"), "42704");
        Spi::run(
            "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension)
             VALUES ('gone', 'transformer', 'nowhere/model.onnx', 'nowhere/tokenizer.json', 8)",
        )
        .unwrap();
        assert_eq!(sqlstate_of("SELECT knowledge.model_file_sha256('gone')"), "58P01");
    }

    #[pg_test]
    fn registering_a_model_creates_its_vector_index_and_removing_it_drops_it() {
        let index = "SELECT count(*) FROM pg_indexes WHERE schemaname = 'knowledge' AND indexname = knowledge.vector_index_name('big-model')";
        Spi::run(
            "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension)
             VALUES ('big-model', 'transformer', 'big/model.onnx', 'big/tokenizer.json', 3072)",
        )
        .unwrap();
        assert_eq!(one::<i64>(index), 1);
        // Over 2,000 dimensions the index is on halfvec.
        let definition = one::<String>("SELECT indexdef FROM pg_indexes WHERE indexname = knowledge.vector_index_name('big-model')");
        assert!(definition.contains("halfvec(3072)") && definition.contains("halfvec_cosine_ops"), "{definition}");
        Spi::run("DELETE FROM knowledge.models WHERE name = 'big-model'").unwrap();
        assert_eq!(one::<i64>(index), 0);
    }
}
