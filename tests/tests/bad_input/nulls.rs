//! NULL in every argument and every NOT NULL column.

use super::{Check, Expect, Matrix, BAD_CFG, DIM_256, NOT_NULL, NO_ROWS, OK, ONE_ROW};

/// NULL in each argument of each function, and in each NOT NULL column of the store.
pub(super) fn nulls(m: &mut Matrix) {
    let cfg = r#"'{"model": "lexical"}'"#;
    for f in ["chunk", "semantic_chunk"] {
        m.add(
            format!("{f}(NULL, cfg)"),
            format!("SELECT * FROM knowledge.{f}(NULL, {cfg})"),
            vec![],
            Check::Nothing,
            NO_ROWS,
        );
        m.add(
            format!("{f}(doc, NULL)"),
            format!("SELECT * FROM knowledge.{f}('Some text. More text.', NULL)"),
            vec![],
            Check::Nothing,
            NO_ROWS,
        );
        m.add(
            format!("{f}(NULL, NULL)"),
            format!("SELECT * FROM knowledge.{f}(NULL, NULL)"),
            vec![],
            Check::Nothing,
            NO_ROWS,
        );
        m.add(format!("{f}(NULL)"), format!("SELECT * FROM knowledge.{f}(NULL)"), vec![], Check::Nothing, NO_ROWS);
        m.add(
            format!("{f}($1 = NULL)"),
            format!("SELECT * FROM knowledge.{f}($1::text, {cfg})"),
            vec![None],
            Check::Nothing,
            NO_ROWS,
        );
    }
    m.add("split_sentences(NULL)", "SELECT * FROM knowledge.split_sentences(NULL)", vec![], Check::Nothing, NO_ROWS);
    m.add(
        "chunk_explain(NULL, cfg)",
        format!("SELECT * FROM knowledge.chunk_explain(NULL, {cfg})"),
        vec![],
        Check::Nothing,
        NO_ROWS,
    );
    m.add(
        "chunk_explain(doc, NULL)",
        "SELECT * FROM knowledge.chunk_explain('Some text. More text.', NULL)",
        vec![],
        Check::Nothing,
        NO_ROWS,
    );
    m.add(
        "chunk_plot(NULL, cfg)",
        format!("SELECT knowledge.chunk_plot(NULL, {cfg}) IS NULL"),
        vec![],
        Check::IsTrue,
        ONE_ROW,
    );
    m.add(
        "chunk_plot(doc, NULL)",
        "SELECT knowledge.chunk_plot('Some text. More text.', NULL) IS NULL",
        vec![],
        Check::IsTrue,
        ONE_ROW,
    );
    m.add("chunk_plot(NULL)", "SELECT knowledge.chunk_plot(NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);

    m.add("embed(NULL, model)", "SELECT knowledge.embed(NULL, 'lexical') IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add("embed(NULL)", "SELECT knowledge.embed(NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add(
        "embed(text, NULL): the default model",
        "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed('Bees fly.', NULL) AS e) AS s",
        vec![],
        Check::Vectors(DIM_256),
        ONE_ROW,
    );
    // docs/sql.md: a NULL role means passage, as a NULL model means the default one.
    m.add(
        "embed(text, model, NULL role)",
        "SELECT knowledge.embed('Bees fly.', 'lexical', NULL) = knowledge.embed('Bees fly.', 'lexical', 'passage')",
        vec![],
        Check::IsTrue,
        ONE_ROW,
    );
    m.add(
        "embed(NULL, model, NULL role)",
        "SELECT knowledge.embed(NULL, 'lexical', NULL) IS NULL",
        vec![],
        Check::IsTrue,
        ONE_ROW,
    );
    m.add(
        "embed(NULL, NULL, NULL)",
        "SELECT knowledge.embed(NULL, NULL, NULL) IS NULL",
        vec![],
        Check::IsTrue,
        ONE_ROW,
    );
    m.add(
        "embed_batch(NULL, model)",
        "SELECT * FROM knowledge.embed_batch(NULL, 'lexical')",
        vec![],
        Check::Nothing,
        NO_ROWS,
    );
    m.add(
        "embed_batch(ARRAY[NULL], model)",
        "SELECT embedding IS NULL FROM knowledge.embed_batch(ARRAY[NULL]::text[], 'potion-base-8m')",
        vec![],
        Check::IsTrue,
        ONE_ROW,
    );
    m.add(
        "embed_batch(empty array, model)",
        "SELECT * FROM knowledge.embed_batch(ARRAY[]::text[], 'potion-base-8m')",
        vec![],
        Check::Nothing,
        NO_ROWS,
    );
    m.add(
        "embed_batch(texts, NULL): the default model",
        "SELECT vector_dims(embedding), embedding::text LIKE '%NaN%' FROM knowledge.embed_batch(ARRAY['a', 'b'], NULL)",
        vec![],
        Check::Vectors(DIM_256),
        Expect::Ok(Some(2)),
    );
    m.add(
        "embed_batch(texts, model, NULL role)",
        "SELECT * FROM knowledge.embed_batch(ARRAY['a', 'b'], 'lexical', NULL)",
        vec![],
        Check::Nothing,
        OK,
    );
    m.add(
        "embed_batch(NULL, NULL, NULL)",
        "SELECT * FROM knowledge.embed_batch(NULL, NULL, NULL)",
        vec![],
        Check::Nothing,
        Expect::OneOf(&["00000", "22023", "22004"]),
    );
    m.add("embed_batch(100000 empty texts)", "SELECT count(*) FILTER (WHERE vector_dims(embedding) = 256) FROM knowledge.embed_batch(array_fill(''::text, ARRAY[100000]), 'lexical')", vec![], Check::Count, ONE_ROW);
    m.add(
        "token_count(NULL, model)",
        "SELECT knowledge.token_count(NULL, 'potion-base-8m') IS NULL",
        vec![],
        Check::IsTrue,
        ONE_ROW,
    );
    m.add("token_count(NULL)", "SELECT knowledge.token_count(NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add(
        "token_count(text, NULL): the default model",
        "SELECT knowledge.token_count('Bees fly.', NULL)",
        vec![],
        Check::Count,
        ONE_ROW,
    );

    m.add("search(NULL)", "SELECT * FROM knowledge.search(NULL)", vec![], Check::Nothing, NO_ROWS);
    m.add("search(query, NULL k)", "SELECT * FROM knowledge.search('bees', NULL)", vec![], Check::Nothing, BAD_CFG);
    m.add(
        "search(query, k, NULL options)",
        "SELECT * FROM knowledge.search('bees', 5, NULL)",
        vec![],
        Check::Nothing,
        BAD_CFG,
    );
    m.add(
        "search(NULL, NULL, NULL)",
        "SELECT * FROM knowledge.search(NULL, NULL, NULL)",
        vec![],
        Check::Nothing,
        BAD_CFG,
    );

    // attach/detach: a NULL where a table, column or config is needed is one that does not
    // exist (or a NULL argument); the language column is NOT NULL.
    let absent: &[&str] = &["22004", "22023", "42P01", "42703", "42704"];
    let absent = Expect::OneOf(absent);
    m.add(
        "attach(NULL, id, text)",
        "SELECT knowledge.attach(NULL, 'id', 'body', 'lex')",
        vec![],
        Check::Nothing,
        absent,
    )
    .rolled_back(&[]);
    m.add(
        "attach(table, NULL, text)",
        "SELECT knowledge.attach('bad_src', NULL, 'body', 'lex')",
        vec![],
        Check::Nothing,
        absent,
    )
    .rolled_back(&[]);
    m.add(
        "attach(table, id, NULL)",
        "SELECT knowledge.attach('bad_src', 'id', NULL, 'lex')",
        vec![],
        Check::Nothing,
        absent,
    )
    .rolled_back(&[]);
    m.add(
        "attach(table, id, text, NULL config)",
        "SELECT knowledge.attach('bad_src', 'id', 'body', NULL)",
        vec![],
        Check::Nothing,
        absent,
    )
    .rolled_back(&[]);
    m.add(
        "attach(table, id, text, config, NULL language)",
        "SELECT knowledge.attach('bad_src', 'id', 'body', 'lex', NULL)",
        vec![],
        Check::Nothing,
        Expect::OneOf(&["22004", "22023", "23502"]),
    )
    .rolled_back(&[]);
    m.add("detach(NULL)", "SELECT knowledge.detach(NULL)", vec![], Check::Nothing, absent).rolled_back(&[]);
    m.add("detach(table, NULL keep)", "SELECT knowledge.detach('bad_src', NULL)", vec![], Check::Count, ONE_ROW)
        .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);

    m.add(
        "rechunk(NULL)",
        "SELECT knowledge.rechunk(NULL)",
        vec![],
        Check::Nothing,
        Expect::OneOf(&["P0002", "22004"]),
    )
    .rolled_back(&[]);
    m.add(
        "rechunk(id, NULL config)",
        "SELECT knowledge.rechunk((SELECT min(id) FROM knowledge.documents), NULL)",
        vec![],
        Check::StoreExact,
        ONE_ROW,
    )
    .rolled_back(&[]);
    m.add("rechunk_all(NULL)", "SELECT knowledge.rechunk_all(NULL)", vec![], Check::StoreExact, ONE_ROW)
        .rolled_back(&[]);
    m.add("rechunk_all(NULL, NULL)", "SELECT knowledge.rechunk_all(NULL, NULL)", vec![], Check::Nothing, BAD_CFG)
        .rolled_back(&[]);
    m.add("process_queue(NULL)", "SELECT knowledge.process_queue(NULL)", vec![], Check::Nothing, BAD_CFG)
        .rolled_back(&[]);
    m.add("process_queue(1, NULL)", "SELECT knowledge.process_queue(1, NULL)", vec![], Check::Nothing, BAD_CFG)
        .rolled_back(&[]);
    m.add("wait_for_queue(NULL)", "SELECT knowledge.wait_for_queue(NULL)", vec![], Check::Nothing, BAD_CFG);
    m.add("retry_failed(NULL)", "SELECT knowledge.retry_failed(NULL)", vec![], Check::Count, ONE_ROW).rolled_back(&[]);
    m.add(
        "embed_chunks(NULL, cfg, model)",
        "SELECT * FROM knowledge_internal.embed_chunks(NULL, '{}', 'lexical')",
        vec![],
        Check::Nothing,
        NO_ROWS,
    );
    m.add(
        "embed_chunks(doc, NULL, model)",
        "SELECT * FROM knowledge_internal.embed_chunks('Some text.', NULL, 'lexical')",
        vec![],
        Check::Nothing,
        NO_ROWS,
    );
    m.add(
        "embed_chunks_batch(NULL, docs)",
        "SELECT * FROM knowledge_internal.embed_chunks_batch(NULL, ARRAY['x'])",
        vec![],
        Check::Nothing,
        NO_ROWS,
    );
    // The text leg's cover: STRICT, and a NULL among the lexemes' chunk counts is refused.
    m.add(
        "bm25_cover(NULL, ...)",
        "SELECT * FROM knowledge_internal.bm25_cover(NULL, 10, 1.2, 1)",
        vec![],
        Check::Nothing,
        NO_ROWS,
    );
    m.add(
        "bm25_cover with a NULL df",
        "SELECT * FROM knowledge_internal.bm25_cover(ARRAY[1, NULL]::float8[], 10, 1.2, 1)",
        vec![],
        Check::Nothing,
        BAD_CFG,
    );

    // The store's NOT NULL columns.
    for (column, sql) in [
        ("content", "INSERT INTO knowledge.documents (content) VALUES (NULL)"),
        ("language", "INSERT INTO knowledge.documents (content, language) VALUES ('x', NULL)"),
        ("metadata", "INSERT INTO knowledge.documents (content, metadata) VALUES ('x', NULL)"),
        ("chunk_configs.name", "INSERT INTO knowledge.chunk_configs (name) VALUES (NULL)"),
        ("chunk_configs.cfg", "INSERT INTO knowledge.chunk_configs (name, cfg) VALUES ('n', NULL)"),
        ("chunk_configs.model", "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('n', NULL)"),
        (
            "chunk_configs.active",
            "INSERT INTO knowledge.chunk_configs (name, model, active) VALUES ('n', 'lexical', NULL)",
        ),
        ("chunk_configs.mode", "INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES ('n', 'lexical', NULL)"),
    ] {
        m.add(format!("NULL {column}"), sql, vec![], Check::Nothing, NOT_NULL).rolled_back(&[]);
    }
    m.add(
        "NULL chunk_config: every active config",
        "INSERT INTO knowledge.documents (content, chunk_config) VALUES ('Bees fly. Lava flows.', NULL) RETURNING id",
        vec![],
        Check::Stored,
        ONE_ROW,
    )
    .rolled_back(&[]);
    m.add(
        "NULL halfvec: by dimension",
        "INSERT INTO knowledge.chunk_configs (name, model, halfvec) VALUES ('n', 'potion-base-8m', NULL)",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&[]);
}
