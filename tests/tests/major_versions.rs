//! A store moved to a newer PostgreSQL major version (docs/operations.md, "Major-version
//! upgrades" and "Backup and restore"): a populated store on an older version, upgraded with
//! the new version's pg_upgrade or dumped and restored into it, holds the same documents,
//! chunks, configs (a changed default one too), queue and statistics and gives the same
//! searches; then it keeps working: a new document is chunked and embedded, the queue drains,
//! the attached table feeds the store.
//!
//! The new version is the server's (PGPORT); the older ones' BINDIRs come in
//! PG_CHUNK_UPGRADE_FROM (space-separated), each with pg_chunk and pgvector installed, which
//! scripts/test.sh sets when it runs these tests (`--ignored`): those from 15 and 16 against its
//! PostgreSQL 17, those from 17 against its 18.

use pg_chunk_client_tests::clusters::{wait_until, Clusters};
use pg_chunk_client_tests::{
    assert_store_exact, connect, connect_database, connection_string, empty_database, server_dir, topic_document,
};
use postgres::Client;
use std::process::Command;
use std::time::Duration;

const OBJECTS: &str = include_str!("../fixtures/extension_objects.sql");
const OPERATIONS: &str = include_str!("../../docs/operations.md");

const GERMAN: [&str; 3] = [
    "Bienen halten den Stock im Winter warm, indem sie sich zusammendrängen und mit den Flugmuskeln zittern. Die Königin bleibt in der Mitte der Traube.",
    "Vulkane brechen aus, wenn Magma durch Risse in der Erdkruste aufsteigt. Die Lava kühlt zu Basalt und Bims ab.",
    "Sauerteigbrot geht auf, weil wilde Hefen und Milchsäurebakterien den Teig vergären. Das Anstellgut wird täglich gefüttert.",
];

/// The BINDIR of the older PostgreSQL `major` named in PG_CHUNK_UPGRADE_FROM.
fn old_bindir(major: u32) -> String {
    let list = std::env::var("PG_CHUNK_UPGRADE_FROM")
        .expect("PG_CHUNK_UPGRADE_FROM lists the older versions' BINDIRs (scripts/test.sh sets it)");
    list.split_whitespace()
        .find(|bin| {
            let output = Command::new(format!("{bin}/pg_ctl")).arg("--version").output().unwrap();
            String::from_utf8_lossy(&output.stdout).contains(&format!(") {major}."))
        })
        .unwrap_or_else(|| panic!("no PostgreSQL {major} BINDIR in PG_CHUNK_UPGRADE_FROM={list}"))
        .to_string()
}

/// A store with what a move must carry: documents in two languages, a changed default config
/// (sync, with the default transformer model, whose vectors are stored) and an async one (the
/// fast static model) whose documents wait in the queue, as no worker serves the database; a
/// table attached in German; BM25's statistics. Made with pg_chunk at `version` (None: the
/// current one), then updated to the current one.
fn populate(client: &mut Client, version: Option<&str>) {
    let create = match version {
        Some(version) => format!("CREATE EXTENSION pg_chunk VERSION '{version}' CASCADE"),
        None => "CREATE EXTENSION pg_chunk CASCADE".to_string(),
    };
    client.batch_execute(&format!("SET client_min_messages = warning; {create}")).unwrap();
    client
        .batch_execute(
            "SET client_min_messages = warning;
             UPDATE knowledge.chunk_configs SET cfg = '{\"max_size\": 300}', description = 'changed' WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, cfg, model, mode)
             VALUES ('later', '{\"strategy\": \"fixed\", \"max_size\": 200}', 'potion-base-8m', 'async');
             CREATE TABLE public.notes (id int PRIMARY KEY, body text);
             INSERT INTO public.notes VALUES (1, 'Gletscher formen Täler zu einem U. Ihr Eis ist Jahrtausende alt.');
             SELECT knowledge.attach('public.notes', 'id', 'body', 'default', 'german');",
        )
        .unwrap();
    for i in 0..5 {
        client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    for text in GERMAN {
        client.execute("INSERT INTO knowledge.documents (content, language) VALUES ($1, 'german')", &[&text]).unwrap();
    }
    let counts: Vec<i64> = client
        .query_one(
            "SELECT (SELECT count(*) FROM knowledge.queue WHERE done_at IS NULL),
                    (SELECT count(*) FROM knowledge_internal.stored_vectors),
                    (SELECT count(*) FROM knowledge_internal.text_stats),
                    (SELECT count(*) FROM knowledge.languages)",
            &[],
        )
        .map(|row| (0..4).map(|i| row.get(i)).collect())
        .unwrap();
    assert!(
        counts[..3].iter().all(|&n| n > 0) && counts[3] == 2,
        "queued, stored vectors, statistics, languages: {counts:?}"
    );
    client.batch_execute("SET client_min_messages = warning; ALTER EXTENSION pg_chunk UPDATE").unwrap();
}

