//! What psql printed against what the page shows: the transcript, the tables whose `varies`
//! cells are left out and whose `near` cells are compared as numbers, the diff of a mismatch, and
//! the page that bless writes.

use super::blocks::{Block, Markers, Statement};
use std::collections::HashMap;
use std::fmt::Write as _;

/// A block as the page would show this run: each statement as the page has it, then its output.
pub(super) fn transcript(statements: &[Statement], outputs: &[Vec<String>]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for (statement, output) in statements.iter().zip(outputs) {
        lines.extend(statement.source.iter().map(|l| l.trim_end().to_string()));
        lines.extend(output.iter().cloned());
    }
    drop_trailing_blank_lines(lines)
}

pub(super) fn drop_trailing_blank_lines(mut lines: Vec<String>) -> Vec<String> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// The block as the page shows it, compared the same way: trailing spaces and blank lines dropped.
pub(super) fn expected_lines(block: &Block) -> Vec<String> {
    drop_trailing_blank_lines(block.lines.iter().map(|l| l.trim_end().to_string()).collect())
}

/// `-------+------` under a table's header.
pub(super) fn is_separator(line: &str) -> bool {
    line.starts_with('-') && line.chars().all(|c| c == '-' || c == '+')
}

/// `(3 rows)` under a table.
pub(super) fn is_footer(line: &str) -> bool {
    line.strip_prefix('(')
        .and_then(|l| l.strip_suffix(" rows)").or_else(|| l.strip_suffix(" row)")))
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

pub(super) fn cells(line: &str) -> Vec<&str> {
    line.split('|').map(str::trim).collect()
}

/// A table in psql's aligned format: `header` is the index of its column names' line, and its
/// rows run from `header + 2` up to `end` (the footer's index, or the end of its lines).
pub(super) struct Table {
    pub(super) header: usize,
    pub(super) columns: Vec<String>,
    pub(super) end: usize,
}

pub(super) fn find_tables(lines: &[String]) -> Vec<Table> {
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

/// How far a `near` cell's number may be from the page's. The integer models' arithmetic differs
/// between CPUs (ONNX Runtime's kernels for AVX2 and for VNNI), which moves a cosine computed from
/// their vectors by up to about 0.015.
pub(super) const NEAR: f64 = 0.03;

/// How a table cell of the page is compared with psql's.
#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Equal,
    /// A `varies` column's: not compared.
    Skipped,
    /// A `near` column's: equal, or both numbers within [`NEAR`].
    Near,
}

/// Whether psql's transcript `actual` is the page's `expected`, the cells of the `varies` columns
/// left out and those of the `near` columns compared as numbers; an error when a marker's name is
/// no column of the block's tables.
pub(super) fn outputs_match(expected: &[String], actual: &[String], markers: &Markers) -> Result<bool, String> {
    let tables = find_tables(expected);
    for (marker, names) in [("varies", &markers.varies), ("near", &markers.near)] {
        if let Some(name) = names.iter().find(|name| !tables.iter().any(|t| t.columns.contains(name))) {
            return Err(format!("`{marker}: {name}` names no column of the block's tables"));
        }
    }
    if expected.len() != actual.len() {
        return Ok(false);
    }
    // Per line of a table with a marked column: how each of its cells is compared.
    let mut rows: HashMap<usize, Vec<Cell>> = HashMap::new();
    for table in &tables {
        let kinds: Vec<Cell> = table
            .columns
            .iter()
            .map(|c| match (markers.varies.contains(c), markers.near.contains(c)) {
                (true, _) => Cell::Skipped,
                (false, true) => Cell::Near,
                (false, false) => Cell::Equal,
            })
            .collect();
        if kinds.iter().any(|&kind| kind != Cell::Equal) {
            for row in table.header + 2..table.end {
                rows.insert(row, kinds.clone());
            }
            // Its header and separator: the same columns, padded to the widths of this run's values.
            rows.insert(table.header, vec![Cell::Equal; kinds.len()]);
            rows.insert(table.header + 1, Vec::new());
        }
    }
    Ok(expected.iter().zip(actual).enumerate().all(|(i, (e, a))| match rows.get(&i) {
        None => e == a,
        Some(kinds) if kinds.is_empty() => is_separator(a) && e.matches('+').count() == a.matches('+').count(),
        Some(kinds) => {
            let (e, a) = (cells(e), cells(a));
            e.len() == kinds.len()
                && a.len() == kinds.len()
                && kinds.iter().zip(e.iter().zip(&a)).all(|(kind, (x, y))| match kind {
                    Cell::Skipped => true,
                    Cell::Equal => x == y,
                    Cell::Near => x == y || numbers_within(x, y, NEAR),
                })
        }
    }))
}

fn numbers_within(x: &str, y: &str, tolerance: f64) -> bool {
    matches!((x.parse::<f64>(), y.parse::<f64>()), (Ok(x), Ok(y)) if (x - y).abs() <= tolerance)
}

/// A diff of the page's lines (numbered as in the page, from `first_line`) against psql's.
pub(super) fn line_diff(expected: &[String], actual: &[String], first_line: usize) -> String {
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
pub(super) fn mismatch_report(page: &str, block: &Block, expected: &[String], actual: &[String]) -> String {
    let mut varies = String::new();
    if !block.markers.varies.is_empty() {
        varies += &format!("; the cells of {} are not compared", block.markers.varies.join(", "));
    }
    if !block.markers.near.is_empty() {
        varies += &format!("; those of {} within {NEAR}", block.markers.near.join(", "));
    }
    format!(
        "{page}:{}: psql's output differs from the page (- page, + psql{varies}):\n{}",
        block.start + 1,
        line_diff(expected, actual, block.start + 1)
    )
}

/// The page with the blessed blocks' lines replaced.
pub(super) fn blessed_page(text: &str, blessed: &[(usize, usize, Vec<String>)]) -> String {
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
