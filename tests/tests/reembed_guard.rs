//! The guard on store-wide re-embedding (docs/store.md, "Chunk configs"): a change of a config's
//! cfg or model that rewrites more chunks than pg_chunk.reembed_confirm_chunks is refused unless
//! the transaction confirms it; knowledge.rechunk_estimate counts what a change would touch and
//! times it by the config's past writes, each of which knowledge.embedding_writes times.
//! Each test has a database of its own, with the default config off and a config `guarded` on
//! the model-free embedder, so that nothing waits on a transformer.

use pg_chunk_client_tests::{assert_store_exact, connect_database, fresh_database, topic_document};
use postgres::Client;

fn count(client: &mut Client, query: &str) -> i64 {
    client.query_one(query, &[]).unwrap().get(0)
}

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

const CHANGE_CFG: &str =
    "UPDATE knowledge.chunk_configs SET cfg = '{\"strategy\": \"fixed\", \"max_size\": 400, \"overlap\": 0}' WHERE name = 'guarded'";
const CHANGE_MODEL: &str = "UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'guarded'";

#[test]
fn a_change_that_re_embeds_more_chunks_than_the_setting_needs_a_confirmation_in_its_transaction() {
    let mut client = guarded_store("reembed_guard", 3);
    let chunks = count(&mut client, "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'guarded'");
    assert!(chunks > 3, "the documents make several chunks each: {chunks}");
    client.batch_execute("SET pg_chunk.reembed_confirm_chunks = 3").unwrap();

    for change in [CHANGE_CFG, CHANGE_MODEL] {
        let error = client.batch_execute(change).expect_err("the change is refused above the threshold");
        let db = error.as_db_error().expect("a server error");
        assert_eq!(db.code().code(), "55000", "{change}: {db:?}");
        assert!(
            db.message().contains("\"guarded\"") && db.message().contains(&format!(" {chunks} chunks")),
            "the message names the config and its chunk count: {}",
            db.message()
        );
        assert!(
            db.hint().is_some_and(|h| h.contains("SET LOCAL pg_chunk.reembed_confirm = 'guarded'")),
            "the hint says how to confirm: {:?}",
            db.hint()
        );
    }
    // Changes that rewrite no chunk are not asked about.
    client
        .batch_execute("UPDATE knowledge.chunk_configs SET description = 'asked about nothing' WHERE name = 'guarded'")
        .unwrap();

    // A confirmation of another config confirms nothing.
    let mut transaction = client.transaction().unwrap();
    transaction.batch_execute("SET LOCAL pg_chunk.reembed_confirm = 'default'").unwrap();
    let other = transaction.batch_execute(CHANGE_CFG).expect_err("another config's confirmation");
    assert_eq!(other.code().map(|c| c.code()), Some("55000"));
    transaction.rollback().unwrap();

    // Confirmed in the same transaction, the change goes through and rechunks.
    let runs_before =
        count(&mut client, "SELECT count(*) FROM knowledge.embedding_runs WHERE chunk_config = 'guarded'");
    let mut transaction = client.transaction().unwrap();
    transaction.batch_execute("SET LOCAL pg_chunk.reembed_confirm = 'guarded'").unwrap();
    transaction.batch_execute(CHANGE_CFG).unwrap();
    transaction.commit().unwrap();
    assert_eq!(
        count(&mut client, "SELECT count(DISTINCT run_id) FROM knowledge.chunks WHERE chunk_config = 'guarded'"),
        1
    );
    assert_eq!(
        count(&mut client, "SELECT count(*) FROM knowledge.embedding_runs WHERE chunk_config = 'guarded'"),
        runs_before + 1,
        "the confirmed change made a new run"
    );
    assert_store_exact(&mut client, "after the confirmed change");

    // SET LOCAL ended with the transaction: the next change is asked about again (the new cfg
    // made fewer chunks, so the threshold goes down with them).
    client.batch_execute("SET pg_chunk.reembed_confirm_chunks = 1").unwrap();
    assert_eq!(client.query_one("SHOW pg_chunk.reembed_confirm", &[]).unwrap().get::<_, String>(0), "");
    let again = client.batch_execute(CHANGE_MODEL).expect_err("asked again in the next transaction");
    assert_eq!(again.code().map(|c| c.code()), Some("55000"));

    // At or under the threshold, or with the guard off (0), nothing is asked.
    let chunks = count(&mut client, "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'guarded'");
    client.batch_execute(&format!("SET pg_chunk.reembed_confirm_chunks = {chunks}")).unwrap();
    client.batch_execute(CHANGE_MODEL).unwrap();
    client.batch_execute("SET pg_chunk.reembed_confirm_chunks = 0").unwrap();
    client.batch_execute("UPDATE knowledge.chunk_configs SET model = 'lexical' WHERE name = 'guarded'").unwrap();
    assert_store_exact(&mut client, "after the unasked changes");
}

