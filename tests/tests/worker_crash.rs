//! A background worker killed with SIGKILL in the middle of a batch: PostgreSQL resets every
//! backend and starts the worker again, and afterwards each document has exactly its chunks.
//! Alone in its test binary, because the reset also cuts every other connection to the server.

use pg_chunk_client_tests::{assert_store_exact, fresh_database, sample_document, wait_for_worker};
use postgres::{Client, NoTls};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

const DATABASE: &str = "worker_crash";

fn count(client: &mut Client, query: &str) -> i64 {
    client.query_one(query, &[]).unwrap().get(0)
}

/// Connects again once the server accepts connections after its reset.
fn reconnect() -> Client {
    let started = Instant::now();
    loop {
        let params = pg_chunk_client_tests::connection_string(&format!("pg_chunk_test_{DATABASE}"));
        match Client::connect(&params, NoTls) {
            Ok(client) => return client,
            Err(e) if started.elapsed() < Duration::from_secs(120) => {
                let _ = e;
                thread::sleep(Duration::from_millis(250));
            }
            Err(e) => panic!("the server did not come back in 2 minutes: {e}"),
        }
    }
}

#[test]
fn a_worker_killed_mid_batch_leaves_every_document_with_exactly_its_chunks() {
    let mut client = fresh_database(DATABASE);
    wait_for_worker(&mut client);
    // The transformer model, so that a batch takes long enough to be caught in the middle.
    client
        .batch_execute(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, mode) VALUES ('later', 'async');",
        )
        .unwrap();
    let sample = sample_document();
    for i in 0..48 {
        client
            .execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&format!("Copy {i}. {sample}")])
            .unwrap();
    }
    // Wait until the worker is inside process_queue with documents in hand.
    let started = Instant::now();
    let pid: i32 = loop {
        let busy = client
            .query(
                "SELECT a.pid FROM pg_stat_activity AS a, knowledge.queue_status AS s
                 WHERE a.backend_type = 'pg_chunk worker' AND a.datname = current_database() AND a.state = 'active' AND s.in_progress > 0",
                &[],
            )
            .unwrap();
        if let Some(row) = busy.first() {
            break row.get(0);
        }
        assert!(started.elapsed() < Duration::from_secs(120), "the worker never started a batch");
        thread::sleep(Duration::from_millis(20));
    };
    let done_before = count(&mut client, "SELECT count(*) FROM knowledge.queue WHERE done_at IS NOT NULL");
    let killed = Command::new("kill").args(["-KILL", &pid.to_string()]).status().expect("running kill");
    assert!(killed.success(), "kill -KILL {pid}");
    drop(client);
    thread::sleep(Duration::from_secs(1));
    let mut client = reconnect();
    assert!(done_before < 48, "killed before the queue drained ({done_before} of 48 done)");
    wait_for_worker(&mut client);
    let drained: bool = client.query_one("SELECT knowledge.wait_for_queue('5 min')", &[]).unwrap().get(0);
    assert!(drained, "the queue did not drain after the restart");
    assert_eq!(count(&mut client, "SELECT count(DISTINCT document_id) FROM knowledge.chunks"), 48);
    assert_store_exact(&mut client, "after a worker was killed mid-batch");
    assert_eq!(count(&mut client, "SELECT failed FROM knowledge.queue_status"), 0);
}
