//! Docs that cannot rot (issue 24 §2): every psql example in README.md and docs/*.md is run with
//! psql against a database made afresh, and what psql prints is compared with what the page shows.
//! A changed behaviour fails here until the page is updated.
//!
//! **What is an example.** A fenced code block whose first line starts with the prompt
//! `pg_chunk_demo=# ` (psql's default `%/%R%x%# `, so `pg_chunk_demo=*# ` inside a transaction and
//! `pg_chunk_demo=> ` for a role that is not a superuser are prompts too; which one a page shows is
//! not checked). A statement starts at a prompt: a meta-command (`\set doc ...`) is that one line;
//! SQL goes on over the indented lines below it up to the line that ends with `;`. The lines after
//! a statement, up to the next prompt, are its output as psql prints it, NOTICE, HINT and ERROR
//! lines included. Other blocks (shell commands, SQL without a prompt) are not run.
//!
//! **Markers** are HTML comments (not shown on the rendered page) on the lines right above the
//! opening fence:
//! - `<!-- not run: <reason> -->`: the block is not run (it needs a second server, say); the test
//!   counts and prints it with its reason.
//! - `<!-- varies: <column>, <column> -->`: in the block's tables, the cells of these columns are
//!   not compared (timings, ages). Everything else still is: the column names, the other cells of
//!   every row, the number of rows, every line outside those tables. Each name must be a column of
//!   a table in the block, so a marker that masks nothing fails rather than lingers.
//! - `<!-- needs: worker -->`: the block needs pg_chunk's background worker in the test database
//!   (the queue's examples); the test waits until it is connected, and fails if the server does not
//!   list the database in `pg_chunk.worker_databases`.
//! - `<!-- database: new -->`: the block starts in a database made afresh again, for an example
//!   that must not see what the page's earlier blocks wrote.
//!
//! Any other comment of the form `key: value` right above a block is an error, so a misspelt
//! marker cannot turn a check off.
//!
//! **How a page runs.** Each page gets the database `pg_chunk_test_docs`, made afresh with
//! `CREATE EXTENSION pg_chunk CASCADE`, and its blocks run in page order, each in a psql session of
//! its own: a block is what a reader types into a new psql. Blocks build on the rows earlier ones
//! wrote (documents inserted, then searched), and since nothing else writes that database, ids made
//! by sequences come out the same on every run: pages show them as they are, with no marker. Blocks
//! do not share a session, because some show per-session state (`knowledge.embedding_stats()`
//! counts this backend's embedding cache; an example ends with `SET ROLE app`). Roles belong to
//! the cluster, not the database: a role a page's statements create (`CREATE ROLE app`) is dropped
//! whenever the page's database is made afresh, so that the page runs again.
//!
//! psql is the server's own (`pg_config`'s BINDIR), run as `psql -X -q -P pager=off` (no psqlrc,
//! no command tags such as `INSERT 0 1`, which pages do not show) with `PGCLIENTENCODING=UTF8`,
//! from the repository root (for `\set doc `cat examples/sample.txt``), reading the block's
//! statements from stdin (so errors carry no `psql:file:line:` prefix). Before each statement the
//! script has psql `\echo` a marker line; what psql prints between two markers is that statement's
//! output. NOTICEs and errors go to psql's stderr: its stdout and stderr are the same open file
//! (one file offset), and psql's logging flushes stdout before it writes to stderr, so the file
//! holds them in the order a terminal shows them, on every run.
//!
//! **Comparing.** Lines are compared after trailing whitespace is dropped (psql pads its last
//! column; pages keep no trailing spaces), and blank lines at the end of a block are ignored. A
//! mismatch names the page and the block's first line and shows a diff, page lines numbered.
//!
//! **Bless.** `PG_CHUNK_DOCS_BLESS=1` rewrites every block whose output differs with the transcript
//! of the run (the page's statements, psql's output under each) instead of failing; review the
//! pages with `git diff`. Blocks that match, varying cells included, are left as they are.
//! `PG_CHUNK_DOCS_PAGES=README.md,docs/store.md` runs only those pages (paths from the repository
//! root).