/// Each table of the store and each search, as text, to compare two databases. BM25's
/// statistics are compared as sums (a restore counts them again in other rows); the stored
/// vectors, which pg_dump leaves out, only when `stored_vectors`.
fn contents(client: &mut Client, stored_vectors: bool) -> Vec<String> {
    let mut tables = vec![
        ("chunk_configs", "knowledge.chunk_configs"),
        ("documents", "knowledge.documents"),
        ("attachments", "knowledge.attachments"),
        ("languages", "knowledge.languages"),
        ("embedding_runs", "knowledge.embedding_runs"),
        ("chunks", "knowledge.chunks"),
        ("queue", "knowledge.queue"),
        ("notes", "public.notes"),
        (
            "text_stats",
            "(SELECT chunk_config, lexeme, sum(chunks), sum(occurrences) FROM knowledge_internal.text_stats
              GROUP BY 1, 2 HAVING sum(chunks) <> 0)",
        ),
    ];
    if stored_vectors {
        tables.push(("stored_vectors", "knowledge_internal.stored_vectors"));
    }
    let mut lines: Vec<String> = tables
        .iter()
        .map(|(table, rows)| {
            client
                .query_one(
                    &format!("SELECT '{table}: ' || count(*) || ' rows, md5 ' || md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) FROM {rows} AS t"),
                    &[],
                )
                .unwrap()
                .get(0)
        })
        .collect();
    let searches = [
        ("how do bees keep warm in winter", "{}"),
        ("Bienen im Winter", r#"{"language": "german"}"#),
        ("lava basalt", r#"{"mode": "text"}"#),
    ];
    for (query, options) in searches {
        let found: Option<String> = client
            .query_one(
                "SELECT string_agg(s.chunk_id || ' ' || round(s.score::numeric, 9), ', ' ORDER BY s.score DESC, s.chunk_id)
                 FROM knowledge.search($1, 5, $2::text::jsonb) AS s",
                &[&query, &options],
            )
            .unwrap()
            .get(0);
        lines.push(format!("search {query:?} {options}: {}", found.unwrap_or_default()));
    }
    lines
}

/// docs/operations.md's statement that makes each chunk's tsvector again where the new version's
/// stemmers cut a word otherwise than the old one's (18's German stems "Flugmuskeln", in `GERMAN`,
/// otherwise than 17's), run as the page shows it; BM25's statistics follow.
fn make_tsvectors_again(client: &mut Client) {
    let start = OPERATIONS.find("pg_chunk_demo=# UPDATE knowledge.chunks").expect("docs/operations.md's UPDATE");
    let statement = &OPERATIONS[start + "pg_chunk_demo=# ".len()..];
    let statement = &statement[..=statement.find(';').unwrap()];
    client.execute(statement, &[]).unwrap();
}

/// What a moved store must still do: a new document is chunked and embedded (and queued for
/// the async config), the attached table feeds the store, and once a worker serves the
/// database (`serve` starts it) the queue drains and every chunk is what the store promises.
fn keeps_working(client: &mut Client, serve: impl FnOnce() -> Client) {
    client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(7)]).unwrap();
    client.execute("INSERT INTO public.notes VALUES (2, 'Der Bims schwimmt auf dem Wasser.')", &[]).unwrap();
    let fed: i64 = client
        .query_one(
            "SELECT count(*) FROM knowledge.documents AS d JOIN knowledge.chunks AS c ON c.document_id = d.id
             WHERE d.source_key = '2' AND d.language = 'german' AND c.embedding IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(fed > 0, "the attached table's new row is a document with chunks");
    let mut client = serve();
    assert!(client.query_one("SELECT knowledge.wait_for_queue('2 min')", &[]).unwrap().get::<_, bool>(0));
    let unfinished: i64 =
        client.query_one("SELECT pending + in_progress + failed FROM knowledge.queue_status", &[]).unwrap().get(0);
    assert_eq!(unfinished, 0, "the queue drained");
    assert_store_exact(&mut client, "after the move, the queue drained");
}

