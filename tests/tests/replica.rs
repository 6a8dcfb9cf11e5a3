//! A streaming standby (docs/operations.md, "Read replicas"): a primary of its own and a standby made from
//! it with pg_basebackup, both on this machine beside the test cluster. The standby answers
//! every read-only function as the primary does, writes nothing (no ERROR in its log), runs no
//! queue worker, and after pg_promote() keeps the store in step and drains the queue.

use pg_chunk_client_tests::clusters::{wait_until, Clusters};
use pg_chunk_client_tests::{assert_store_exact, connect, sample_document, server_dir, topic_document};
use postgres::Client;
use std::time::Duration;

const PRIMARY_PORT: u16 = 5491;
const STANDBY_PORT: u16 = 5492;

/// What each read-only function gives, as text, to compare two servers.
fn answers(client: &mut Client) -> Vec<String> {
    let doc = sample_document();
    let queries: [(&str, &str); 7] = [
        ("search", "SELECT string_agg(row_to_json(s)::text, E'\\n' ORDER BY s.score DESC, s.chunk_id) FROM knowledge.search('how do bees keep warm in winter', 5) AS s"),
        ("chunk", "SELECT string_agg(row_to_json(c)::text, E'\\n' ORDER BY c.chunk_index) FROM knowledge.chunk($1) AS c"),
        ("semantic_chunk", "SELECT string_agg(row_to_json(c)::text, E'\\n' ORDER BY c.chunk_index) FROM knowledge.semantic_chunk($1, '{\"max_size\": 120}') AS c"),
        ("embed", "SELECT knowledge.embed($1)::text"),
        ("chunk_explain", "SELECT string_agg(row_to_json(e)::text, E'\\n' ORDER BY e.sentence_index) FROM knowledge.chunk_explain($1) AS e"),
        ("chunk_plot", "SELECT md5(knowledge.chunk_plot($1))"),
        ("queue_status", "SELECT pending || ' pending, ' || in_progress || ' in progress, ' || failed || ' failed' FROM knowledge.queue_status"),
    ];
    queries
        .iter()
        .map(|(name, query)| {
            let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
                if query.contains("$1") { vec![&doc] } else { vec![] };
            let answer: Option<String> = client.query_one(*query, &params).unwrap().get(0);
            format!("{name}: {}", answer.unwrap_or_default())
        })
        .collect()
}

fn replayed(standby: &mut Client, primary: &mut Client) {
    let target: String = primary.query_one("SELECT pg_current_wal_lsn()::text", &[]).unwrap().get(0);
    wait_until(&format!("the standby replays {target}"), Duration::from_secs(60), || {
        standby.query_one("SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn", &[&target]).unwrap().get::<_, bool>(0)
    });
}

#[test]
fn a_standby_serves_reads_as_the_primary_does_and_takes_over_after_promotion() {
    let clusters = Clusters::new("replica_test");
    let bin = server_dir(&mut connect(), "BINDIR");
    clusters.init("primary", &bin, PRIMARY_PORT, "pg_chunk.worker_databases = 'store'");
    clusters.start("primary");
    let mut primary = clusters.connect("primary", "postgres");
    primary.batch_execute("CREATE DATABASE store").unwrap();
    let mut primary = clusters.connect("primary", "store");
    primary
        .batch_execute(
            "SET client_min_messages = warning;
             CREATE EXTENSION pg_chunk CASCADE;
             INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES ('later', 'potion-base-8m', 'async');",
        )
        .unwrap();
    primary.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&sample_document()]).unwrap();
    for i in 0..4 {
        primary.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    assert!(primary.query_one("SELECT knowledge.wait_for_queue('2 min')", &[]).unwrap().get::<_, bool>(0));

    // The standby, on its own port.
    let standby_dir = clusters.data("standby");
    let socket = clusters.socket();
    clusters.run(
        &bin,
        "pg_basebackup",
        &[
            "-D",
            standby_dir.to_str().unwrap(),
            "-R",
            "-X",
            "stream",
            "--checkpoint=fast",
            "-h",
            &socket,
            "-p",
            &PRIMARY_PORT.to_string(),
            "-U",
            "postgres",
        ],
    );
    clusters.configure("standby", &bin, STANDBY_PORT, "");
    clusters.start("standby");
    let mut standby = clusters.connect("standby", "store");
    assert!(standby.query_one("SELECT pg_is_in_recovery()", &[]).unwrap().get::<_, bool>(0));
    replayed(&mut standby, &mut primary);

    // Every read-only function gives what the primary gives.
    assert_eq!(answers(&mut standby), answers(&mut primary));
    // No queue worker runs on the standby (they start when recovery ends).
    let workers = "SELECT workers FROM knowledge.queue_status";
    assert_eq!(standby.query_one(workers, &[]).unwrap().get::<_, i64>(0), 0);
    assert_eq!(primary.query_one(workers, &[]).unwrap().get::<_, i64>(0), 1);
    // Writes are refused as on any standby, with PostgreSQL's own SQLSTATE.
    let refused = standby.execute("INSERT INTO knowledge.documents (content) VALUES ('No.')", &[]).unwrap_err();
    assert_eq!(refused.code().map(|c| c.code()), Some("25006"));
    // Nothing the reads did tried to write: the only ERROR in the standby's log is that insert.
    let errors: Vec<String> =
        clusters.log("standby").lines().filter(|l| l.contains("ERROR")).map(str::to_string).collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].contains("read-only transaction"), "{errors:#?}");

    // After promotion the store keeps working and the queue drains.
    drop(primary);
    assert!(standby.query_one("SELECT pg_promote()", &[]).unwrap().get::<_, bool>(0));
    let mut promoted = clusters.connect("standby", "store");
    promoted.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(7)]).unwrap();
    assert!(promoted.query_one("SELECT knowledge.wait_for_queue('2 min')", &[]).unwrap().get::<_, bool>(0));
    assert_eq!(promoted.query_one(workers, &[]).unwrap().get::<_, i64>(0), 1);
    assert_store_exact(&mut promoted, "on the promoted standby");
}