#[test]
fn rechunk_estimate_counts_what_a_change_touches_and_times_it_by_the_configs_past_writes() {
    let mut client = guarded_store("rechunk_estimate", 4);
    // A document of another config only, which a change of `guarded` leaves alone.
    client
        .batch_execute(
            "INSERT INTO knowledge.chunk_configs (name, cfg, model, active) VALUES ('other', '{\"strategy\": \"fixed\"}', 'lexical', false);
             INSERT INTO knowledge.documents (content, chunk_config) VALUES ('A document of its own config.', 'other');",
        )
        .unwrap();
    let documents = count(&mut client, "SELECT count(*) FROM knowledge.documents WHERE chunk_config IS NULL");
    let chunks = count(&mut client, "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'guarded'");
    assert_eq!(documents, 4);

    let row = client
        .query_one(
            "SELECT documents, chunks, chunks_per_second, seconds, needs_confirmation, note
             FROM knowledge.rechunk_estimate('guarded', cfg => '{\"strategy\": \"fixed\", \"max_size\": 500}')",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), documents, "documents the config applies to");
    assert_eq!(row.get::<_, i64>(1), chunks, "the config's chunks");
    let rate: f64 = row.get(2);
    let seconds: f64 = row.get(3);
    assert!(rate > 0.0 && (seconds - chunks as f64 / rate).abs() < 1e-9, "rate {rate}, seconds {seconds}");
    let measured: f64 = client
        .query_one(
            "SELECT sum(w.chunks_written + w.chunks_kept) / (sum(w.elapsed_ms) / 1000)
             FROM knowledge.embedding_writes AS w JOIN knowledge.embedding_runs AS r ON r.id = w.run_id
             WHERE r.chunk_config = 'guarded' AND r.model = 'lexical'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!((rate - measured).abs() < 1e-6 * measured, "the config's own writes: {rate} against {measured}");
    assert!(!row.get::<_, bool>(4), "100,000 chunks by default");
    assert_eq!(row.get::<_, Option<String>>(5), None);

    // A document naming the config counts too, whether or not the config is active.
    client
        .batch_execute(
            "INSERT INTO knowledge.documents (content, chunk_config) VALUES ('Named. Twice named.', 'other')",
        )
        .unwrap();
    let other = client.query_one("SELECT documents, chunks FROM knowledge.rechunk_estimate('other')", &[]).unwrap();
    assert_eq!(other.get::<_, i64>(0), 2);
    assert_eq!(
        other.get::<_, i64>(1),
        count(&mut client, "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'other'")
    );

    // A model no write has used yet: no rate, and a note that says so.
    let row = client
        .query_one(
            "SELECT chunks, seconds, note FROM knowledge.rechunk_estimate('guarded', model => 'all-minilm-l6-v2')",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), chunks);
    assert_eq!(row.get::<_, Option<f64>>(1), None);
    let note: String = row.get(2);
    assert!(note.contains("no measured write with model all-minilm-l6-v2"), "{note}");

    // Above the threshold the estimate says the change needs a confirmation.
    client.batch_execute("SET pg_chunk.reembed_confirm_chunks = 1").unwrap();
    assert!(client
        .query_one("SELECT needs_confirmation FROM knowledge.rechunk_estimate('guarded')", &[])
        .unwrap()
        .get::<_, bool>(0));

    // Bad input is refused as the UPDATE would refuse it.
    let sqlstate = |client: &mut Client, query: &str| {
        client.batch_execute(query).expect_err(query).code().map(|c| c.code().to_string())
    };
    assert_eq!(sqlstate(&mut client, "SELECT knowledge.rechunk_estimate('nonesuch')").as_deref(), Some("42704"));
    assert_eq!(
        sqlstate(&mut client, "SELECT knowledge.rechunk_estimate('guarded', cfg => '{\"max_size\": -1}')").as_deref(),
        Some("22023")
    );
    assert_eq!(
        sqlstate(&mut client, "SELECT knowledge.rechunk_estimate('guarded', model => 'nonesuch')").as_deref(),
        Some("42704")
    );
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

/// pg_chunk.reembed_confirm_chunks is superuser-only: a role that may change chunk configs cannot
/// lift the guard for itself (in its session, its transaction or its own role's settings), while
/// it may still confirm a change.
#[test]
fn only_a_superuser_moves_the_threshold() {
    const DATABASE: &str = "reembed_guard_role";
    let mut admin = fresh_database(DATABASE);
    admin
        .batch_execute(
            "DROP ROLE IF EXISTS pgchunk_config_editor;
             CREATE ROLE pgchunk_config_editor;
             GRANT SELECT, UPDATE ON knowledge.chunk_configs TO pgchunk_config_editor;",
        )
        .unwrap();
    let mut editor = connect_database(DATABASE);
    editor.batch_execute("SET ROLE pgchunk_config_editor").unwrap();
    for statement in [
        "SET pg_chunk.reembed_confirm_chunks = 0",
        "BEGIN; SET LOCAL pg_chunk.reembed_confirm_chunks = 0",
        "SELECT set_config('pg_chunk.reembed_confirm_chunks', '0', false)",
        "ALTER ROLE pgchunk_config_editor SET pg_chunk.reembed_confirm_chunks = 0",
    ] {
        let error = editor.batch_execute(statement).expect_err(statement);
        assert_eq!(error.code().map(|c| c.code()), Some("42501"), "{statement}: {error}");
        editor.batch_execute("ROLLBACK").unwrap();
    }
    let threshold: String = editor.query_one("SHOW pg_chunk.reembed_confirm_chunks", &[]).unwrap().get(0);
    assert_eq!(threshold, "100000");
    editor.batch_execute("BEGIN; SET LOCAL pg_chunk.reembed_confirm = 'default'; COMMIT").unwrap();
    admin.batch_execute("DROP OWNED BY pgchunk_config_editor; DROP ROLE pgchunk_config_editor").unwrap();
}
