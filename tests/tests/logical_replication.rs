//! Logical replication (docs/operations.md, "Logical replication"). Document writes work under a
//! FOR ALL TABLES publication, which needs a replica identity on every table that is written;
//! and the page's two recipes, each with a publisher and a subscriber of the test server's
//! version beside it: (a) the whole store replicated, whose subscriber answers searches as the
//! publisher does and leaves the replicated queue to the publisher; (b) documents alone, which
//! the subscriber chunks and embeds itself.

use pg_chunk_client_tests::clusters::{wait_until, Clusters};
use pg_chunk_client_tests::{assert_store_exact, connect, fresh_database, server_dir, topic_document};
use postgres::Client;
use std::time::Duration;

const WHOLE_PUBLISHER_PORT: u16 = 5496;
const WHOLE_SUBSCRIBER_PORT: u16 = 5497;
const DOCUMENTS_PUBLISHER_PORT: u16 = 5498;
const DOCUMENTS_SUBSCRIBER_PORT: u16 = 5499;

const SEARCH: &str = "how do bees keep warm in winter";

/// The extension's permanent tables that have no replica identity: a FOR ALL TABLES
/// publication refuses their updates and deletes. Unlogged tables are never published.
const WITHOUT_REPLICA_IDENTITY: &str = "
    SELECT c.oid::regclass::text FROM pg_depend AS d
    JOIN pg_class AS c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
    WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_chunk')
      AND c.relkind IN ('r', 'p') AND c.relpersistence = 'p'
      AND NOT (c.relreplident = 'f'
               OR (c.relreplident = 'd' AND EXISTS (SELECT FROM pg_index AS i WHERE i.indrelid = c.oid AND i.indisprimary))
               OR (c.relreplident = 'i' AND EXISTS (SELECT FROM pg_index AS i WHERE i.indrelid = c.oid AND i.indisreplident)))
    ORDER BY 1";

