//! The text leg of knowledge.search inside PostgreSQL: BM25 over real tsvectors, the statistics
//! the triggers keep (against a count made afresh after every kind of write), CJK and Hindi
//! lexemes, and the search options that tune BM25.

#[pgrx::pg_schema]
mod tests {
    use crate::tests::support::{one, sqlstate_of};
    use pgrx::prelude::*;

    const TEXT_STATS_MISMATCHES: &str = include_str!("../../tests/fixtures/text_stats_mismatches.sql");

    /// Chunks with the lexical model only (no transformer to load): the default config off, one
    /// fixed-size config on. BM25's statistics of the test's writes stay pending (its transaction
    /// never commits), which knowledge.search and the mismatch query count in.
    fn lexical_store() {
        Spi::run(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, cfg, model)
             VALUES ('words', '{\"strategy\": \"fixed\", \"max_size\": 60, \"overlap\": 0}', 'lexical')",
        )
        .unwrap();
    }

    fn assert_stats_exact(when: &str) {
        let mismatches = Spi::connect(|client| {
            client
                .select(TEXT_STATS_MISMATCHES, None, &[])
                .map(|rows| rows.map(|row| row.get::<String>(1).unwrap().unwrap()).collect::<Vec<_>>())
        })
        .unwrap();
        assert!(
            mismatches.is_empty(),
            "{when}: {} mismatches, first {:?}",
            mismatches.len(),
            &mismatches[..mismatches.len().min(3)]
        );
    }

    #[pg_test]
    fn bm25_scores_postgresql_tsvectors_as_the_formula_says() {
        // BM25 written out in SQL over unnest(tsv), for tsvectors of every shape: positions and
        // none (strip), odd and even lexeme lengths, multibyte lexemes, an empty one, and one long
        // enough to be stored compressed.
        Spi::run(
            "CREATE TEMP TABLE v (tsv tsvector);
             INSERT INTO v VALUES
                (to_tsvector('english', 'The rain in Spain stays mainly in the plain. Rain, rain, go away!')),
                (strip(to_tsvector('english', 'Rain in Spain, plain and simple.'))),
                (to_tsvector('simple', 'Ünïcödé rain é ée éée')),
                (''::tsvector),
                (knowledge.text_vector('simple', '雨在西班牙 rain')),
                ((SELECT to_tsvector('english', string_agg('rain spain word' || i, ' ')) FROM generate_series(1, 2000) AS i))",
        )
        .unwrap();
        let agree = "
            WITH q (lexeme, df) AS (VALUES ('rain', 3.0), ('spain', 1.0), ('é', 2.0), ('雨在', 1.0), ('absent', 5.0)),
            scored AS (
                SELECT v.tsv, knowledge_internal.bm25(v.tsv, (SELECT array_agg(lexeme) FROM q), (SELECT array_agg(df) FROM q), 10, 1.2, 0.75, 6.5) AS got,
                       coalesce((SELECT sum(ln(1 + (10 - q.df + 0.5) / (q.df + 0.5)) * t.tf * 2.2
                                            / (t.tf + 1.2 * (1 - 0.75 + 0.75 * l.len / 6.5)))
                                 FROM (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf FROM unnest(v.tsv) AS u) AS t
                                 JOIN q USING (lexeme),
                                 (SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) AS len FROM unnest(v.tsv) AS u) AS l), 0) AS want
                FROM v)
            SELECT bool_and(abs(got - want) < 1e-9) AND count(*) FILTER (WHERE want > 0) = 5 FROM scored";
        assert!(one::<bool>(agree));
        assert!(one::<bool>("SELECT knowledge_internal.bm25(NULL, '{a}', '{1}', 1, 1.2, 0.75, 1) IS NULL"), "STRICT");
    }

    #[pg_test]
    fn text_stats_follow_every_write() {
        lexical_store();
        let insert = |i: i32| {
            Spi::run(&format!("INSERT INTO knowledge.documents (content) VALUES ('Document {i}: rain in Spain falls on the plain, and bees hum in the heather near hive {i}.')")).unwrap()
        };
        for i in 0..6 {
            insert(i);
        }
        // The test's transaction never commits: so far everything is pending.
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge_internal.text_stats"), 0);
        assert_stats_exact("after 6 inserts, pending");
        // Adding up at commit happens at each statement's end from here on (and now for the six).
        Spi::run("SET CONSTRAINTS knowledge_internal.text_stats_commits_add IMMEDIATE").unwrap();
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge_internal.text_stats_pending"), 0);
        for i in 6..12 {
            insert(i);
        }
        assert_stats_exact("after 12 inserts");
        // Seven more statements each added a row for "rain": folding kept its rows few.
        assert!(
            one::<i64>(
                "SELECT count(*) FROM knowledge_internal.text_stats WHERE chunk_config = 'words' AND lexeme = 'rain'"
            ) < 8
        );
        Spi::run("UPDATE knowledge.documents SET content = 'Volcanoes erupt; lava cools into basalt and rain.' WHERE content LIKE 'Document 3:%'").unwrap();
        assert_stats_exact("after an update");
        Spi::run("DELETE FROM knowledge.documents WHERE content LIKE 'Document 1%'").unwrap();
        assert_stats_exact("after deletes");
        // A write rolled back (a subtransaction) leaves the statistics as they were.
        Spi::run(
            "DO $$ BEGIN
                 INSERT INTO knowledge.documents (content) VALUES ('Glaciers carve valleys.');
                 RAISE EXCEPTION 'roll back';
             EXCEPTION WHEN raise_exception THEN NULL; END $$",
        )
        .unwrap();
        assert_stats_exact("after a rolled-back insert");
        Spi::run("UPDATE knowledge.chunk_configs SET name = 'words2' WHERE name = 'words'").unwrap();
        assert_stats_exact("after renaming the config");
        Spi::run("UPDATE knowledge.chunk_configs SET cfg = '{\"strategy\": \"fixed\", \"max_size\": 30, \"overlap\": 0}' WHERE name = 'words2'").unwrap();
        assert_stats_exact("after rechunking with a new cfg");
        assert!(one::<i64>("SELECT knowledge.rebuild_text_stats()") > 0);
        assert_stats_exact("after a rebuild");
        Spi::run("TRUNCATE knowledge.documents CASCADE").unwrap();
        assert_stats_exact("after TRUNCATE");
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge_internal.text_stats"), 0);
        insert(100);
        Spi::run("DELETE FROM knowledge.chunk_configs WHERE name = 'words2'").unwrap();
        assert_stats_exact("after deleting the config");
    }

    #[pg_test]
    fn text_search_ranks_by_bm25_over_every_matching_chunk() {
        lexical_store();
        Spi::run(
            "INSERT INTO knowledge.documents (content) VALUES
                ('Rain falls in Spain. The plain stays dry.'),
                ('Rain, rain and more rain over the mountains all week.'),
                ('Spain has mountains, plains and a long coast.'),
                ('Bees hum in the heather.'),
                ('A very long chunk about weather with rain mentioned once among many other words here.')",
        )
        .unwrap();
        // The same ranking computed from scratch: every chunk of the config, BM25 in SQL.
        let expected = "
            WITH q AS (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', 'rain in Spain'))),
            n AS (SELECT count(*)::float8 AS chunks, avg((SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) FROM unnest(c.tsv) AS u)) AS avg
                  FROM knowledge.chunks AS c WHERE c.chunk_config = 'words'),
            df AS (SELECT q.lexeme, count(*)::float8 AS df FROM q JOIN knowledge.chunks AS c ON c.chunk_config = 'words' AND c.tsv @@ q.lexeme::tsquery GROUP BY q.lexeme),
            scored AS (
                SELECT c.id, sum(ln(1 + (n.chunks - df.df + 0.5) / (df.df + 0.5)) * t.tf * 2.2
                                 / (t.tf + 1.2 * (0.25 + 0.75 * (SELECT sum(coalesce(array_length(u.positions, 1), 1)) FROM unnest(c.tsv) AS u) / n.avg))) AS score
                FROM knowledge.chunks AS c, n,
                     LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf FROM unnest(c.tsv) AS u) AS t
                     JOIN df USING (lexeme)
                WHERE c.chunk_config = 'words' GROUP BY c.id)
            SELECT array_agg(id ORDER BY score DESC, id) FROM scored";
        let got = "SELECT array_agg(chunk_id ORDER BY text_rank) FROM knowledge.search('rain in Spain', 10, '{\"mode\": \"text\", \"config\": \"words\"}')";
        assert_eq!(one::<Vec<i64>>(got), one::<Vec<i64>>(expected));
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge.search('rain in Spain', 10, '{\"mode\": \"text\", \"config\": \"words\"}')"), 4, "OR semantics: any of the words");
        // b = 0 ignores length, k1 = 0 ignores repeats: the rankings change.
        let order = |options: &str| {
            one::<Vec<i64>>(&format!(
                "SELECT array_agg(chunk_id ORDER BY text_rank) FROM knowledge.search('rain', 10, '{options}')"
            ))
        };
        assert_ne!(
            order(r#"{"mode": "text", "config": "words"}"#),
            order(r#"{"mode": "text", "config": "words", "k1": 0}"#)
        );
        assert_eq!(
            one::<i64>(
                "SELECT count(*) FROM knowledge.search('the of and', 5, '{\"mode\": \"text\", \"config\": \"words\"}')"
            ),
            0,
            "stop words only"
        );
    }

    #[pg_test]
    fn text_search_finds_chinese_japanese_and_hindi() {
        lexical_store();
        Spi::run(
            "INSERT INTO knowledge.documents (content, language) VALUES
                ('数据库管理系统是一种软件，用来存储数据。', 'simple'),
                ('日本語のテキストを検索します。', 'simple'),
                ('डेटाबेस एक सॉफ़्टवेयर है जो डेटा संग्रहीत करता है।', 'simple'),
                ('Bees hum in the heather.', 'english')",
        )
        .unwrap();
        let found = |query: &str| {
            one::<String>(&format!(
                "SELECT coalesce(string_agg(left(d.content, 4), ','), '') FROM knowledge.search('{query}', 5, '{{\"mode\": \"text\", \"config\": \"words\"}}') AS s
                 JOIN knowledge.documents AS d ON d.id = s.document_id"
            ))
        };
        assert_eq!(found("管理系统"), "数据库管");
        assert_eq!(found("テキスト"), "日本語の");
        assert_eq!(found("सॉफ़्टवेयर"), "डेटा");
        assert!(one::<bool>("SELECT knowledge.cjk_bigrams('数据库') = ' 数据 据库 '"));
    }

    #[pg_test]
    fn bm25_options_are_checked() {
        for options in
            [r#"{"k1": -1}"#, r#"{"k1": 11}"#, r#"{"k1": "1.2"}"#, r#"{"b": 1.5}"#, r#"{"b": null}"#, r#"{"bm25": 1}"#]
        {
            assert_eq!(
                sqlstate_of(&format!("SELECT * FROM knowledge.search('rain', 5, '{options}')")),
                "22023",
                "{options}"
            );
        }
        assert_eq!(
            sqlstate_of(r#"SELECT * FROM knowledge.search('rain', 5, '{"mode": "text", "k1": 2, "b": 0}')"#),
            "00000"
        );
    }

    fn text_index_definition(config: &str) -> Option<String> {
        Spi::get_one::<String>(&format!("SELECT (SELECT indexdef FROM pg_indexes WHERE schemaname = 'knowledge' AND indexname = knowledge_internal.text_index_name('{config}'))")).unwrap()
    }

    /// How often this transaction has read the config's full-text index.
    fn text_index_scans(config: &str) -> i64 {
        one::<i64>(&format!("SELECT pg_stat_get_xact_numscans(format('knowledge.%I', knowledge_internal.text_index_name('{config}'))::regclass)"))
    }

    #[pg_test]
    fn each_config_has_its_own_text_index_the_text_leg_reads_only_its_own_and_renames_keep_them() {
        let default = text_index_definition("default").expect("the default config has a text index");
        assert!(default.contains("gin (tsv)") && default.contains("chunk_config = 'default'"), "{default}");
        lexical_store();
        Spi::run(
            "INSERT INTO knowledge.chunk_configs (name, cfg, model)
             VALUES ('other', '{\"strategy\": \"fixed\", \"max_size\": 60, \"overlap\": 0}', 'lexical')",
        )
        .unwrap();
        assert!(text_index_definition("words").unwrap().contains("chunk_config = 'words'"));
        for i in 0..40 {
            Spi::run(&format!("INSERT INTO knowledge.documents (content) VALUES ('Hive {i}: honeybees hum in the heather and the rain falls on the plain.')")).unwrap()
        }
        // Left to its costs on a table this small, the planner may read the whole table or a
        // btree (the (document_id, chunk_config, chunk_index) one, or the primary key, filtering
        // every row: the text leg's tsquery is known only as it runs); without them, only an
        // index on tsv can serve the text leg (all rolled back with the test).
        Spi::run(
            "ALTER TABLE knowledge.chunks DROP CONSTRAINT chunks_document_id_chunk_config_chunk_index_key;
             SET LOCAL enable_seqscan = off;
             SET LOCAL enable_indexscan = off",
        )
        .unwrap();
        let search = |config: &str| {
            one::<i64>(&format!(
                "SELECT count(*) FROM knowledge.search('honeybees', 5, '{{\"mode\": \"text\", \"config\": \"{config}\"}}')"
            ))
        };
        let other = text_index_scans("other");
        assert_eq!(search("words"), 5);
        assert!(text_index_scans("words") > 0, "the text leg reads its config's index");
        assert_eq!(text_index_scans("other"), other, "and no other config's");
        // Renaming a config moves its index; removing it drops it.
        Spi::run("UPDATE knowledge.chunk_configs SET name = 'words2' WHERE name = 'words'").unwrap();
        assert_eq!(text_index_definition("words"), None);
        assert!(text_index_definition("words2").unwrap().contains("chunk_config = 'words2'"));
        assert_eq!(search("words2"), 5);
        assert!(text_index_scans("words2") > 0);
        Spi::run("DELETE FROM knowledge.chunk_configs WHERE name = 'other'").unwrap();
        assert_eq!(text_index_definition("other"), None);
        // A config with chunks and a vector index renames too: the cascade to its chunks leaves
        // their foreign-key checks pending, under which PostgreSQL creates no index.
        Spi::run(
            "INSERT INTO knowledge.chunk_configs (name, cfg, model)
             VALUES ('static', '{\"strategy\": \"fixed\", \"max_size\": 60, \"overlap\": 0}', 'potion-base-8m');
             UPDATE knowledge.chunk_configs SET name = 'static2' WHERE name = 'static'",
        )
        .unwrap();
        assert!(text_index_definition("static2").unwrap().contains("chunk_config = 'static2'"));
        assert!(one::<bool>(
            "SELECT EXISTS (SELECT FROM pg_indexes WHERE schemaname = 'knowledge' AND indexname = knowledge_internal.vector_index_name('static2'))"
        ));
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge.search('honeybees', 5, '{\"config\": \"static2\"}')"), 5);
    }
}
