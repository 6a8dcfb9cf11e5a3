//! The adversarial privilege suite (docs/security.md): a login role with no grants, or a writer
//! of documents, tries to make the store run its code with the store's rights, to change what is
//! not its own, or to break the store for others. Each case checks the harm it tries for (the
//! role became a superuser, the store's rows or indexes changed, a search fails), not only the
//! error that stops it.
//!
//! `PG_CHUNK_ATTACKS_ON=0.4.0 cargo test -p pg_chunk_client_tests --test attacks` runs every case
//! against databases made at that earlier release and not updated: that is how each was seen to
//! fail on 0.4.0.

use pg_chunk_client_tests::{connect_database, empty_database};
use postgres::Client;

/// A store for one case: the current version, or the release PG_CHUNK_ATTACKS_ON names.
fn store(name: &str) -> Client {
    let mut client = empty_database(name);
    let version = std::env::var("PG_CHUNK_ATTACKS_ON").map(|v| format!(" VERSION '{v}'")).unwrap_or_default();
    client
        .batch_execute(&format!("SET client_min_messages = warning; CREATE EXTENSION pg_chunk{version} CASCADE"))
        .unwrap();
    client
}

/// A login role with no grants (`role`, made afresh), and a session of the store's database as it.
fn attacker(database: &str, role: &str) -> Client {
    let mut admin = connect_database(database);
    admin.batch_execute(&format!("DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN")).unwrap();
    let mut session = connect_database(database);
    session.batch_execute(&format!("SET client_min_messages = error; SET SESSION AUTHORIZATION {role}")).unwrap();
    session
}

fn is_superuser(admin: &mut Client, role: &str) -> bool {
    admin.query_one("SELECT rolsuper FROM pg_roles WHERE rolname = $1", &[&role]).unwrap().get(0)
}

/// What an attack could change, one line each: the store's rows (documents, chunks, configs,
/// attachments, languages, BM25's statistics, queue) and the indexes on its chunks.
fn store_state(admin: &mut Client) -> Vec<String> {
    let mut state: Vec<String> = [
        "knowledge.documents",
        "knowledge.chunks",
        "knowledge.chunk_configs",
        "knowledge.attachments",
        "knowledge.languages",
        "knowledge_internal.text_stats",
        "knowledge.queue",
    ]
    .iter()
    .map(|table| {
        admin
            .query_one(
                &format!("SELECT '{table}: ' || count(*) || ' ' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM {table} AS t"),
                &[],
            )
            .unwrap()
            .get(0)
    })
    .collect();
    let indexes = "SELECT 'index ' || indexname FROM pg_indexes WHERE schemaname = 'knowledge' AND tablename = 'chunks' ORDER BY 1";
    state.extend(admin.query(indexes, &[]).unwrap().iter().map(|row| row.get::<_, String>(0)));
    state
}

fn sqlstate(result: Result<(), postgres::Error>) -> String {
    match result {
        Ok(()) => "00000".to_string(),
        Err(e) => e.code().map_or_else(|| e.to_string(), |c| c.code().to_string()),
    }
}

/// A store with a document, a config of its own, an attached table: something to harm.
fn populated(name: &str) -> Client {
    let mut admin = store(name);
    admin
        .batch_execute(
            "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('small', '{\"strategy\": \"fixed\", \"max_size\": 200}', 'potion-base-8m');
             UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default';
             INSERT INTO knowledge.documents (content) VALUES ('Bees keep the hive warm in winter. They cluster and shiver.');
             CREATE TABLE notes (id int PRIMARY KEY, body text);
             INSERT INTO notes VALUES (1, 'Glaciers carve valleys into a U shape.');
             SELECT knowledge.attach('notes', 'id', 'body');",
        )
        .unwrap();
    admin
}

