//! The database, the session and the server log.

use pg_chunk_client_tests::{sample_document, topic_document};
use postgres::Client;
use std::time::{Duration, Instant};

/// The cluster's log (Debian's `15 main`); PG_CHUNK_SERVER_LOG overrides it.
const SERVER_LOG: &str = "/var/log/postgresql/postgresql-15-main.log";

/// Retries `f` (which panics when the cluster is unreachable) for up to 3 minutes: another
/// process may be restarting the cluster.
pub(super) fn retrying<T>(what: &str, f: impl Fn() -> T) -> T {
    let started = Instant::now();
    loop {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(&f)) {
            Ok(value) => return value,
            Err(e) if started.elapsed() > Duration::from_secs(180) => std::panic::resume_unwind(e),
            Err(_) => {
                eprintln!("bad_input: {what} failed; the cluster may be restarting, retrying in 5 s");
                std::thread::sleep(Duration::from_secs(5));
            }
        }
    }
}

pub(super) fn prepare_session(client: &mut Client) {
    client
        .batch_execute(
            "SET client_min_messages = warning;
             SET pg_chunk.default_model = 'lexical';
             SET statement_timeout = '120s';",
        )
        .unwrap();
}

/// The store and tables the cases use: chunk configs `lex` (lexical) and `potion`
/// (potion-base-8m) over a few documents, the `default` config (MiniLM) inactive, models
/// registered against the wrong files or dimension, and tables to attach.
pub(super) fn prepare_database(client: &mut Client) {
    prepare_session(client);
    client
        .batch_execute(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, model) VALUES ('lex', 'lexical'), ('potion', 'potion-base-8m');
             INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension) VALUES
                 ('potion-384', 'static', 'potion-base-8m/model.safetensors', 'potion-base-8m/tokenizer.json', 384),
                 ('minilm-as-static', 'static', 'all-minilm-l6-v2/model.optimized.onnx', 'all-minilm-l6-v2/tokenizer.json', 384),
                 ('tok-swapped', 'static', 'potion-base-8m/model.safetensors', 'all-minilm-l6-v2/tokenizer.json', 256),
                 ('missing-file', 'static', 'no-such-model/model.safetensors', 'no-such-model/tokenizer.json', 256),
                 ('potion-as-onnx', 'transformer', 'potion-base-8m/model.safetensors', 'potion-base-8m/tokenizer.json', 256);
             INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension, optimize_graph) VALUES
                 ('minilm-256', 'transformer', 'all-minilm-l6-v2/model.optimized.onnx', 'all-minilm-l6-v2/tokenizer.json', 256, false);
             CREATE TABLE bad_src (id int PRIMARY KEY, body text);
             INSERT INTO bad_src VALUES
                 (1, 'Hello there. General Kenobi!'), (2, NULL), (3, ''), (4, '   '),
                 (5, '👩‍👩‍👧‍👦🏳️‍🌈 🇯🇵👍🏽'), (6, 'عادت النحل إلى الخلية. هل تعود؟'), (7, E'ctrl\\x01\\x02\\x1f\\x7f text'),
                 (8, 'e' || repeat(U&'\\0301', 500));
             CREATE VIEW bad_src_view AS SELECT * FROM bad_src;
             CREATE TABLE big_src (id int PRIMARY KEY, body text);
             INSERT INTO big_src VALUES (1, repeat('a', 10485761));
             CREATE TABLE \"Weird \"\"Quoted\"\" Table\" (\"Doc; ID\" int PRIMARY KEY, \"Body' Text\" text);
             INSERT INTO \"Weird \"\"Quoted\"\" Table\" VALUES (1, 'Glaciers carve valleys.'), (2, 'Sourdough rises. Bees fly.');",
        )
        .unwrap();
    let sample = sample_document();
    client.execute("INSERT INTO knowledge.documents (title, content) VALUES ('sample', $1)", &[&sample]).unwrap();
    for i in 0..5 {
        client
            .execute(
                "INSERT INTO knowledge.documents (title, content, metadata) VALUES ($1, $2, '{\"topic\": true}')",
                &[&format!("topic {i}"), &topic_document(i)],
            )
            .unwrap();
    }
}

pub(super) fn server_log() -> String {
    std::env::var("PG_CHUNK_SERVER_LOG").unwrap_or_else(|_| SERVER_LOG.to_string())
}

/// Lines of the server log written since `from` (bytes) that tell of a crashed backend.
pub(super) fn crashes_logged_since(from: u64) -> Vec<String> {
    let log =
        std::fs::read(server_log()).unwrap_or_else(|e| panic!("cannot read the server log {}: {e}", server_log()));
    let start = if (log.len() as u64) < from { 0 } else { from as usize }; // rotated: read it all
    String::from_utf8_lossy(&log[start..])
        .lines()
        .filter(|line| ["terminated by signal", "PANIC", "was terminated"].iter().any(|p| line.contains(p)))
        .map(str::to_string)
        .collect()
}
