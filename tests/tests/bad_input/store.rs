//! The store: its tables, configs, rechunking, the queue, attach/detach, settings and roles.

use super::{
    doc, Check, Expect, Matrix, BAD_CFG, CHECK_VIOLATION, DENIED, DIM_256, NO_ROWS, OK, ONE_ROW, TOO_BIG, UNKNOWN,
};

/// The store's tables and functions with bad values, attach/detach, the queue, the settings and
/// another role's privileges.
pub(super) fn store(m: &mut Matrix) {
    let first = "(SELECT min(id) FROM knowledge.documents)";
    // The Citus functions, in a database without Citus.
    m.add(
        "distributed search without Citus",
        "SELECT * FROM knowledge.distributed_search('bees', 5)",
        vec![],
        Check::Nothing,
        Expect::Fails("0A000"),
    );
    m.add(
        "distributed attach without Citus",
        "SELECT knowledge.attach_distributed('knowledge.documents', 'id', 'content')",
        vec![],
        Check::Nothing,
        Expect::Fails("0A000"),
    )
    .rolled_back(&[]);
    // Documents.
    m.add(
        "document in an unknown language",
        "INSERT INTO knowledge.documents (content, language) VALUES ('x', 'klingon')",
        vec![],
        Check::Nothing,
        UNKNOWN,
    )
    .rolled_back(&[]);
    m.add(
        "document naming an unknown config",
        "INSERT INTO knowledge.documents (content, chunk_config) VALUES ('x', 'nope')",
        vec![],
        Check::Nothing,
        Expect::Fails("23503"),
    )
    .rolled_back(&[]);
    m.add("document with array metadata", "INSERT INTO knowledge.documents (content, metadata, chunk_config) VALUES ('Bees fly.', '[1, 2]', 'lex') RETURNING id", vec![], Check::Stored, ONE_ROW).rolled_back(&[]);
    m.add("document in the simple language", "INSERT INTO knowledge.documents (content, language, chunk_config) VALUES ('Bees fly. Lava flows.', 'simple', 'lex') RETURNING id", vec![], Check::Stored, ONE_ROW).rolled_back(&[]);
    m.add(
        "document content updated to empty",
        format!("UPDATE knowledge.documents SET content = '' WHERE id = {first} RETURNING id"),
        vec![],
        Check::Stored,
        ONE_ROW,
    )
    .rolled_back(&[]);
    m.add(
        "document moved to an unknown config",
        format!("UPDATE knowledge.documents SET chunk_config = 'nope' WHERE id = {first}"),
        vec![],
        Check::Nothing,
        Expect::Fails("23503"),
    )
    .rolled_back(&[]);
    // Chunk configs.
    let long_name = "x".repeat(64);
    for (label, name) in [
        ("empty", ""),
        ("blank", " "),
        ("with a space", "a b"),
        ("leading dash", "-x"),
        ("64 characters", long_name.as_str()),
        ("with a quote", "x'y"),
        ("non-ASCII", "ünï"),
    ] {
        m.add(
            format!("chunk config named {label}"),
            "INSERT INTO knowledge.chunk_configs (name, model) VALUES ($1::text, 'lexical')",
            vec![doc(name)],
            Check::Nothing,
            CHECK_VIOLATION,
        )
        .rolled_back(&[]);
    }
    m.add(
        "chunk config named like an existing one",
        "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('lex', 'lexical')",
        vec![],
        Check::Nothing,
        Expect::Fails("23505"),
    )
    .rolled_back(&[]);
    m.add(
        "chunk config in an unknown mode",
        "INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES ('m', 'lexical', 'later')",
        vec![],
        Check::Nothing,
        CHECK_VIOLATION,
    )
    .rolled_back(&[]);
    m.add(
        "chunk config cfg changed to a bad one",
        "UPDATE knowledge.chunk_configs SET cfg = '{\"max_size\": -1}' WHERE name = 'lex'",
        vec![],
        Check::Nothing,
        BAD_CFG,
    )
    .rolled_back(&[]);
    m.add(
        "chunk config cfg changed to a document limit of 1 byte",
        "UPDATE knowledge.chunk_configs SET cfg = '{\"max_document_size\": 1}' WHERE name = 'lex'",
        vec![],
        Check::Nothing,
        TOO_BIG,
    )
    .rolled_back(&[]);
    // docs/store.md: "setting the default row's model to potion-base-8m (the static model) makes writes
    // much faster". The config's HNSW index is on its old model's dimension (384) until rebuilt.
    m.add(
        "default config's model set to potion-base-8m (docs/store.md's tip), reactivated",
        "UPDATE knowledge.chunk_configs SET active = true, model = 'potion-base-8m' WHERE name = 'default'",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&[]);
    m.add(
        "default config's model set to lexical, reactivated",
        "UPDATE knowledge.chunk_configs SET active = true, model = 'lexical' WHERE name = 'default'",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&[]);
    m.add(
        "config's model changed from 256 to 384 dimensions (potion to MiniLM)",
        "UPDATE knowledge.chunk_configs SET model = 'all-minilm-l6-v2' WHERE name = 'potion'",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&[]);
    m.add(
        "config's model changed to lexical (no index)",
        "UPDATE knowledge.chunk_configs SET model = 'lexical' WHERE name = 'potion'",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&[]);
    m.add(
        "chunk config renamed under its chunks",
        "UPDATE knowledge.chunk_configs SET name = 'lex2' WHERE name = 'lex'",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&[]);
    m.add(
        "chunk config deleted with its chunks",
        "DELETE FROM knowledge.chunk_configs WHERE name = 'lex'",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&[]);
    // Rechunking and the queue.
    m.add(
        "rechunk of a missing document",
        "SELECT knowledge.rechunk(-1)",
        vec![],
        Check::Nothing,
        Expect::Fails("P0002"),
    )
    .rolled_back(&[]);
    m.add(
        "rechunk of the largest bigint",
        "SELECT knowledge.rechunk(9223372036854775807, 'lex')",
        vec![],
        Check::Nothing,
        Expect::Fails("P0002"),
    )
    .rolled_back(&[]);
    m.add(
        "rechunk with one config",
        format!("SELECT knowledge.rechunk({first}, 'lex')"),
        vec![],
        Check::StoreExact,
        ONE_ROW,
    )
    .rolled_back(&[]);
    m.add("rechunk_all progress_every 0", "SELECT knowledge.rechunk_all(NULL, 0)", vec![], Check::Nothing, BAD_CFG)
        .rolled_back(&[]);
    m.add("rechunk_all progress_every -5", "SELECT knowledge.rechunk_all('lex', -5)", vec![], Check::Nothing, BAD_CFG)
        .rolled_back(&[]);
    m.add(
        "rechunk_all progress_every i32::MAX",
        "SELECT knowledge.rechunk_all('lex', 2147483647)",
        vec![],
        Check::StoreExact,
        ONE_ROW,
    )
    .rolled_back(&[]);
    m.add("process_queue batch 0", "SELECT knowledge.process_queue(0)", vec![], Check::Nothing, BAD_CFG)
        .rolled_back(&[]);
    m.add("process_queue attempts 0", "SELECT knowledge.process_queue(1, 0)", vec![], Check::Nothing, BAD_CFG)
        .rolled_back(&[]);
    m.add("process_queue batch i32::MAX", "SELECT knowledge.process_queue(2147483647)", vec![], Check::Count, ONE_ROW)
        .rolled_back(&[]);
    m.add("wait_for_queue negative", "SELECT knowledge.wait_for_queue('-1 second')", vec![], Check::Nothing, BAD_CFG);
    m.add("wait_for_queue zero", "SELECT knowledge.wait_for_queue('0')", vec![], Check::Nothing, ONE_ROW);
    m.add(
        "retry_failed of an unknown config",
        "SELECT knowledge.retry_failed('nope')",
        vec![],
        Check::Count,
        Expect::OneOf(&["00000", "42704"]),
    )
    .rolled_back(&[]);
    m.add("embedding_stats", "SELECT * FROM knowledge.embedding_stats()", vec![], Check::Nothing, OK);
    // attach / detach.
    m.add(
        "attach a table with hostile rows",
        "SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')",
        vec![],
        Check::StoreExact,
        ONE_ROW,
    )
    .rolled_back(&[]);
    m.add(
        "attach a table with quoted names",
        r#"SELECT knowledge.attach('"Weird ""Quoted"" Table"', 'Doc; ID', 'Body'' Text', 'lex')"#,
        vec![],
        Check::StoreExact,
        ONE_ROW,
    )
    .rolled_back(&[]);
    m.add(
        "attach with the id as the text",
        "SELECT knowledge.attach('bad_src', 'id', 'id', 'lex')",
        vec![],
        Check::StoreExact,
        ONE_ROW,
    )
    .rolled_back(&[]);
    m.add(
        "attach twice",
        "SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')",
        vec![],
        Check::Nothing,
        Expect::Fails("42710"),
    )
    .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
    m.add(
        "attach a view",
        "SELECT knowledge.attach('bad_src_view', 'id', 'body', 'lex')",
        vec![],
        Check::Nothing,
        Expect::Fails("42809"),
    )
    .rolled_back(&[]);
    m.add(
        "attach a system catalog",
        "SELECT knowledge.attach('pg_catalog.pg_class', 'oid', 'relname', 'lex')",
        vec![],
        Check::Nothing,
        DENIED,
    )
    .rolled_back(&[]);
    m.add(
        "attach a missing table",
        "SELECT knowledge.attach('no_such_table', 'id', 'body')",
        vec![],
        Check::Nothing,
        Expect::Fails("42P01"),
    )
    .rolled_back(&[]);
    m.add(
        "attach a missing id column",
        "SELECT knowledge.attach('bad_src', 'nope', 'body', 'lex')",
        vec![],
        Check::Nothing,
        Expect::Fails("42703"),
    )
    .rolled_back(&[]);
    m.add(
        "attach a missing text column",
        "SELECT knowledge.attach('bad_src', 'id', 'nope', 'lex')",
        vec![],
        Check::Nothing,
        Expect::Fails("42703"),
    )
    .rolled_back(&[]);
    m.add(
        "attach a system column",
        "SELECT knowledge.attach('bad_src', 'ctid', 'body', 'lex')",
        vec![],
        Check::Nothing,
        Expect::Fails("42703"),
    )
    .rolled_back(&[]);
    m.add(
        "attach in an unknown language",
        "SELECT knowledge.attach('bad_src', 'id', 'body', 'lex', 'klingon')",
        vec![],
        Check::Nothing,
        UNKNOWN,
    )
    .rolled_back(&[]);
    m.add(
        "attach a table with a document above max_document_size",
        "SELECT knowledge.attach('big_src', 'id', 'body', 'lex')",
        vec![],
        Check::Nothing,
        TOO_BIG,
    )
    .rolled_back(&[]);
    m.add(
        "attached row grown above max_document_size",
        "UPDATE bad_src SET body = repeat('a', 10485761) WHERE id = 1",
        vec![],
        Check::Nothing,
        TOO_BIG,
    )
    .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
    m.add("attached table truncated", "TRUNCATE bad_src", vec![], Check::StoreExact, NO_ROWS)
        .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
    m.add(
        "attached row's text set to NULL",
        "UPDATE bad_src SET body = NULL WHERE id = 1",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
    m.add("detach of a table never attached", "SELECT knowledge.detach('bad_src')", vec![], Check::Nothing, UNKNOWN)
        .rolled_back(&[]);
    m.add(
        "detach of a missing table",
        "SELECT knowledge.detach('no_such_table')",
        vec![],
        Check::Nothing,
        Expect::Fails("42P01"),
    )
    .rolled_back(&[]);
    // Settings out of range (22023) and settings only a superuser may change.
    for (label, setting) in [
        ("batch_size 0", "pg_chunk.batch_size = 0"),
        ("batch_size 1025", "pg_chunk.batch_size = 1025"),
        ("threads 0", "pg_chunk.threads = 0"),
        ("threads 65", "pg_chunk.threads = 65"),
        ("embedding_cache_mb -1", "pg_chunk.embedding_cache_mb = -1"),
        ("embedding_cache_mb 1 TB", "pg_chunk.embedding_cache_mb = '1TB'"),
        ("batch_size word", "pg_chunk.batch_size = 'many'"),
        ("maintain_chunks word", "pg_chunk.maintain_chunks = 'sometimes'"),
    ] {
        m.add(format!("setting {label}"), format!("SET LOCAL {setting}"), vec![], Check::Nothing, BAD_CFG)
            .rolled_back(&[]);
    }
    m.add("embed_batch with batch_size 1 and no cache", "SELECT vector_dims(embedding), embedding::text LIKE '%NaN%' FROM knowledge.embed_batch(ARRAY['a b', 'c d', NULL, ''], 'potion-base-8m')", vec![], Check::Vectors(DIM_256), Expect::Ok(Some(4)))
        .rolled_back(&["SET LOCAL pg_chunk.batch_size = 1", "SET LOCAL pg_chunk.embedding_cache_mb = 0"]);
    m.add(
        "document written with maintain_chunks off",
        "INSERT INTO knowledge.documents (content, chunk_config) VALUES ('Bees fly.', 'lex')",
        vec![],
        Check::Nothing,
        NO_ROWS,
    )
    .rolled_back(&["SET LOCAL pg_chunk.maintain_chunks = off"]);
    // Another role: what docs/operations.md reserves for superusers, and what it needs grants for.
    let as_app: &[&str] = &["CREATE ROLE bad_input_app_role", "SET LOCAL ROLE bad_input_app_role"];
    for (label, sql, expect) in [
        ("registers a model", "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension) VALUES ('evil', 'static', 'a/m', 'a/t', 256)", DENIED),
        ("repoints a model", "UPDATE knowledge.models SET model_file = 'potion-base-8m/tokenizer.json'", DENIED),
        ("sets model_dir", "SET LOCAL pg_chunk.model_dir = '/tmp'", DENIED),
        ("sets onnxruntime_library", "SET LOCAL pg_chunk.onnxruntime_library = '/tmp/libevil.so'", DENIED),
        ("deletes chunks", "DELETE FROM knowledge.chunks", DENIED),
        ("writes a document without a grant", "INSERT INTO knowledge.documents (content) VALUES ('x')", DENIED),
        ("adds a chunk config", "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('app', 'lexical')", DENIED),
        ("searches chunks without a grant", "SELECT * FROM knowledge.search('bees', 5, '{\"config\": \"lex\"}')", DENIED),
        ("attaches the store's own table", "SELECT knowledge.attach('knowledge.documents', 'id', 'content', 'lex')", DENIED),
    ] {
        m.add(format!("another role {label}"), sql, vec![], Check::Nothing, expect).rolled_back(as_app);
    }
    m.add("another role chunks", "SELECT chunk_index, content, char_offset, char_length FROM knowledge.chunk($1::text, '{\"model\": \"lexical\"}')", vec![doc("Bees fly. Lava flows.")], Check::Spans, ONE_ROW)
        .rolled_back(as_app);
    m.add(
        "another role embeds",
        "SELECT vector_dims(knowledge.embed('Bees fly.', 'lexical')), false",
        vec![],
        Check::Vectors(DIM_256),
        ONE_ROW,
    )
    .rolled_back(as_app);
}
