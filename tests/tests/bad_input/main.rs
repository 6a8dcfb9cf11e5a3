//! A bad-input matrix over a real connection, the test of docs/errors.md's guarantee that no input
//! gives an internal error or crashes a backend: every public SQL function of pg_chunk, and the
//! store's tables, called with hostile text (NULLs, empty and whitespace-only, one character,
//! punctuation, emoji, mixed and right-to-left scripts, combining marks, control characters, 5 MB
//! without punctuation, 10 MB and 10 MB + 1 byte), hostile cfgs and search options (unknown keys,
//! wrong types, negative, huge, NaN and 1e400 numbers, deep nesting, arrays and nulls), unknown
//! models, wrong roles and dimension mismatches.
//!
//! The matrix is data: tables of texts, cfgs, model names and roles crossed with the functions,
//! each case one statement (a case that writes runs in a transaction that is rolled back). A
//! case either succeeds, and then its rows are checked (chunks are exactly
//! `substr(doc, char_offset + 1, char_length)`, vectors have the model's dimension and no NaN,
//! the store's chunks are exact and embedded), or fails with the SQLSTATE docs/errors.md gives
//! it. Never XX000, never a lost backend: every mismatch is collected and listed
//! at the end, and the server log written meanwhile must hold no crash.

use pg_chunk_client_tests::{connect_database, fresh_database};
use postgres::types::ToSql;
use postgres::Client;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

// The cases per area, the checks of successful rows and the database: modules beside this file.
mod cfgs;
mod checks;
mod database;
mod models;
mod nulls;
mod search;
mod store;
mod texts;

use checks::check;
use database::{crashes_logged_since, prepare_database, prepare_session, retrying, server_log};

const DATABASE: &str = "bad_input";
/// docs/errors.md: max_document_size defaults to 10 MB (crates/pg_chunk_core/src/config.rs).
const MAX_DOCUMENT_SIZE: usize = 10 * 1024 * 1024;
/// Dimension of the lexical embedder and of potion-base-8m.
const DIM_256: i32 = 256;
/// Dimension of all-minilm-l6-v2.
const DIM_384: i32 = 384;

type Doc = Rc<str>;

/// What a case must do.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Succeed, with exactly this many rows when given.
    Ok(Option<usize>),
    /// Fail with this SQLSTATE.
    Fails(&'static str),
    /// One of these outcomes ("00000" = success, then checked), where the docs leave it open.
    OneOf(&'static [&'static str]),
}

const OK: Expect = Expect::Ok(None);
const NO_ROWS: Expect = Expect::Ok(Some(0));
const ONE_ROW: Expect = Expect::Ok(Some(1));
const BAD_CFG: Expect = Expect::Fails("22023");
const TOO_BIG: Expect = Expect::Fails("54000");
const UNKNOWN: Expect = Expect::Fails("42704");
const MISFIT: Expect = Expect::Fails("42P17");
const NOT_NULL: Expect = Expect::Fails("23502");
const CHECK_VIOLATION: Expect = Expect::Fails("23514");
const DENIED: Expect = Expect::Fails("42501");

/// How the rows of a successful case are checked.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Check {
    Nothing,
    /// (index int, content text, char_offset int, char_length int[, token_count int]), in order:
    /// indexes count from 0 and each content is the document's characters at its offsets. The
    /// document is the case's first parameter.
    Spans,
    /// chunk_explain: (sentence_index, char_offset, char_length, distance, smoothed_distance,
    /// threshold, score): in order, inside the document, no NaN.
    Explain,
    /// One text: a whole SVG document without NaN.
    Svg,
    /// (dims int, has_nan bool) per row: each non-NULL vector has this dimension and no NaN.
    Vectors(i32),
    /// Every non-NULL first column (an int) is at least 0.
    Count,
    /// One row whose first column is true.
    IsTrue,
    /// knowledge.search: (chunk_id bigint, score float8, similarity float8): finite scores, no
    /// NaN similarity.
    Search,
    /// `INSERT INTO knowledge.documents … RETURNING id`: the document's chunks are exact, embedded
    /// with their model's dimension and free of NaN.
    Stored,
    /// Every chunk in the store is exact and embedded (after attach, mirroring, config changes).
    StoreExact,
}

