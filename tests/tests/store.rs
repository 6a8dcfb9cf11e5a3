//! The knowledge store over real connections: triggers keep knowledge.chunks exactly what
//! knowledge.chunk gives (embeddings and tsvectors included) through inserts, updates, deletes,
//! rollbacks, several configs, mirrored user tables, concurrent writers and a dump and restore.
//! Each test has a database of its own; most embed with the static model to stay quick.

use pg_chunk_client_tests::{
    assert_store_exact, connect_database, connection_string, describe_error, fresh_database, model_dir,
    prose_paragraphs, sample_document, server_dir, sqlstate_of, topic_document,
};
use postgres::Client;
use std::process::Command;
use std::thread;

/// A fresh database whose default config embeds with the static model.
fn store_database(name: &str) -> Client {
    let mut client = fresh_database(name);
    client.batch_execute("UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default'").unwrap();
    client
}

fn count(client: &mut Client, query: &str) -> i64 {
    client.query_one(query, &[]).unwrap().get(0)
}

fn insert_document(client: &mut Client, content: &str) -> i64 {
    client.query_one("INSERT INTO knowledge.documents (content) VALUES ($1) RETURNING id", &[&content]).unwrap().get(0)
}

#[test]
fn inserts_updates_deletes_and_rollbacks_keep_chunks_exact() {
    let mut client = store_database("dml");
    let sample = insert_document(&mut client, &sample_document());
    let ids: Vec<i64> = (0..5).map(|i| insert_document(&mut client, &topic_document(i))).collect();
    assert!(count(&mut client, &format!("SELECT count(*) FROM knowledge.chunks WHERE document_id = {sample}")) > 1);
    assert_store_exact(&mut client, "after inserts");

    // Same content again: nothing is redone (the chunks keep their ids).
    let before: Vec<i64> =
        client.query("SELECT id FROM knowledge.chunks ORDER BY id", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    client
        .execute("UPDATE knowledge.documents SET content = content, title = 'renamed' WHERE id = $1", &[&ids[0]])
        .unwrap();
    let after: Vec<i64> =
        client.query("SELECT id FROM knowledge.chunks ORDER BY id", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(before, after, "an update that keeps the content must not rechunk");

    // New content, a new language, then a delete.
    client
        .execute("UPDATE knowledge.documents SET content = $2 WHERE id = $1", &[&ids[1], &topic_document(7)])
        .unwrap();
    client.execute("UPDATE knowledge.documents SET language = 'simple' WHERE id = $1", &[&ids[2]]).unwrap();
    client.execute("DELETE FROM knowledge.documents WHERE id = $1", &[&ids[3]]).unwrap();
    assert_eq!(count(&mut client, &format!("SELECT count(*) FROM knowledge.chunks WHERE document_id = {}", ids[3])), 0);
    assert_store_exact(&mut client, "after updates and a delete");

    // A rolled-back transaction leaves nothing behind.
    let chunks_before = count(&mut client, "SELECT count(*) FROM knowledge.chunks");
    let mut transaction = client.transaction().unwrap();
    let id: i64 = transaction
        .query_one("INSERT INTO knowledge.documents (content) VALUES ($1) RETURNING id", &[&topic_document(9)])
        .unwrap()
        .get(0);
    transaction
        .execute("UPDATE knowledge.documents SET content = 'Replaced. Entirely new text.' WHERE id = $1", &[&ids[4]])
        .unwrap();
    let inside: i64 =
        transaction.query_one("SELECT count(*) FROM knowledge.chunks WHERE document_id = $1", &[&id]).unwrap().get(0);
    assert!(inside > 0, "chunks exist inside the transaction");
    transaction.rollback().unwrap();
    assert_eq!(count(&mut client, &format!("SELECT count(*) FROM knowledge.chunks WHERE document_id = {id}")), 0);
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.chunks"), chunks_before);
    assert_store_exact(&mut client, "after a rollback");
}

#[test]
fn the_default_config_embeds_with_the_default_transformer_model() {
    let mut client = fresh_database("default_model");
    insert_document(&mut client, &topic_document(1));
    let models: Vec<String> =
        client.query("SELECT DISTINCT model FROM knowledge.chunks", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(models, ["all-minilm-l6-v2"]);
    assert_store_exact(&mut client, "MiniLM");
    // The run records the weights: the sha256 of the model file the row names followed by its
    // external weights file.
    let row = client
        .query_one("SELECT r.model_sha256, r.dimension, r.normalized FROM knowledge.embedding_runs AS r", &[])
        .unwrap();
    let (sha, dimension, normalized): (String, i32, bool) = (row.get(0), row.get(1), row.get(2));
    assert_eq!((sha.len(), dimension, normalized), (64, 384, true));
    let file: String = client
        .query_one("SELECT model_file FROM knowledge.models WHERE name = 'all-minilm-l6-v2'", &[])
        .unwrap()
        .get(0);
    let file = model_dir(&mut client).join(file).display().to_string();
    let output = Command::new("sh").arg("-c").arg(format!("cat '{file}' '{file}.data' | sha256sum")).output().unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).starts_with(&sha), "{file}: {output:?}");
}

#[test]
fn several_active_configs_each_keep_their_own_chunks() {
    let mut client = store_database("configs");
    let shared = insert_document(&mut client, &topic_document(0));
    // A new active config chunks the documents already there, in the same statement.
    client
        .batch_execute(
            "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES
                 ('small', '{\"strategy\": \"fixed\", \"max_size\": 120, \"overlap\": 0}', 'potion-base-8m')",
        )
        .unwrap();
    assert_store_exact(&mut client, "after a new config");
    assert!(
        count(
            &mut client,
            &format!("SELECT count(*) FROM knowledge.chunks WHERE document_id = {shared} AND chunk_config = 'small'")
        ) > 1
    );
    let only_small = client
        .query_one(
            "INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1, 'small') RETURNING id",
            &[&topic_document(1)],
        )
        .unwrap()
        .get::<_, i64>(0);
    let both = insert_document(&mut client, &topic_document(2));
    for (id, configs) in [(shared, "default,small"), (only_small, "small"), (both, "default,small")] {
        let got: String = client
            .query_one("SELECT string_agg(DISTINCT chunk_config, ',' ORDER BY chunk_config) FROM knowledge.chunks WHERE document_id = $1", &[&id])
            .unwrap()
            .get(0);
        assert_eq!(got, configs, "document {id}");
    }
    assert_store_exact(&mut client, "two active configs");

    // A changed cfg rechunks at once; so does moving a document to one config.
    let before = count(&mut client, "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'small'");
    client.batch_execute("UPDATE knowledge.chunk_configs SET cfg = '{\"strategy\": \"fixed\", \"max_size\": 60, \"overlap\": 0}' WHERE name = 'small'").unwrap();
    assert!(
        count(&mut client, "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'small'") > before,
        "smaller chunks, more of them"
    );
    assert_store_exact(&mut client, "after a config changed");
    client.execute("UPDATE knowledge.documents SET chunk_config = 'default' WHERE id = $1", &[&both]).unwrap();
    assert_store_exact(&mut client, "after a document changed config");

    // Deactivated, a config keeps only the documents that name it.
    client.batch_execute("UPDATE knowledge.chunk_configs SET active = false WHERE name = 'small'").unwrap();
    assert_eq!(
        count(&mut client, "SELECT count(DISTINCT document_id) FROM knowledge.chunks WHERE chunk_config = 'small'"),
        1
    );
    assert_store_exact(&mut client, "after deactivating a config");
    assert_eq!(count(&mut client, "SELECT knowledge.rechunk_all()"), 3);
    assert_store_exact(&mut client, "after rechunk_all");
}

#[test]
fn a_config_that_cuts_with_another_model_sizes_chunks_for_the_one_that_embeds_them() {
    let mut client = fresh_database("cut_with_another_model");
    // Cut where the static model (or no model) sees the meaning change, embedded by
    // all-MiniLM-L6-v2, which reads 254 tokens of a chunk: potion-base-8m would size chunks for
    // its own 510, and the lexical embedder for 2,000 characters.
    client
        .batch_execute(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES
                 ('potion_cuts', '{\"model\": \"potion-base-8m\"}', 'all-minilm-l6-v2'),
                 ('lexical_cuts', '{\"model\": \"lexical\"}', 'all-minilm-l6-v2')",
        )
        .unwrap();
    insert_document(&mut client, &prose_paragraphs().join(" "));
    for config in ["potion_cuts", "lexical_cuts"] {
        let row = client
            .query_one(
                "SELECT count(*), max(token_count),
                        count(*) FILTER (WHERE token_count <> knowledge.token_count(content, 'all-minilm-l6-v2'))
                 FROM knowledge.chunks WHERE chunk_config = $1",
                &[&config],
            )
            .unwrap();
        let (chunks, widest, miscounted): (i64, i32, i64) = (row.get(0), row.get(1), row.get(2));
        assert!(chunks > 3, "{config}: {chunks} chunks");
        assert!(widest <= 254, "{config}: a chunk of {widest} tokens, more than all-MiniLM-L6-v2 reads");
        assert_eq!(miscounted, 0, "{config}: token_count is in the tokens of the model that embeds the chunks");
    }
    assert_store_exact(&mut client, "configs that cut with another model than they embed with");
}

#[test]
fn rechunk_replaces_chunks_and_reports_progress() {
    let mut client = store_database("rechunk");
    let ids: Vec<i64> = (0..5).map(|i| insert_document(&mut client, &topic_document(i))).collect();
    let old_ids = count(&mut client, "SELECT max(id) FROM knowledge.chunks");
    let written: i32 = client.query_one("SELECT knowledge.rechunk($1, 'default')", &[&ids[0]]).unwrap().get(0);
    assert_eq!(
        i64::from(written),
        count(&mut client, &format!("SELECT count(*) FROM knowledge.chunks WHERE document_id = {}", ids[0]))
    );
    // Nothing changed, so every row stays as it was (docs/store.md, "Reuse: an edit embeds what it changed").
    assert!(
        count(&mut client, &format!("SELECT max(id) FROM knowledge.chunks WHERE document_id = {}", ids[0])) <= old_ids,
        "kept rows"
    );
    let kept: i32 = client
        .query_one("SELECT chunks_kept FROM knowledge.embedding_writes ORDER BY id DESC LIMIT 1", &[])
        .unwrap()
        .get(0);
    assert_eq!(kept, written);
    assert_store_exact(&mut client, "after rechunk");

    let (mut notices_client, notices) = {
        let mut config: postgres::Config = connection_string("pg_chunk_test_rechunk").parse().unwrap();
        let notices = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = notices.clone();
        config.notice_callback(move |n| sink.lock().unwrap().push(n.message().to_string()));
        (config.connect(postgres::NoTls).unwrap(), notices)
    };
    let done: i64 = notices_client.query_one("SELECT knowledge.rechunk_all('default', 2)", &[]).unwrap().get(0);
    assert_eq!(done, 5);
    let progress: Vec<String> =
        notices.lock().unwrap().iter().filter(|n| n.starts_with("rechunk_all")).cloned().collect();
    assert_eq!(
        progress,
        ["rechunk_all: 2 of 5 documents", "rechunk_all: 4 of 5 documents", "rechunk_all: 5 of 5 documents"]
    );
    assert_store_exact(&mut client, "after rechunk_all");
}

/// The config's indexes, by name, with whether each is valid.
fn config_indexes(client: &mut Client, config: &str) -> Vec<(String, bool)> {
    client
        .query(
            "SELECT c.relname::text, i.indisvalid FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
             WHERE i.indrelid = 'knowledge.chunks'::regclass
               AND c.relname IN (knowledge_internal.vector_index_name($1), knowledge_internal.text_index_name($1))
             ORDER BY 1",
            &[&config],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
fn a_bulk_load_counts_a_configs_statistics_and_builds_its_indexes_once() {
    let mut client = store_database("bulk_load");
    let both = config_indexes(&mut client, "default");
    assert_eq!(both.len(), 2, "{both:?}");
    let searches = |client: &mut Client| -> Vec<String> {
        ["hybrid", "text", "vector"]
            .iter()
            .flat_map(|mode| ["volcano lava", "bees in winter", "vacuum dead rows"].map(|q| (mode, q)))
            .map(|(mode, q)| {
                client
                    .query_one(
                        "SELECT array_agg(chunk_id ORDER BY score DESC, chunk_id)::text FROM knowledge.search($1, 5, jsonb_build_object('mode', $2::text))",
                        &[&q, mode],
                    )
                    .unwrap()
                    .get(0)
            })
            .collect()
    };
    let counted = "SELECT knowledge_internal.config_chunk_count('default')";
    for i in 0..5 {
        insert_document(&mut client, &topic_document(i));
    }
    let before = count(&mut client, counted);
    assert!(before > 0);

    client
        .batch_execute(
            "INSERT INTO knowledge.chunk_configs (name, model, active) VALUES ('other', 'potion-base-8m', false)",
        )
        .unwrap();
    client.batch_execute("SELECT knowledge.begin_load('default'); SELECT knowledge.begin_load('default')").unwrap();
    assert!(config_indexes(&mut client, "default").is_empty());
    // Another config's indexes stay.
    assert_eq!(config_indexes(&mut client, "other").len(), 2);
    // Chunks written in the load are not counted one by one: no pending differences, and the
    // statistics stay those of before. A config in a load cannot be renamed or removed.
    let mut transaction = client.transaction().unwrap();
    for i in 5..25 {
        transaction.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    let pending: i64 = transaction
        .query_one("SELECT count(*) FROM knowledge_internal.text_stats_pending WHERE xid = pg_current_xact_id()", &[])
        .unwrap()
        .get(0);
    assert_eq!(pending, 0, "the load's chunks counted row by row");
    transaction.commit().unwrap();
    assert_eq!(count(&mut client, counted), before);
    assert_eq!(
        sqlstate_of(&mut client, "UPDATE knowledge.chunk_configs SET name = 'renamed' WHERE name = 'default'"),
        "23503"
    );
    assert_eq!(sqlstate_of(&mut client, "DELETE FROM knowledge.chunk_configs WHERE name = 'default'"), "23503");

    // A writer still in its transaction when the load ends: end_load waits for it, then counts
    // its chunks too.
    let mut writer = connect_database("bulk_load");
    writer.batch_execute("BEGIN").unwrap();
    for i in 25..40 {
        insert_document(&mut writer, &topic_document(i));
    }
    let ender = thread::spawn(|| {
        let mut ender = connect_database("bulk_load");
        ender.batch_execute("SELECT knowledge.end_load('default')").unwrap();
    });
    let waiting = "SELECT count(*) FROM pg_stat_activity
                   WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%end_load%'";
    let started = std::time::Instant::now();
    while count(&mut client, waiting) == 0 {
        assert!(started.elapsed().as_secs() < 30, "end_load did not wait for the load's open transaction");
        thread::sleep(std::time::Duration::from_millis(50));
    }
    writer.batch_execute("COMMIT").unwrap();
    ender.join().unwrap();
    assert_eq!(config_indexes(&mut client, "default"), both, "built again, valid, under the same names");
    assert_store_exact(&mut client, "after the load");
    assert!(count(&mut client, counted) > before);
    // Nothing left to count, and the indexes exist: a second end_load changes nothing.
    client.batch_execute("SELECT knowledge.end_load('default')").unwrap();
    assert_eq!(config_indexes(&mut client, "default"), both);
    assert_store_exact(&mut client, "after end_load again");
    assert_eq!(
        sqlstate_of(&mut client, "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT knowledge.end_load('default'); COMMIT"),
        "25000"
    );
    client.batch_execute("ROLLBACK").unwrap();

    // The built indexes find what reading every chunk does.
    let with = searches(&mut client);
    assert!(with.iter().all(|ids| ids.starts_with('{') && ids.len() > 2), "{with:?}");
    let volcanoes =
        "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'default' AND tsv @@ 'volcano'::tsquery";
    let read = count(&mut client, volcanoes);
    assert!(read > 0);
    client.batch_execute("SET enable_indexscan = off; SET enable_bitmapscan = off").unwrap();
    assert_eq!(searches(&mut client), with);
    client.batch_execute("SET enable_seqscan = off; SET enable_bitmapscan = on").unwrap();
    assert_eq!(count(&mut client, volcanoes), read);
}

/// A load's sessions write a fresh config at once: the first to write it must not make the
/// others wait for its transaction (its embedding run, made on first use, is made by begin_load).
#[test]
fn a_bulk_load_s_sessions_do_not_wait_for_each_other() {
    let mut client = store_database("bulk_load_sessions");
    // A store that has seen the documents' language (knowledge.languages): the first document of
    // a language holds its row until its transaction ends.
    insert_document(&mut client, &topic_document(2));
    client
        .batch_execute(
            "INSERT INTO knowledge.chunk_configs (name, model, active) VALUES ('fresh', 'potion-base-8m', false);
             SELECT knowledge.begin_load('fresh')",
        )
        .unwrap();
    let insert = "INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1, 'fresh')";
    let mut first = connect_database("bulk_load_sessions");
    first.batch_execute("BEGIN").unwrap();
    first.execute(insert, &[&topic_document(0)]).unwrap();
    let mut second = connect_database("bulk_load_sessions");
    second.batch_execute("SET lock_timeout = '5s'").unwrap();
    second
        .execute(insert, &[&topic_document(1)])
        .unwrap_or_else(|e| panic!("the second session waited for the first's transaction: {}", describe_error(&e)));
    first.batch_execute("COMMIT").unwrap();
    client.batch_execute("SELECT knowledge.end_load('fresh')").unwrap();
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.embedding_runs WHERE chunk_config = 'fresh'"), 1);
    assert_store_exact(&mut client, "after the load");
}

/// A chunk of only stop words has no lexeme: it counts as a chunk of BM25's statistics, and adds
/// no occurrence.
#[test]
fn a_chunk_of_only_stop_words_adds_no_occurrence() {
    let mut client = store_database("stop_words");
    let id = insert_document(&mut client, "It is what it is.");
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.chunks WHERE tsv = ''"), 1);
    assert_store_exact(&mut client, "after the insert");
    client.batch_execute(&format!("UPDATE knowledge.documents SET content = 'Bees dance.' WHERE id = {id}")).unwrap();
    assert_store_exact(&mut client, "after the update");
    client
        .batch_execute(&format!("UPDATE knowledge.documents SET content = 'To be or not to be.' WHERE id = {id}"))
        .unwrap();
    client.batch_execute(&format!("DELETE FROM knowledge.documents WHERE id = {id}")).unwrap();
    assert_store_exact(&mut client, "after the delete");
}

/// A document written directly is known by its source key: a second with the key is refused, an
/// upsert by it updates the one there, and mirrored documents and NULL keys are not held to it.
#[test]
fn a_source_key_names_one_document_written_directly() {
    let mut client = store_database("source_keys");
    client
        .batch_execute(
            "INSERT INTO knowledge.documents (source_key, content) VALUES ('notes/1', 'Bees dance.'), (NULL, 'a'), (NULL, 'b');
             CREATE TABLE mirrored (id int PRIMARY KEY, body text);
             INSERT INTO mirrored VALUES (1, 'Ants march.');
             SELECT knowledge.attach('mirrored', 'id', 'body')",
        )
        .unwrap();
    assert_eq!(
        sqlstate_of(&mut client, "INSERT INTO knowledge.documents (source_key, content) VALUES ('notes/1', 'Again.')"),
        "23505"
    );
    let upsert = "INSERT INTO knowledge.documents AS d (source_key, content) VALUES ($1, $2)
                  ON CONFLICT (source_key) WHERE attachment_id IS NULL DO UPDATE SET content = excluded.content
                  RETURNING d.id, d.xmax = 0";
    let first: (i64, bool) =
        client.query_one(upsert, &[&"notes/2", &"Moths circle."]).map(|r| (r.get(0), r.get(1))).unwrap();
    let second: (i64, bool) =
        client.query_one(upsert, &[&"notes/2", &"Moths circle lamps."]).map(|r| (r.get(0), r.get(1))).unwrap();
    assert_eq!((first.1, second), (true, (first.0, false)), "added, then updated in place");
    // "1" is also the mirrored row's key, under its attachment.
    client
        .batch_execute("INSERT INTO knowledge.documents (source_key, content) VALUES ('1', 'Not mirrored.')")
        .unwrap();
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.documents WHERE source_key = '1'"), 2);
    assert_store_exact(&mut client, "after the upserts");
}

#[test]
fn store_errors_have_deliberate_sqlstates() {
    let mut client = store_database("errors");
    insert_document(&mut client, &topic_document(0));
    let cases = [
        ("INSERT INTO knowledge.chunk_configs (name, cfg) VALUES ('bad', '{\"bogus\": 1}')", "22023"),
        ("INSERT INTO knowledge.chunk_configs (name, cfg) VALUES ('bad', '{\"max_size\": -3}')", "22023"),
        ("INSERT INTO knowledge.chunk_configs (name, model) VALUES ('bad', 'no-such-model')", "42704"),
        ("INSERT INTO knowledge.documents (content, chunk_config) VALUES ('x', 'no-such-config')", "23503"),
        ("SELECT knowledge.rechunk(123456789)", "P0002"),
        ("SELECT knowledge.rechunk_all('no-such-config')", "42704"),
        ("SELECT knowledge.begin_load('no-such-config')", "42704"),
        ("SELECT knowledge.end_load('no-such-config')", "42704"),
        ("SELECT * FROM knowledge.search('bees', 5, '{\"mode\": \"psychic\"}')", "22023"),
        ("SELECT * FROM knowledge.search('bees', 5, '{\"colour\": 1}')", "22023"),
        ("SELECT * FROM knowledge.search('bees', 0)", "22023"),
        ("SELECT * FROM knowledge.search('bees', 5, '{\"min_score\": \"high\"}')", "22023"),
        ("SELECT * FROM knowledge.search('bees', 5, '{\"mode\": \"text\", \"min_score\": 0.5}')", "22023"),
        ("SELECT * FROM knowledge.search('bees', 5, '{\"config\": \"nope\"}')", "42704"),
        ("SELECT knowledge.attach('pg_class', 'nope', 'relname')", "42703"),
        ("SELECT knowledge.detach('pg_class')", "42704"),
        ("SELECT * FROM knowledge.search('bees')", "00000"),
    ];
    for (query, code) in cases {
        assert_eq!(sqlstate_of(&mut client, query), code, "{query}");
    }
}

#[test]
fn attach_mirrors_a_table_with_an_awkward_name() {
    let mut client = store_database("attach");
    client
        .batch_execute(
            r#"CREATE TABLE "Weird Table" ("Doc ID" int PRIMARY KEY, "Body Text" text, other int);
               INSERT INTO "Weird Table" VALUES (1, 'Bees cluster in winter. The queen stays warm.', 0),
                                                (2, NULL, 0),
                                                (3, 'Volcanoes erupt. Lava cools into basalt.', 0);"#,
        )
        .unwrap();
    let mirrored: i64 =
        client.query_one(r#"SELECT knowledge.attach('"Weird Table"', 'Doc ID', 'Body Text')"#, &[]).unwrap().get(0);
    assert_eq!(mirrored, 2, "rows with text are mirrored at attach");
    client
        .batch_execute(
            r#"INSERT INTO "Weird Table" VALUES (4, 'Glaciers carve valleys. Their ice is old.', 0);
               UPDATE "Weird Table" SET "Body Text" = 'Sourdough rises slowly. Feed the starter.' WHERE "Doc ID" = 1;
               UPDATE "Weird Table" SET "Body Text" = 'Now it has text.' WHERE "Doc ID" = 2;
               UPDATE "Weird Table" SET other = 5 WHERE "Doc ID" = 3;
               DELETE FROM "Weird Table" WHERE "Doc ID" = 3;"#,
        )
        .unwrap();
    let rows = client
        .query("SELECT source, source_key, content FROM knowledge.documents WHERE attachment_id IS NOT NULL ORDER BY source_key", &[])
        .unwrap();
    let got: Vec<(String, String, String)> = rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    assert_eq!(
        got,
        [
            ("\"Weird Table\"".to_string(), "1".to_string(), "Sourdough rises slowly. Feed the starter.".to_string()),
            ("\"Weird Table\"".to_string(), "2".to_string(), "Now it has text.".to_string()),
            ("\"Weird Table\"".to_string(), "4".to_string(), "Glaciers carve valleys. Their ice is old.".to_string()),
        ]
    );
    assert_store_exact(&mut client, "mirrored table");
    assert_eq!(sqlstate_of(&mut client, r#"SELECT knowledge.attach('"Weird Table"', 'Doc ID', 'Body Text')"#), "42710");

    let deleted: i64 = client.query_one(r#"SELECT knowledge.detach('"Weird Table"')"#, &[]).unwrap().get(0);
    assert_eq!(deleted, 3);
    client.batch_execute(r#"INSERT INTO "Weird Table" VALUES (5, 'Not mirrored any more.', 0)"#).unwrap();
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.documents"), 0);
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.chunks"), 0);

    // Attached again, the table's rows come back; a TRUNCATE of it empties its documents.
    let mirrored: i64 =
        client.query_one(r#"SELECT knowledge.attach('"Weird Table"', 'Doc ID', 'Body Text')"#, &[]).unwrap().get(0);
    assert_eq!(mirrored, 4);
    client.batch_execute(r#"TRUNCATE "Weird Table""#).unwrap();
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.documents"), 0);
}

/// A partitioned table's rows are mirrored through its partitions, whose triggers fire with a
/// partition as their table (mirror_document accepts a partition of the attached table).
#[test]
fn attach_mirrors_a_partitioned_table() {
    let mut client = store_database("attach_partitioned");
    client
        .batch_execute(
            "CREATE TABLE notes (id int PRIMARY KEY, body text) PARTITION BY RANGE (id);
             CREATE TABLE notes_low PARTITION OF notes FOR VALUES FROM (0) TO (100);
             CREATE TABLE notes_high PARTITION OF notes FOR VALUES FROM (100) TO (200);
             INSERT INTO notes VALUES (1, 'Bees cluster in winter. The queen stays warm.');",
        )
        .unwrap();
    let mirrored: i64 = client.query_one("SELECT knowledge.attach('notes', 'id', 'body')", &[]).unwrap().get(0);
    assert_eq!(mirrored, 1);
    client
        .batch_execute(
            "INSERT INTO notes VALUES (150, 'Volcanoes erupt. Lava cools into basalt.'), (2, 'Glaciers carve valleys.');
             UPDATE notes SET body = 'Sourdough rises slowly. Feed the starter.' WHERE id = 1;
             DELETE FROM notes_low WHERE id = 2;",
        )
        .unwrap();
    let rows =
        client.query("SELECT source_key, content FROM knowledge.documents ORDER BY source_key::int", &[]).unwrap();
    let got: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got,
        [
            ("1".to_string(), "Sourdough rises slowly. Feed the starter.".to_string()),
            ("150".to_string(), "Volcanoes erupt. Lava cools into basalt.".to_string()),
        ]
    );
    assert_store_exact(&mut client, "mirrored partitioned table");
    client.batch_execute("TRUNCATE notes").unwrap();
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.documents"), 0);
}

#[test]
fn four_concurrent_writers_end_with_exactly_the_expected_chunks() {
    let mut client = store_database("concurrent");
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            thread::spawn(move || {
                let mut client = connect_database("concurrent");
                for i in 0..100 {
                    let doc = topic_document(writer * 100 + i);
                    client.execute("INSERT INTO knowledge.documents (content, metadata) VALUES ($1, jsonb_build_object('writer', $2::int))", &[&doc, &(writer as i32)]).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("a writer failed");
    }
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.documents"), 400);
    assert_eq!(count(&mut client, "SELECT count(DISTINCT document_id) FROM knowledge.chunks"), 400);
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.embedding_runs"), 1, "one run shared by all writers");
    assert_store_exact(&mut client, "after 4 concurrent writers");
}

/// Per store table: its name, row count and the md5 of all its rows, to compare two databases.
fn store_contents(client: &mut Client) -> Vec<String> {
    [
        ("chunk_configs", "knowledge.chunk_configs"),
        ("documents", "knowledge.documents"),
        ("embedding_runs", "knowledge.embedding_runs"),
        ("chunks", "knowledge.chunks"),
        ("languages", "knowledge.languages"),
    ]
        .iter()
        .map(|(table, rows)| {
            client
                .query_one(&format!("SELECT '{table}: ' || count(*) || ' rows, md5 ' || md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) FROM {rows} AS t"), &[])
                .unwrap()
                .get(0)
        })
        .collect()
}

#[test]
fn pg_dump_and_restore_keep_every_document_and_chunk() {
    // A changed default config is dumped and restored in place of the installed one.
    let mut client = fresh_database("dump");
    client
        .batch_execute("UPDATE knowledge.chunk_configs SET cfg = '{\"max_size\": 400}', description = 'changed' WHERE name = 'default';
                        INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('small', '{\"strategy\": \"fixed\", \"max_size\": 150}', 'potion-base-8m')")
        .unwrap();
    for i in 0..6 {
        insert_document(&mut client, &topic_document(i));
    }
    let original = store_contents(&mut connect_database("dump"));
    // An empty database to restore into (the dump creates the schema and both extensions).
    fresh_database("restored")
        .batch_execute("DROP EXTENSION pg_chunk; DROP EXTENSION vector; DROP SCHEMA knowledge")
        .unwrap();

    let bin = server_dir(&mut client, "BINDIR");
    let dump = std::env::temp_dir().join(format!("pg_chunk_dump_{}.dump", std::process::id()));
    let status = Command::new(format!("{bin}/pg_dump"))
        .args(["-Fc", "-f"])
        .arg(&dump)
        .arg(connection_string("pg_chunk_test_dump"))
        .status()
        .unwrap();
    assert!(status.success(), "pg_dump failed");
    let restore = |database: &str, options: &str| {
        Command::new(format!("{bin}/pg_restore"))
            .env("PGOPTIONS", options)
            .args(["--exit-on-error", "-d"])
            .arg(connection_string(database))
            .arg(&dump)
            .output()
            .unwrap()
    };
    let output = restore("pg_chunk_test_restored", "-c pg_chunk.maintain_chunks=off");
    // Without the setting the dumped default config meets the installed one, and the restore
    // stops there, saying so.
    fresh_database("restored_on")
        .batch_execute("DROP EXTENSION pg_chunk; DROP EXTENSION vector; DROP SCHEMA knowledge")
        .unwrap();
    let refused = restore("pg_chunk_test_restored_on", "");
    std::fs::remove_file(&dump).ok();
    assert!(output.status.success(), "pg_restore: {}", String::from_utf8_lossy(&output.stderr));
    let refused_stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success()
            && refused_stderr.contains("duplicate key value violates unique constraint \"chunk_configs_pkey\""),
        "pg_restore without pg_chunk.maintain_chunks=off: {refused_stderr}"
    );

    let mut restored = connect_database("restored");
    assert_eq!(store_contents(&mut restored), original);
    // Each config's vector and text indexes are back (the extension script makes default's; the
    // other's are made as its chunk_configs row is restored).
    let indexes: i64 = restored
        .query_one("SELECT count(*) FROM pg_indexes, unnest(ARRAY['default', 'small']) AS c WHERE schemaname = 'knowledge' AND indexname IN (knowledge_internal.vector_index_name(c), knowledge_internal.text_index_name(c))", &[])
        .unwrap()
        .get(0);
    assert_eq!(indexes, 4, "vector and text indexes after restore");
    // The restored store keeps working: a new document gets chunks, ids continue.
    restored
        .batch_execute(
            "INSERT INTO knowledge.documents (content) VALUES ('Lighthouses guide ships. Their lamps turn.')",
        )
        .unwrap();
    assert_store_exact(&mut restored, "restored database after an insert");
}
