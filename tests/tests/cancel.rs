//! Cancelling: a statement_timeout or pg_cancel_backend stops chunking a 5 MB document with the
//! transformer model within a second, with SQLSTATE 57014, and the connection lives on.
//!
//! One test runs every case in turn, so that no other statement of this binary competes for the
//! two cores while a stop is timed.

use pg_chunk_client_tests::connect;
use postgres::Client;
use std::thread;
use std::time::{Duration, Instant};

const MODEL: &str = "all-minilm-l6-v2";
/// How long a cancelled statement may take to stop (the issue's bound).
const STOP_WITHIN: Duration = Duration::from_secs(1);

/// 5 MB of sentences that all differ, so that neither the embedding cache nor repetition
/// shortens the work.
fn five_megabytes() -> String {
    let words = ["bees", "lava", "bread", "vacuum", "glaciers", "rivers", "engines", "orchards", "comets", "ledgers"];
    let mut doc = String::with_capacity(5 << 20);
    let mut i = 0usize;
    while doc.len() < 5 << 20 {
        doc.push_str(&format!("Note {i} says {} and {} meet {} times. ", words[i % 10], words[(i / 10) % 10], i % 97));
        if i % 7 == 6 {
            doc.push_str("\n\n");
        }
        i += 1;
    }
    doc
}

/// A connection with the model already loaded, so that only chunking is timed.
fn warm_connection() -> Client {
    let mut client = connect();
    client.batch_execute(&format!("SELECT knowledge.embed('warm up', '{MODEL}')")).unwrap();
    client
}

fn assert_canceled(result: Result<Vec<postgres::Row>, postgres::Error>, what: &str) {
    let err = result.expect_err(what);
    assert_eq!(err.code().map(|c| c.code()), Some("57014"), "{what}: {err}");
}

#[test]
fn statement_timeout_and_cancel_stop_chunking_within_a_second() {
    let doc = five_megabytes();
    let cases = [
        (
            "semantic_chunk",
            "SELECT count(*) FROM knowledge.semantic_chunk($1, $2::text::jsonb)",
            format!(r#"{{"model": "{MODEL}"}}"#),
        ),
        // Token sizes: the tokenizer, not inference, is the long work here.
        (
            "recursive in tokens",
            "SELECT count(*) FROM knowledge.chunk($1, $2::text::jsonb)",
            format!(
                r#"{{"strategy": "recursive", "model": "{MODEL}", "max_size": "256 tokens", "min_size": "20 tokens"}}"#
            ),
        ),
    ];
    for (name, sql, cfg) in &cases {
        let mut client = warm_connection();
        client.batch_execute("SET statement_timeout = '200ms'").unwrap();
        let started = Instant::now();
        assert_canceled(client.query(*sql, &[&doc, &cfg]), name);
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(200) + STOP_WITHIN,
            "{name}: statement_timeout 200ms stopped after {took:?}"
        );
        println!("{name}: statement_timeout 200ms stopped it after {took:?}");
        client.batch_execute("RESET statement_timeout").unwrap();
        assert_eq!(client.query_one("SELECT 1", &[]).unwrap().get::<_, i32>(0), 1, "{name}: the connection survives");

        let mut client = warm_connection();
        let pid: i32 = client.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
        let (doc, sql, cfg) = (doc.clone(), sql.to_string(), cfg.clone());
        let running = thread::spawn(move || {
            let result = client.query(&sql, &[&doc, &cfg]);
            (result, Instant::now(), client)
        });
        thread::sleep(Duration::from_millis(500));
        let mut other = connect();
        let cancelled_at = Instant::now();
        assert!(other.query_one("SELECT pg_cancel_backend($1)", &[&pid]).unwrap().get::<_, bool>(0));
        let (result, stopped_at, mut client) = running.join().unwrap();
        assert_canceled(result, name);
        let took = stopped_at.saturating_duration_since(cancelled_at);
        assert!(took < STOP_WITHIN, "{name}: pg_cancel_backend stopped it after {took:?}");
        assert_eq!(client.query_one("SELECT 1", &[]).unwrap().get::<_, i32>(0), 1, "{name}: the connection survives");
        println!("{name}: stopped {took:?} after pg_cancel_backend");
    }
}