/// The role's own kit: an enum type in its temporary schema, with an implicit cast to each type
/// the store's trigger functions read a row's columns as, each cast making the role a superuser
/// when it runs with a superuser's rights; and a temporary table of that type's columns.
fn evil_kit(role: &str) -> String {
    let mut kit = String::from("CREATE TYPE pg_temp.evil AS ENUM ('x');\n");
    for (target, value) in [
        ("bigint", "1"),
        ("integer", "1"),
        ("text", "'x'"),
        ("boolean", "true"),
        ("jsonb", "'{}'"),
        ("json", "'{}'"),
        ("tsvector", "''"),
        ("xid8", "'1'"),
    ] {
        let function = format!("pg_temp.evil_{}", target);
        kit.push_str(&format!(
            "CREATE FUNCTION {function}(pg_temp.evil) RETURNS {target} LANGUAGE plpgsql
                 AS $$BEGIN EXECUTE 'ALTER ROLE {role} SUPERUSER'; RETURN {value}; END$$;
             CREATE CAST (pg_temp.evil AS {target}) WITH FUNCTION {function}(pg_temp.evil) AS IMPLICIT;\n"
        ));
    }
    kit.push_str(
        "CREATE TEMP TABLE t (id pg_temp.evil, name pg_temp.evil, model pg_temp.evil, cfg pg_temp.evil,
                              effective_cfg pg_temp.evil, active pg_temp.evil, halfvec pg_temp.evil, mode pg_temp.evil,
                              chunk_config pg_temp.evil, tsv pg_temp.evil, xid pg_temp.evil, body pg_temp.evil);
         INSERT INTO t VALUES ('x', 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x');",
    );
    kit
}

/// Every trigger function that runs with the store's rights, with the arguments its own
/// triggers pass.
const TRIGGER_FUNCTIONS: [(&str, &str); 7] = [
    ("documents_sync", ""),
    ("chunk_configs_sync", ""),
    ("chunk_configs_indexes", ""),
    ("count_text_stats", ""),
    ("add_text_stats", ""),
    ("clear_text_stats", ""),
    ("mirror_document", "'1'"),
];

/// Each event, the trigger that fires on it, and the statement that fires it on `t`.
const EVENTS: [(&str, &str, &str); 4] = [
    ("INSERT", "FOR EACH ROW", "INSERT INTO t SELECT * FROM t LIMIT 1"),
    ("UPDATE", "FOR EACH ROW", "UPDATE t SET body = body"),
    ("DELETE", "FOR EACH ROW", "DELETE FROM t WHERE ctid = (SELECT min(ctid) FROM t)"),
    ("TRUNCATE", "FOR EACH STATEMENT", "TRUNCATE t"),
];

/// What one case did: `state` is the SQLSTATE of the step that should be refused, `harm` what the
/// attack achieved (nothing, or how the role or the store changed), undone after for the next
/// case where it can be (a superuser's rights taken back).
fn harm_done(admin: &mut Client, role: &str, before: &[String]) -> String {
    let mut harm = Vec::new();
    if is_superuser(admin, role) {
        harm.push("the role became a superuser".to_string());
        admin.batch_execute(&format!("ALTER ROLE {role} NOSUPERUSER")).unwrap();
    }
    let after = store_state(admin);
    harm.extend(after.iter().filter(|line| !before.contains(line)).map(|line| format!("changed: {line}")));
    harm.extend(before.iter().filter(|line| !after.contains(line)).map(|line| format!("gone: {line}")));
    if harm.is_empty() {
        "none".to_string()
    } else {
        harm.join("; ")
    }
}

/// Runs one case for each trigger function and each event: `attempt` gets the role's session,
/// the CREATE TRIGGER statement that attaches the function to `t` and the statement that fires it,
/// and returns the SQLSTATE of the step that should be refused. The cases that did not end with
/// `want` and no harm, described.
fn open_cases(
    admin: &mut Client,
    session: &mut Client,
    role: &str,
    want: &str,
    attempt: impl Fn(&mut Client, &str, &str) -> String,
) -> Vec<String> {
    let mut open = Vec::new();
    for (function, arguments) in TRIGGER_FUNCTIONS {
        for (event, level, fire) in EVENTS {
            let before = store_state(admin);
            let create = format!(
                "CREATE TRIGGER attack AFTER {event} ON t {level} EXECUTE FUNCTION knowledge_internal.{function}({arguments})"
            );
            let state = attempt(session, &create, fire);
            let harm = harm_done(admin, role, &before);
            if state != want || harm != "none" {
                open.push(format!("{function} on {event}: {state}, harm: {harm}"));
            }
        }
    }
    open
}

