//! Cancelling (docs/errors.md, "Guarantees"): a statement_timeout or pg_cancel_backend stops
//! knowledge.semantic_chunk, knowledge.chunk, knowledge.rechunk_all and an insert of a 5 MB
//! document within a second, with SQLSTATE 57014 and no Rust backtrace in the error, and the
//! connection lives on with its caches intact: it chunks a document afterwards exactly as a fresh
//! connection does.
//!
//! With the transformer, the cancel meets tokenizing or inference; with the model-free embedder
//! (no inference batches) it meets the chunking core's own loops: sentence splitting (a timeout
//! shorter than splitting takes), the lexical vectors and the optimal segmentation, or the
//! store's writes. The bound is generous on purpose: bench/cancel/run.sh measures how the delay
//! is distributed.
//!
//! One test runs every case in turn, in a database of its own, so that no other statement of
//! this binary competes for the two cores while a stop is timed.

use pg_chunk_client_tests::{connect_database, fresh_database, sample_document};
use postgres::{Client, SimpleQueryMessage};
use std::thread;
use std::time::{Duration, Instant};

const DATABASE: &str = "cancel";
const MINILM: &str = "all-minilm-l6-v2";
/// How long a cancelled statement may take to stop: the second docs/errors.md promises.
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

/// One statement to stop. It reads the 5 MB document from table `source` and is sent by the
/// simple query protocol: pg_stat_activity then shows it active only once the backend has read
/// it whole, and the backend reads nothing more from the client until it ends. (With the
/// extended protocol a cancel that lands between Parse, Bind and Execute, while the backend
/// reads the next message, is dropped by PostgreSQL, and the statement runs to its end.)
struct Case {
    name: &'static str,
    sql: String,
    /// The model the statement loads, loaded beforehand so that only the work is timed.
    model: &'static str,
    /// The statement_timeout that stops it.
    timeout: Duration,
    /// How long after its start (as pg_stat_activity shows it) pg_cancel_backend stops it.
    cancel_after: Duration,
}

/// A connection with `model` already loaded.
fn warm_connection(model: &str) -> Client {
    let mut client = connect_database(DATABASE);
    client.batch_execute("SET client_min_messages = warning").unwrap();
    client.execute("SELECT knowledge.embed('warm up', $1)", &[&model]).unwrap();
    client
}

fn assert_canceled(result: Result<Vec<SimpleQueryMessage>, postgres::Error>, what: &str) {
    let err = result.expect_err(what);
    let db = err.as_db_error().unwrap_or_else(|| panic!("{what}: not a server error: {err}"));
    assert_eq!(db.code().code(), "57014", "{what}: {db:?}");
    assert_eq!(db.detail(), None, "{what}: the error carries no Rust backtrace");
}