fn objects(client: &mut Client) -> Vec<String> {
    client.query(OBJECTS, &[]).unwrap().iter().map(|row| row.get(0)).collect()
}

/// A store on PostgreSQL `old_major` (made with pg_chunk `version`, see `populate`) upgraded with
/// the server's pg_upgrade, as docs/operations.md says: --check, then (unless `check_only`) the
/// upgrade, then vacuumdb's statistics.
fn pg_upgrade_keeps_the_store(old_major: u32, version: Option<&str>, old_port: u16, new_port: u16, check_only: bool) {
    let old_bin = old_bindir(old_major);
    let new_bin = server_dir(&mut connect(), "BINDIR");
    let clusters = Clusters::new(&format!("upgrade_from_{old_major}"));
    clusters.init("old", &old_bin, old_port, "");
    clusters.start("old");
    clusters.connect("old", "postgres").batch_execute("CREATE DATABASE store").unwrap();
    let mut old = clusters.connect("old", "store");
    populate(&mut old, version);
    let before = contents(&mut old, true);
    let version: String =
        old.query_one("SELECT extversion FROM pg_extension WHERE extname = 'pg_chunk'", &[]).unwrap().get(0);
    drop(old);
    clusters.stop("old");

    clusters.init("new", &new_bin, new_port, "");
    let (old_data, new_data) = (clusters.data("old"), clusters.data("new"));
    // From 18 on, initdb turns data checksums on; pg_upgrade wants the old cluster's setting, off
    // (docs/operations.md).
    let new_major: i32 =
        connect().query_one("SELECT current_setting('server_version_num')::int / 10000", &[]).unwrap().get(0);
    if new_major >= 18 {
        clusters.run(&new_bin, "pg_checksums", &["--disable", "-D", new_data.to_str().unwrap()]);
    }
    let (old_port, new_port) = (old_port.to_string(), new_port.to_string());
    let socket = clusters.socket();
    let mut args = vec![
        "-b",
        &old_bin,
        "-B",
        &new_bin,
        "-d",
        old_data.to_str().unwrap(),
        "-D",
        new_data.to_str().unwrap(),
        "-p",
        &old_port,
        "-P",
        &new_port,
        "-s",
        &socket,
        "-U",
        "postgres",
    ];
    clusters.run(&new_bin, "pg_upgrade", &[&args[..], &["--check"]].concat());
    if check_only {
        return;
    }
    args.push("--no-sync");
    clusters.run(&new_bin, "pg_upgrade", &args);
    clusters.start("new");
    clusters.run(
        &new_bin,
        "vacuumdb",
        &["-h", &socket, "-p", &new_port, "-U", "postgres", "--all", "--analyze-in-stages"],
    );

    let mut new = clusters.connect("new", "store");
    assert_eq!(contents(&mut new, true), before, "the store after pg_upgrade");
    // ALTER EXTENSION pg_chunk UPDATE has nothing to do.
    let objects_before = objects(&mut new);
    new.batch_execute("SET client_min_messages = warning; ALTER EXTENSION pg_chunk UPDATE").unwrap();
    let after: String =
        new.query_one("SELECT extversion FROM pg_extension WHERE extname = 'pg_chunk'", &[]).unwrap().get(0);
    assert_eq!(after, version);
    assert_eq!(objects(&mut new), objects_before, "extension objects after ALTER EXTENSION pg_chunk UPDATE");
    assert_eq!(contents(&mut new, true), before, "the store after ALTER EXTENSION pg_chunk UPDATE");
    make_tsvectors_again(&mut new);

    keeps_working(&mut new, || {
        clusters
            .connect("new", "postgres")
            .batch_execute("ALTER SYSTEM SET pg_chunk.worker_databases = 'store'")
            .unwrap();
        clusters.stop("new");
        clusters.start("new");
        let mut client = clusters.connect("new", "store");
        wait_until("a worker serves the upgraded store", Duration::from_secs(60), || {
            client.query_one("SELECT workers FROM knowledge.queue_status", &[]).unwrap().get::<_, i64>(0) > 0
        });
        client
    });
}

