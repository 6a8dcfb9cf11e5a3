//! Docs that cannot rot: every psql example in README.md and docs/*.md is run with
//! psql against a database made afresh, and what psql prints is compared with what the page shows.
//! A changed behaviour fails here until the page is updated. Every relative link in the
//! repository's Markdown must lead to a file and heading that exist (`links.rs`).
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
//! - `<!-- near: <column>, <column> -->`: in the block's tables, the cells of these columns are
//!   numbers computed from a model's vectors (similarities, distances), which move in the third
//!   decimal from one CPU to another; they match the page's when within `NEAR` (0.03) of it.
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

// Parsing the pages, comparing psql's output with them, and running psql: modules beside this file.
mod blocks;
mod compare;
mod links;
mod run;

use compare::blessed_page;
use pg_chunk_client_tests::{fresh_database, server_dir};
use run::run_page;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The database name the pages' prompts show.
const PROMPT_DATABASE: &str = "pg_chunk_demo";
/// `fresh_database`'s name for `pg_chunk_test_docs`.
const DATABASE: &str = "docs";
const BLESS_VARIABLE: &str = "PG_CHUNK_DOCS_BLESS";
const PAGES_VARIABLE: &str = "PG_CHUNK_DOCS_PAGES";
/// What psql echoes before each statement's output; no page shows a line that starts with it.
const STATEMENT_MARKER: &str = "@@ pg_chunk docs statement";

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

#[test]
fn every_relative_link_in_the_markdown_resolves() {
    let root = repository_root();
    // Each linked page's anchors, computed once however many links lead to it.
    let found: RefCell<HashMap<PathBuf, Option<HashSet<String>>>> = RefCell::default();
    let anchors_of = |path: &Path| {
        let known = found.borrow().get(path).cloned();
        known.unwrap_or_else(|| {
            let anchors = std::fs::read_to_string(path).ok().map(|text| links::anchors(&text));
            found.borrow_mut().insert(path.to_path_buf(), anchors.clone());
            anchors
        })
    };
    let pages = links::markdown_files(&root);
    let broken: Vec<String> = pages
        .iter()
        .flat_map(|path| {
            let relative = path.strip_prefix(&root).unwrap_or(path);
            let page = std::fs::read_to_string(path).unwrap_or_default();
            links::broken_links(&root, relative, &page, &anchors_of)
        })
        .collect();
    assert!(pages.len() > 10, "found only {} pages under {}", pages.len(), root.display());
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
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
    use super::blocks::{created_roles, parse_page, Markers};
    use super::compare::{blessed_page, expected_lines, mismatch_report, outputs_match, transcript};
    use super::run::{psql_script, split_output};
    use super::STATEMENT_MARKER;

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
        assert!(!outputs_match(&expected, &actual, &session.markers).unwrap());
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
        let varies = Markers { varies: vec!["load_ms".to_string()], ..Markers::default() };
        assert!(outputs_match(&page, &slower, &varies).unwrap());
        assert!(
            !outputs_match(&page, &slower, &Markers::default()).unwrap(),
            "without the marker the timing is compared"
        );
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
        let misnamed = Markers { varies: vec!["load".to_string()], ..Markers::default() };
        assert!(outputs_match(&page, &page, &misnamed).unwrap_err().contains("names no column"));
    }

    #[test]
    fn near_compares_its_columns_as_numbers() {
        let page = lines(" id | similarity\n----+------------\n  5 |      0.709\n(1 row)");
        let other_cpu = lines(" id | similarity\n----+------------\n  5 |      0.723\n(1 row)");
        let far = lines(" id | similarity\n----+------------\n  5 |      0.750\n(1 row)");
        let other_id = lines(" id | similarity\n----+------------\n  6 |      0.709\n(1 row)");
        let near = Markers { near: vec!["similarity".to_string()], ..Markers::default() };
        assert!(outputs_match(&page, &other_cpu, &near).unwrap());
        assert!(!outputs_match(&page, &other_cpu, &Markers::default()).unwrap(), "without the marker: equal only");
        assert!(!outputs_match(&page, &far, &near).unwrap(), "0.041 is not near");
        assert!(!outputs_match(&page, &other_id, &near).unwrap(), "the other columns stay exact");
        let misnamed = Markers { near: vec!["score".to_string()], ..Markers::default() };
        assert!(outputs_match(&page, &page, &misnamed).unwrap_err().contains("`near: score` names no column"));
    }

    #[test]
    fn a_mismatch_names_the_page_and_line_and_shows_the_diff() {
        let text = "Intro\n\n```\npg_chunk_demo=# SELECT count(*) FROM t;\n count\n-------\n     4\n(1 row)\n```\n";
        let blocks = parse_page("docs/store.md", text).unwrap();
        let block = &blocks[0];
        let expected = expected_lines(block);
        let actual = lines("pg_chunk_demo=# SELECT count(*) FROM t;\n count\n-------\n     5\n(1 row)");
        assert!(!outputs_match(&expected, &actual, &Markers::default()).unwrap());
        let report = mismatch_report("docs/store.md", block, &expected, &actual);
        assert!(report.starts_with("docs/store.md:4: psql's output differs from the page"), "{report}");
        assert!(report.contains("    7 -      4\n      +      5\n"), "{report}");
        assert!(report.contains("    4   pg_chunk_demo=# SELECT count(*) FROM t;\n"), "{report}");
        // Bless writes psql's transcript in the block's place and leaves the rest of the page.
        let blessed = blessed_page(text, &[(block.start, block.start + block.lines.len(), actual)]);
        assert_eq!(blessed, text.replace("     4\n", "     5\n"));
    }
}
