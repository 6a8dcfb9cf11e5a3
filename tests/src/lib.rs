//! Connecting to the running PostgreSQL as a real client, over its Unix socket.
//!
//! The cluster is the one scripts/install.sh started; PGHOST, PGPORT and PGUSER override
//! the defaults (the Debian socket directory, 5432, and the invoking OS user).

pub mod clusters;

use postgres::{Client, Config, NoTls};
use std::sync::{Arc, Mutex, Once};

pub const TEST_DATABASE: &str = "pg_chunk_client_test";

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn params(database: &str) -> String {
    let user = std::env::var("PGUSER").or_else(|_| std::env::var("USER")).unwrap_or_else(|_| "root".to_string());
    format!(
        "host={} port={} user={} dbname={}",
        env_or("PGHOST", "/var/run/postgresql"),
        env_or("PGPORT", "5432"),
        user,
        database
    )
}

fn connect_to(database: &str) -> Client {
    let params = params(database);
    Client::connect(&params, NoTls).unwrap_or_else(|e| panic!("cannot connect with {params}: {e}"))
}

/// A connection to the test database that collects the NOTICEs and WARNINGs the server sends.
pub fn connect_collecting_notices() -> (Client, Arc<Mutex<Vec<String>>>) {
    connect(); // the database exists from here on
    let notices = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&notices);
    let mut config: Config = params(TEST_DATABASE).parse().unwrap();
    config.notice_callback(move |notice| {
        sink.lock().unwrap().push(format!("{}: {}", notice.severity(), notice.message()))
    });
    (config.connect(NoTls).unwrap(), notices)
}

/// A connection to a database made afresh once per test run, with pg_chunk created in it.
pub fn connect() -> Client {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        let mut admin = connect_to("postgres");
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {TEST_DATABASE} WITH (FORCE)")).unwrap();
        admin.batch_execute(&format!("CREATE DATABASE {TEST_DATABASE}")).unwrap();
        connect_to(TEST_DATABASE).batch_execute("CREATE EXTENSION pg_chunk CASCADE").unwrap();
    });
    connect_to(TEST_DATABASE)
}

/// An error as a test reports it: severity, SQLSTATE, message and where it arose, or the
/// client's own description when the server sent none.
pub fn describe_error(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!(
            "{} {}: {}{}",
            db.severity(),
            db.code().code(),
            db.message(),
            db.where_().map_or(String::new(), |w| format!(" (where: {w})"))
        ),
        None => format!("{e}"),
    }
}

/// The SQLSTATE of the error `query` raised, or "00000".
pub fn sqlstate_of(client: &mut Client, query: &str) -> String {
    match client.batch_execute(query) {
        Ok(()) => "00000".to_string(),
        Err(e) => e.code().map_or_else(|| format!("no SQLSTATE: {e}"), |c| c.code().to_string()),
    }
}

/// A directory of the server's PostgreSQL installation, as its `pg_config` view names it
/// (`BINDIR`, `SHAREDIR`, ...): the tests run on the server's machine, against 15 or 16.
pub fn server_dir(client: &mut Client, name: &str) -> String {
    client.query_one("SELECT setting FROM pg_config WHERE name = $1", &[&name]).unwrap().get(0)
}

/// Where pg_chunk.model_dir points on the server's machine.
pub fn model_dir(client: &mut Client) -> std::path::PathBuf {
    let dir: String = client.query_one("SELECT current_setting('pg_chunk.model_dir')", &[]).unwrap().get(0);
    dir.replace("$sharedir", &server_dir(client, "SHAREDIR")).into()
}

/// The sample document shipped in the repository (the installer's demo).
pub fn sample_document() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/sample.txt")).unwrap()
}

/// A connection to a database of its own, `pg_chunk_test_<name>`, made afresh with pg_chunk in
/// it: for tests that change the store's configs or count every row, so they cannot disturb
/// (or be disturbed by) tests running beside them.
pub fn fresh_database(name: &str) -> Client {
    let mut client = empty_database(name);
    client.batch_execute("SET client_min_messages = warning; CREATE EXTENSION pg_chunk CASCADE").unwrap();
    client
}

/// A connection to a database of its own, `pg_chunk_test_<name>`, made afresh and empty.
pub fn empty_database(name: &str) -> Client {
    let database = format!("pg_chunk_test_{name}");
    let mut admin = connect_to("postgres");
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)")).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE {database}")).unwrap();
    connect_to(&database)
}

/// Another connection to a database made by `fresh_database`.
pub fn connect_database(name: &str) -> Client {
    connect_to(&format!("pg_chunk_test_{name}"))
}

/// The `psql`-style connection string of a test database, for pg_dump and friends.
pub fn connection_string(database: &str) -> String {
    params(database)
}

/// Differences between knowledge_internal.text_stats and a count made afresh from the chunks.
pub const TEXT_STATS_MISMATCHES: &str = include_str!("../fixtures/text_stats_mismatches.sql");

/// The functions in schema knowledge without a comment, one row each (empty when every one has).
pub const UNCOMMENTED_FUNCTIONS: &str = include_str!("../fixtures/uncommented_functions.sql");

/// What breaks docs/security.md's rules for the store's owner and its functions, one row each
/// (empty when they hold).
pub const STORE_PRIVILEGE_VIOLATIONS: &str = include_str!("../fixtures/store_privilege_violations.sql");