#[test]
fn every_table_has_a_replica_identity_and_writes_work_under_a_publication() {
    let mut client = fresh_database("logical_writes");
    let missing: Vec<String> =
        client.query(WITHOUT_REPLICA_IDENTITY, &[]).unwrap().iter().map(|row| row.get(0)).collect();
    assert!(missing.is_empty(), "tables without a replica identity: {missing:?}");

    // wal_level need not be logical: the replica identity is checked at every write.
    let write = |client: &mut Client, sql: &str| {
        client.batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {}", pg_chunk_client_tests::describe_error(&e)))
    };
    write(&mut client, "SET client_min_messages = error; CREATE PUBLICATION everything FOR ALL TABLES");
    write(&mut client, "UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default'");
    // One transaction each: BM25's statistics fold a lexeme's rows (deleting them) from its
    // eighth commit on.
    for i in 0..10 {
        client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    write(&mut client, "UPDATE knowledge.documents SET content = content || ' Bees again.' WHERE id = 1");
    write(&mut client, "DELETE FROM knowledge.documents WHERE id = 2");
    write(&mut client, "SELECT knowledge.rechunk(3), knowledge.rechunk_all('default')");
    write(
        &mut client,
        "CREATE TABLE notes (id int PRIMARY KEY, body text);
         INSERT INTO notes VALUES (1, 'Glaciers carve valleys.'), (2, 'Volcanoes erupt.');
         SELECT knowledge.attach('notes', 'id', 'body');
         UPDATE notes SET body = 'Glaciers carve U-shaped valleys.' WHERE id = 1;
         DELETE FROM notes WHERE id = 2;",
    );
    write(
        &mut client,
        "INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES ('later', 'potion-base-8m', 'async')",
    );
    write(&mut client, "SELECT knowledge.process_queue(100)");
    write(&mut client, "UPDATE knowledge.chunk_configs SET cfg = '{\"max_size\": 200}' WHERE name = 'default'");
    write(&mut client, "UPDATE knowledge.chunk_configs SET name = 'afterwards' WHERE name = 'later'");
    write(
        &mut client,
        "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension)
         SELECT 'potion-copy', kind, model_file, tokenizer_file, dimension FROM knowledge.models WHERE name = 'potion-base-8m';
         UPDATE knowledge.chunk_configs SET model = 'potion-copy' WHERE name = 'afterwards';
         SELECT knowledge.process_queue(100);",
    );
    write(&mut client, "SELECT knowledge.detach('notes')");
    write(&mut client, "DELETE FROM knowledge.chunk_configs WHERE name = 'afterwards'");
    write(&mut client, "DELETE FROM knowledge.models WHERE name = 'potion-copy'");
    write(&mut client, "SELECT knowledge.rebuild_text_stats()");
    assert_store_exact(&mut client, "after the writes under a publication");
    write(&mut client, "TRUNCATE knowledge.documents CASCADE");
}

/// A publisher and a subscriber of the test server's version, with pg_chunk preloaded; the
/// subscriber's worker serves database `store` and looks at its queue every second.
fn publisher_and_subscriber(clusters: &Clusters, publisher_port: u16, subscriber_port: u16) -> (Client, Client) {
    let bin = server_dir(&mut connect(), "BINDIR");
    clusters.init("publisher", &bin, publisher_port, "wal_level = logical");
    clusters.init(
        "subscriber",
        &bin,
        subscriber_port,
        "pg_chunk.worker_databases = 'store'\npg_chunk.worker_naptime = 1",
    );
    for name in ["publisher", "subscriber"] {
        clusters.start(name);
        clusters.connect(name, "postgres").batch_execute("CREATE DATABASE store").unwrap();
        clusters
            .connect(name, "store")
            .batch_execute("SET client_min_messages = warning; CREATE EXTENSION pg_chunk CASCADE")
            .unwrap();
    }
    (clusters.connect("publisher", "store"), clusters.connect("subscriber", "store"))
}

/// What `query` gives on `client`, as one text.
fn answer(client: &mut Client, query: &str) -> String {
    client.query_one(&format!("SELECT ({query})::text"), &[]).unwrap().get::<_, Option<String>>(0).unwrap_or_default()
}

/// The search results of each config, chunk ids left out when `with_ids` is false (a subscriber
/// that writes chunks itself numbers them itself).
fn searches(client: &mut Client, with_ids: bool) -> String {
    let columns = if with_ids { "s.chunk_id, " } else { "" };
    answer(
        client,
        &format!(
            "SELECT string_agg(c.name || ': ' || (
                 SELECT string_agg(concat_ws(' ', {columns}s.document_id, s.chunk_index, round(s.score::numeric, 6), s.content), E'\\n'
                                   ORDER BY s.score DESC, s.document_id, s.chunk_index)
                 FROM knowledge.search('{SEARCH}', 5, jsonb_build_object('config', c.name)) AS s), E'\\n' ORDER BY c.name)
             FROM knowledge.chunk_configs AS c"
        ),
    )
}

/// Everything recipe (a) replicates, and the indexes the subscriber builds itself, as text.
fn whole_store(client: &mut Client) -> Vec<String> {
    let mut state: Vec<String> = [
        "SELECT string_agg(format('%s %s %s %s', id, md5(content), language, chunk_config), ', ' ORDER BY id) FROM knowledge.documents",
        "SELECT string_agg(format('%s %s %s %s', id, document_id, chunk_config, md5(embedding::text)), ', ' ORDER BY id) FROM knowledge.chunks",
        "SELECT string_agg(format('%s %s %s %s', chunk_config, lexeme, chunks, occurrences), ', ' ORDER BY chunk_config, lexeme, id) FROM knowledge_internal.text_stats",
        "SELECT string_agg(format('%s %s %s', name, model, effective_cfg), ', ' ORDER BY name) FROM knowledge.chunk_configs",
        "SELECT string_agg(format('%s %s %s %s %s %s', document_id, chunk_config, attempts, not_before, last_error, done_at), ', '
                           ORDER BY document_id, chunk_config) FROM knowledge.queue",
        "SELECT string_agg(indexdef, E'\\n' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'knowledge' AND tablename = 'chunks'",
    ]
    .iter()
    .map(|query| answer(client, query))
    .collect();
    state.push(searches(client, true));
    state
}

