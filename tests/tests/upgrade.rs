//! Upgrades: every earlier release installs and updates to the current version, ending with the
//! same objects as a fresh install and with its documents and chunks intact.

use pg_chunk_client_tests::{
    empty_database, fresh_database, sample_document, STORE_PRIVILEGE_VIOLATIONS, TEXT_STATS_MISMATCHES,
    UNCOMMENTED_FUNCTIONS,
};
use postgres::Client;
use std::collections::BTreeSet;

const OBJECTS: &str = include_str!("../fixtures/extension_objects.sql");

fn objects(client: &mut Client) -> BTreeSet<String> {
    client.query(OBJECTS, &[]).unwrap().iter().map(|row| row.get(0)).collect()
}

/// The installed models' rows, and whether pg_dump leaves each out (the extension brings them).
fn models(client: &mut Client) -> Vec<String> {
    let sql = "SELECT m::text || ' dumped: ' || (SELECT c.extcondition[array_position(c.extconfig, 'knowledge.models'::regclass)]
                                              FROM pg_extension AS c WHERE c.extname = 'pg_chunk')
               FROM knowledge.models AS m ORDER BY name";
    client.query(sql, &[]).unwrap().iter().map(|row| row.get(0)).collect()
}

fn default_version(client: &mut Client) -> String {
    client.query_one("SELECT default_version FROM pg_available_extensions WHERE name = 'pg_chunk'", &[]).unwrap().get(0)
}

/// The versions a database can be made at, other than the current one.
fn earlier_versions(client: &mut Client) -> Vec<String> {
    client
        .query("SELECT version FROM pg_available_extension_versions WHERE name = 'pg_chunk' AND version <> (SELECT default_version FROM pg_available_extensions WHERE name = 'pg_chunk') ORDER BY 1", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

#[test]
fn every_earlier_release_has_an_update_path_to_the_current_version() {
    let mut client = fresh_database("upgrade_paths");
    let current = default_version(&mut client);
    let earlier = earlier_versions(&mut client);
    assert!(
        earlier.contains(&"0.1.0".to_string()),
        "0.1.0's install script is installed (scripts/lib.sh install_release): {earlier:?}"
    );
    for version in earlier {
        let path: Option<String> = client
            .query_one(
                "SELECT path FROM pg_extension_update_paths('pg_chunk') WHERE source = $1 AND target = $2",
                &[&version, &current],
            )
            .unwrap()
            .get(0);
        assert!(path.is_some(), "no sql/pg_chunk--…--….sql path from {version} to {current}");
    }
}

#[test]
fn updating_from_each_earlier_release_gives_a_fresh_install_and_keeps_the_data() {
    let mut fresh = fresh_database("upgrade_fresh");
    let current = default_version(&mut fresh);
    let want = objects(&mut fresh);
    let want_models = models(&mut fresh);
    for version in earlier_versions(&mut fresh) {
        let mut client = empty_database("upgrade_from");
        client
            .batch_execute(&format!(
                "SET client_min_messages = warning; CREATE EXTENSION pg_chunk VERSION '{version}' CASCADE"
            ))
            .unwrap();
        let id: i64 = client
            .query_one("INSERT INTO knowledge.documents (content) VALUES ($1) RETURNING id", &[&sample_document()])
            .unwrap()
            .get(0);
        let chunks_before = chunk_rows(&mut client, id);
        assert!(!chunks_before.is_empty());

        client.batch_execute("ALTER EXTENSION pg_chunk UPDATE").unwrap();
        let installed: String =
            client.query_one("SELECT extversion FROM pg_extension WHERE extname = 'pg_chunk'", &[]).unwrap().get(0);
        assert_eq!(installed, current);

        let got = objects(&mut client);
        let missing: Vec<_> = want.difference(&got).collect();
        let extra: Vec<_> = got.difference(&want).collect();
        assert!(missing.is_empty() && extra.is_empty(), "{version} → {current} differs from a fresh install.\nmissing after the update:\n{missing:#?}\nonly after the update:\n{extra:#?}");

        let uncommented: Vec<String> =
            client.query(UNCOMMENTED_FUNCTIONS, &[]).unwrap().iter().map(|row| row.get(0)).collect();
        assert!(
            uncommented.is_empty(),
            "{version} → {current}: functions in knowledge without a comment: {uncommented:?}"
        );
        let violations: Vec<String> =
            client.query(STORE_PRIVILEGE_VIOLATIONS, &[]).unwrap().iter().map(|row| row.get(0)).collect();
        assert!(violations.is_empty(), "{version} → {current}: docs/security.md's rules broken: {violations:#?}");
        assert_eq!(
            models(&mut client),
            want_models,
            "{version} → {current}: the installed models as a fresh install has them"
        );
        assert_eq!(chunk_rows(&mut client, id), chunks_before, "the update keeps the chunks");
        let stats: Vec<String> =
            client.query(TEXT_STATS_MISMATCHES, &[]).unwrap().iter().map(|row| row.get(0)).collect();
        assert!(stats.is_empty(), "{version} → {current}: BM25's statistics differ from the chunks': {stats:?}");
        let found: i64 = client
            .query_one("SELECT count(*) FROM knowledge.search('honeybees', 5, '{\"mode\": \"text\"}')", &[])
            .unwrap()
            .get(0);
        assert!(found > 0, "{version} → {current}: the text leg finds the document's chunks");
        client
            .batch_execute(&format!(
                "UPDATE knowledge.documents SET content = content || ' One more sentence.' WHERE id = {id}"
            ))
            .unwrap();
        assert_ne!(chunk_rows(&mut client, id), chunks_before, "the updated extension keeps chunks in step");
    }
}

/// The document's chunks: index, offsets and text.
fn chunk_rows(client: &mut Client, document: i64) -> Vec<(i32, i32, i32, String)> {
    client
        .query("SELECT chunk_index, char_offset, char_length, content FROM knowledge.chunks WHERE document_id = $1 ORDER BY chunk_config, chunk_index", &[&document])
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3)))
        .collect()
}