use pg_chunk_client_tests::{connection_string, describe_error, fresh_database, server_dir, wait_for_worker};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The database name the pages' prompts show.
const PROMPT_DATABASE: &str = "pg_chunk_demo";
/// `fresh_database`'s name for `pg_chunk_test_docs`.
const DATABASE: &str = "docs";
const BLESS_VARIABLE: &str = "PG_CHUNK_DOCS_BLESS";
const PAGES_VARIABLE: &str = "PG_CHUNK_DOCS_PAGES";
/// What psql echoes before each statement's output; no page shows a line that starts with it.
const STATEMENT_MARKER: &str = "@@ pg_chunk docs statement";

#[derive(Debug, Default, PartialEq)]
struct Markers {
    not_run: Option<String>,
    varies: Vec<String>,
    needs_worker: bool,
    new_database: bool,
}

#[derive(Debug)]
struct Statement {
    /// The page's line number (1-based) of the statement's prompt.
    line: usize,
    /// The statement's lines as the page has them, prompt included.
    source: Vec<String>,
    /// What psql is sent: the prompt and the continuation lines' indentation taken off.
    sql: String,
}

#[derive(Debug)]
struct Block {
    /// Index (0-based) in the page of the block's first line, the one after the opening fence.
    start: usize,
    /// The block's lines, fences left out.
    lines: Vec<String>,
    markers: Markers,
    statements: Vec<Statement>,
}

/// The length of the psql prompt `line` starts with (`pg_chunk_demo=# `, `=*# `, `=> `, ...), if any.
fn prompt_length(line: &str) -> Option<usize> {
    let rest = line.strip_prefix(PROMPT_DATABASE)?.strip_prefix('=')?;
    let rest = rest.strip_prefix(['*', '!', '?']).unwrap_or(rest);
    let rest = rest.strip_prefix(['#', '>'])?.strip_prefix(' ')?;
    Some(line.len() - rest.len())
}

/// The HTML comments on the lines right above line `fence`, in page order, with their indices.
fn comments_above(lines: &[&str], fence: usize) -> Vec<(usize, String)> {
    let mut comments = Vec::new();
    for i in (0..fence).rev() {
        let line = lines[i].trim();
        match line.strip_prefix("<!--").and_then(|l| l.strip_suffix("-->")) {
            Some(inner) => comments.push((i, inner.trim().to_string())),
            None => break,
        }
    }
    comments.reverse();
    comments
}

/// The markers in `comments`; an error for a `key: value` comment that is no marker.
fn parse_markers(page: &str, comments: &[(usize, String)]) -> Result<Markers, String> {
    let mut markers = Markers::default();
    for (index, comment) in comments {
        let Some((key, value)) = comment.split_once(':') else { continue };
        let value = value.trim();
        let at = format!("{page}:{}", index + 1);
        match key.trim() {
            "not run" if value.is_empty() => return Err(format!("{at}: `not run` needs a reason")),
            "not run" => markers.not_run = Some(value.to_string()),
            "varies" => {
                let names: Vec<String> = value.split(',').map(|n| n.trim().to_string()).collect();
                if names.iter().any(String::is_empty) {
                    return Err(format!("{at}: `varies` needs column names separated by commas, got {value:?}"));
                }
                markers.varies.extend(names);
            }
            "needs" if value == "worker" => markers.needs_worker = true,
            "database" if value == "new" => markers.new_database = true,
            other => {
                return Err(format!(
                    "{at}: unknown marker `{other}: {value}` (known: `not run: <reason>`, \
                     `varies: <columns>`, `needs: worker`, `database: new`)"
                ))
            }
        }
    }
    Ok(markers)
}

