//! Every benchmark figure quoted outside bench/ (README.md, docs/) against the committed results
//! file it comes from: each entry of `figures()` is a page, the text it quotes with `{}` where a
//! figure stands, and where each figure is read in a benchmark's `results/` (a table cell, or
//! the number after a label), formatted at the precision the page quotes. A page or a results
//! file changed without the other fails here, naming both. A figure not listed here is not
//! quoted: link bench/README.md's section instead; README.md's "Why" section quotes nothing
//! else. No database.

use std::path::{Path, PathBuf};

/// Where one number is read in a results file (relative to the repository).
enum Source {
    /// The first number in the cell in column `column` of the row whose first cells are `row`,
    /// in the first table below the line that contains `after` ("" for the top) whose header
    /// has that column and that holds such a row. A `.csv` file is one table, its first line the
    /// header; a Markdown table is a run of lines starting with `|`.
    Cell { file: &'static str, after: &'static str, row: &'static [&'static str], column: &'static str },
    /// The number that follows `label` on the first line that holds it.
    After { file: &'static str, label: &'static str },
}

/// A quoted figure: one number read, or computed from numbers read.
enum Value {
    Read(Source),
    /// The numbers added up.
    Sum(Vec<Source>),
    /// A value divided by a constant (a change of unit).
    Per(Box<Value>, f64),
}

/// How the page writes a figure: decimals, and thousands separated by commas.
#[derive(Clone, Copy)]
struct Format {
    decimals: usize,
    grouped: bool,
}

const fn d(decimals: usize) -> Format {
    Format { decimals, grouped: false }
}

const fn g(decimals: usize) -> Format {
    Format { decimals, grouped: true }
}

struct Figure {
    page: &'static str,
    /// The page's text (whitespace as one space), `{}` for each figure in order.
    text: &'static str,
    values: Vec<(Value, Format)>,
}

fn cell(file: &'static str, after: &'static str, row: &'static [&'static str], column: &'static str) -> Source {
    Source::Cell { file, after, row, column }
}

fn after(file: &'static str, label: &'static str) -> Source {
    Source::After { file, label }
}

const QUALITY: &str = "bench/quality/results/quality.md";
const RETRIEVAL: &str = "bench/retrieval/results/results.md";
const PEERS: &str = "bench/peers/results/results.md";
const PEERS_SUMMARY: &str = "bench/peers/results/results/summary.csv";
const EMBEDDINGS: &str = "bench/embeddings/results/embeddings.md";
const SCALE: &str = "bench/scale/results/scale.md";
const CITUS: &str = "bench/citus/results/citus.md";
const REUSE: &str = "bench/store/results/reuse.md";