struct Case {
    label: String,
    sql: String,
    /// $1, $2, …: all text.
    params: Vec<Option<Doc>>,
    /// Statements run first; set for cases that write: they run in a transaction rolled back after.
    setup: Vec<String>,
    in_transaction: bool,
    check: Check,
    expect: Expect,
}

#[derive(Default)]
struct Matrix {
    cases: Vec<Case>,
}

impl Matrix {
    fn add(
        &mut self,
        label: impl Into<String>,
        sql: impl Into<String>,
        params: Vec<Option<Doc>>,
        check: Check,
        expect: Expect,
    ) -> &mut Case {
        self.cases.push(Case {
            label: label.into(),
            sql: sql.into(),
            params,
            setup: Vec::new(),
            in_transaction: false,
            check,
            expect,
        });
        self.cases.last_mut().unwrap()
    }
}

impl Case {
    /// Runs the case in a transaction that is rolled back, after `setup`.
    fn rolled_back(&mut self, setup: &[&str]) -> &mut Case {
        self.in_transaction = true;
        self.setup = setup.iter().map(|s| s.to_string()).collect();
        self
    }
}

fn doc(text: &str) -> Option<Doc> {
    Some(Rc::from(text))
}

// ---------------------------------------------------------------------------------------------
// The matrix.

fn matrix() -> Vec<Case> {
    let mut m = Matrix::default();
    texts::texts_by_functions(&mut m);
    cfgs::cfgs_by_functions(&mut m);
    nulls::nulls(&mut m);
    models::models_and_roles(&mut m);
    models::dimension_mismatches(&mut m);
    search::search_options(&mut m);
    store::store(&mut m);
    m.cases
}

// ---------------------------------------------------------------------------------------------
// Running and judging.

struct Outcome {
    /// "00000" for success, the SQLSTATE of an error, or "lost" / "client" when there was none.
    code: String,
    message: String,
    rows: usize,
    /// What the rows of a success got wrong.
    problem: Option<String>,
    elapsed: Duration,
}

fn describe(e: &postgres::Error) -> (String, String) {
    match e.as_db_error() {
        Some(db) => (db.code().code().to_string(), db.message().to_string()),
        None if e.is_closed() => ("lost".to_string(), e.to_string()),
        None => ("client".to_string(), e.to_string()),
    }
}

fn run_case(client: &mut Client, case: &Case) -> Outcome {
    let started = Instant::now();
    let values: Vec<Option<&str>> = case.params.iter().map(|p| p.as_deref()).collect();
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
    let mut outcome =
        Outcome { code: "00000".into(), message: String::new(), rows: 0, problem: None, elapsed: Duration::ZERO };
    let result = if case.in_transaction {
        match client.transaction() {
            Err(e) => Err((describe(&e), "begin")),
            Ok(mut tx) => {
                let mut result = Ok(Vec::new());
                for statement in &case.setup {
                    if let Err(e) = tx.batch_execute(statement) {
                        result = Err((describe(&e), "setup"));
                        break;
                    }
                }
                if result.is_ok() {
                    result = tx.query(case.sql.as_str(), &params).map_err(|e| (describe(&e), ""));
                }
                if let Ok(rows) = &result {
                    outcome.problem = check(&mut tx, case, rows);
                }
                let _ = tx.rollback();
                result
            }
        }
    } else {
        let result = client.query(case.sql.as_str(), &params).map_err(|e| (describe(&e), ""));
        if let Ok(rows) = &result {
            outcome.problem = check(client, case, rows);
        }
        result
    };
    match result {
        Ok(rows) => outcome.rows = rows.len(),
        Err(((code, message), stage)) => {
            outcome.code = code;
            outcome.message = if stage.is_empty() { message } else { format!("({stage}) {message}") };
        }
    }
    outcome.elapsed = started.elapsed();
    outcome
}

