//! Connecting to the running PostgreSQL as a real client, over its Unix socket.
//!
//! The cluster is the one scripts/install.sh started; PGHOST, PGPORT and PGUSER override
//! the defaults (the Debian socket directory, 5432, and the invoking OS user).

use postgres::{Client, Config, NoTls};
use std::sync::{Arc, Mutex, Once};

pub const TEST_DATABASE: &str = "pg_chunk_client_test";

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn params(database: &str) -> String {
    let user = std::env::var("PGUSER").or_else(|_| std::env::var("USER")).unwrap_or_else(|_| "root".to_string());
    format!("host={} port={} user={} dbname={}", env_or("PGHOST", "/var/run/postgresql"), env_or("PGPORT", "5432"), user, database)
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
    config.notice_callback(move |notice| sink.lock().unwrap().push(format!("{}: {}", notice.severity(), notice.message())));
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

/// The SQLSTATE of the error `query` raised, or "00000".
pub fn sqlstate_of(client: &mut Client, query: &str) -> String {
    match client.batch_execute(query) {
        Ok(()) => "00000".to_string(),
        Err(e) => e.code().map_or_else(|| format!("no SQLSTATE: {e}"), |c| c.code().to_string()),
    }
}

/// The sample document shipped in the repository (the installer's demo).
pub fn sample_document() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/sample.txt")).unwrap()
}