/// The statements of a psql block whose first line is page line `first` (0-based index).
fn parse_statements(page: &str, first: usize, body: &[&str]) -> Result<Vec<Statement>, String> {
    let mut statements: Vec<Statement> = Vec::new();
    // The prompt's length while the last statement still waits for its `;`.
    let mut unfinished: Option<usize> = None;
    for (k, line) in body.iter().enumerate() {
        let number = first + k + 1;
        if let Some(length) = prompt_length(line) {
            if let (Some(_), Some(last)) = (unfinished, statements.last()) {
                return Err(format!(
                    "{page}:{}: the statement does not end with `;` before the next prompt",
                    last.line
                ));
            }
            let text = &line[length..];
            if !text.starts_with('\\') && !text.trim_end().ends_with(';') {
                unfinished = Some(length);
            }
            statements.push(Statement { line: number, source: vec![line.to_string()], sql: text.to_string() });
        } else if let Some(length) = unfinished {
            let statement = statements.last_mut().expect("an unfinished statement exists");
            let indent = line.len() - line.trim_start_matches(' ').len();
            statement.source.push(line.to_string());
            statement.sql.push('\n');
            statement.sql.push_str(&line[indent.min(length)..]);
            if line.trim_end().ends_with(';') {
                unfinished = None;
            }
        }
        // Any other line is output, compared as part of the block's transcript.
    }
    match (unfinished, statements.last()) {
        (Some(_), Some(last)) => Err(format!("{page}:{}: the statement does not end with `;`", last.line)),
        _ => Ok(statements),
    }
}

/// The psql blocks of a page; an error for an unclosed fence, a statement without its `;`, or a
/// marker that is unknown or stands above a block that is not run anyway.
fn parse_page(page: &str, text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("```") {
            i += 1;
            continue;
        }
        let open = i;
        let close = (open + 1..lines.len())
            .find(|&j| lines[j].trim() == "```")
            .ok_or_else(|| format!("{page}:{}: the code block is never closed", open + 1))?;
        let body = &lines[open + 1..close];
        let comments = comments_above(&lines, open);
        let markers = parse_markers(page, &comments)?;
        if body.first().is_some_and(|line| prompt_length(line).is_some()) {
            let statements = parse_statements(page, open + 1, body)?;
            blocks.push(Block {
                start: open + 1,
                lines: body.iter().map(|l| l.to_string()).collect(),
                markers,
                statements,
            });
        } else if markers != Markers::default() {
            return Err(format!("{page}:{}: a marker above a block that is not a psql session", open + 1));
        }
        i = close + 1;
    }
    Ok(blocks)
}

/// The roles the pages' statements create, as written after `CREATE ROLE` or `CREATE USER`.
fn created_roles(blocks: &[Block]) -> Vec<String> {
    let mut roles: Vec<String> = Vec::new();
    for statement in blocks.iter().flat_map(|b| &b.statements) {
        let words: Vec<&str> = statement.sql.split_whitespace().collect();
        if let [create, kind, name, ..] = words[..] {
            if create.eq_ignore_ascii_case("create")
                && (kind.eq_ignore_ascii_case("role") || kind.eq_ignore_ascii_case("user"))
            {
                let name = name.trim_end_matches(';').to_string();
                if !roles.contains(&name) {
                    roles.push(name);
                }
            }
        }
    }
    roles
}