/// 0.6.0 holds a source key to one document written directly: an update of a store whose
/// documents share one is refused, saying how to find them, and leaves the store as it was.
#[test]
fn an_update_refuses_documents_that_share_a_source_key() {
    let mut client = empty_database("upgrade_shared_keys");
    client
        .batch_execute(
            "SET client_min_messages = warning; CREATE EXTENSION pg_chunk VERSION '0.5.0' CASCADE;
             UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default';
             INSERT INTO knowledge.documents (source_key, content) VALUES ('a', 'Bees dance.'), ('a', 'Ants march.'), ('b', 'Moths circle.')",
        )
        .unwrap();
    let error = client.batch_execute("ALTER EXTENSION pg_chunk UPDATE").unwrap_err();
    let db = error.as_db_error().unwrap();
    assert_eq!(db.code().code(), "23505", "{db:?}");
    assert_eq!(
        db.message(),
        "1 source keys are each held by more than one document (such as \"a\"), which pg_chunk 0.6.0 refuses"
    );
    assert!(db.hint().unwrap_or_default().contains("GROUP BY source_key HAVING count(*) > 1"), "{db:?}");
    let version: String =
        client.query_one("SELECT extversion FROM pg_extension WHERE extname = 'pg_chunk'", &[]).unwrap().get(0);
    assert_eq!(version, "0.5.0");
    let documents: i64 = client.query_one("SELECT count(*) FROM knowledge.documents", &[]).unwrap().get(0);
    assert_eq!(documents, 3);
    client.batch_execute("UPDATE knowledge.documents SET source_key = 'a2' WHERE content = 'Ants march.'; ALTER EXTENSION pg_chunk UPDATE").unwrap();
    let refused = client
        .batch_execute("INSERT INTO knowledge.documents (source_key, content) VALUES ('b', 'Again.')")
        .unwrap_err();
    assert_eq!(refused.code().map(|c| c.code()), Some("23505"));
}
