//! Asynchronous ingestion over real connections, with the background worker the test setup
//! configures for database pg_chunk_test_queue (scripts/test.sh: pg_chunk.worker_databases).
//! The tests share that database, so they run one at a time.

use pg_chunk_client_tests::{
    assert_store_exact, connect_database, fresh_database, prose_paragraphs, topic_document, wait_for_worker,
};
use postgres::Client;
use std::sync::Mutex;
use std::thread;

const DATABASE: &str = "queue";

/// Held by each test: they recreate the one database the worker serves.
static SERIAL: Mutex<()> = Mutex::new(());

fn count(client: &mut Client, query: &str) -> i64 {
    client.query_one(query, &[]).unwrap().get(0)
}

/// The queue database made afresh (the caller holds SERIAL), its worker connected, the default
/// config inactive and `configs` (`(name, model, mode)` rows of SQL) added.
fn queue_database(configs: &str) -> Client {
    let mut client = fresh_database(DATABASE);
    wait_for_worker(&mut client);
    client
        .batch_execute(&format!(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES {configs};"
        ))
        .unwrap();
    client
}

fn wait_for_queue(client: &mut Client) {
    let drained: bool = client.query_one("SELECT knowledge.wait_for_queue('5 min')", &[]).unwrap().get(0);
    let status: String =
        client.query_one("SELECT row_to_json(s)::text FROM knowledge.queue_status AS s", &[]).unwrap().get(0);
    assert!(drained, "the queue did not drain in 5 minutes: {status}");
}

#[test]
fn five_hundred_async_documents_drain_to_the_sync_result() {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // Two configs alike but for the mode: each document is chunked at once by one and queued
    // for the other.
    let mut client = queue_database("('now', 'potion-base-8m', 'sync'), ('later', 'potion-base-8m', 'async')");
    for i in 0..500 {
        client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    assert!(
        count(&mut client, "SELECT count(DISTINCT document_id) FROM knowledge.chunks WHERE chunk_config = 'now'")
            == 500
    );
    wait_for_queue(&mut client);
    assert_eq!(
        count(&mut client, "SELECT count(DISTINCT document_id) FROM knowledge.chunks WHERE chunk_config = 'later'"),
        500
    );
    let differing = "SELECT count(*) FROM knowledge.chunks AS n FULL JOIN knowledge.chunks AS l
                     ON l.document_id = n.document_id AND l.chunk_index = n.chunk_index AND l.chunk_config = 'later'
                     WHERE (n.chunk_config = 'now' OR n.id IS NULL) AND (l.chunk_config = 'later' OR l.id IS NULL)
                       AND (n.id IS NULL OR l.id IS NULL OR (n.content, n.char_offset, n.char_length, n.token_count, n.metadata, n.embedding::text)
                            IS DISTINCT FROM (l.content, l.char_offset, l.char_length, l.token_count, l.metadata, l.embedding::text))";
    assert_eq!(count(&mut client, differing), 0, "async chunks equal the sync config's, embeddings included");
    assert_store_exact(&mut client, "after the queue drained");
    assert_eq!(count(&mut client, "SELECT failed FROM knowledge.queue_status"), 0);
    assert_eq!(count(&mut client, "SELECT done_last_minute FROM knowledge.queue_status"), 500);
}

#[test]
fn a_commit_wakes_the_worker_long_before_its_naptime() {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut client = queue_database("('later', 'potion-base-8m', 'async')");
    let naptime: String = client.query_one("SHOW pg_chunk.worker_naptime", &[]).unwrap().get(0);
    assert_eq!(naptime, "10s", "the default, which this test relies on");
    // Let the worker go back to sleep after the config's (empty) rechunk, then queue one
    // document: without the NOTIFY the worker would sleep up to 10 s more.
    std::thread::sleep(std::time::Duration::from_secs(1));
    client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(1)]).unwrap();
    let drained: bool = client.query_one("SELECT knowledge.wait_for_queue('5 s')", &[]).unwrap().get(0);
    assert!(drained, "the worker was not woken by the commit");
    assert_store_exact(&mut client, "after one woken batch");
}