/// Rows where knowledge.chunks differs from what the store promises, as descriptions (empty
/// when it holds): for every document and each config it is chunked with, exactly the rows of
/// knowledge.chunk(content, effective_cfg) (where the cfg cuts with another model than the
/// config's, those of knowledge_internal.embed_chunks_batch, which sizes them for the config's
/// model), each embedded as knowledge.embed gives its content
/// (cosine distance under 1e-4; a transformer batches them), with the tsvector of its content
/// in the document's language (knowledge.text_vector) and the model of its config; and BM25's
/// statistics (knowledge_internal.text_stats) exactly those of the chunks.
pub fn store_mismatches(client: &mut Client) -> Vec<String> {
    let query = "
        WITH expected AS (
            SELECT d.id AS document_id, c.name AS chunk_config, e.chunk_index, e.content, e.char_offset,
                   e.char_length, e.token_count, e.metadata
            FROM knowledge.documents AS d
            CROSS JOIN LATERAL knowledge_internal.document_configs(d.chunk_config) AS c
            CROSS JOIN LATERAL (
                SELECT e.chunk_index, e.content, e.char_offset, e.char_length, e.token_count, e.metadata
                FROM knowledge.chunk(d.content, c.effective_cfg) AS e
                WHERE c.effective_cfg ->> 'model' = c.model
                UNION ALL
                SELECT e.chunk_index, e.content, e.char_offset, e.char_length, e.token_count, e.metadata
                FROM knowledge_internal.embed_chunks_batch(ARRAY[d.id], ARRAY[d.content], c.effective_cfg, c.model) AS e
                WHERE c.effective_cfg ->> 'model' <> c.model) AS e
        ), stored AS (
            SELECT document_id, chunk_config, chunk_index, content, char_offset, char_length, token_count, metadata
            FROM knowledge.chunks
        )
        SELECT 'missing: ' || row_to_json(x)::text FROM (SELECT * FROM expected EXCEPT ALL SELECT * FROM stored) AS x
        UNION ALL
        SELECT 'extra: ' || row_to_json(x)::text FROM (SELECT * FROM stored EXCEPT ALL SELECT * FROM expected) AS x
        UNION ALL
        SELECT 'vector: chunk ' || c.id FROM knowledge.chunks AS c
        WHERE c.embedding IS NULL OR (c.embedding <=> knowledge.embed(c.content, c.model)) > 1e-4
        UNION ALL
        SELECT 'tsv or model: chunk ' || c.id FROM knowledge.chunks AS c
        JOIN knowledge.documents AS d ON d.id = c.document_id
        JOIN knowledge.chunk_configs AS cc ON cc.name = c.chunk_config
        JOIN knowledge.embedding_runs AS r ON r.id = c.run_id
        WHERE c.tsv IS DISTINCT FROM knowledge.text_vector(d.language::regconfig, c.content) OR c.model <> cc.model OR r.model <> c.model";
    let mut mismatches: Vec<String> = client.query(query, &[]).unwrap().iter().map(|row| row.get(0)).collect();
    mismatches.extend(client.query(TEXT_STATS_MISMATCHES, &[]).unwrap().iter().map(|row| row.get::<_, String>(0)));
    mismatches
}

/// A short document of `i`'s own mix of two topics, so documents differ and chunk apart.
pub fn topic_document(i: usize) -> String {
    let topics = [
        "Bees keep the hive warm in winter by clustering and shivering their flight muscles. The queen stays in the middle of the cluster.",
        "Volcanoes erupt when magma rises through cracks in the crust. Lava cools into basalt and pumice.",
        "Sourdough bread rises because wild yeast and lactic bacteria ferment the dough. A starter is fed flour and water daily.",
        "PostgreSQL's vacuum reclaims space from dead row versions. Autovacuum runs it when enough rows have changed.",
        "Glaciers carve valleys into a U shape as they slide downhill. Their ice can be thousands of years old.",
    ];
    format!("Document {i}. {} {}\n\n{}", topics[i % 5], topics[(i + 2) % 5], topics[(i + 3) % 5])
}

/// Panics with the first mismatches when knowledge.chunks is not exactly what the store promises.
pub fn assert_store_exact(client: &mut Client, when: &str) {
    let mismatches = store_mismatches(client);
    assert!(
        mismatches.is_empty(),
        "{when}: {} mismatches, first {:?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(5)]
    );
}

/// Waits (up to 2 minutes) until a pg_chunk background worker is connected to the database of
/// `client`: after the database is made afresh, the postmaster starts its worker again within
/// seconds (scripts/test.sh configures the workers of the test databases).
pub fn wait_for_worker(client: &mut Client) {
    let started = std::time::Instant::now();
    loop {
        let workers: i64 = client.query_one("SELECT workers FROM knowledge.queue_status", &[]).unwrap().get(0);
        if workers > 0 {
            return;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "no pg_chunk worker connected to this database in 2 minutes"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A field of a server process's /proc/<pid>/status in kB (the test runs on the server's machine, as root).
pub fn proc_status_kb(pid: i32, field: &str) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_else(|e| panic!("/proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Paragraphs of real prose to build documents from: the sample document's (headings left
/// out), the search corpus's documents and the shared topic documents.
pub fn prose_paragraphs() -> Vec<String> {
    let mut pool: Vec<String> = sample_document()
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.starts_with('#'))
        .map(str::to_string)
        .collect();
    let corpus: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/search_corpus.json")).unwrap(),
    )
    .unwrap();
    pool.extend(corpus["documents"].as_array().unwrap().iter().map(|d| d["content"].as_str().unwrap().to_string()));
    pool.extend((0..5).map(|i| topic_document(i).replace("\n\n", " ")));
    pool
}
