//! Reused vectors (docs/store.md, "Reuse: an edit embeds what it changed") over real connections: an edit embeds only what it changed
//! and keeps the chunks it did not touch, identical text is embedded once, nothing made with
//! another model file, model row or context is reused, and concurrent edits, config changes and
//! the size cap leave every chunk exact. Each test has a database of its own and embeds with
//! the default transformer (static models are not stored: their embedding is cheaper).

use pg_chunk_client_tests::{
    assert_store_exact, connect_database, fresh_database, model_dir, prose_paragraphs, topic_document,
};
use postgres::Client;
use std::thread;

/// A fresh database whose default config cuts even short documents by their sentences' vectors
/// (rather than keep them whole).
fn reuse_database(name: &str) -> Client {
    let mut client = fresh_database(name);
    client
        .batch_execute("UPDATE knowledge.chunk_configs SET cfg = '{\"inline_threshold\": 0}' WHERE name = 'default'")
        .unwrap();
    client
}

/// A new backend of the test's database, with no vectors in its own cache: what it reuses comes
/// from knowledge_internal.stored_vectors.
fn new_session(name: &str) -> Client {
    let mut client = connect_database(name);
    client.batch_execute("SET pg_chunk.embedding_cache_mb = 0").unwrap();
    client
}

fn count(client: &mut Client, query: &str) -> i64 {
    client.query_one(query, &[]).unwrap().get(0)
}

/// The last knowledge_internal.write_chunks call's figures.
#[derive(Debug)]
struct Write {
    chunks_written: i32,
    chunks_kept: i32,
    embedded: i32,
    reused: i32,
}

fn last_write(client: &mut Client) -> Write {
    let row = client
        .query_one("SELECT chunks_written, chunks_kept, vectors_embedded, vectors_reused FROM knowledge.embedding_writes ORDER BY id DESC LIMIT 1", &[])
        .unwrap();
    Write { chunks_written: row.get(0), chunks_kept: row.get(1), embedded: row.get(2), reused: row.get(3) }
}

/// A document of 30 paragraphs of prose, and its paragraph 15 replaced.
fn long_document() -> (String, String) {
    let paragraphs: Vec<String> = prose_paragraphs().into_iter().take(30).collect();
    assert_eq!(paragraphs.len(), 30, "enough prose for the document");
    let mut edited = paragraphs.clone();
    edited[15] =
        "Lighthouse keepers once trimmed the wicks every night. Their logbooks recorded each passing ship.".to_string();
    (paragraphs.join("\n\n"), edited.join("\n\n"))
}

