//! SQL behaviour of the functions the store is built on, run inside PostgreSQL by
//! `cargo pgrx test`; the store itself (triggers, search, dump) is tested over real
//! connections in tests/tests/store.rs and tests/tests/search.rs.

#[pgrx::pg_schema]
mod tests {
    use crate::tests::support::{one, sqlstate_of};
    use pgrx::prelude::*;

    const DOC: &str =
        "Bees cluster in winter. The queen stays warm. Volcanoes erupt when magma rises. Lava cools into basalt.";

    #[pg_test]
    fn embed_chunks_gives_the_chunks_of_chunk_with_their_embeddings() {
        let cfg = r#"{"strategy": "fixed", "max_size": 40, "overlap": 0}"#;
        let same = format!(
            "SELECT (SELECT array_agg(row(chunk_index, content, char_offset, char_length, token_count, metadata)::text ORDER BY chunk_index)
                     FROM knowledge.chunk('{DOC}', '{cfg}'))
                  = (SELECT array_agg(row(chunk_index, content, char_offset, char_length, token_count, metadata)::text ORDER BY chunk_index)
                     FROM knowledge_internal.embed_chunks('{DOC}', '{cfg}', 'potion-base-8m'))"
        );
        assert!(one::<bool>(&same));
        let embedded = format!(
            "SELECT bool_and(model = 'potion-base-8m' AND embedding = knowledge.embed(content, 'potion-base-8m'))
             FROM knowledge_internal.embed_chunks('{DOC}', '{cfg}', 'potion-base-8m')"
        );
        assert!(one::<bool>(&embedded));
        // Without a model argument: cfg.model, else the default model.
        let models = format!(
            "SELECT string_agg(DISTINCT model, ',') || '|' || (SELECT string_agg(DISTINCT model, ',')
                 FROM knowledge_internal.embed_chunks('{DOC}', '{{\"model\": \"lexical\"}}'))
             FROM knowledge_internal.embed_chunks('{DOC}')"
        );
        assert_eq!(one::<String>(&models), "all-minilm-l6-v2|lexical");
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge_internal.embed_chunks(NULL)"), 0);
        assert_eq!(
            sqlstate_of(&format!("SELECT * FROM knowledge_internal.embed_chunks('{DOC}', '{{\"bogus\": 1}}')")),
            "22023"
        );
        assert_eq!(
            sqlstate_of(&format!("SELECT * FROM knowledge_internal.embed_chunks('{DOC}', '{{}}', 'no-such-model')")),
            "42704"
        );
    }

    #[pg_test]
    fn check_chunk_config_accepts_what_chunk_accepts() {
        assert!(one::<bool>(
            r#"SELECT knowledge_internal.check_chunk_config('{"strategy": "fixed", "max_size": "50 words"}')"#
        ));
        assert_eq!(sqlstate_of(r#"SELECT knowledge_internal.check_chunk_config('{"max_size": "huge"}')"#), "22023");
        assert_eq!(sqlstate_of(r#"SELECT knowledge_internal.check_chunk_config('[1, 2]')"#), "22023");
    }

    #[pg_test]
    fn model_file_sha256_fingerprints_the_weights() {
        let sha = one::<String>("SELECT knowledge_internal.model_file_sha256('potion-base-8m')");
        assert_eq!(
            sha, "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2",
            "the pinned sha256 of scripts/models.sh"
        );
        assert!(one::<bool>("SELECT knowledge_internal.model_file_sha256('lexical') IS NULL"));
        assert_eq!(sqlstate_of("SELECT knowledge_internal.model_file_sha256('no-such-model')"), "42704");
        Spi::run(
            "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension)
             VALUES ('gone', 'transformer', 'nowhere/model.onnx', 'nowhere/tokenizer.json', 8)",
        )
        .unwrap();
        assert_eq!(sqlstate_of("SELECT knowledge_internal.model_file_sha256('gone')"), "58P01");
    }

    fn index_definition(config: &str) -> Option<String> {
        Spi::get_one::<String>(&format!("SELECT (SELECT indexdef FROM pg_indexes WHERE schemaname = 'knowledge' AND indexname = knowledge_internal.vector_index_name('{config}'))")).unwrap()
    }

    fn register_big_model(dimension: i32) {
        Spi::run(&format!(
            "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension)
             VALUES ('big-model', 'transformer', 'big/model.onnx', 'big/tokenizer.json', {dimension})"
        ))
        .unwrap();
    }

    #[pg_test]
    fn each_config_has_its_own_vector_index_of_the_type_it_asks_for() {
        let default = index_definition("default").expect("the default config has an index");
        assert!(
            default.contains("vector(384)")
                && default.contains("vector_cosine_ops")
                && default.contains("chunk_config = 'default'"),
            "{default}"
        );
        // halfvec on a small model: half the index size.
        Spi::run("INSERT INTO knowledge.chunk_configs (name, model, halfvec) VALUES ('half', 'potion-base-8m', true)")
            .unwrap();
        let half = index_definition("half").unwrap();
        assert!(half.contains("halfvec(256)") && half.contains("halfvec_cosine_ops"), "{half}");
        // By default a model above 2,000 dimensions is indexed as halfvec; false keeps full
        // precision and no index (HNSW takes vector up to 2,000 dimensions).
        register_big_model(3072);
        Spi::run("INSERT INTO knowledge.chunk_configs (name, model) VALUES ('big', 'big-model')").unwrap();
        assert!(index_definition("big").unwrap().contains("halfvec(3072)"));
        Spi::run("UPDATE knowledge.chunk_configs SET halfvec = false WHERE name = 'big'").unwrap();
        assert_eq!(index_definition("big"), None);
        // Renaming or removing a config moves or drops its index.
        Spi::run("UPDATE knowledge.chunk_configs SET name = 'half2' WHERE name = 'half'").unwrap();
        assert_eq!(index_definition("half"), None);
        assert!(index_definition("half2").unwrap().contains("chunk_config = 'half2'"));
        Spi::run("DELETE FROM knowledge.chunk_configs WHERE name = 'half2'").unwrap();
        assert_eq!(index_definition("half2"), None);
        // A model's new dimension rebuilds its configs' indexes.
        Spi::run("UPDATE knowledge.chunk_configs SET halfvec = NULL WHERE name = 'big'").unwrap();
        Spi::run("UPDATE knowledge.models SET dimension = 1024 WHERE name = 'big-model'").unwrap();
        assert!(index_definition("big").unwrap().contains("vector(1024)"));
    }

    #[pg_test]
    fn a_chunks_context_is_embedded_before_it_and_its_content_stays_exact() {
        // A class above max_size: the pieces after the first carry its signature as context.
        let code = "class Hive:\n    def warm(self):\n        return 'cluster'\n\n    def cool(self):\n        return 'fan'\n\n    def feed(self):\n        return 'honey'\n";
        let cfg = r#"{"strategy": "code", "language": "python", "max_size": 60, "min_size": 0}"#;
        let check = format!(
            "SELECT count(*) FILTER (WHERE metadata->>'context' = 'class Hive:'),
                    bool_and(embedding = knowledge.embed(coalesce(metadata->>'context' || E'\\n', '') || content, 'potion-base-8m')),
                    bool_and(content = substr($c${code}$c$, char_offset + 1, char_length))
             FROM knowledge_internal.embed_chunks($c${code}$c$, '{cfg}', 'potion-base-8m')"
        );
        let (continued, embedded, exact) = Spi::get_three::<i64, bool, bool>(&check).unwrap();
        assert!(continued.unwrap_or(0) >= 1, "no piece carries the signature");
        assert_eq!((embedded, exact), (Some(true), Some(true)));
    }

    #[pg_test]
    fn hierarchical_chunks_are_stored_with_both_levels_and_find_their_parent() {
        Spi::run("INSERT INTO knowledge.chunk_configs (name, model, cfg) VALUES ('levels', 'potion-base-8m', '{\"strategy\": \"hierarchical\", \"max_size\": 120}')").unwrap();
        Spi::run(&format!("INSERT INTO knowledge.documents (content, chunk_config) VALUES ('{DOC} {DOC}', 'levels')"))
            .unwrap();
        let orphans = one::<i64>(
            "SELECT count(*) FROM knowledge.chunks AS child
             WHERE child.chunk_config = 'levels' AND child.metadata->>'level' = 'child'
               AND NOT EXISTS (SELECT FROM knowledge.chunks AS parent
                               WHERE parent.document_id = child.document_id AND parent.chunk_config = 'levels'
                                 AND parent.metadata->>'level' = 'parent'
                                 AND child.metadata->'relationships' ? ('parent:' || parent.chunk_index)
                                 AND child.char_offset >= parent.char_offset
                                 AND child.char_offset + child.char_length <= parent.char_offset + parent.char_length)",
        );
        let levels =
            one::<i64>("SELECT count(DISTINCT metadata->>'level') FROM knowledge.chunks WHERE chunk_config = 'levels'");
        assert_eq!((orphans, levels), (0, 2));
    }

    #[pg_test]
    fn a_config_moves_to_a_model_of_another_dimension_with_its_chunks_and_index() {
        Spi::run(
            "INSERT INTO knowledge.documents (content) VALUES ('Bees keep the hive warm. Glaciers carve valleys.')",
        )
        .unwrap();
        Spi::run("UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default'").unwrap();
        let dims = Spi::get_one::<String>(
            "SELECT string_agg(DISTINCT model || ' ' || vector_dims(embedding), ',') FROM knowledge.chunks",
        )
        .unwrap();
        assert_eq!(dims.as_deref(), Some("potion-base-8m 256"));
        let index = index_definition("default").unwrap();
        assert!(index.contains("vector(256)") && index.contains("model = 'potion-base-8m'"), "{index}");
    }

    #[pg_test]
    fn halfvec_above_4000_dimensions_is_refused() {
        register_big_model(5000);
        assert_eq!(
            sqlstate_of(
                "INSERT INTO knowledge.chunk_configs (name, model, halfvec) VALUES ('huge', 'big-model', true)"
            ),
            "22023"
        );
        // Without halfvec the config is accepted and searched without an index.
        Spi::run("INSERT INTO knowledge.chunk_configs (name, model) VALUES ('huge', 'big-model')").unwrap();
        assert_eq!(index_definition("huge"), None);
    }

    #[pg_test]
    fn a_halfvec_config_is_searched_through_halfvec() {
        Spi::run(r#"INSERT INTO knowledge.chunk_configs (name, cfg, model, halfvec) VALUES ('half', '{"model": "lexical"}', 'potion-base-8m', true)"#).unwrap();
        Spi::run("INSERT INTO knowledge.documents (content) VALUES ('Bees make honey from nectar. The hive keeps it for winter.'), ('Volcanoes erupt lava and ash. Magma rises through the crust.')").unwrap();
        let top =
            r#"SELECT content FROM knowledge.search('honey and bees', 1, '{"config": "half", "mode": "vector"}')"#;
        assert!(one::<String>(top).contains("honey"));
    }

    #[pg_test]
    fn the_store_reuses_vectors_only_for_a_role_that_may_read_and_write_them() {
        // Of a transformer: a static model's vectors are never stored.
        let stored = format!("SELECT count(*) FROM knowledge_internal.embed_config_chunks('default', ARRAY[1], ARRAY['{DOC}'], '{{\"inline_threshold\": 0}}', 'all-minilm-l6-v2') WHERE embedding IS NOT NULL");
        // Without this backend's own cache, which would answer the second call.
        Spi::run("SET pg_chunk.embedding_cache_mb = 0").unwrap();
        Spi::run("CREATE ROLE reuse_plain_role").unwrap();
        Spi::run("SET ROLE reuse_plain_role").unwrap();
        let chunks = one::<i64>(&stored);
        Spi::run("RESET ROLE").unwrap();
        assert!(chunks > 0, "a role without rights on knowledge_internal.stored_vectors still gets its chunks");
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge_internal.stored_vectors"), 0);
        // The owner's call stores each sentence and chunk (4 sentences, at least one chunk).
        assert_eq!(one::<i64>(&stored), chunks);
        assert!(one::<i64>("SELECT count(*) FROM knowledge_internal.stored_vectors") > 4);
        // A static model's vectors are not stored (embedding costs it less than a row).
        let before = one::<i64>("SELECT count(*) FROM knowledge_internal.stored_vectors");
        one::<i64>(&stored.replace("all-minilm-l6-v2", "potion-base-8m"));
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge_internal.stored_vectors"), before);
        // The ad hoc function stores nothing.
        let before = one::<i64>("SELECT count(*) FROM knowledge_internal.stored_vectors");
        one::<i64>(&format!("SELECT count(*) FROM knowledge_internal.embed_chunks_batch(ARRAY[1], ARRAY['{DOC} More.'], '{{}}', 'all-minilm-l6-v2')"));
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge_internal.stored_vectors"), before);
    }
}