#[test]
fn updates_and_deletes_racing_the_worker_end_consistent() {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut client = queue_database("('race', 'potion-base-8m', 'async')");
    // One connection inserts while two others update and delete documents already inserted,
    // as the worker takes them.
    let inserter = thread::spawn(|| {
        let mut client = connect_database(DATABASE);
        for i in 0..300 {
            client
                .execute(
                    "INSERT INTO knowledge.documents (id, content) OVERRIDING SYSTEM VALUE VALUES ($1, $2)",
                    &[&(i as i64), &topic_document(i)],
                )
                .unwrap();
        }
    });
    let changers: Vec<_> = (0..2)
        .map(|changer| {
            thread::spawn(move || {
                let mut client = connect_database(DATABASE);
                let (mut updated, mut deleted) = (0, 0);
                for round in 0..3 {
                    for i in (changer..300).step_by(2) {
                        let id = i as i64;
                        if i % 7 == 3 && round == 2 {
                            deleted += client.execute("DELETE FROM knowledge.documents WHERE id = $1", &[&id]).unwrap();
                        } else {
                            let content = topic_document(1000 * (round + 1) + i);
                            updated += client
                                .execute("UPDATE knowledge.documents SET content = $2 WHERE id = $1", &[&id, &content])
                                .unwrap();
                        }
                    }
                }
                (updated, deleted)
            })
        })
        .collect();
    inserter.join().expect("the inserter failed");
    let (mut updated, mut deleted) = (0, 0);
    for changer in changers {
        let (u, d) = changer.join().expect("a changer failed");
        updated += u;
        deleted += d;
    }
    assert!(updated > 0 && deleted > 0, "the changers raced the inserts: {updated} updates, {deleted} deletes");
    wait_for_queue(&mut client);
    let remaining = count(&mut client, "SELECT count(*) FROM knowledge.documents");
    assert_eq!(remaining, 300 - deleted as i64);
    assert_eq!(
        count(&mut client, "SELECT count(DISTINCT document_id) FROM knowledge.chunks"),
        remaining,
        "every remaining document has chunks"
    );
    assert_store_exact(&mut client, "after updates and deletes raced the worker");
    assert_eq!(count(&mut client, "SELECT failed FROM knowledge.queue_status"), 0);
}

#[test]
fn the_worker_reuses_vectors_as_a_sync_write_does() {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut client = queue_database("('later', 'all-minilm-l6-v2', 'async')");
    let mut paragraphs: Vec<String> = prose_paragraphs().into_iter().take(30).collect();
    client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&paragraphs.join("\n\n")]).unwrap();
    wait_for_queue(&mut client);
    let inserted: i32 = client
        .query_one("SELECT vectors_embedded FROM knowledge.embedding_writes ORDER BY id DESC LIMIT 1", &[])
        .unwrap()
        .get(0);
    paragraphs[15] =
        "Lighthouse keepers once trimmed the wicks every night. Their logbooks recorded each passing ship.".to_string();
    client.execute("UPDATE knowledge.documents SET content = $1", &[&paragraphs.join("\n\n")]).unwrap();
    wait_for_queue(&mut client);
    let row = client.query_one("SELECT vectors_embedded, vectors_reused, chunks_kept FROM knowledge.embedding_writes ORDER BY id DESC LIMIT 1", &[]).unwrap();
    let (embedded, reused, kept): (i32, i32, i32) = (row.get(0), row.get(1), row.get(2));
    // Two new sentences and the few chunks around them, against everything at the insert.
    assert!(
        embedded <= 8 && reused > 0 && kept > 0,
        "the edit embedded {embedded}, reused {reused}, kept {kept}; the insert embedded {inserted}"
    );
    assert!(inserted > 50, "{inserted}");
    assert_store_exact(&mut client, "after the worker wrote an edit");
}
