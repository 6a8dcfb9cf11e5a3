//! The scanner: bracket depth, strings, comments and SQL dollar quotes, line by line.

use super::Family;

/// What the scanner learns about one line: its bytes (`end` before the newline), whether it starts
/// in code or in a block comment (else in a string or SQL dollar-quoted body), the brackets open
/// at its start and end, whether it opens a `{`, has a `;` outside brackets, strings and comments,
/// which of `{` and `;` comes first in it, and its leading whitespace in bytes.
pub(super) struct Line {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) code: bool,
    pub(super) comment: bool,
    pub(super) depth: usize,
    pub(super) depth_end: usize,
    pub(super) opens_brace: bool,
    pub(super) ends_statement: bool,
    pub(super) first_terminator: Option<u8>,
    pub(super) blank: bool,
    pub(super) indent: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State<'d> {
    Code,
    BlockComment,
    Str { quote: u8, triple: bool, one_line: bool },
    RawStr { hashes: usize },
    Dollar(&'d [u8]),
}

pub(super) fn scan_lines(doc: &str, family: Family) -> Vec<Line> {
    let (mut lines, mut state, mut depth, mut start) = (Vec::new(), State::Code, 0usize, 0usize);
    for text in doc.split_inclusive('\n') {
        let body = text.trim_end_matches('\n');
        let (b, indent) = (body.as_bytes(), body.len() - body.trim_start().len());
        let (code, comment, blank) = (state == State::Code, state == State::BlockComment, body.trim().is_empty());
        let mut line = Line {
            start,
            end: start + b.len(),
            code,
            comment,
            depth,
            depth_end: depth,
            opens_brace: false,
            ends_statement: false,
            first_terminator: None,
            blank,
            indent,
        };
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            i += match state {
                State::Code => code_byte(b, i, family, &mut state, &mut depth, &mut line),
                State::BlockComment if b[i..].starts_with(b"*/") => switch(&mut state, State::Code, 2),
                State::Str { quote, triple, .. } if c == quote && (!triple || b[i..].starts_with(&[quote; 3])) => {
                    switch(&mut state, State::Code, if triple { 3 } else { 1 })
                }
                State::Str { .. } if c == b'\\' && family != Family::Sql => 2, // an escape
                State::RawStr { hashes }
                    if c == b'"' && b[i + 1..].iter().take(hashes).filter(|&&h| h == b'#').count() == hashes =>
                {
                    switch(&mut state, State::Code, 1 + hashes)
                }
                State::Dollar(tag) if b[i..].starts_with(tag) => switch(&mut state, State::Code, tag.len()),
                _ => 1,
            };
        }
        if matches!(state, State::Str { one_line: true, .. }) {
            state = State::Code
        } // an unterminated one-line string ends with its line
        line.depth_end = depth;
        lines.push(line);
        start += text.len();
    }
    lines
}

/// Handles byte `i` of a line in code: brackets, `;`, the start of a comment or string. Returns
/// the bytes it takes (a line comment, the rest of the line).
pub(super) fn code_byte<'d>(
    b: &'d [u8],
    i: usize,
    family: Family,
    state: &mut State<'d>,
    depth: &mut usize,
    line: &mut Line,
) -> usize {
    let (c, next) = (b[i], b.get(i + 1).copied().unwrap_or(0));
    let braces = !matches!(family, Family::Python | Family::Sql | Family::Generic);
    let is_ident = |at: usize| b[at].is_ascii_alphanumeric() || b[at] == b'_';
    match c {
        b'(' | b'[' => *depth += 1,
        b'{' => {
            (*depth, line.opens_brace) = (*depth + 1, true);
            line.first_terminator.get_or_insert(c);
        }
        b')' | b']' | b'}' => *depth = depth.saturating_sub(1),
        b';' => {
            line.first_terminator.get_or_insert(c);
            line.ends_statement |= *depth == 0;
        }
        _ if matches!((family, c, next), (Family::Python, b'#', _) | (Family::Sql, b'-', b'-'))
            || (braces && c == b'/' && next == b'/') =>
        {
            return b.len() - i
        }
        b'/' if (braces || family == Family::Sql) && next == b'*' => return switch(state, State::BlockComment, 2),
        b'\'' if matches!(family, Family::Rust | Family::C | Family::Java | Family::Go) => {
            return char_literal_len(b, i)
        }
        b'"' | b'\'' | b'`'
            if family != Family::Generic && (c != b'`' || matches!(family, Family::JavaScript | Family::Go)) =>
        {
            let triple = b[i..].starts_with(&[c; 3]) && matches!(family, Family::Python | Family::Java);
            let one_line = !triple && c != b'`' && !matches!(family, Family::Rust | Family::Sql);
            return switch(state, State::Str { quote: c, triple, one_line }, if triple { 3 } else { 1 });
        }
        b'r' if family == Family::Rust
            && (i == 0 || !is_ident(i - 1) || (b[i - 1] == b'b' && (i < 2 || !is_ident(i - 2)))) =>
        {
            let hashes = b[i + 1..].iter().take_while(|&&h| h == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                return switch(state, State::RawStr { hashes }, 2 + hashes);
            }
        }
        b'$' if family == Family::Sql && !next.is_ascii_digit() => {
            let tag = b[i + 1..].iter().take_while(|t| t.is_ascii_alphanumeric() || **t == b'_').count();
            if b.get(i + 1 + tag) == Some(&b'$') {
                return switch(state, State::Dollar(&b[i..i + tag + 2]), tag + 2);
            }
        }
        _ => {}
    }
    1
}

/// Sets `state` to `new`; returns `len`, the bytes of the token that changes it.
pub(super) fn switch<'d>(state: &mut State<'d>, new: State<'d>, len: usize) -> usize {
    *state = new;
    len
}

/// Bytes of the ASCII character literal at `i` (`'{'`, `'\''`, `'\u{7D}'`), or 1 for a quote that
/// opens none (a Rust lifetime; a non-ASCII literal holds no bracket or quote that matters).
pub(super) fn char_literal_len(b: &[u8], i: usize) -> usize {
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b'\\'), _) => {
            b.get(i + 3..).unwrap_or_default().iter().take(10).position(|&c| c == b'\'').map_or(1, |p| p + 4)
        }
        (Some(_), Some(b'\'')) => 3,
        _ => 1,
    }
}