/// What a small document chunks to with the case's model: the same on a connection that was
/// just cancelled as on a fresh one, so no per-backend cache was left half written.
fn fingerprint(client: &mut Client, model: &str) -> String {
    let cfg = format!(r#"{{"model": "{model}", "max_size": 300}}"#);
    client
        .query_one(
            "SELECT string_agg(concat_ws(',', chunk_index, char_offset, char_length, token_count), ';' ORDER BY chunk_index)
             FROM knowledge.semantic_chunk($1, $2::text::jsonb)",
            &[&sample_document(), &cfg],
        )
        .unwrap()
        .get(0)
}

fn assert_survives(client: &mut Client, case: &Case, reference: &str) {
    client.batch_execute("RESET statement_timeout").unwrap();
    assert_eq!(
        client.query_one("SELECT 1", &[]).unwrap().get::<_, i32>(0),
        1,
        "{}: the connection survives",
        case.name
    );
    assert_eq!(fingerprint(client, case.model), reference, "{}: chunks as a fresh connection does", case.name);
}

#[test]
fn statement_timeout_and_cancel_stop_chunking_within_a_second() {
    let doc = five_megabytes();
    let mut setup = fresh_database(DATABASE);
    // The config rechunk_all and the insert work for, holding the document, written without
    // chunks (maintain_chunks off) so that rechunk_all has everything to do.
    setup
        .batch_execute(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('cancel', '{}', 'lexical');
             SET pg_chunk.maintain_chunks = off;",
        )
        .unwrap();
    setup.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&doc]).unwrap();
    setup.execute("CREATE TABLE source AS SELECT $1::text AS doc", &[&doc]).unwrap();
    let semantic = |cfg: &str| format!("SELECT count(*) FROM source, knowledge.semantic_chunk(doc, '{cfg}')");
    let chunk = |cfg: &str| format!("SELECT count(*) FROM source, knowledge.chunk(doc, '{cfg}')");
    let ms = Duration::from_millis;
    let cases = [
        Case {
            name: "semantic_chunk, transformer",
            sql: semantic(&format!(r#"{{"model": "{MINILM}"}}"#)),
            model: MINILM,
            timeout: ms(200),
            cancel_after: ms(500),
        },
        // Token sizes: the tokenizer, not inference, is the long work here.
        Case {
            name: "chunk, recursive in tokens",
            sql: chunk(&format!(
                r#"{{"strategy": "recursive", "model": "{MINILM}", "max_size": "256 tokens", "min_size": "20 tokens"}}"#
            )),
            model: MINILM,
            timeout: ms(200),
            cancel_after: ms(500),
        },
        // Splitting 5 MB takes tens of milliseconds: a shorter timeout stops it there.
        Case {
            name: "semantic_chunk, lexical, while splitting",
            sql: semantic(r#"{"model": "lexical"}"#),
            model: "lexical",
            timeout: ms(10),
            cancel_after: ms(5),
        },
        // After splitting (tens of ms) and the lexical vectors (a few hundred), the optimal
        // segmentation runs for most of a second.
        Case {
            name: "semantic_chunk, lexical, while segmenting",
            sql: semantic(r#"{"model": "lexical"}"#),
            model: "lexical",
            timeout: ms(600),
            cancel_after: ms(600),
        },
        Case {
            name: "chunk, fixed, with quality metadata",
            sql: chunk(r#"{"strategy": "fixed", "model": "lexical", "metadata": true, "filters": true}"#),
            model: "lexical",
            timeout: ms(300),
            cancel_after: ms(300),
        },
        Case {
            name: "rechunk_all",
            sql: "SELECT knowledge.rechunk_all('cancel')".to_string(),
            model: "lexical",
            timeout: ms(1500),
            cancel_after: ms(1500),
        },
        Case {
            name: "insert",
            sql: "INSERT INTO knowledge.documents (content) SELECT doc FROM source".to_string(),
            model: "lexical",
            timeout: ms(3000),
            cancel_after: ms(3000),
        },
    ];
    let mut references = std::collections::HashMap::new();
    for case in &cases {
        let name = case.name;
        let reference = references
            .entry(case.model)
            .or_insert_with(|| fingerprint(&mut warm_connection(case.model), case.model))
            .clone();

        let mut client = warm_connection(case.model);
        client.batch_execute(&format!("SET statement_timeout = {}", case.timeout.as_millis())).unwrap();
        let started = Instant::now();
        assert_canceled(client.simple_query(&case.sql), name);
        let took = started.elapsed();
        assert!(
            took < case.timeout + STOP_WITHIN,
            "{name}: statement_timeout {:?} stopped after {took:?}",
            case.timeout
        );
        println!("{name}: statement_timeout {:?} stopped it after {took:?}", case.timeout);
        assert_survives(&mut client, case, &reference);

        let mut client = warm_connection(case.model);
        let pid: i32 = client.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
        let running = {
            let sql = case.sql.clone();
            thread::spawn(move || {
                let result = client.simple_query(&sql);
                (result, Instant::now(), client)
            })
        };
        // A cancel that arrives while the backend still reads the statement is dropped: wait
        // until it runs it.
        let mut other = connect_database(DATABASE);
        let active = "SELECT state = 'active' AND query = $2 FROM pg_stat_activity WHERE pid = $1";
        while !other.query_one(active, &[&pid, &case.sql]).unwrap().get::<_, bool>(0) {
            thread::sleep(Duration::from_millis(1));
        }
        thread::sleep(case.cancel_after);
        let cancelled_at = Instant::now();
        assert!(other.query_one("SELECT pg_cancel_backend($1)", &[&pid]).unwrap().get::<_, bool>(0));
        let (result, stopped_at, mut client) = running.join().unwrap();
        assert_canceled(result, name);
        let took = stopped_at.saturating_duration_since(cancelled_at);
        assert!(took < STOP_WITHIN, "{name}: pg_cancel_backend stopped it after {took:?}");
        println!("{name}: stopped {took:?} after pg_cancel_backend");
        assert_survives(&mut client, case, &reference);
    }
    let documents: i64 = setup.query_one("SELECT count(*) FROM knowledge.documents", &[]).unwrap().get(0);
    assert_eq!(documents, 1, "the cancelled inserts left nothing");
}