/// (id, chunk_index, content, char_offset) of every chunk of document 1.
fn chunk_rows(client: &mut Client) -> Vec<(i64, i32, String, i32)> {
    client
        .query("SELECT id, chunk_index, content, char_offset FROM knowledge.chunks WHERE document_id = 1 ORDER BY chunk_index", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect()
}

#[test]
fn an_edit_embeds_only_what_it_changed_and_keeps_the_chunks_it_did_not_touch() {
    let mut client = reuse_database("reuse_edit");
    let (document, edited) = long_document();
    client.execute("INSERT INTO knowledge.documents (id, content) VALUES (1, $1)", &[&document]).unwrap();
    let inserted = last_write(&mut client);
    let before = chunk_rows(&mut client);
    assert!(before.len() >= 5, "a long document has several chunks: {}", before.len());

    let mut editor = new_session("reuse_edit");
    editor.execute("UPDATE knowledge.documents SET content = $1 WHERE id = 1", &[&edited]).unwrap();
    let edit = last_write(&mut editor);
    let after = chunk_rows(&mut client);
    // What had to be embedded: the new paragraph's two sentences and each chunk whose text is
    // new. Everything else came from the stored vectors.
    let new_chunks = after.iter().filter(|(_, _, content, _)| !before.iter().any(|b| &b.2 == content)).count() as i32;
    assert!(new_chunks >= 1);
    assert!(
        edit.embedded <= 2 + new_chunks,
        "the edit embedded {} texts; 2 sentences and {new_chunks} chunks are new: {edit:?}",
        edit.embedded
    );
    assert!(edit.reused > 0, "{edit:?}");
    // Chunks whose text and index are unchanged (moved or not) are the same rows.
    let same: Vec<_> = after.iter().filter(|a| before.iter().any(|b| (b.1, &b.2) == (a.1, &a.2))).collect();
    assert!(!same.is_empty());
    for chunk in &same {
        assert!(before.iter().any(|b| b.0 == chunk.0), "chunk {} of unchanged text got a new id", chunk.1);
    }
    assert_eq!(edit.chunks_kept as usize, same.len(), "{edit:?}");
    assert_eq!((edit.chunks_written + edit.chunks_kept) as usize, after.len());
    assert_store_exact(&mut client, "after an edit");

    // With stored vectors off, the same edit back embeds everything again.
    let mut unstored = new_session("reuse_edit");
    unstored.batch_execute("SET pg_chunk.stored_vectors_mb = 0").unwrap();
    unstored.execute("UPDATE knowledge.documents SET content = $1 WHERE id = 1", &[&document]).unwrap();
    let again = last_write(&mut unstored);
    assert_eq!((again.embedded, again.reused), (inserted.embedded, 0), "{again:?}");
    assert_store_exact(&mut client, "after an edit without stored vectors");
    // The backend's figures agree with the log.
    let (embedded, stored, written): (i64, i64, i64) = {
        let row = editor.query_one("SELECT sentences_embedded, stored_hits, chunks_written FROM knowledge.embedding_stats() WHERE model = 'all-minilm-l6-v2'", &[]).unwrap();
        (row.get(0), row.get(1), row.get(2))
    };
    assert_eq!((embedded, stored, written), (edit.embedded as i64, edit.reused as i64, edit.chunks_written as i64));
    let summed = count(&mut client, "SELECT vectors_embedded + vectors_reused FROM knowledge.embedding_run_stats");
    assert_eq!(
        summed,
        (inserted.embedded + inserted.reused + edit.embedded + edit.reused + again.embedded + again.reused) as i64
    );
}

#[test]
fn a_chunk_that_only_moved_keeps_its_row() {
    let mut client = reuse_database("reuse_moved");
    // One chunk a paragraph.
    client.batch_execute("UPDATE knowledge.chunk_configs SET cfg = '{\"strategy\": \"recursive\", \"max_size\": 60, \"overlap\": 0}' WHERE name = 'default'").unwrap();
    let mut paragraphs = [
        "Bees keep the hive warm in winter.",
        "Volcanoes erupt when magma rises.",
        "Glaciers carve valleys as they slide.",
        "Sourdough rises with wild yeast.",
    ];
    client
        .execute("INSERT INTO knowledge.documents (id, content) VALUES (1, $1)", &[&paragraphs.join("\n\n")])
        .unwrap();
    let before = chunk_rows(&mut client);
    paragraphs[0] = "Bees keep the hive warm in winter by shivering together.";
    let mut editor = new_session("reuse_moved");
    editor.execute("UPDATE knowledge.documents SET content = $1 WHERE id = 1", &[&paragraphs.join("\n\n")]).unwrap();
    let after = chunk_rows(&mut client);
    assert_eq!(after.len(), 4);
    assert_ne!(after[0].0, before[0].0, "the changed chunk is a new row");
    for (b, a) in before.iter().zip(&after).skip(1) {
        assert_eq!((a.0, a.1, &a.2), (b.0, b.1, &b.2), "an unchanged chunk keeps its row");
        assert_eq!(a.3, b.3 + 22, "with its new place");
    }
    let edit = last_write(&mut editor);
    assert_eq!((edit.chunks_written, edit.chunks_kept, edit.embedded), (1, 3, 1), "{edit:?}");
    assert_store_exact(&mut client, "after a chunk moved");
}

#[test]
fn identical_text_is_embedded_once_within_a_statement_across_documents_and_sessions() {
    let mut client = reuse_database("reuse_duplicates");
    let boilerplate = "This page is maintained by the documentation team. Report mistakes to the mailing list. Pages are reviewed every spring.";
    client
        .execute(
            "INSERT INTO knowledge.documents (content) VALUES ($1)",
            &[&format!("{}\n\n{boilerplate}", topic_document(1))],
        )
        .unwrap();
    let first = last_write(&mut client);

    // Another document sharing the paragraph, written by another backend: its three sentences
    // are reused, the rest embedded.
    let mut other = new_session("reuse_duplicates");
    other
        .execute(
            "INSERT INTO knowledge.documents (content) VALUES ($1)",
            &[&format!("{}\n\n{boilerplate}", topic_document(2))],
        )
        .unwrap();
    let second = last_write(&mut other);
    assert!(second.reused >= 3, "{second:?}");
    assert!(second.embedded < first.embedded + first.reused, "{second:?} after {first:?}");

    // Two identical documents in one statement: the second embeds nothing.
    let mut batch = new_session("reuse_duplicates");
    let twice = topic_document(3);
    batch.execute("INSERT INTO knowledge.documents (content) VALUES ($1), ($1)", &[&twice]).unwrap();
    let rows = batch
        .query("SELECT vectors_embedded, vectors_reused FROM knowledge.embedding_writes ORDER BY id DESC LIMIT 2", &[])
        .unwrap();
    let (embedded, reused): (i32, i32) = (rows[0].get(0), rows[0].get(1));
    assert_eq!(embedded, 0, "the second copy reuses every vector");
    assert!(reused > 0);
    assert_store_exact(&mut client, "after duplicates");

    // Lookups go through the hash index, not a scan.
    let plan: String = client
        .query(
            "EXPLAIN (COSTS OFF) SELECT embedding FROM knowledge_internal.stored_vectors WHERE key = '\\x00'::bytea",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(plan.contains("stored_vectors_key"), "{plan}");
}

/// Chunks of config `config` whose vector is not the embedding of the text they were embedded
/// from (their context, if any, then their content) by their model.
fn stale_vectors(client: &mut Client, config: &str) -> i64 {
    client
        .query_one(
            "SELECT count(*) FROM knowledge.chunks AS c WHERE c.chunk_config = $1
               AND (c.embedding <=> knowledge.embed(coalesce(c.metadata ->> 'context' || E'\\n', '') || c.content, c.model)) > 1e-4",
            &[&config],
        )
        .unwrap()
        .get(0)
}

#[test]
fn a_changed_model_file_model_row_or_context_never_reuses_an_old_vector() {
    let mut client = reuse_database("reuse_stale");
    // A copy of the default model under a name of its own, in a directory this test owns.
    let dir = model_dir(&mut client).join("reuse-test-copy");
    std::fs::create_dir_all(&dir).unwrap();
    let source = model_dir(&mut client).join("all-minilm-l6-v2");
    for file in ["model.int8.onnx", "model.int8.onnx.data", "tokenizer.json"] {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    client
        .batch_execute(
            "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension, max_tokens, optimize_graph)
             VALUES ('reuse-copy', 'transformer', 'reuse-test-copy/model.int8.onnx', 'reuse-test-copy/tokenizer.json', 384, 256, false);
             UPDATE knowledge.chunk_configs SET model = 'reuse-copy' WHERE name = 'default';",
        )
        .unwrap();
    for i in 0..5 {
        client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    assert_eq!(stale_vectors(&mut client, "default"), 0);

    // The weights file replaced in place by other weights (every byte's lowest bit flipped: each
    // int8 weight moves by one, each float's exponent or mantissa changes), then everything
    // rechunked by a new backend.
    let weights = dir.join("model.int8.onnx.data");
    let bytes: Vec<u8> = std::fs::read(&weights).unwrap().into_iter().map(|b| b ^ 1).collect();
    std::fs::write(&weights, &bytes).unwrap();
    let mut session = new_session("reuse_stale");
    let last = count(&mut session, "SELECT max(id) FROM knowledge.embedding_writes");
    session.batch_execute("SET client_min_messages = warning; SELECT knowledge.rechunk_all()").unwrap();
    assert_eq!(stale_vectors(&mut session, "default"), 0, "vectors of the old weights were reused");
    // The first document rewritten found nothing to reuse (the others share sentences with it).
    let first = count(
        &mut session,
        &format!("SELECT vectors_reused::bigint FROM knowledge.embedding_writes WHERE id = {last} + 1"),
    );
    assert_eq!(first, 0);

    // A changed row: a passage prefix changes what is embedded.
    session.batch_execute("UPDATE knowledge.models SET passage_prefix = 'passage: ' WHERE name = 'reuse-copy'; SELECT knowledge.rechunk_all()").unwrap();
    assert_eq!(stale_vectors(&mut session, "default"), 0, "vectors of the old row were reused");
    assert_store_exact(&mut session, "after the model changed");

    // A context rule: heading paths embedded before each chunk, then not.
    let markdown = "# Bees\n\nBees keep the hive warm. The queen stays inside.\n\n# Volcanoes\n\nLava cools into basalt. Magma rises through cracks.";
    session
        .batch_execute(
            "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('md', '{\"strategy\": \"markdown\", \"heading_context\": true}', 'all-minilm-l6-v2')",
        )
        .unwrap();
    session.execute("INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1, 'md')", &[&markdown]).unwrap();
    assert!(
        count(&mut session, "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'md' AND metadata ? 'context'")
            > 0
    );
    assert_eq!(stale_vectors(&mut session, "md"), 0);
    session
        .batch_execute("UPDATE knowledge.chunk_configs SET cfg = '{\"strategy\": \"markdown\"}' WHERE name = 'md'")
        .unwrap();
    assert_eq!(
        count(&mut session, "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'md' AND metadata ? 'context'"),
        0
    );
    assert_eq!(stale_vectors(&mut session, "md"), 0, "vectors with the old context were reused");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn concurrent_edits_config_changes_and_rollbacks_leave_every_chunk_exact() {
    let name = "reuse_concurrent";
    let mut client = reuse_database(name);
    let (document, edited) = long_document();
    client.execute("INSERT INTO knowledge.documents (id, content) VALUES (1000000, $1)", &[&document]).unwrap();
    let versions = [document, edited];
    // Two sessions editing the same document, a third changing the config under them, a fourth
    // rolling its edits back.
    let editors: Vec<_> = (0..2)
        .map(|editor| {
            let versions = versions.clone();
            thread::spawn(move || {
                let mut client = new_session(name);
                for i in 0..8 {
                    let content = format!("{}\n\nEditor {editor}, edit {i}.", versions[(i + editor) % 2]);
                    client
                        .execute("UPDATE knowledge.documents SET content = $1 WHERE id = 1000000", &[&content])
                        .unwrap();
                }
            })
        })
        .collect();
    let configs = thread::spawn(move || {
        let mut client = new_session(name);
        for size in [300, 500, 400] {
            client.batch_execute(&format!("SET client_min_messages = warning; UPDATE knowledge.chunk_configs SET cfg = '{{\"inline_threshold\": 0, \"max_size\": {size}}}' WHERE name = 'default'")).unwrap();
        }
    });
    let rollbacks = thread::spawn(move || {
        let mut client = new_session(name);
        for i in 0..4 {
            let mut transaction = client.transaction().unwrap();
            transaction
                .execute(
                    "INSERT INTO knowledge.documents (content) VALUES ($1)",
                    &[&format!("{}\n\nRolled back {i}.", topic_document(i))],
                )
                .unwrap();
            transaction.rollback().unwrap();
        }
    });
    for handle in editors.into_iter().chain([configs, rollbacks]) {
        handle.join().expect("a session failed");
    }
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.documents"), 1);
    assert_store_exact(&mut client, "after concurrent edits, config changes and rollbacks");
}

#[test]
fn stored_vectors_stay_within_their_cap_and_can_be_turned_off() {
    let name = "reuse_cap";
    let mut client = reuse_database(name);
    // 1 MB holds 1 MiB / (4 × 384 + 190) bytes = 607 vectors of the default model.
    client.batch_execute("SET pg_chunk.stored_vectors_mb = 1").unwrap();
    for i in 0..60 {
        let content: Vec<String> =
            (0..20).map(|j| format!("Sample {j} of batch {i} weighed {} grams.", 7 * i + j)).collect();
        let content = format!("{}\n\n{}", content.join(" "), topic_document(i));
        client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&content]).unwrap();
    }
    let embedded = count(&mut client, "SELECT sum(vectors_embedded) FROM knowledge.embedding_writes");
    let stored = count(&mut client, "SELECT count(*) FROM knowledge_internal.stored_vectors");
    assert!(embedded > 607, "the test must embed more than the cap holds: {embedded}");
    assert!((1..=607).contains(&stored), "{stored} stored vectors");
    // The newest stay: the last document's vectors are there.
    let mut session = new_session(name);
    session.execute("UPDATE knowledge.documents SET content = content || ' More.' WHERE id = (SELECT max(id) FROM knowledge.documents)", &[]).unwrap();
    assert!(last_write(&mut session).reused > 0);
    assert_store_exact(&mut client, "with a capped store");

    // Off: nothing is looked up or stored.
    session.batch_execute("SET pg_chunk.stored_vectors_mb = 0").unwrap();
    let rows = count(&mut session, "SELECT count(*) FROM knowledge_internal.stored_vectors");
    session.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(99)]).unwrap();
    session.execute("UPDATE knowledge.documents SET content = content || ' More.' WHERE id = (SELECT min(id) FROM knowledge.documents)", &[]).unwrap();
    assert_eq!(last_write(&mut session).reused, 0);
    assert_eq!(count(&mut session, "SELECT count(*) FROM knowledge_internal.stored_vectors"), rows);
    assert_store_exact(&mut client, "with stored vectors off");
    // Only a superuser sets the cap.
    session
        .batch_execute("DROP ROLE IF EXISTS reuse_cap_plain; CREATE ROLE reuse_cap_plain; SET ROLE reuse_cap_plain")
        .unwrap();
    let denied = session.batch_execute("SET pg_chunk.stored_vectors_mb = 5").unwrap_err();
    assert_eq!(denied.code().map(|c| c.code()), Some("42501"));
    session.batch_execute("RESET ROLE; DROP ROLE reuse_cap_plain").unwrap();
}