/// Running the store's trigger functions on a table of one's own, for each trigger function and
/// each event: a role with no grants attaches it to a temporary table of its own, of its own type
/// with an implicit cast. Refused (42501): no one but the store's owner and superusers may execute
/// those functions.
#[test]
fn no_role_can_attach_the_store_s_trigger_functions_to_its_own_table() {
    const DATABASE: &str = "attacks_triggers";
    const ROLE: &str = "pgchunk_attacker_triggers";
    let mut admin = populated(DATABASE);
    let mut session = attacker(DATABASE, ROLE);
    session.batch_execute(&evil_kit(ROLE)).unwrap();
    let open = open_cases(&mut admin, &mut session, ROLE, "42501", |session, create, fire| {
        let state = sqlstate(session.batch_execute(create));
        if state == "00000" {
            // Created: the hole is open. Fire it, then drop it for the next case.
            let _ = session.batch_execute(fire);
            let _ = session.batch_execute("DROP TRIGGER IF EXISTS attack ON t; INSERT INTO t SELECT * FROM t LIMIT 1");
        }
        state
    });
    assert!(open.is_empty(), "CREATE TRIGGER with the store's functions, refused with 42501 and harmless: {open:#?}");
}

/// Should one of them be attached to another table all the same (by a superuser, here, on the
/// role's temporary table), it refuses to run there (39P01) before it reads a column.
#[test]
fn each_trigger_function_fires_only_on_its_own_table() {
    const DATABASE: &str = "attacks_fires_on";
    const ROLE: &str = "pgchunk_attacker_fires_on";
    let mut admin = populated(DATABASE);
    let mut session = attacker(DATABASE, ROLE);
    session.batch_execute(&evil_kit(ROLE)).unwrap();
    let open = open_cases(&mut admin, &mut session, ROLE, "39P01", |session, create, fire| {
        let as_superuser =
            |statement: &str| format!("RESET SESSION AUTHORIZATION; {statement}; SET SESSION AUTHORIZATION {ROLE}");
        session.batch_execute(&as_superuser(create)).unwrap();
        let state = sqlstate(session.batch_execute(fire));
        session.batch_execute(&as_superuser("DROP TRIGGER attack ON t")).unwrap();
        session.batch_execute("INSERT INTO t SELECT * FROM t LIMIT 1").unwrap();
        state
    });
    assert!(open.is_empty(), "the functions on another table, refused with 39P01 and harmless: {open:#?}");
}

