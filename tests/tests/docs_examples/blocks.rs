//! The psql examples of a page: code blocks that start at a prompt, their statements, and the
//! markers above them (the parsing the header of main.rs describes).

use super::PROMPT_DATABASE;

#[derive(Debug, Default, PartialEq)]
pub(super) struct Markers {
    pub(super) not_run: Option<String>,
    pub(super) varies: Vec<String>,
    pub(super) near: Vec<String>,
    pub(super) needs_worker: bool,
    pub(super) new_database: bool,
}

#[derive(Debug)]
pub(super) struct Statement {
    /// The page's line number (1-based) of the statement's prompt.
    pub(super) line: usize,
    /// The statement's lines as the page has them, prompt included.
    pub(super) source: Vec<String>,
    /// What psql is sent: the prompt and the continuation lines' indentation taken off.
    pub(super) sql: String,
}

#[derive(Debug)]
pub(super) struct Block {
    /// Index (0-based) in the page of the block's first line, the one after the opening fence.
    pub(super) start: usize,
    /// The block's lines, fences left out.
    pub(super) lines: Vec<String>,
    pub(super) markers: Markers,
    pub(super) statements: Vec<Statement>,
}

/// The length of the psql prompt `line` starts with (`pg_chunk_demo=# `, `=*# `, `=> `, ...), if any.
pub(super) fn prompt_length(line: &str) -> Option<usize> {
    let rest = line.strip_prefix(PROMPT_DATABASE)?.strip_prefix('=')?;
    let rest = rest.strip_prefix(['*', '!', '?']).unwrap_or(rest);
    let rest = rest.strip_prefix(['#', '>'])?.strip_prefix(' ')?;
    Some(line.len() - rest.len())
}

/// The HTML comments on the lines right above line `fence`, in page order, with their indices.
pub(super) fn comments_above(lines: &[&str], fence: usize) -> Vec<(usize, String)> {
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
pub(super) fn parse_markers(page: &str, comments: &[(usize, String)]) -> Result<Markers, String> {
    let mut markers = Markers::default();
    for (index, comment) in comments {
        let Some((key, value)) = comment.split_once(':') else { continue };
        let value = value.trim();
        let at = format!("{page}:{}", index + 1);
        match key.trim() {
            "not run" if value.is_empty() => return Err(format!("{at}: `not run` needs a reason")),
            "not run" => markers.not_run = Some(value.to_string()),
            marker @ ("varies" | "near") => {
                let names: Vec<String> = value.split(',').map(|n| n.trim().to_string()).collect();
                if names.iter().any(String::is_empty) {
                    return Err(format!("{at}: `{marker}` needs column names separated by commas, got {value:?}"));
                }
                if marker == "varies" { &mut markers.varies } else { &mut markers.near }.extend(names);
            }
            "needs" if value == "worker" => markers.needs_worker = true,
            "database" if value == "new" => markers.new_database = true,
            other => {
                return Err(format!(
                    "{at}: unknown marker `{other}: {value}` (known: `not run: <reason>`, \
                     `varies: <columns>`, `near: <columns>`, `needs: worker`, `database: new`)"
                ))
            }
        }
    }
    Ok(markers)
}

/// The statements of a psql block whose first line is page line `first` (0-based index).
pub(super) fn parse_statements(page: &str, first: usize, body: &[&str]) -> Result<Vec<Statement>, String> {
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

/// A line that opens or closes a fenced code block.
pub(super) fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```")
}

/// The psql blocks of a page; an error for an unclosed fence, a statement without its `;`, or a
/// marker that is unknown or stands above a block that is not run anyway.
pub(super) fn parse_page(page: &str, text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_fence(lines[i]) {
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
pub(super) fn created_roles(blocks: &[Block]) -> Vec<String> {
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