/// The page's database made afresh, without the roles its statements create.
fn fresh_page_database(roles: &[String]) -> Result<postgres::Client, String> {
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
fn psql_script(statements: &[Statement]) -> String {
    let mut script = String::new();
    for (n, statement) in statements.iter().enumerate() {
        writeln!(script, "\\echo '{STATEMENT_MARKER} {n}'\n{}", statement.sql).expect("writing to a String");
    }
    script
}

/// psql's output cut at the statement markers: each statement's lines, trailing spaces dropped.
fn split_output(output: &str, statements: usize) -> Result<Vec<Vec<String>>, String> {
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

/// A block as the page would show this run: each statement as the page has it, then its output.
fn transcript(statements: &[Statement], outputs: &[Vec<String>]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for (statement, output) in statements.iter().zip(outputs) {
        lines.extend(statement.source.iter().map(|l| l.trim_end().to_string()));
        lines.extend(output.iter().cloned());
    }
    drop_trailing_blank_lines(lines)
}

fn drop_trailing_blank_lines(mut lines: Vec<String>) -> Vec<String> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// The block as the page shows it, compared the same way: trailing spaces and blank lines dropped.
fn expected_lines(block: &Block) -> Vec<String> {
    drop_trailing_blank_lines(block.lines.iter().map(|l| l.trim_end().to_string()).collect())
}

/// `-------+------` under a table's header.
fn is_separator(line: &str) -> bool {
    line.starts_with('-') && line.chars().all(|c| c == '-' || c == '+')
}

/// `(3 rows)` under a table.
fn is_footer(line: &str) -> bool {
    line.strip_prefix('(')
        .and_then(|l| l.strip_suffix(" rows)").or_else(|| l.strip_suffix(" row)")))
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn cells(line: &str) -> Vec<&str> {
    line.split('|').map(str::trim).collect()
}

/// A table in psql's aligned format: `header` is the index of its column names' line, and its
/// rows run from `header + 2` up to `end` (the footer's index, or the end of its lines).
struct Table {
    header: usize,
    columns: Vec<String>,
    end: usize,
}

fn find_tables(lines: &[String]) -> Vec<Table> {
    let mut tables = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        if !lines[i].is_empty() && is_separator(&lines[i + 1]) {
            let end = (i + 2..lines.len()).find(|&j| is_footer(&lines[j])).unwrap_or(lines.len());
            tables.push(Table { header: i, columns: cells(&lines[i]).iter().map(|c| c.to_string()).collect(), end });
            i = end;
        } else {
            i += 1;
        }
    }
    tables
}

/// Whether psql's transcript `actual` is the page's `expected`, the cells of the `varies` columns
/// left out; an error when a `varies` name is no column of the block's tables.
fn outputs_match(expected: &[String], actual: &[String], varies: &[String]) -> Result<bool, String> {
    let tables = find_tables(expected);
    if let Some(name) = varies.iter().find(|name| !tables.iter().any(|t| t.columns.contains(name))) {
        return Err(format!("`varies: {name}` names no column of the block's tables"));
    }
    if expected.len() != actual.len() {
        return Ok(false);
    }
    // Per line of a table with a varying column: which of its cells are not compared.
    let mut masks: HashMap<usize, Vec<bool>> = HashMap::new();
    for table in &tables {
        let mask: Vec<bool> = table.columns.iter().map(|c| varies.contains(c)).collect();
        if mask.contains(&true) {
            for row in table.header + 2..table.end {
                masks.insert(row, mask.clone());
            }
            // Its header and separator: the same columns, padded to the widths of this run's values.
            masks.insert(table.header, vec![false; mask.len()]);
            masks.insert(table.header + 1, Vec::new());
        }
    }
    Ok(expected.iter().zip(actual).enumerate().all(|(i, (e, a))| match masks.get(&i) {
        None => e == a,
        Some(mask) if mask.is_empty() => is_separator(a) && e.matches('+').count() == a.matches('+').count(),
        Some(mask) => {
            let (e, a) = (cells(e), cells(a));
            e.len() == mask.len()
                && a.len() == mask.len()
                && mask.iter().zip(e.iter().zip(&a)).all(|(m, (x, y))| *m || x == y)
        }
    }))
}

/// A diff of the page's lines (numbered as in the page, from `first_line`) against psql's.
fn line_diff(expected: &[String], actual: &[String], first_line: usize) -> String {
    let (n, m) = (expected.len(), actual.len());
    // Longest common subsequence lengths of the suffixes.
    let mut common = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            common[i][j] = if expected[i] == actual[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let mut diff = String::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            writeln!(diff, "{:>5}   {}", first_line + i, expected[i]).expect("writing to a String");
            (i, j) = (i + 1, j + 1);
        } else if i < n && (j == m || common[i + 1][j] >= common[i][j + 1]) {
            writeln!(diff, "{:>5} - {}", first_line + i, expected[i]).expect("writing to a String");
            i += 1;
        } else {
            writeln!(diff, "      + {}", actual[j]).expect("writing to a String");
            j += 1;
        }
    }
    diff
}

/// The failure report of a block whose output differs from its page.
fn mismatch_report(page: &str, block: &Block, expected: &[String], actual: &[String]) -> String {
    let varies = if block.markers.varies.is_empty() {
        String::new()
    } else {
        format!("; the cells of {} are not compared", block.markers.varies.join(", "))
    };
    format!(
        "{page}:{}: psql's output differs from the page (- page, + psql{varies}):\n{}",
        block.start + 1,
        line_diff(expected, actual, block.start + 1)
    )
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is inside the repository").to_path_buf()
}

/// README.md and docs/*.md, or the pages `PG_CHUNK_DOCS_PAGES` names.
fn pages(root: &Path) -> Vec<String> {
    if let Ok(list) = std::env::var(PAGES_VARIABLE) {
        return list.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect();
    }
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|name| name.ends_with(".md"))
                .map(|name| format!("docs/{name}"))
                .collect()
        })
        .unwrap_or_default();
    docs.sort();
    std::iter::once("README.md".to_string()).chain(docs).collect()
}