/// From 15, `pg_upgrade --check` only: it accepts the store (before 0.4.0 it refused its
/// regconfig columns), but the upgrade itself fails on PostgreSQL's side, whatever the
/// database holds, when 15 is newer than the 17 (15.20 against 17.11): 15.20 stamps every column
/// with an attribute version (`pg_attver`) that 17.11's pg_dump copies and its server refuses
/// (docs/operations.md, "Major-version upgrades").
#[test]
#[ignore = "needs PG_CHUNK_UPGRADE_FROM (scripts/test.sh)"]
fn pg_upgrade_check_from_15_accepts_the_store() {
    pg_upgrade_keeps_the_store(15, None, 5481, 5482, true);
}

/// The store on 16 is made with pg_chunk 0.3.0 (regconfig columns, which pg_upgrade refuses) and
/// updated before the upgrade.
#[test]
#[ignore = "needs PG_CHUNK_UPGRADE_FROM (scripts/test.sh)"]
fn pg_upgrade_from_16_keeps_a_store_made_with_0_3_0() {
    pg_upgrade_keeps_the_store(16, Some("0.3.0"), 5483, 5484, false);
}

/// From 17, a store made at the current version.
#[test]
#[ignore = "needs PG_CHUNK_UPGRADE_FROM (scripts/test.sh)"]
fn pg_upgrade_from_17_keeps_the_store() {
    pg_upgrade_keeps_the_store(17, None, 5486, 5487, false);
}

/// A store on PostgreSQL `old_major` dumped and restored into the server as docs/operations.md,
/// "Backup and restore", says (with the old version's pg_dump when `old_pg_dump`, else the
/// server's, and the server's pg_restore): the same documents, chunks, configs (the changed
/// default one too) and searches.
fn dump_restores_the_store(old_major: u32, old_port: u16, old_pg_dump: bool) {
    let old_bin = old_bindir(old_major);
    let new_bin = server_dir(&mut connect(), "BINDIR");
    let clusters = Clusters::new(&format!("dump_from_{old_major}"));
    clusters.init("old", &old_bin, old_port, "");
    clusters.start("old");
    clusters.connect("old", "postgres").batch_execute("CREATE DATABASE store").unwrap();
    let mut old = clusters.connect("old", "store");
    populate(&mut old, None);
    let before = contents(&mut old, false);

    let dump = clusters.data("store.dump");
    clusters.run(
        if old_pg_dump { &old_bin } else { &new_bin },
        "pg_dump",
        &["-Fc", "-f", dump.to_str().unwrap(), &clusters.connection_string("old", "store")],
    );
    let database = format!("restored_from_{old_major}");
    drop(empty_database(&database));
    let output = Command::new(format!("{new_bin}/pg_restore"))
        .env("PGOPTIONS", "-c pg_chunk.maintain_chunks=off")
        .args(["--exit-on-error", "-d", &connection_string(&format!("pg_chunk_test_{database}"))])
        .arg(&dump)
        .output()
        .unwrap();
    assert!(output.status.success(), "pg_restore: {}", String::from_utf8_lossy(&output.stderr));

    let mut restored = connect_database(&database);
    assert_eq!(contents(&mut restored, false), before, "the store after dump and restore");
    make_tsvectors_again(&mut restored);
    // No worker serves this database on the server: the queue is drained by hand.
    keeps_working(&mut restored, || {
        let mut client = connect_database(&database);
        while client.query_one("SELECT knowledge.process_queue()", &[]).unwrap().get::<_, i32>(0) > 0 {}
        client
    });
}

/// With 15's own pg_dump, which leaves out 15.20's attribute versions that 17.11 refuses (see
/// `pg_upgrade_check_from_15_accepts_the_store`).
#[test]
#[ignore = "needs PG_CHUNK_UPGRADE_FROM (scripts/test.sh)"]
fn dump_from_15_restores_the_store() {
    dump_restores_the_store(15, 5485, true);
}

/// With the server's pg_dump, as PostgreSQL advises for a move to a newer major version.
#[test]
#[ignore = "needs PG_CHUNK_UPGRADE_FROM (scripts/test.sh)"]
fn dump_from_17_restores_the_store() {
    dump_restores_the_store(17, 5488, false);
}
