//! Running a page: its database made afresh, each block in a psql session of its own, the output
//! cut at the statement markers and compared.

use super::blocks::{created_roles, parse_page, Statement};
use super::compare::{expected_lines, mismatch_report, outputs_match, transcript};
use super::{DATABASE, STATEMENT_MARKER};
use pg_chunk_client_tests::{connection_string, describe_error, fresh_database, wait_for_worker};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// The page's database made afresh, without the roles its statements create.
pub(super) fn fresh_page_database(roles: &[String]) -> Result<postgres::Client, String> {
    let mut client = fresh_database(DATABASE);
    for role in roles {
        client.batch_execute(&format!("DROP ROLE IF EXISTS {role}")).map_err(|e| {
            format!(
                "the page creates role {role}, and dropping the one left from before failed: {}",
                describe_error(&e)
            )
        })?;
    }
    Ok(client)
}

/// What psql is sent for a block: each statement after an `\echo` of its marker.
pub(super) fn psql_script(statements: &[Statement]) -> String {
    let mut script = String::new();
    for (n, statement) in statements.iter().enumerate() {
        writeln!(script, "\\echo '{STATEMENT_MARKER} {n}'\n{}", statement.sql).expect("writing to a String");
    }
    script
}

/// psql's output cut at the statement markers: each statement's lines, trailing spaces dropped.
pub(super) fn split_output(output: &str, statements: usize) -> Result<Vec<Vec<String>>, String> {
    let mut parts: Vec<Vec<String>> = Vec::new();
    for line in output.lines() {
        if let Some(n) = line.strip_prefix(STATEMENT_MARKER) {
            if n.trim() != parts.len().to_string() {
                return Err(format!("statement marker {n:?} out of order in psql's output:\n{output}"));
            }
            parts.push(Vec::new());
        } else if let Some(part) = parts.last_mut() {
            part.push(line.trim_end().to_string());
        } else {
            return Err(format!("psql printed before the first statement:\n{output}"));
        }
    }
    if parts.len() != statements {
        return Err(format!("psql ran {} of {statements} statements:\n{output}", parts.len()));
    }
    Ok(parts)
}

/// Runs `script` in a new psql session; returns what it printed, stdout and stderr in one.
pub(super) fn run_psql(psql: &Path, root: &Path, script: &str) -> Result<String, String> {
    let path = std::env::temp_dir().join(format!("pg_chunk_docs_examples_{}.out", std::process::id()));
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stdout = file.try_clone().map_err(|e| format!("{}: {e}", path.display()))?;
    let mut child = Command::new(psql)
        .args(["-X", "-q", "-P", "pager=off", "-d", &connection_string(&format!("pg_chunk_test_{DATABASE}"))])
        .current_dir(root)
        .env("PGCLIENTENCODING", "UTF8")
        .env_remove("PGOPTIONS")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(file)
        .spawn()
        .map_err(|e| format!("{}: {e}", psql.display()))?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(script.as_bytes())
        .map_err(|e| format!("psql's stdin: {e}"))?;
    let status = child.wait().map_err(|e| format!("psql: {e}"))?;
    let output = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::remove_file(&path).ok();
    if !status.success() {
        return Err(format!("psql exited with {status}:\n{output}"));
    }
    Ok(output)
}

/// Whether the server starts a queue worker for the test database.
pub(super) fn database_has_worker(client: &mut postgres::Client) -> bool {
    let setting: Option<String> = client
        .query_one("SELECT current_setting('pg_chunk.worker_databases', true)", &[])
        .expect("reading pg_chunk.worker_databases")
        .get(0);
    let database = format!("pg_chunk_test_{DATABASE}");
    setting.is_some_and(|s| s.split(',').any(|d| d.trim() == database))
}

#[derive(Default)]
pub(super) struct PageRun {
    pub(super) run: usize,
    pub(super) not_run: Vec<String>,
    pub(super) failures: Vec<String>,
    /// Blocks rewritten in bless mode: (first line index, end index, new lines).
    pub(super) blessed: Vec<(usize, usize, Vec<String>)>,
}

pub(super) fn run_page(root: &Path, psql: &Path, page: &str, text: &str, bless: bool) -> PageRun {
    let mut result = PageRun::default();
    let blocks = match parse_page(page, text) {
        Ok(blocks) => blocks,
        Err(e) => {
            result.failures.push(e);
            return result;
        }
    };
    if blocks.is_empty() {
        return result;
    }
    let roles = created_roles(&blocks);
    let mut client = match fresh_page_database(&roles) {
        Ok(client) => client,
        Err(e) => {
            result.failures.push(format!("{page}: {e}"));
            return result;
        }
    };
    for block in &blocks {
        let at = format!("{page}:{}", block.start + 1);
        if let Some(reason) = &block.markers.not_run {
            result.not_run.push(format!("{at}: {reason}"));
            continue;
        }
        if block.markers.new_database {
            client = match fresh_page_database(&roles) {
                Ok(client) => client,
                Err(e) => {
                    result.failures.push(format!("{at}: {e}"));
                    return result;
                }
            };
        }
        if block.markers.needs_worker {
            if !database_has_worker(&mut client) {
                result.failures.push(format!(
                    "{at}: the block needs a queue worker, but pg_chunk.worker_databases does not list \
                     pg_chunk_test_{DATABASE} (scripts/test.sh's configure_workers sets it)"
                ));
                continue;
            }
            wait_for_worker(&mut client);
        }
        result.run += 1;
        let outputs = run_psql(psql, root, &psql_script(&block.statements))
            .and_then(|output| split_output(&output, block.statements.len()));
        let actual = match outputs {
            Ok(outputs) => transcript(&block.statements, &outputs),
            Err(e) => {
                result.failures.push(format!("{at}: {e}"));
                continue;
            }
        };
        let expected = expected_lines(block);
        match outputs_match(&expected, &actual, &block.markers) {
            Ok(true) => {}
            Ok(false) if bless => result.blessed.push((block.start, block.start + block.lines.len(), actual)),
            Ok(false) => result.failures.push(mismatch_report(page, block, &expected, &actual)),
            Err(e) => result.failures.push(format!("{at}: {e}")),
        }
    }
    result
}
