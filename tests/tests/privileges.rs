//! Privileges and search_path: what a role without superuser rights can and cannot make pg_chunk
//! do. (Changing models or superuser settings as such a role is refused in src/tests/models.rs;
//! row-level security in knowledge.search in tests/search.rs.)

use pg_chunk_client_tests::{connect_database, fresh_database};

#[test]
fn every_sql_function_of_the_extension_pins_its_search_path() {
    let mut client = fresh_database("privileges_pinned");
    let unpinned: Vec<String> = client
        .query(
            "SELECT p.oid::regprocedure::text FROM pg_depend AS d
             JOIN pg_proc AS p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
             JOIN pg_language AS l ON l.oid = p.prolang
             WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
               AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_chunk')
               AND l.lanname IN ('sql', 'plpgsql') AND p.prokind = 'f'
               AND NOT EXISTS (SELECT FROM unnest(p.proconfig) AS c WHERE c LIKE 'search\\_path=%')",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(unpinned.is_empty(), "functions without a fixed search_path: {unpinned:?}");
}

/// A role puts its own `vector` type and its own `text = text` operator before pg_catalog on its
/// search_path: pg_chunk's lookups of its model row and of pgvector's type must not use them.
#[test]
fn a_hostile_search_path_cannot_shadow_what_pg_chunk_looks_up() {
    const DATABASE: &str = "privileges_search_path";
    let mut admin = fresh_database(DATABASE);
    admin
        .batch_execute(
            "DROP ROLE IF EXISTS pgchunk_mallory;
             CREATE ROLE pgchunk_mallory;
             CREATE SCHEMA mallory AUTHORIZATION pgchunk_mallory;
             SET ROLE pgchunk_mallory;
             CREATE TYPE mallory.vector AS (x int);
             CREATE FUNCTION mallory.always(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
             CREATE OPERATOR mallory.= (LEFTARG = text, RIGHTARG = text, FUNCTION = mallory.always);
             RESET ROLE;",
        )
        .unwrap();
    let sql = "SELECT public.vector_dims(knowledge.embed('alpha', 'potion-base-8m')),
                      (SELECT pg_catalog.string_agg(b::pg_catalog.text, ';') FROM knowledge.embed_batch(ARRAY['alpha', 'beta'], 'potion-base-8m') AS b)";
    let want = connect_database(DATABASE).query_one(sql, &[]).unwrap();
    let (want_dims, want_vectors): (i32, String) = (want.get(0), want.get(1));
    assert_eq!(want_dims, 256);

    // A new backend, so that neither the model nor the type's oid is cached yet.
    let mut mallory = connect_database(DATABASE);
    mallory.batch_execute("SET ROLE pgchunk_mallory; SET search_path = mallory, pg_catalog, public").unwrap();
    let got = mallory.query_one(sql, &[]).unwrap();
    assert_eq!(got.get::<_, i32>(0), want_dims, "the model row was looked up with the role's = operator");
    assert_eq!(got.get::<_, String>(1), want_vectors);
    let chunks: i64 = mallory.query_one("SELECT pg_catalog.count(*) FROM knowledge.chunk('One sentence here. Another one there.', '{\"model\": \"potion-base-8m\"}')", &[]).unwrap().get(0);
    assert!(chunks >= 1);
}

/// Table and column names that read as SQL reach the server only as quoted identifiers.
#[test]
fn hostile_table_and_column_names_are_only_ever_identifiers() {
    let mut client = fresh_database("privileges_names");
    client
        .batch_execute(
            r#"CREATE TABLE "notes""; DROP TABLE knowledge.documents; --" ("id'); DROP TABLE knowledge.chunks; --" int PRIMARY KEY, "body"" text" text);
               INSERT INTO "notes""; DROP TABLE knowledge.documents; --" VALUES (1, 'Bees keep the hive warm in winter. They cluster and shiver.');
               SELECT knowledge.attach('"notes""; DROP TABLE knowledge.documents; --"', 'id''); DROP TABLE knowledge.chunks; --', 'body" text');
               INSERT INTO "notes""; DROP TABLE knowledge.documents; --" VALUES (2, 'Glaciers carve valleys into a U shape.');"#,
        )
        .unwrap();
    let documents: i64 = client.query_one("SELECT count(*) FROM knowledge.documents", &[]).unwrap().get(0);
    let chunked: i64 =
        client.query_one("SELECT count(DISTINCT document_id) FROM knowledge.chunks", &[]).unwrap().get(0);
    assert_eq!((documents, chunked), (2, 2));
    let hit: String = client
        .query_one(
            "SELECT content FROM knowledge.search($1, 1)",
            &[&"'); DROP TABLE knowledge.chunks; -- glaciers valleys"],
        )
        .unwrap()
        .get(0);
    assert!(hit.contains("Glaciers"), "{hit}");
    client.batch_execute(r#"SELECT knowledge.detach('"notes""; DROP TABLE knowledge.documents; --"')"#).unwrap();
}

/// BM25's statistics are the documents' vocabulary: a role that may not read the chunks reads
/// none of them, through knowledge.search or directly; one that may, searches by text.
#[test]
fn text_statistics_are_shown_only_to_roles_that_may_read_the_chunks() {
    let mut admin = fresh_database("privileges_text_stats");
    admin
        .batch_execute(
            "INSERT INTO knowledge.documents (content) VALUES ('Lighthouses guide ships at night with a rotating lamp.');
             DROP ROLE IF EXISTS pgchunk_stats_outsider;
             DROP ROLE IF EXISTS pgchunk_stats_reader;
             CREATE ROLE pgchunk_stats_outsider;
             CREATE ROLE pgchunk_stats_reader;
             GRANT SELECT ON knowledge.documents, knowledge.chunks TO pgchunk_stats_reader;",
        )
        .unwrap();
    let mut as_role = |role: &str, query: &str| -> Result<i64, String> {
        let mut transaction = admin.transaction().unwrap();
        transaction.batch_execute(&format!("SET LOCAL ROLE {role}")).unwrap();
        let got = transaction
            .query_one(query, &[])
            .map(|row| row.get(0))
            .map_err(|e| e.code().map(|c| c.code().to_string()).unwrap_or_default());
        transaction.rollback().unwrap();
        got
    };
    assert!(as_role("pgchunk_stats_reader", "SELECT count(*) FROM knowledge_internal.text_stats_visible").unwrap() > 0);
    assert!(
        as_role(
            "pgchunk_stats_reader",
            "SELECT count(*) FROM knowledge.search('lighthouse lamp', 5, '{\"mode\": \"text\"}')"
        )
        .unwrap()
            > 0
    );
    assert_eq!(as_role("pgchunk_stats_outsider", "SELECT count(*) FROM knowledge_internal.text_stats_visible"), Ok(0));
    // A condition of the role's own cannot see rows before the privilege check does.
    assert_eq!(
        as_role(
            "pgchunk_stats_outsider",
            "SELECT count(*) FROM knowledge_internal.text_stats_visible WHERE lexeme ~ '' AND chunks > 0"
        ),
        Ok(0)
    );
    assert_eq!(
        as_role("pgchunk_stats_outsider", "SELECT count(*) FROM knowledge_internal.text_stats"),
        Err("42501".to_string())
    );
    assert_eq!(
        as_role(
            "pgchunk_stats_outsider",
            "SELECT count(*) FROM knowledge.search('lighthouse', 5, '{\"mode\": \"text\"}')"
        ),
        Err("42501".to_string())
    );
}

/// docs/operations.md, "Privileges": what a role that may write documents still cannot do. Each refusal is
/// a hole that was open before (docs/operations.md, "Privileges").
#[test]
fn a_plain_role_cannot_raise_memory_hold_the_queue_or_skip_chunking() {
    const DATABASE: &str = "privileges_sweep";
    let mut admin = fresh_database(DATABASE);
    admin
        .batch_execute(
            "DROP ROLE IF EXISTS pgchunk_plain;
             CREATE ROLE pgchunk_plain;
             GRANT SELECT, INSERT, UPDATE, DELETE ON knowledge.documents TO pgchunk_plain;",
        )
        .unwrap();
    let mut plain = connect_database(DATABASE);
    plain.batch_execute("SET ROLE pgchunk_plain").unwrap();
    let refused = |client: &mut postgres::Client, statement: &str| {
        let error = client.batch_execute(statement).expect_err(statement);
        assert_eq!(error.code().map(|c| c.code()), Some("42501"), "{statement}: {error}");
    };
    // (maintain_chunks, max_threads, model_dir and onnxruntime_library: src/tests/models.rs.)
    for setting in ["pg_chunk.embedding_cache_mb = 4096", "pg_chunk.stored_vectors_mb = 0"] {
        refused(&mut plain, &format!("SET {setting}"));
    }
    refused(&mut plain, "SELECT knowledge.process_queue()");
    refused(&mut plain, "SELECT knowledge.retry_failed()");
    refused(&mut plain, "SELECT knowledge.rebuild_text_stats()");
    refused(&mut plain, "SELECT knowledge.begin_load('default')");
    refused(&mut plain, "SELECT knowledge.end_load('default')");
    refused(&mut plain, "SELECT * FROM knowledge_internal.stored_vectors");
    // What it may do still works: threads above the ceiling are capped, not refused.
    plain.batch_execute("SET pg_chunk.batch_size = 1024; SET pg_chunk.threads = 2").unwrap();
    plain
        .batch_execute(
            "INSERT INTO knowledge.documents (content) VALUES ('Lighthouses guide ships. Their lamps turn.')",
        )
        .unwrap();
    admin.batch_execute("DROP OWNED BY pgchunk_plain; DROP ROLE pgchunk_plain").unwrap();
}