/// Waits until the subscriber holds what `state` shows of the publisher.
fn caught_up(
    clusters: &Clusters,
    subscriber: &mut Client,
    publisher: &mut Client,
    state: fn(&mut Client) -> Vec<String>,
    what: &str,
) {
    // Until every table's first copy is done the subscriber may lack rows a query needs (the
    // models of a config, say) and raise an error rather than differ.
    wait_until(&format!("{what}: every table copied"), Duration::from_secs(30), || {
        subscriber
            .query_one("SELECT count(*) FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')", &[])
            .unwrap()
            .get::<_, i64>(0)
            == 0
    });
    let want = state(publisher);
    let mut got = Vec::new();
    let mut subscriber_state = || {
        got = state(subscriber);
        got == want
    };
    let started = std::time::Instant::now();
    while !subscriber_state() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{what}: the subscriber has\n{got:#?}\nthe publisher\n{want:#?}\nthe subscriber's errors: {:#?}",
            errors_in_log(clusters, "subscriber")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn errors_in_log(clusters: &Clusters, name: &str) -> Vec<String> {
    clusters.log(name).lines().filter(|l| l.contains("ERROR")).map(str::to_string).collect()
}

#[test]
fn recipe_whole_store_subscriber_searches_as_the_publisher_and_leaves_its_queue() {
    let clusters = Clusters::new("logical_whole");
    let (mut publisher, mut subscriber) =
        publisher_and_subscriber(&clusters, WHOLE_PUBLISHER_PORT, WHOLE_SUBSCRIBER_PORT);
    // The publisher has no worker: its queue waits for knowledge.process_queue below.
    publisher
        .batch_execute("UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default'")
        .unwrap();
    for i in 0..3 {
        publisher.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    publisher.batch_execute("CREATE PUBLICATION store FOR ALL TABLES").unwrap();

    // The recipe: the publisher's rows replace the ones CREATE EXTENSION made.
    subscriber.batch_execute("DELETE FROM knowledge.chunk_configs; DELETE FROM knowledge.models").unwrap();
    subscriber
        .batch_execute(&format!(
            "CREATE SUBSCRIPTION store CONNECTION '{}' PUBLICATION store",
            clusters.connection_string("publisher", "store")
        ))
        .unwrap();
    caught_up(&clusters, &mut subscriber, &mut publisher, whole_store, "the first sync");

    // A config made now: its rows arrive through the apply worker, which builds its indexes.
    publisher
        .batch_execute(
            "SET client_min_messages = error;
             INSERT INTO knowledge.chunk_configs (name, model, mode, cfg) VALUES ('later', 'potion-base-8m', 'async', '{\"max_size\": 200}')",
        )
        .unwrap();
    publisher.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(3)]).unwrap();
    publisher.batch_execute("UPDATE knowledge.documents SET content = content || ' Bees hum.' WHERE id = 1").unwrap();
    publisher.batch_execute("DELETE FROM knowledge.documents WHERE id = 2").unwrap();
    caught_up(&clusters, &mut subscriber, &mut publisher, whole_store, "documents queued on the publisher");
    let pending = "SELECT count(*) FROM knowledge.queue WHERE done_at IS NULL";
    let queued: i64 = subscriber.query_one(pending, &[]).unwrap().get(0);
    assert_eq!(queued, 3, "the documents of config later wait in the replicated queue");

    // The subscriber's worker, woken, and process_queue leave them to the publisher.
    wait_until("the subscriber's worker connects", Duration::from_secs(60), || {
        subscriber.query_one("SELECT workers FROM knowledge.queue_status", &[]).unwrap().get::<_, i64>(0) == 1
    });
    subscriber.batch_execute("NOTIFY pg_chunk_queue").unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(subscriber.query_one("SELECT knowledge.process_queue()", &[]).unwrap().get::<_, i32>(0), 0);
    assert_eq!(whole_store(&mut subscriber), whole_store(&mut publisher), "the queue untouched on the subscriber");

    // Once the publisher processes its queue, the subscriber has its chunks and an empty queue.
    assert_eq!(publisher.query_one("SELECT knowledge.process_queue()", &[]).unwrap().get::<_, i32>(0), 3);
    caught_up(&clusters, &mut subscriber, &mut publisher, whole_store, "the queue processed");
    assert!(subscriber.query_one("SELECT knowledge.wait_for_queue('10 s')", &[]).unwrap().get::<_, bool>(0));
    assert!(searches(&mut subscriber, true).contains("later: "), "config later searched");
    // A renamed config: the subscriber renames its indexes as the publisher did.
    publisher.batch_execute("UPDATE knowledge.chunk_configs SET name = 'afterwards' WHERE name = 'later'").unwrap();
    caught_up(&clusters, &mut subscriber, &mut publisher, whole_store, "a config renamed");
    assert_store_exact(&mut subscriber, "on the subscriber");
    assert_eq!(errors_in_log(&clusters, "subscriber"), Vec::<String>::new());
}

/// The documents (ids and contents), and the search results of the subscriber's configs (equal to
/// the publisher's), as text.
fn documents_and_searches(client: &mut Client) -> Vec<String> {
    vec![
        answer(
            client,
            "SELECT string_agg(format('%s %s', id, md5(content)), ', ' ORDER BY id) FROM knowledge.documents",
        ),
        searches(client, false),
    ]
}

#[test]
fn recipe_documents_only_subscriber_chunks_and_embeds_them_itself() {
    let clusters = Clusters::new("logical_documents");
    let (mut publisher, mut subscriber) =
        publisher_and_subscriber(&clusters, DOCUMENTS_PUBLISHER_PORT, DOCUMENTS_SUBSCRIBER_PORT);
    for client in [&mut publisher, &mut subscriber] {
        client
            .batch_execute("UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default'")
            .unwrap();
    }
    for i in 0..3 {
        publisher.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    publisher
        .batch_execute(
            "CREATE PUBLICATION documents FOR TABLE knowledge.documents WITH (publish = 'insert, update, delete')",
        )
        .unwrap();

    // The recipe: the subscriber's triggers fire for the apply worker too.
    let set: i32 = subscriber.query_one("SELECT knowledge.chunk_replicated_documents()", &[]).unwrap().get(0);
    assert_eq!(set, 8, "2 on documents, 3 of BM25's statistics, 3 cascades to chunks, queue and failed");
    // From 16 on, run_as_owner: applied as knowledge.documents' owner, knowledge_store, in a
    // security-restricted operation, the chunks could not be counted for BM25 (a deferred trigger).
    let from_16: bool =
        subscriber.query_one("SELECT current_setting('server_version_num')::int >= 160000", &[]).unwrap().get(0);
    subscriber
        .batch_execute(&format!(
            "CREATE SUBSCRIPTION documents CONNECTION '{}' PUBLICATION documents{}",
            clusters.connection_string("publisher", "store"),
            if from_16 { " WITH (run_as_owner = true)" } else { "" }
        ))
        .unwrap();
    caught_up(&clusters, &mut subscriber, &mut publisher, documents_and_searches, "the first sync");
    assert_store_exact(&mut subscriber, "after the first sync");

    publisher.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(3)]).unwrap();
    publisher.batch_execute("UPDATE knowledge.documents SET content = content || ' Bees hum.' WHERE id = 1").unwrap();
    publisher.batch_execute("DELETE FROM knowledge.documents WHERE id = 2").unwrap();
    caught_up(&clusters, &mut subscriber, &mut publisher, documents_and_searches, "an insert, an edit and a delete");
    assert_store_exact(&mut subscriber, "after an insert, an edit and a delete");
    assert_eq!(errors_in_log(&clusters, "subscriber"), Vec::<String>::new());

    // The undo leaves the triggers as CREATE EXTENSION made them.
    assert_eq!(
        subscriber.query_one("SELECT knowledge.chunk_replicated_documents(false)", &[]).unwrap().get::<_, i32>(0),
        8
    );
    let always: i64 = subscriber
        .query_one(
            "SELECT count(*) FROM pg_trigger WHERE tgenabled = 'A'
               AND tgrelid IN ('knowledge.documents'::regclass, 'knowledge.chunks'::regclass, 'knowledge_internal.text_stats_commits'::regclass)",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(always, 0);
}