/// A role's table attached to the store (by its owner, as docs/security.md describes) runs none
/// of the role's code with the store's rights: a column of the role's type beside the attached
/// ones is never read, an attached column of such a type is refused (42804) when attached and
/// when its type is changed later.
#[test]
fn an_attached_table_runs_none_of_its_owner_s_code_with_the_store_s_rights() {
    const DATABASE: &str = "attacks_attached";
    const ROLE: &str = "pgchunk_attacker_attached";
    let mut admin = populated(DATABASE);
    let mut session = attacker(DATABASE, ROLE);
    admin.batch_execute(&format!("CREATE SCHEMA mallory AUTHORIZATION {ROLE}")).unwrap();
    session
        .batch_execute(&format!(
            "CREATE TYPE mallory.evil AS ENUM ('x');
             CREATE FUNCTION mallory.evil_json(mallory.evil) RETURNS json LANGUAGE plpgsql
                 AS $$BEGIN EXECUTE 'ALTER ROLE {ROLE} SUPERUSER'; RETURN '{{}}'; END$$;
             CREATE FUNCTION mallory.evil_text(mallory.evil) RETURNS text LANGUAGE plpgsql
                 AS $$BEGIN EXECUTE 'ALTER ROLE {ROLE} SUPERUSER'; RETURN 'x'; END$$;
             CREATE CAST (mallory.evil AS json) WITH FUNCTION mallory.evil_json(mallory.evil);
             CREATE CAST (mallory.evil AS text) WITH FUNCTION mallory.evil_text(mallory.evil) AS IMPLICIT;
             CREATE TABLE mallory.notes (id int PRIMARY KEY, body text, extra mallory.evil);
             CREATE TABLE mallory.typed (id mallory.evil PRIMARY KEY, body text);"
        ))
        .unwrap();
    admin.batch_execute("SELECT knowledge.attach('mallory.notes', 'id', 'body')").unwrap();
    session.batch_execute("INSERT INTO mallory.notes VALUES (1, 'Lighthouses guide ships at night.', 'x')").unwrap();
    assert!(!is_superuser(&mut admin, ROLE), "{ROLE} became a superuser through a column it was never asked for");
    let mirrored: i64 = admin
        .query_one("SELECT count(*) FROM knowledge.documents WHERE content LIKE 'Lighthouses%'", &[])
        .unwrap()
        .get(0);
    assert_eq!(mirrored, 1, "the row is mirrored all the same");

    let attach_typed = sqlstate(admin.batch_execute("SELECT knowledge.attach('mallory.typed', 'id', 'body')"));
    assert!(!is_superuser(&mut admin, ROLE), "{ROLE} became a superuser through an attached column's type");
    assert_eq!(attach_typed, "42804", "a column of the role's own type is refused when attached");

    // The type changed after the attach: refused as the row is mirrored.
    session
        .batch_execute("ALTER TABLE mallory.notes DROP COLUMN extra; ALTER TABLE mallory.notes ALTER COLUMN body TYPE mallory.evil USING 'x'")
        .unwrap_or_else(|e| panic!("{e}"));
    let changed = sqlstate(session.batch_execute("INSERT INTO mallory.notes VALUES (2, 'x')"));
    assert!(!is_superuser(&mut admin, ROLE), "{ROLE} became a superuser through a column retyped after the attach");
    assert_eq!(changed, "42804");
}

/// A writer cannot give a document a language that dies with its session (22023), and a
/// language dropped later costs searches and rechunking a WARNING, not an error.
#[test]
fn no_writer_breaks_search_with_a_language_of_its_own() {
    const DATABASE: &str = "attacks_languages";
    const ROLE: &str = "pgchunk_attacker_languages";
    let mut admin = populated(DATABASE);
    let mut writer = attacker(DATABASE, ROLE);
    admin
        .batch_execute(&format!(
            "GRANT SELECT, INSERT ON knowledge.documents TO {ROLE};
             CREATE SCHEMA langs; CREATE TEXT SEARCH CONFIGURATION langs.mine (COPY = english);"
        ))
        .unwrap();
    writer.batch_execute("CREATE TEXT SEARCH CONFIGURATION pg_temp.mine (COPY = english)").unwrap();
    let temporary = sqlstate(writer.batch_execute(
        "INSERT INTO knowledge.documents (content, language) VALUES ('Volcanoes erupt lava.', 'pg_temp.mine')",
    ));
    drop(writer);
    // A language that lasts, dropped after a document was written in it.
    admin
        .batch_execute(
            "INSERT INTO knowledge.documents (content, language) VALUES ('Comets have icy tails.', 'langs.mine');
             DROP TEXT SEARCH CONFIGURATION langs.mine",
        )
        .unwrap();
    let search = sqlstate(admin.batch_execute("SELECT * FROM knowledge.search('bees in winter', 3)"));
    let rechunk = sqlstate(admin.batch_execute("SELECT knowledge.rechunk_all()"));
    let config_change = sqlstate(admin.batch_execute(
        "UPDATE knowledge.chunk_configs SET cfg = '{\"strategy\": \"fixed\", \"max_size\": 300}' WHERE name = 'small'",
    ));
    assert_eq!(
        (temporary.as_str(), search.as_str(), rechunk.as_str(), config_change.as_str()),
        ("22023", "00000", "00000", "00000"),
        "(a temporary language, then a search, rechunk_all and a config change once a language is gone)"
    );
    let bees: i64 = admin
        .query_one("SELECT count(*) FROM knowledge.search('bees in winter', 3) WHERE content LIKE 'Bees%'", &[])
        .unwrap()
        .get(0);
    assert_eq!(bees, 1, "the other documents are still found");
}