/// Runs `script` in a new psql session; returns what it printed, stdout and stderr in one.
fn run_psql(psql: &Path, root: &Path, script: &str) -> Result<String, String> {
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
fn database_has_worker(client: &mut postgres::Client) -> bool {
    let setting: Option<String> = client
        .query_one("SELECT current_setting('pg_chunk.worker_databases', true)", &[])
        .expect("reading pg_chunk.worker_databases")
        .get(0);
    let database = format!("pg_chunk_test_{DATABASE}");
    setting.is_some_and(|s| s.split(',').any(|d| d.trim() == database))
}

#[derive(Default)]
struct PageRun {
    run: usize,
    not_run: Vec<String>,
    failures: Vec<String>,
    /// Blocks rewritten in bless mode: (first line index, end index, new lines).
    blessed: Vec<(usize, usize, Vec<String>)>,
}

fn run_page(root: &Path, psql: &Path, page: &str, text: &str, bless: bool) -> PageRun {
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
        match outputs_match(&expected, &actual, &block.markers.varies) {
            Ok(true) => {}
            Ok(false) if bless => result.blessed.push((block.start, block.start + block.lines.len(), actual)),
            Ok(false) => result.failures.push(mismatch_report(page, block, &expected, &actual)),
            Err(e) => result.failures.push(format!("{at}: {e}")),
        }
    }
    result
}

