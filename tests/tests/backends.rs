//! What a backend checks and loads on its own: that its library serves the SQL installed in the
//! database (knowledge.version()), that a mistyped pg_chunk.* setting is refused, and that
//! knowledge.prewarm loads a model ahead of its first use.

use pg_chunk_client_tests::{connect, connect_database, fresh_database, sqlstate_of};
use postgres::Client;

fn versions(client: &mut Client) -> (String, Option<String>) {
    let row = client.query_one("SELECT library, sql FROM knowledge.version()", &[]).unwrap();
    (row.get(0), row.get(1))
}

fn set_extversion(client: &mut Client, version: &str) {
    client
        .execute("UPDATE pg_catalog.pg_extension SET extversion = $1 WHERE extname = 'pg_chunk'", &[&version])
        .unwrap();
}

#[test]
fn version_names_the_library_and_the_installed_sql() {
    let mut client = connect();
    let installed: String =
        client.query_one("SELECT extversion FROM pg_extension WHERE extname = 'pg_chunk'", &[]).unwrap().get(0);
    let (library, sql) = versions(&mut client);
    assert_eq!(sql.as_deref(), Some(installed.as_str()));
    assert_eq!(library, installed, "a fresh install is made by this library's own SQL");
}

/// The catalog made to claim another version (as superuser, in a database of its own), then
/// read by backends started afterwards, which check once each.
#[test]
fn a_library_older_than_the_installed_sql_is_refused_naming_both() {
    let name = "version_mismatch";
    let mut admin = fresh_database(name);
    let (library, real) = versions(&mut admin);
    let real = real.unwrap();

    set_extversion(&mut admin, "9.9.9");
    let mut client = connect_database(name);
    assert_eq!(versions(&mut client), (library.clone(), Some("9.9.9".to_string())), "version() is never refused");
    for query in [
        "SELECT knowledge.embed('text')",
        "SELECT count(*) FROM knowledge.chunk(repeat('Words here. ', 50))",
        "SELECT knowledge.prewarm()",
        "INSERT INTO knowledge.documents (content) VALUES ('A document.')",
    ] {
        let error = client.batch_execute(query).expect_err(query);
        let db = error.as_db_error().unwrap_or_else(|| panic!("{query}: {error}"));
        assert_eq!(db.code().code(), "55000", "{query}: {}", db.message());
        assert!(
            db.message().contains(&library) && db.message().contains("9.9.9"),
            "{query}: the message names both versions: {}",
            db.message()
        );
        assert!(db.hint().is_some_and(|h| h.contains("shared_preload_libraries")), "{query}: {:?}", db.hint());
    }

    // An older SQL is what the upgrade path serves until ALTER EXTENSION pg_chunk UPDATE.
    set_extversion(&mut admin, "0.1.0");
    let mut client = connect_database(name);
    assert_eq!(sqlstate_of(&mut client, "INSERT INTO knowledge.documents (content) VALUES ('A document.')"), "00000");

    set_extversion(&mut admin, &real);
}

#[test]
fn a_mistyped_setting_is_refused_once_pg_chunk_is_loaded() {
    let mut client = connect();
    // Loaded already where the server preloads it; LOAD makes sure of it where it does not.
    client.batch_execute("LOAD 'pg_chunk'").unwrap();
    for query in ["SET pg_chunk.thread = 2", "SELECT set_config('pg_chunk.default_modle', 'lexical', false)"] {
        assert_eq!(sqlstate_of(&mut client, query), "42602", "{query}");
    }
    for query in ["SET pg_chunk.threads = 2", "SET pg_chunk.default_model = 'lexical'", "SET pg_chunk.batch_size = 8"] {
        assert_eq!(sqlstate_of(&mut client, query), "00000", "{query}");
    }
    // Other prefixes stay free for the applications' own settings.
    assert_eq!(sqlstate_of(&mut client, "SET myapp.tenant = 'a'"), "00000");
}

#[test]
fn prewarm_loads_a_model_once() {
    let mut client = connect();
    let model: String = client.query_one("SELECT current_setting('pg_chunk.default_model')", &[]).unwrap().get(0);
    let loads = |client: &mut Client| -> i64 {
        client
            .query_opt("SELECT loads FROM knowledge.embedding_stats() WHERE model = $1", &[&model])
            .unwrap()
            .map_or(0, |row| row.get(0))
    };
    assert_eq!(loads(&mut client), 0, "a new backend has loaded nothing");
    let first: f64 = client.query_one("SELECT knowledge.prewarm()", &[]).unwrap().get(0);
    assert!(first > 0.0, "the first call loads {model}: {first} ms");
    assert_eq!(loads(&mut client), 1);
    let second: f64 = client.query_one("SELECT knowledge.prewarm($1)", &[&model]).unwrap().get(0);
    assert_eq!(second, 0.0, "the second call finds {model} loaded");
    let embedded: i64 = client.query_one("SELECT count(knowledge.embed('warm'))", &[]).unwrap().get(0);
    assert_eq!((embedded, loads(&mut client)), (1, 1), "embedding after prewarm loads nothing again");
    let lexical: f64 = client.query_one("SELECT knowledge.prewarm('lexical')", &[]).unwrap().get(0);
    assert_eq!(lexical, 0.0);
    assert_eq!(sqlstate_of(&mut client, "SELECT knowledge.prewarm('missing')"), "42704");
}