/// No drop deletes the documents unasked: each way to reach knowledge.documents is refused
/// (2BP01, by pg_chunk's own check) while it holds rows, and they are all there after; emptying
/// it first is the way.
#[test]
fn dropping_never_deletes_documents_unasked() {
    const DATABASE: &str = "attacks_drops";
    let mut admin = store(DATABASE);
    admin
        .batch_execute("INSERT INTO knowledge.documents (content) VALUES ('Bees keep the hive warm in winter.')")
        .unwrap();
    for drop in [
        "DROP EXTENSION pg_chunk",
        "DROP EXTENSION pg_chunk CASCADE",
        "DROP EXTENSION vector CASCADE",
        "DROP SCHEMA public CASCADE",
    ] {
        // A new session each, as an administrator's would be.
        let mut session = connect_database(DATABASE);
        let refused = session.batch_execute(&format!("SET client_min_messages = error; {drop}")).err();
        let kept: i64 = admin
            .query_one("SELECT CASE WHEN to_regclass('knowledge.documents') IS NULL THEN 0 ELSE 1 END::bigint", &[])
            .unwrap()
            .get(0);
        assert_eq!(kept, 1, "{drop} dropped knowledge.documents and its documents");
        let refused =
            refused.and_then(|e| e.as_db_error().map(|db| (db.code().code().to_string(), db.message().to_string())));
        assert_eq!(
            refused,
            Some((
                "2BP01".to_string(),
                "this would drop table knowledge.documents and the documents in it".to_string()
            )),
            "{drop}"
        );
    }
    let kept: i64 = admin.query_one("SELECT count(*) FROM knowledge.documents", &[]).unwrap().get(0);
    assert_eq!(kept, 1);
    admin.batch_execute("BEGIN; TRUNCATE knowledge.documents CASCADE; DROP EXTENSION pg_chunk; COMMIT").unwrap();
    let gone: bool =
        admin.query_one("SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_chunk')", &[]).unwrap().get(0);
    assert!(gone, "emptied first, the store drops");
}

/// The vectors the store keeps for one chunk config serve only that config: a writer of one
/// learns nothing from its reuse figures of what another config's documents hold.
#[test]
fn stored_vectors_are_reused_within_a_chunk_config_only() {
    const DATABASE: &str = "attacks_stored_vectors";
    let mut admin = store(DATABASE);
    admin
        .batch_execute(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, model, active) VALUES ('tenant_a', 'all-minilm-l6-v2', false), ('tenant_b', 'all-minilm-l6-v2', false);",
        )
        .unwrap();
    let secret = "The merger with Initech closes on the first of March. Nobody outside the board knows yet.";
    // Each write in a new backend, so that no backend's cache answers it.
    let reused = |config: &str| -> i64 {
        let mut writer = connect_database(DATABASE);
        writer
            .execute("INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1, $2)", &[&secret, &config])
            .unwrap();
        writer
            .query_one(
                "SELECT w.vectors_reused::bigint FROM knowledge.embedding_writes AS w JOIN knowledge.embedding_runs AS r ON r.id = w.run_id
                 WHERE r.chunk_config = $1 ORDER BY w.id DESC LIMIT 1",
                &[&config],
            )
            .unwrap()
            .get(0)
    };
    assert_eq!(reused("tenant_a"), 0);
    assert_eq!(reused("tenant_b"), 0, "tenant_b reused vectors tenant_a's document stored");
    assert!(reused("tenant_b") > 0, "within a config, a repeated text is reused");
}