/// The page with the blessed blocks' lines replaced.
fn blessed_page(text: &str, blessed: &[(usize, usize, Vec<String>)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for (start, end, new) in blessed.iter().rev() {
        lines.splice(start..end, new.iter().cloned());
    }
    let mut page = lines.join("\n");
    if text.ends_with('\n') {
        page.push('\n');
    }
    page
}

#[test]
fn every_psql_example_on_the_pages_prints_what_the_page_shows() {
    let started = Instant::now();
    let root = repository_root();
    let bless = std::env::var(BLESS_VARIABLE).is_ok_and(|v| v == "1");
    let mut client = fresh_database(DATABASE);
    let psql = Path::new(&server_dir(&mut client, "BINDIR")).join("psql");
    drop(client);
    let mut summary = Vec::new();
    let mut failures = Vec::new();
    for page in pages(&root) {
        let path = root.join(&page);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let page_started = Instant::now();
        let run = run_page(&root, &psql, &page, &text, bless);
        summary.push(format!(
            "{page}: {} blocks run, {} not run, {} failed{} ({:.1} s)",
            run.run,
            run.not_run.len(),
            run.failures.len(),
            if bless { format!(", {} blessed", run.blessed.len()) } else { String::new() },
            page_started.elapsed().as_secs_f64()
        ));
        summary.extend(run.not_run.iter().map(|n| format!("  not run: {n}")));
        if !run.blessed.is_empty() {
            std::fs::write(&path, blessed_page(&text, &run.blessed))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        failures.extend(run.failures);
    }
    summary.push(format!("{:.1} s in all", started.elapsed().as_secs_f64()));
    let summary = summary.join("\n");
    println!("{summary}");
    assert!(
        failures.is_empty(),
        "{summary}\n\n{} failures ({BLESS_VARIABLE}=1 rewrites differing blocks with psql's output):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[cfg(test)]
mod harness {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    const PAGE: &str = "\
# A page

```
$ psql -d pg_chunk_demo
```

```
SELECT 1;
```

<!-- varies: load_ms -->
```
pg_chunk_demo=# \\set doc `cat examples/sample.txt`
pg_chunk_demo=# SELECT model, load_ms
                FROM knowledge.embedding_stats();
NOTICE:  something
 model | load_ms
-------+---------
 m     |      50
(1 row)

pg_chunk_demo=# BEGIN;
pg_chunk_demo=*# SELECT 1;
```

<!-- not run: needs a standby -->
```
pg_chunk_demo=> SELECT pg_promote();
```

<!-- database: new -->
```
pg_chunk_demo=# CREATE ROLE app;
pg_chunk_demo=# create user \"Reader\";
```
";

    #[test]
    fn the_parser_finds_psql_sessions_their_statements_and_markers() {
        let blocks = parse_page("page.md", PAGE).unwrap();
        // The shell and the prompt-less SQL blocks are not examples.
        assert_eq!(blocks.len(), 3);
        let session = &blocks[0];
        assert_eq!(session.start, 12);
        assert_eq!(session.markers, Markers { varies: vec!["load_ms".to_string()], ..Markers::default() });
        let statements: Vec<(usize, &str)> = session.statements.iter().map(|s| (s.line, s.sql.as_str())).collect();
        assert_eq!(
            statements,
            [
                (13, "\\set doc `cat examples/sample.txt`"),
                (14, "SELECT model, load_ms\nFROM knowledge.embedding_stats();"),
                (22, "BEGIN;"),
                (23, "SELECT 1;"),
            ]
        );
        assert_eq!(session.statements[1].source.len(), 2);
        assert_eq!(blocks[1].markers.not_run.as_deref(), Some("needs a standby"));
        assert_eq!(blocks[1].statements[0].sql, "SELECT pg_promote();");
        assert!(blocks[2].markers.new_database);
        // Roles outlive the database: the page's are dropped before it runs.
        assert_eq!(created_roles(&blocks), ["app", "\"Reader\""]);
    }

    #[test]
    fn the_parser_refuses_unknown_markers_unfinished_statements_and_stray_markers() {
        let unknown = "<!-- vary: load_ms -->\n```\npg_chunk_demo=# SELECT 1;\n```\n";
        assert!(parse_page("p.md", unknown).unwrap_err().starts_with("p.md:1: unknown marker `vary: load_ms`"));
        let unfinished = "```\npg_chunk_demo=# SELECT 1\n 1\n```\n";
        assert!(parse_page("p.md", unfinished).unwrap_err().contains("p.md:2: the statement does not end with `;`"));
        let stray = "<!-- not run: no reason -->\n```\nSELECT 1;\n```\n";
        assert!(parse_page("p.md", stray).unwrap_err().contains("not a psql session"));
        let open = "```\npg_chunk_demo=# SELECT 1;\n";
        assert!(parse_page("p.md", open).unwrap_err().contains("never closed"));
    }

    #[test]
    fn output_is_cut_at_the_markers_and_laid_out_as_the_page_shows_it() {
        let blocks = parse_page("page.md", PAGE).unwrap();
        let session = &blocks[0];
        let script = psql_script(&session.statements);
        assert!(script.starts_with("\\echo '@@ pg_chunk docs statement 0'\n\\set doc"), "{script}");
        let output = format!(
            "{STATEMENT_MARKER} 0\n{STATEMENT_MARKER} 1\nNOTICE:  something\n model | load_ms \n\
             -------+---------\n m     |      50\n(1 row)\n\n{STATEMENT_MARKER} 2\n{STATEMENT_MARKER} 3\n \
             ?column? \n----------\n        1\n(1 row)\n\n"
        );
        let outputs = split_output(&output, 4).unwrap();
        let actual = transcript(&session.statements, &outputs);
        let expected = expected_lines(session);
        assert_eq!(actual[..expected.len()], expected[..], "trailing spaces dropped, statements as on the page");
        // The page shows nothing under `SELECT 1;`: that is a mismatch.
        assert!(!outputs_match(&expected, &actual, &session.markers.varies).unwrap());
        assert!(split_output(&output, 5).unwrap_err().contains("ran 4 of 5"));
        assert!(split_output("psql: error: connection refused\n", 1).unwrap_err().contains("before the first"));
    }

    #[test]
    fn varies_masks_only_the_cells_of_its_columns() {
        let page = lines(
            " model | load_ms | loads\n-------+---------+-------\n m     |      50 |     1\n(1 row)\n\nNOTICE:  done",
        );
        // Another time, wider: header and separator are padded anew.
        let slower = lines(
            " model | load_ms  | loads\n-------+----------+-------\n m     |     150 |     1\n(1 row)\n\nNOTICE:  done",
        );
        let varies = vec!["load_ms".to_string()];
        assert!(outputs_match(&page, &slower, &varies).unwrap());
        assert!(!outputs_match(&page, &slower, &[]).unwrap(), "without the marker the timing is compared");
        // The marker masks only its column: another load count, an extra row or another NOTICE fail.
        let two_loads = lines(
            " model | load_ms | loads\n-------+---------+-------\n m     |      50 |     2\n(1 row)\n\nNOTICE:  done",
        );
        assert!(!outputs_match(&page, &two_loads, &varies).unwrap());
        let renamed = lines(
            " model | load_time | loads\n-------+-----------+-------\n m     |        50 |     1\n(1 row)\n\nNOTICE:  done",
        );
        assert!(!outputs_match(&page, &renamed, &varies).unwrap());
        let notice = lines(
            " model | load_ms | loads\n-------+---------+-------\n m     |      50 |     1\n(1 row)\n\nNOTICE:  other",
        );
        assert!(!outputs_match(&page, &notice, &varies).unwrap());
        let extra_row = lines(
            " model | load_ms | loads\n-------+---------+-------\n m     |      50 |     1\n n     |      50 |     1\n(2 rows)\n\nNOTICE:  done",
        );
        assert!(!outputs_match(&page, &extra_row, &varies).unwrap());
        // A marker that names no column is an error, not a silent pass.
        assert!(outputs_match(&page, &page, &["load".to_string()]).unwrap_err().contains("names no column"));
    }

    #[test]
    fn a_mismatch_names_the_page_and_line_and_shows_the_diff() {
        let text = "Intro\n\n```\npg_chunk_demo=# SELECT count(*) FROM t;\n count\n-------\n     4\n(1 row)\n```\n";
        let blocks = parse_page("docs/store.md", text).unwrap();
        let block = &blocks[0];
        let expected = expected_lines(block);
        let actual = lines("pg_chunk_demo=# SELECT count(*) FROM t;\n count\n-------\n     5\n(1 row)");
        assert!(!outputs_match(&expected, &actual, &[]).unwrap());
        let report = mismatch_report("docs/store.md", block, &expected, &actual);
        assert!(report.starts_with("docs/store.md:4: psql's output differs from the page"), "{report}");
        assert!(report.contains("    7 -      4\n      +      5\n"), "{report}");
        assert!(report.contains("    4   pg_chunk_demo=# SELECT count(*) FROM t;\n"), "{report}");
        // Bless writes psql's transcript in the block's place and leaves the rest of the page.
        let blessed = blessed_page(text, &[(block.start, block.start + block.lines.len(), actual)]);
        assert_eq!(blessed, text.replace("     4\n", "     5\n"));
    }
}