/// Why an outcome does not match what the case expects, if it does not.
fn verdict(expect: Expect, outcome: &Outcome) -> Option<String> {
    let code = outcome.code.as_str();
    if code == "XX000" {
        return Some("internal error (XX000)".to_string());
    }
    if code == "lost" {
        return Some("the connection was lost".to_string());
    }
    let succeeded = code == "00000";
    let wrong = match expect {
        Expect::Ok(_) if !succeeded => Some("expected success".to_string()),
        Expect::Ok(Some(n)) if outcome.rows != n => Some(format!("expected {n} row(s), got {}", outcome.rows)),
        Expect::Ok(_) => None,
        Expect::Fails(expected) if code != expected => Some(format!("expected SQLSTATE {expected}")),
        Expect::Fails(_) => None,
        Expect::OneOf(codes) if !codes.contains(&code) => Some(format!("expected one of {codes:?}")),
        Expect::OneOf(_) => None,
    };
    wrong.or_else(|| if succeeded { outcome.problem.clone() } else { None })
}

fn truncate(s: &str, chars: usize) -> String {
    let mut t: String = s.chars().take(chars).collect::<String>().escape_debug().to_string();
    if s.chars().count() > chars {
        t.push('…');
    }
    t
}

fn describe_params(params: &[Option<Doc>]) -> String {
    params
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            None => format!("${} = NULL", i + 1),
            Some(p) => format!("${} = \"{}\" ({} bytes)", i + 1, truncate(p, 40), p.len()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn every_function_refuses_bad_input_deliberately() {
    let log_start = std::fs::metadata(server_log())
        .unwrap_or_else(|e| panic!("cannot read the server log {}: {e}", server_log()))
        .len();
    let started = Instant::now();
    let mut client = retrying("making the database", || fresh_database(DATABASE));
    prepare_database(&mut client);
    let original_backend: i32 = client.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);

    let cases = matrix();
    let mut mismatches = Vec::new();
    let mut by_code: BTreeMap<String, usize> = BTreeMap::new();
    let mut timings = Vec::new();
    let mut reconnected = false;
    let mut ok_rows = 0;
    for case in &cases {
        let outcome = run_case(&mut client, case);
        *by_code.entry(outcome.code.clone()).or_default() += 1;
        ok_rows += outcome.rows;
        timings.push((outcome.elapsed, case.label.clone()));
        if let Some(why) = verdict(case.expect, &outcome) {
            mismatches.push(format!(
                "{}\n    sql: {}\n    params: {}\n    {why}; got {} {}",
                case.label,
                truncate(&case.sql, 200),
                describe_params(&case.params),
                outcome.code,
                truncate(&outcome.message, 300)
            ));
        }
        if client.is_closed() {
            reconnected = true;
            client = retrying("reconnecting", || connect_database(DATABASE));
            prepare_session(&mut client);
        }
    }

    // The connection that ran every case is still the same backend, alive.
    let alive = client.query_one("SELECT pg_backend_pid(), 1", &[]);
    let still_alive =
        matches!(&alive, Ok(row) if row.get::<_, i32>(0) == original_backend && row.get::<_, i32>(1) == 1);

    let ok = by_code.get("00000").copied().unwrap_or(0);
    let errors: Vec<String> = by_code.iter().filter(|(c, _)| *c != "00000").map(|(c, n)| format!("{c}: {n}")).collect();
    println!(
        "bad_input: {} cases in {:.1} s: {ok} ok ({ok_rows} rows), errors by SQLSTATE: {}; {} mismatch(es)",
        cases.len(),
        started.elapsed().as_secs_f64(),
        errors.join(", "),
        mismatches.len()
    );
    timings.sort_by_key(|t| std::cmp::Reverse(t.0));
    for (elapsed, label) in timings.iter().take(8) {
        println!("  slowest: {:>7.3} s  {label}", elapsed.as_secs_f64());
    }

    let crashes = crashes_logged_since(log_start);
    let mut failures = Vec::new();
    if !mismatches.is_empty() {
        failures.push(format!(
            "{} of {} cases did not do what the docs say:\n  {}",
            mismatches.len(),
            cases.len(),
            mismatches.join("\n  ")
        ));
    }
    if reconnected || !still_alive {
        failures.push(format!(
            "the test's connection did not survive the matrix (reconnected: {reconnected}, final check: {:?})",
            alive.map(|r| r.get::<_, i32>(0))
        ));
    }
    if !crashes.is_empty() {
        failures.push(format!("the server log tells of crashes during the test:\n  {}", crashes.join("\n  ")));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