fn figures() -> Vec<Figure> {
    use Value::*;
    let scale_size = |column| cell(SCALE, "", &["1,001,130"], column);
    let text_leg = || vec![scale_size("chunks heap"), scale_size("chunks toast"), scale_size("gin")];
    vec![
        Figure {
            page: "README.md",
            text: "the default has Pk {} where LangChain SemanticChunker's rule has {} (lower is better)",
            values: vec![
                (Read(cell(QUALITY, "", &["pg_chunk default (MiniLM)"], "Pk all")), d(1)),
                (Read(cell(QUALITY, "", &["langchain (MiniLM, buffer 1, p95)"], "Pk all")), d(1)),
            ],
        },
        Figure {
            page: "README.md",
            text:
                "Asked the {} section titles of those documents, `knowledge.search` returns chunks that cover {}% of \
                   the answers, against {}% for the 200-token recursive splitter every peer ships, searched by vector \
                   ({}% against {}% on the Python FAQ's questions)",
            values: vec![
                (Read(after(RETRIEVAL, "### sections: ")), d(0)),
                (Read(cell(RETRIEVAL, "### sections:", &["default", "hybrid"], "recall %")), d(1)),
                (Read(cell(RETRIEVAL, "### sections:", &["recursive-200", "vector"], "recall %")), d(1)),
                (Read(cell(RETRIEVAL, "### faq:", &["default", "hybrid"], "recall %")), d(1)),
                (Read(cell(RETRIEVAL, "### faq:", &["recursive-200", "vector"], "recall %")), d(1)),
            ],
        },
        Figure {
            page: "README.md",
            text: "`knowledge.semantic_chunk` chunks {} MB of documentation {} times as fast as LangChain's \
                   SemanticChunker running all-MiniLM-L6-v2 as its users do",
            values: vec![
                (
                    Per(
                        Box::new(Read(cell(PEERS_SUMMARY, "", &["pg_chunk", "pg_chunk-semantic-minilm"], "bytes"))),
                        1e6,
                    ),
                    d(0),
                ),
                (
                    Read(cell(
                        PEERS,
                        "",
                        &["semantic_chunk", "LangChain SemanticChunker", "semantic", "MiniLM", "chunk"],
                        "pg_chunk ÷ peer, throughput (median, range, rounds)",
                    )),
                    d(1),
                ),
            ],
        },
        Figure {
            page: "docs/operations.md",
            text: "about {} s for `all-minilm-l6-v2`, {} s for `multilingual-e5-small`, {} s for `potion-base-8m`",
            values: vec![
                (
                    Read(cell(
                        EMBEDDINGS,
                        "",
                        &["model load in a fresh backend, all-minilm-l6-v2 (`load_ms`)"],
                        "median",
                    )),
                    d(1),
                ),
                (
                    Read(cell(
                        EMBEDDINGS,
                        "",
                        &["model load in a fresh backend, multilingual-e5-small (`load_ms`)"],
                        "median",
                    )),
                    d(1),
                ),
                (
                    Read(cell(
                        EMBEDDINGS,
                        "",
                        &["model load in a fresh backend, potion-base-8m (`load_ms`)"],
                        "median",
                    )),
                    d(2),
                ),
            ],
        },
        Figure {
            page: "docs/store.md",
            text: "the table holds {} MB per MB of documents",
            values: vec![(Read(after(REUSE, " bytes a row, ")), d(1))],
        },
        Figure {
            page: "docs/scaling.md",
            text: "| everything: rows, TOAST, indexes, text statistics, documents | {} | {} GB |",
            values: vec![(Read(scale_size("total")), g(0)), (Per(Box::new(Read(scale_size("total"))), 1000.0), d(1))],
        },
        Figure {
            page: "docs/scaling.md",
            text: "| the HNSW index (equal vectors share an entry) | {} | {} GB |",
            values: vec![(Read(scale_size("hnsw")), g(0)), (Per(Box::new(Read(scale_size("hnsw"))), 1000.0), d(1))],
        },
        Figure {
            page: "docs/scaling.md",
            text: "| what the text leg reads: rows, TOAST, GIN | {} | {} GB |",
            values: vec![(Sum(text_leg()), g(0)), (Per(Box::new(Sum(text_leg())), 1000.0), d(1))],
        },
        Figure {
            page: "docs/scaling.md",
            text: "hybrid p95 {} ms at 11,338 chunks, {} ms at 101,557 and {} ms at 1,001,130",
            values: vec![
                (Read(cell(SCALE, "", &["11,338", "hybrid, 1"], "p95 ms")), d(1)),
                (Read(cell(SCALE, "", &["101,557", "hybrid, 1"], "p95 ms")), d(1)),
                (Read(cell(SCALE, "", &["1,001,130", "hybrid, 1"], "p95 ms")), d(1)),
            ],
        },
        Figure {
            page: "docs/scaling.md",
            text:
                "over bench/retrieval's {} FAQ and HOWTO questions, the distributed search returns {}% of the chunks \
                   the one store's top 5 holds ({}% with rrf",
            values: vec![
                (Read(cell(CITUS, "", &["hybrid, fusion scores"], "questions")), d(0)),
                (
                    Read(cell(
                        CITUS,
                        "",
                        &["hybrid, fusion scores"],
                        "chunks of the one store's top 5 the cluster returns",
                    )),
                    d(1),
                ),
                (
                    Read(cell(
                        CITUS,
                        "",
                        &["hybrid, fusion rrf"],
                        "chunks of the one store's top 5 the cluster returns",
                    )),
                    d(1),
                ),
            ],
        },
        Figure {
            page: "docs/scaling.md",
            text: "**Latency** at {} chunks ({} copies of PostgreSQL's SQL reference pages, so nearly every chunk has \
                   hundreds of equals): hybrid p95 {} ms through the coordinator against {} ms on one server, {} ×",
            values: vec![
                (Read(cell(CITUS, "", &["one server: knowledge.search"], "chunks")), g(0)),
                (Read(after(CITUS, "COPIES=")), d(0)),
                (Read(cell(CITUS, "", &["two workers: knowledge.distributed_search"], "p95 ms")), d(2)),
                (Read(cell(CITUS, "", &["one server: knowledge.search"], "p95 ms")), d(2)),
                (Read(after(CITUS, "p95 through the coordinator ÷ one server: ")), d(2)),
            ],
        },
        Figure {
            page: "docs/scaling.md",
            text: "shards on two workers take {} s, on one worker {} s ({} × as fast)",
            values: vec![
                (Read(cell(CITUS, "", &["shards on 2 worker(s)"], "seconds")), d(1)),
                (Read(cell(CITUS, "", &["shards on 1 worker(s)"], "seconds")), d(1)),
                (Read(after(CITUS, "two workers ÷ one, throughput: ")), d(2)),
            ],
        },
    ]
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read(file: &str) -> String {
    std::fs::read_to_string(repository().join(file)).unwrap_or_else(|e| panic!("cannot read {file}: {e}"))
}

/// The numbers in a text, in order: digits with `,` between groups and an optional `.` part.
fn numbers(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && (chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_')) {
            i += 1;
            continue;
        }
        let mut number = String::new();
        while i < chars.len() {
            let c = chars[i];
            let joins = (c == ',' || c == '.') && chars.get(i + 1).is_some_and(char::is_ascii_digit);
            if c.is_ascii_digit() || joins {
                if c != ',' {
                    number.push(c);
                }
                i += 1;
            } else {
                break;
            }
        }
        found.push(number.parse().unwrap());
    }
    found
}

