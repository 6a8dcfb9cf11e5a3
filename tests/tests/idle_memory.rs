//! What a backend holds once a large embedding's transaction has ended (src/heap.rs): the heap
//! glibc kept for the call is given back, so the backend's private memory (RssAnon of
//! /proc/<pid>/status: the test runs as root on the server's machine) returns to about what it
//! was with the model loaded; without the trim it stays several MB higher for potion-base-8m and
//! 2,000 sentences (bench/README.md, "Decisions", has what the trim saves).

use pg_chunk_client_tests::{connect_database, fresh_database, proc_status_kb, prose_paragraphs};

const DATABASE: &str = "idle_memory";
const MB: u64 = 1024;

/// 2,000 distinct sentences of real prose (each numbered, so none repeats).
fn sentences() -> Vec<String> {
    let paragraphs = prose_paragraphs();
    (0..2000).map(|i| format!("{} (note {i})", paragraphs[i % paragraphs.len()])).collect()
}

#[test]
fn a_backend_gives_back_a_large_calls_heap_when_its_transaction_ends() {
    drop(fresh_database(DATABASE));
    let mut client = connect_database(DATABASE);
    let pid: i32 = client.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    client.batch_execute("SET pg_chunk.embedding_cache_mb = 0; SELECT knowledge.embed('x', 'potion-base-8m')").unwrap();
    let loaded = proc_status_kb(pid, "RssAnon");

    let texts = sentences();
    let mut transaction = client.transaction().unwrap();
    let rows: i64 = transaction
        .query_one("SELECT count(*) FROM knowledge.embed_batch($1, 'potion-base-8m')", &[&texts])
        .unwrap()
        .get(0);
    assert_eq!(rows, 2000);
    let in_transaction = proc_status_kb(pid, "RssAnon");
    transaction.commit().unwrap();
    let idle = proc_status_kb(pid, "RssAnon");
    println!(
        "RssAnon: {} kB loaded, {} kB after embedding 2,000 sentences in the transaction, {} kB after it",
        loaded, in_transaction, idle
    );
    // The call's heap was really there (the check would prove nothing otherwise)...
    assert!(in_transaction >= loaded + 3 * MB, "embedding 2,000 sentences used under 3 MB of heap");
    // ...and is given back at commit.
    assert!(idle <= loaded + 3 * MB, "the backend kept {} kB of a finished call", idle - loaded);

    // A small call is not worth a trim; its heap is simply reused.
    client.batch_execute("SELECT knowledge.embed_batch(ARRAY['a', 'b'], 'potion-base-8m')").unwrap();
    assert!(proc_status_kb(pid, "RssAnon") <= idle + 3 * MB);
}
