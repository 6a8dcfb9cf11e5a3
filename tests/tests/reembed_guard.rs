//! The guard on store-wide re-embedding (docs/store.md, "Chunk configs"): a change of a config's
//! cfg or model that rewrites more chunks than pg_chunk.reembed_confirm_chunks is refused unless
//! the transaction confirms it; knowledge.rechunk_estimate counts what a change would touch and
//! times it by the config's past writes, each of which knowledge.embedding_writes times.
//! Each test has a database of its own, with the default config off and a config `guarded` on
//! the model-free embedder, so that nothing waits on a transformer.

use pg_chunk_client_tests::{fresh_database, topic_document};
use postgres::Client;

/// A fresh database with `guarded` (fixed chunks of at most 300 characters, lexical) holding
/// `documents` documents, and the default config off.
fn guarded_store(name: &str, documents: usize) -> Client {
    let mut client = fresh_database(name);
    client
        .batch_execute(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, cfg, model)
             VALUES ('guarded', '{\"strategy\": \"fixed\", \"max_size\": 300, \"overlap\": 0}', 'lexical');",
        )
        .unwrap();
    for i in 0..documents {
        client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    client
}

#[test]
fn every_write_records_its_elapsed_milliseconds() {
    let mut client = guarded_store("elapsed_ms", 2);
    let rows = client.query("SELECT elapsed_ms FROM knowledge.embedding_writes ORDER BY id", &[]).unwrap();
    assert_eq!(rows.len(), 2, "one write per document inserted");
    for row in &rows {
        let elapsed: Option<f64> = row.get(0);
        assert!(elapsed.is_some_and(|ms| ms > 0.0), "a positive elapsed time: {elapsed:?}");
    }
    let (total, summed): (f64, f64) = {
        let row = client
            .query_one(
                "SELECT (SELECT sum(elapsed_ms) FROM knowledge.embedding_writes),
                        (SELECT sum(elapsed_ms) FROM knowledge.embedding_run_stats)",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert!((total - summed).abs() < 1e-9, "embedding_run_stats sums them: {summed} against {total}");
}