fn split_row(line: &str, csv: bool) -> Vec<String> {
    if csv {
        return line.split(',').map(|cell| cell.trim().to_string()).collect();
    }
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|cell| cell.trim().to_string()).collect()
}

/// The tables of a results file, each its rows of cells, the header first.
fn tables(lines: &[&str], csv: bool) -> Vec<Vec<Vec<String>>> {
    if csv {
        return vec![lines.iter().filter(|line| !line.is_empty()).map(|line| split_row(line, true)).collect()];
    }
    let mut found: Vec<Vec<Vec<String>>> = Vec::new();
    let mut current: Vec<Vec<String>> = Vec::new();
    for line in lines {
        if line.trim_start().starts_with('|') {
            if !line.contains("|---") {
                current.push(split_row(line, false));
            }
        } else if !current.is_empty() {
            found.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        found.push(current);
    }
    found
}

fn describe(source: &Source) -> String {
    match source {
        Source::Cell { file, after, row, column } => {
            let below = if after.is_empty() { String::new() } else { format!(" below \"{after}\"") };
            format!("{file}{below}, row {row:?}, column \"{column}\"")
        }
        Source::After { file, label } => format!("{file}, the number after \"{label}\""),
    }
}

fn read_source(source: &Source) -> Result<f64, String> {
    let missing = |what: &str| Err(format!("{what} ({}): has the results file's layout changed?", describe(source)));
    match source {
        Source::Cell { file, after, row, column } => {
            let text = read(file);
            let lines: Vec<&str> = text.lines().collect();
            let start = if after.is_empty() {
                0
            } else {
                match lines.iter().position(|line| line.contains(after)) {
                    Some(index) => index + 1,
                    None => return missing("no such line"),
                }
            };
            for table in tables(&lines[start..], file.ends_with(".csv")) {
                let Some(index) = table[0].iter().position(|header| header == column) else { continue };
                let Some(cells) = table[1..].iter().find(|cells| cells.len() > index && cells.starts_with_strs(row))
                else {
                    continue;
                };
                return match numbers(&cells[index]).first() {
                    Some(value) => Ok(*value),
                    None => missing(&format!("no number in the cell \"{}\"", cells[index])),
                };
            }
            missing("no such cell")
        }
        Source::After { file, label } => {
            let text = read(file);
            match text.lines().find_map(|line| line.split_once(label)) {
                Some((_, rest)) if rest.starts_with(|c: char| c.is_ascii_digit()) => Ok(numbers(rest)[0]),
                _ => missing("no number after the label"),
            }
        }
    }
}

trait StartsWithStrs {
    fn starts_with_strs(&self, prefix: &[&str]) -> bool;
}

impl StartsWithStrs for Vec<String> {
    fn starts_with_strs(&self, prefix: &[&str]) -> bool {
        self.len() >= prefix.len() && prefix.iter().zip(self).all(|(want, cell)| cell == want)
    }
}

fn evaluate(value: &Value) -> Result<(f64, String), String> {
    Ok(match value {
        Value::Read(source) => (read_source(source)?, describe(source)),
        Value::Sum(sources) => {
            let mut total = 0.0;
            for source in sources {
                total += read_source(source)?;
            }
            (total, sources.iter().map(describe).collect::<Vec<_>>().join(" + "))
        }
        Value::Per(value, unit) => {
            let (number, origin) = evaluate(value)?;
            (number / unit, format!("({origin}) ÷ {unit}"))
        }
    })
}

fn format_figure(value: f64, format: Format) -> String {
    let plain = format!("{value:.*}", format.decimals);
    if !format.grouped {
        return plain;
    }
    let (whole, fraction) = plain.split_once('.').map_or((plain.as_str(), None), |(w, f)| (w, Some(f)));
    let digits: Vec<char> = whole.chars().collect();
    let mut grouped = String::new();
    for (index, digit) in digits.iter().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(*digit);
    }
    match fraction {
        Some(fraction) => format!("{grouped}.{fraction}"),
        None => grouped,
    }
}

/// A page's text with every run of whitespace as one space, so that a quote may span lines.
fn flattened(page: &str) -> String {
    page.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text a figure's entry expects on its page, or why its figures cannot be read.
fn expected(figure: &Figure) -> Result<(String, Vec<String>), String> {
    let mut text = String::new();
    let mut origins = Vec::new();
    let mut parts = figure.text.split("{}");
    text.push_str(parts.next().unwrap());
    for ((value, format), part) in figure.values.iter().zip(parts.by_ref()) {
        let (number, origin) = evaluate(value)?;
        let quoted = format_figure(number, *format);
        origins.push(format!("{quoted} from {origin}"));
        text.push_str(&quoted);
        text.push_str(part);
    }
    assert!(parts.next().is_none(), "{}: more {{}} than figures in \"{}\"", figure.page, figure.text);
    assert_eq!(figure.text.matches("{}").count(), figure.values.len(), "{}: \"{}\"", figure.page, figure.text);
    Ok((text, origins))
}

/// What the page says where it should say `text`: aligned on the entry's longest piece of text
/// between figures, or a line saying that piece is not on the page.
fn what_the_page_says(page: &str, figure: &Figure, text: &str) -> String {
    let piece = figure.text.split("{}").max_by_key(|piece| piece.len()).unwrap();
    let (Some(on_page), Some(in_text)) = (page.find(piece), text.find(piece)) else {
        return format!("(nothing like \"{piece}\")");
    };
    let mut start = on_page.saturating_sub(in_text);
    while !page.is_char_boundary(start) {
        start -= 1;
    }
    page[start..].chars().take(text.chars().count() + 20).collect::<String>() + "…"
}

#[test]
fn quoted_figures_are_the_committed_results() {
    let mut failures = Vec::new();
    for figure in figures() {
        let page = flattened(&read(figure.page));
        match expected(&figure) {
            Err(why) => failures.push(format!("{}: a figure of \"{}\" cannot be read: {why}", figure.page, figure.text)),
            Ok((text, origins)) if !page.contains(&text) => failures.push(format!(
                "{} should say\n    {text}\n  (figures: {})\n  but says\n    {}\nMake the page say what the results say, or change the entry in tests/tests/figures.rs with the page.",
                figure.page,
                origins.join("; "),
                what_the_page_says(&page, &figure, &text),
            )),
            Ok(_) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} quoted figure(s) differ from the benchmarks' results:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// README.md's "Why" quotes no figure that `figures()` does not check (its figures drift first).
#[test]
fn readme_why_quotes_only_checked_figures() {
    const NOT_FIGURES: &[&str] = &["2-core machine"];
    let readme = read("README.md");
    let start = readme.find("\n## Why\n").expect("README.md has a section \"## Why\"");
    let end = readme[start + 1..].find("\n## ").map_or(readme.len(), |end| start + 1 + end);
    let mut section = flattened(&readme[start..end]);
    for figure in figures().iter().filter(|figure| figure.page == "README.md") {
        if let Ok((text, _)) = expected(figure) {
            section = section.replace(&text, "");
        }
    }
    for words in NOT_FIGURES {
        section = section.replace(words, "");
    }
    // A figure is a word that starts with a digit once its opening punctuation is dropped ("(85.7%").
    let unchecked: Vec<&str> = section
        .split(' ')
        .filter(|word| {
            word.trim_start_matches(|c: char| !c.is_alphanumeric()).starts_with(|c: char| c.is_ascii_digit())
        })
        .collect();
    assert!(
        unchecked.is_empty(),
        "README.md's Why quotes figures that no entry of tests/tests/figures.rs checks against a benchmark's results: {unchecked:?}"
    );
}

#[test]
fn results_are_read_as_written() {
    let file = std::env::temp_dir().join(format!("pg_chunk-figures-{}.md", std::process::id()));
    std::fs::write(&file, "x\n| a | b c |\n|---|---|\n| one | 1 |\n| two, 2 | 2,345.6 s |\n\nlast: 7.5 ms\n").unwrap();
    let path: &'static str = Box::leak(file.to_string_lossy().into_owned().into_boxed_str());
    assert_eq!(read_source(&cell(path, "x", &["two, 2"], "b c")), Ok(2345.6));
    assert_eq!(read_source(&after(path, "last: ")), Ok(7.5));
    let missing = read_source(&cell(path, "", &["three"], "b c")).unwrap_err();
    assert!(missing.starts_with("no such cell") && missing.contains("row [\"three\"]"), "{missing}");
    assert!(read_source(&cell(path, "y", &["one"], "b c")).unwrap_err().starts_with("no such line"));
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn numbers_are_read_as_written() {
    assert_eq!(numbers("5.02 (4.78–5.26, 2)"), vec![5.02, 4.78, 5.26, 2.0]);
    assert_eq!(numbers("1,001,130 | 0.111 s | 95.5 / 99.5 | e5 x1"), vec![1001130.0, 0.111, 95.5, 99.5]);
    assert_eq!(format_figure(1001130.0, g(0)), "1,001,130");
    assert_eq!(format_figure(3.95, d(1)), "4.0");
    assert_eq!(format_figure(0.017, d(2)), "0.02");
}
