//! `strategy: "code"`: source code cut at function and class boundaries (seed design 001, "Code
//! Documents") for Python, JavaScript/TypeScript, Java, Go, Rust, C/C++ and SQL.
//!
//! A scanner follows bracket depth, strings, comments and SQL dollar quotes, so a `}` in a string
//! or a `def` in a docstring changes nothing; line rules (`header`) find top-level definitions,
//! each with the comments, decorators and attributes directly above it, ending where indentation
//! returns to column 0 (Python), where its brackets close, or at its `;` (SQL). Code between
//! definitions forms blocks. Definitions and blocks are packed up to `target_size`; one above
//! `max_size` is cut at its blank lines, the shallowest first, a block still too large between
//! lines. Later pieces of a definition carry its signature as `context` (embedded, not content).
//!
//! Tree-sitter would parse exactly, but measured (bench/tree_sitter) its parse alone takes 9 to
//! 14 times this whole strategy, and each grammar adds a C build and 0.5 to 1.1 MB; line rules
//! with indentation and bracket tracking find the boundaries chunking needs.

use super::{add_overlap, Chunk};
use crate::config::ChunkConfig;
use crate::guards::{force_split, merge_undersized, split_oversized, Run};
use crate::sentences::Span;
use crate::size::{measure, Size, SizeUnit, TokenCounter, UnitSizes};

/// Languages whose rules differ: C++ follows C's, TypeScript JavaScript's; `Generic` cuts at blank lines only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Python,
    JavaScript,
    Java,
    Go,
    Rust,
    C,
    Sql,
    Generic,
}

/// The names cfg `language` accepts: aliases, family, and the name chunks report.
const LANGUAGES: [(&str, Family, &str); 9] = [
    ("python py python3", Family::Python, "python"),
    ("javascript js jsx mjs node", Family::JavaScript, "javascript"),
    ("typescript ts tsx", Family::JavaScript, "typescript"),
    ("java", Family::Java, "java"),
    ("go golang", Family::Go, "go"),
    ("rust rs", Family::Rust, "rust"),
    ("c h", Family::C, "c"),
    ("cpp c++ cxx cc hpp", Family::C, "cpp"),
    ("sql postgresql postgres plpgsql psql", Family::Sql, "sql"),
];

/// The language cfg names; an unknown name keeps the generic rules under that name.
fn named_language(name: &str) -> (Family, String) {
    let name = name.trim().to_lowercase();
    let known = LANGUAGES.iter().find(|(aliases, ..)| aliases.split(' ').any(|a| a == name));
    known.map_or((Family::Generic, name.clone()), |(_, family, canonical)| (*family, canonical.to_string()))
}

/// Lines that betray a language: (prefix of the trimmed line, text it contains, language, weight).
/// SQL prefixes match in any case.
const SIGNALS: &[(&str, &str, &str, usize)] = &[
    ("def ", ":", "python", 3),
    ("async def ", ":", "python", 3),
    ("from ", " import ", "python", 3),
    ("if __name__", "", "python", 3),
    ("elif ", ":", "python", 2),
    ("class ", "):", "python", 2),
    ("fn ", "(", "rust", 3),
    ("pub fn ", "", "rust", 3),
    ("pub ", "", "rust", 1),
    ("impl", "{", "rust", 2),
    ("use ", "::", "rust", 3),
    ("#[", "]", "rust", 3),
    ("let mut ", "", "rust", 2),
    ("func ", "", "go", 3),
    ("package main", "", "go", 3),
    ("import (", "", "go", 2),
    ("", " := ", "go", 1),
    ("package ", ";", "java", 3),
    ("import java", "", "java", 3),
    ("public class ", "", "java", 3),
    ("@Override", "", "java", 3),
    ("function", "(", "javascript", 3),
    ("export ", "", "javascript", 2),
    ("import ", " from ", "javascript", 3),
    ("", "require(", "javascript", 2),
    ("interface ", "{", "javascript", 2),
    ("", "console.", "javascript", 3),
    ("#include", "", "c", 3),
    ("#define ", "", "c", 2),
    ("typedef ", "", "c", 2),
    ("int main(", "", "c", 3),
    ("", "std::", "cpp", 3),
    ("template", "<", "cpp", 2),
    ("namespace ", "", "cpp", 2),
    ("CREATE ", "", "sql", 3),
    ("ALTER TABLE", "", "sql", 3),
    ("INSERT INTO", "", "sql", 2),
    ("GRANT ", "", "sql", 2),
    ("SELECT ", "", "sql", 1),
];

/// The language of `doc` by its shebang, else by the language whose signals its first 64 KB
/// show most; generic ("text") when nothing scores at least one strong signal.
fn detect_language(doc: &str) -> (Family, String) {
    let head = &doc[..(0..=doc.len().min(64 * 1024)).rev().find(|&end| doc.is_char_boundary(end)).unwrap_or(0)];
    let shebang = head.lines().next().filter(|line| line.starts_with("#!")).unwrap_or("");
    if let Some((_, name)) =
        [("python", "python"), ("node", "javascript"), ("deno", "typescript"), ("bun", "javascript")]
            .iter()
            .find(|(program, _)| shebang.contains(program))
    {
        return named_language(name);
    }
    let names = ["python", "javascript", "java", "go", "rust", "c", "cpp", "sql"];
    let mut scores = [0usize; 8];
    for (line, &(prefix, needle, name, weight)) in
        head.lines().map(str::trim_start).flat_map(|line| SIGNALS.iter().map(move |signal| (line, signal)))
    {
        let starts =
            line.get(..prefix.len()).is_some_and(|p| p == prefix || (name == "sql" && p.eq_ignore_ascii_case(prefix)));
        scores[names.iter().position(|n| *n == name).unwrap_or(0)] +=
            if starts && line.contains(needle) { weight } else { 0 };
    }
    scores[5] += scores[6]; // C++ signals are C-family signals
    let best = (0..names.len()).fold(0, |best, i| if scores[i] > scores[best] { i } else { best });
    match names[best] {
        _ if scores[best] < 3 => (Family::Generic, "text".to_string()),
        "c" if scores[6] > 0 => named_language("cpp"),
        "javascript" if [": string", ": number", "interface "].iter().any(|t| head.contains(t)) => {
            named_language("typescript")
        }
        name => named_language(name),
    }
}

/// What the scanner learns about one line: its bytes (`end` before the newline), whether it starts
/// in code or in a block comment (else in a string or SQL dollar-quoted body), the brackets open
/// at its start and end, whether it opens a `{`, has a `;` outside brackets, strings and comments,
/// which of `{` and `;` comes first in it, and its leading whitespace in bytes.
struct Line {
    start: usize,
    end: usize,
    code: bool,
    comment: bool,
    depth: usize,
    depth_end: usize,
    opens_brace: bool,
    ends_statement: bool,
    first_terminator: Option<u8>,
    blank: bool,
    indent: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State<'d> {
    Code,
    BlockComment,
    Str { quote: u8, triple: bool, one_line: bool },
    RawStr { hashes: usize },
    Dollar(&'d [u8]),
}

fn scan_lines(doc: &str, family: Family) -> Vec<Line> {
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
fn code_byte<'d>(
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
fn switch<'d>(state: &mut State<'d>, new: State<'d>, len: usize) -> usize {
    *state = new;
    len
}

/// Bytes of the ASCII character literal at `i` (`'{'`, `'\''`, `'\u{7D}'`), or 1 for a quote that
/// opens none (a Rust lifetime; a non-ASCII literal holds no bracket or quote that matters).
fn char_literal_len(b: &[u8], i: usize) -> usize {
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b'\\'), _) => {
            b.get(i + 3..).unwrap_or_default().iter().take(10).position(|&c| c == b'\'').map_or(1, |p| p + 4)
        }
        (Some(_), Some(b'\'')) => 3,
        _ => 1,
    }
}

/// What a definition's first line says it is.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Header {
    chunk_type: &'static str,
    name: Option<String>,
}

/// Words that open a statement, never a definition, in the C-like languages.
const CONTROL: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "else",
    "do",
    "try",
    "new",
    "throw",
    "sizeof",
    "case",
    "delete",
    "await",
    "yield",
    "using",
    "typedef",
    "synchronized",
];

/// The definition a trimmed line opens: Python `def`/`class`; Rust `fn`, `struct`, `enum`,
/// `trait`, `impl`, `mod … {`, `macro_rules!`; Go `func`, `type … {`; Java `class`, `interface`,
/// `enum`, `record`; JavaScript `function`, `class`, `interface`, `const f = (…) =>`; C/C++
/// `struct`, `class`, `namespace` or a signature; SQL any `CREATE` (`function` for functions,
/// procedures and aggregates, else `statement`). `body_follows`: the first `{` or `;` from this
/// line on is a `{` (a C signature, not a prototype or a call).
fn header(text: &str, family: Family, body_follows: bool) -> Option<Header> {
    let function = |name: &str| Some(Header { chunk_type: "function", name: identifier(name) });
    let class = |name: &str| Some(Header { chunk_type: "class", name: identifier(name) });
    let first_word = |rest: &str| rest.find(' ').unwrap_or(rest.len());
    match family {
        Family::Python => {
            let rest = text.strip_prefix("async ").unwrap_or(text);
            rest.strip_prefix("def ").map_or_else(|| rest.strip_prefix("class ").and_then(class), function)
        }
        Family::Rust => {
            let rest = strip_words(text, &["pub", "async", "const", "unsafe", "extern", "\"C\"", "default"]);
            match rest.split_at(first_word(rest)) {
                ("fn" | "macro_rules!", name) => function(name),
                ("struct" | "enum" | "union" | "trait", name) => class(name),
                ("mod", name) if text.contains('{') => class(name),
                _ if rest.starts_with("impl ") || rest.starts_with("impl<") => {
                    let name = skip_group(&rest[4..], b'<', b'>')
                        .split(" where")
                        .next()
                        .unwrap_or("")
                        .trim_end_matches('{')
                        .trim(); // `Default for Size`
                    Some(Header { chunk_type: "class", name: Some(name.to_string()).filter(|n| !n.is_empty()) })
                }
                _ => None,
            }
        }
        Family::Go => match text.strip_prefix("func ") {
            Some(rest) if rest.starts_with('(') => function(skip_group(rest, b'(', b')')),
            Some(rest) => function(rest),
            None => text.strip_prefix("type ").filter(|_| text.contains('{')).and_then(class),
        },
        Family::Java => {
            let rest = strip_words(
                text,
                &[
                    "public",
                    "private",
                    "protected",
                    "static",
                    "final",
                    "abstract",
                    "sealed",
                    "non-sealed",
                    "strictfp",
                    "default",
                ],
            );
            match rest.split_at(first_word(rest)) {
                ("class" | "interface" | "enum" | "record" | "@interface", name) => class(name),
                _ => None,
            }
        }
        Family::JavaScript => {
            let rest = strip_words(
                text,
                &[
                    "export",
                    "default",
                    "declare",
                    "abstract",
                    "async",
                    "public",
                    "private",
                    "protected",
                    "static",
                    "readonly",
                    "override",
                ],
            );
            match rest.split_at(rest.find([' ', '*', '(']).unwrap_or(rest.len())) {
                ("function", name) => function(name),
                ("class" | "interface" | "enum" | "namespace", name) => class(name),
                ("const" | "let" | "var", declaration) => {
                    let (name, value) = declaration.split_once('=')?;
                    let value = value.trim_start();
                    let params = value.find("=>").map(|at| value[..at].trim());
                    let arrow = params.map_or(value.trim_end() == "(", |p| {
                        p.starts_with('(') || identifier(p).is_some_and(|n| n == p)
                    });
                    match value {
                        _ if value.starts_with("class") => class(name),
                        _ if value.starts_with("function") || value.starts_with("async") || arrow => function(name),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        Family::C => {
            let rest = text.strip_prefix("template").map_or(text, |r| skip_group(r, b'<', b'>'));
            let rest = rest.strip_prefix("typedef ").unwrap_or(rest);
            match rest.split_at(first_word(rest)) {
                ("enum", name) if name.trim_start().starts_with("class ") && body_follows => {
                    class(&name.trim_start()[6..])
                }
                ("struct" | "class" | "union" | "enum" | "namespace", name) if body_follows && !rest.contains('=') => {
                    class(name)
                }
                _ if body_follows => function_like(rest),
                _ => None,
            }
        }
        Family::Sql => {
            let mut words = text.split_whitespace();
            words.next().filter(|w| w.eq_ignore_ascii_case("create"))?;
            let modifiers = [
                "or",
                "replace",
                "temp",
                "temporary",
                "unlogged",
                "unique",
                "materialized",
                "constraint",
                "recursive",
                "global",
                "local",
                "event",
                "default",
                "trusted",
                "procedural",
            ];
            let kind = words.find(|w| !modifiers.iter().any(|m| w.eq_ignore_ascii_case(m)))?.to_ascii_lowercase();
            let name = words
                .find(|w| !["if", "not", "exists", "concurrently"].iter().any(|m| w.eq_ignore_ascii_case(m)))
                .filter(|w| !w.eq_ignore_ascii_case("on"));
            let name =
                name.map(|n| n.split('(').next().unwrap_or(n).trim_matches(['"', ';'])).filter(|n| !n.is_empty());
            let chunk_type =
                if matches!(kind.as_str(), "function" | "procedure" | "aggregate") { "function" } else { "statement" };
            kind.bytes().all(|k| k.is_ascii_alphabetic()).then(|| Header { chunk_type, name: name.map(str::to_string) })
        }
        Family::Generic => None,
    }
}

/// A C function by its shape: `type name(`, two words or more before the parenthesis, none a
/// control keyword, and no assignment, call chain, string or comment.
fn function_like(text: &str) -> Option<Header> {
    let head = text[..text.find('(')?].trim_end();
    let words: Vec<&str> = head.split_whitespace().collect();
    let name = words.last()?.trim_start_matches(['*', '&']);
    let shape = words.len() >= 2
        && !head.contains(['=', '"', '\'', ',', '.', ';', '}', '#', '!', '?', '/'])
        && !CONTROL.contains(&words[0])
        && !CONTROL.contains(&name);
    let plausible = name.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '~')
        && name.chars().all(|c| c.is_alphanumeric() || "_:~$<>".contains(c));
    (shape && plausible).then(|| Header { chunk_type: "function", name: Some(name.to_string()) })
}

/// `text` after any leading `words` (and Rust's `pub(crate)`-style visibility).
fn strip_words<'t>(mut text: &'t str, words: &[&str]) -> &'t str {
    loop {
        let rest = text.trim_start();
        text = match words.iter().find_map(|w| rest.strip_prefix(w).filter(|r| r.starts_with([' ', '(']))) {
            Some(r) if r.starts_with('(') => r.split_once(')').map_or(r, |(_, after)| after),
            Some(r) => r,
            None => return rest,
        };
    }
}

/// `text` after a leading bracketed group (`<T>`, a Go receiver), trimmed.
fn skip_group(text: &str, open: u8, close: u8) -> &str {
    let (text, mut depth) = (text.trim_start(), 0);
    let end = text.bytes().position(|b| {
        depth += i32::from(b == open) - i32::from(b == close);
        depth == 0
    });
    end.map_or("", |i| text[if text.as_bytes()[i] == close { i + 1 } else { 0 }..].trim_start())
}

/// The identifier `text` starts with (after spaces and pointer stars).
fn identifier(text: &str) -> Option<String> {
    let name: String = text
        .trim_start()
        .trim_start_matches('*')
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    Some(name).filter(|n| !n.is_empty())
}

fn line_text<'d>(doc: &'d str, l: &Line) -> &'d str {
    doc[l.start..l.end].trim()
}

/// A top-level definition: its lines (the comments and attributes above it first), what it is,
/// and its signature (its first line, with the rest of a parameter list that goes on).
struct Definition {
    first: usize,
    last: usize,
    header: Header,
    signature: String,
}

fn definitions(doc: &str, lines: &[Line], family: Family) -> Vec<Definition> {
    let at_level = |l: &Line| l.code && l.depth == 0 && (family != Family::Python || l.indent == 0);
    let body_follows = |k: usize| lines[k..].iter().take(8).find_map(|l| l.first_terminator) == Some(b'{');
    let opens = |k: usize| header(line_text(doc, &lines[k]), family, body_follows(k)).map(|h| (k, h));
    let starts: Vec<(usize, Header)> =
        (0..lines.len()).filter(|&k| !lines[k].blank && at_level(&lines[k])).filter_map(opens).collect();
    let mut firsts = Vec::with_capacity(starts.len());
    for (n, &(k, _)) in starts.iter().enumerate() {
        // Comments, doc comments, decorators and attributes (multi-line ones too) directly above.
        let (floor, mut first) = (if n == 0 { 0 } else { starts[n - 1].0 + 1 }, k);
        while first > floor {
            let mut above = first - 1;
            while above > floor && lines[above].depth > 0 && lines[above].code && !lines[above].blank {
                above -= 1;
            }
            let (l, t) = (&lines[above], line_text(doc, &lines[above]));
            let comment = t.starts_with(match family {
                Family::Python => "#",
                Family::Sql => "--",
                _ => "//",
            }) || (family != Family::Python && t.starts_with("/*"));
            let attribute = match family {
                Family::Python | Family::Java | Family::JavaScript => Some("@"),
                Family::Rust => Some("#["),
                Family::C => Some("template"),
                _ => None,
            };
            let attribute = attribute.is_some_and(|a| t.starts_with(a)) || (family == Family::C && t.starts_with("[["));
            if l.blank || !(l.comment || (at_level(l) && (comment || attribute))) {
                break;
            }
            first = above;
        }
        firsts.push(first);
    }
    let mut defs = Vec::with_capacity(starts.len());
    for (n, (k, header)) in starts.into_iter().enumerate() {
        let limit = firsts.get(n + 1).copied().unwrap_or(lines.len());
        let mut signature = vec![line_text(doc, &lines[k])];
        while family != Family::Sql
            && signature.len() < 4
            && k + signature.len() < limit
            && lines[k + signature.len() - 1].depth_end > 0
            && !lines[k + signature.len() - 1].opens_brace
        {
            signature.push(line_text(doc, &lines[k + signature.len()]));
        }
        defs.push(Definition {
            first: firsts[n],
            last: last_line(doc, lines, k, limit, family),
            header,
            signature: signature.join(" "),
        });
    }
    defs
}

/// The last line of the definition opened on line `k`, before line `limit`.
fn last_line(doc: &str, lines: &[Line], k: usize, limit: usize, family: Family) -> usize {
    if family == Family::Python {
        // Indented lines, continued brackets and strings; a comment at column 0 inside does not end it.
        let mut last = k;
        for (j, l) in lines.iter().enumerate().take(limit).skip(k + 1).filter(|(_, l)| !l.blank) {
            if !l.code || l.depth > 0 || l.indent > 0 {
                last = j;
            } else if !line_text(doc, l).starts_with('#') {
                break;
            }
        }
        return last;
    }
    let mut opened = false;
    for (j, l) in lines.iter().enumerate().take(limit).skip(k) {
        opened |= l.opens_brace && family != Family::Sql;
        if l.depth_end == 0 && (opened || l.ends_statement) {
            return j;
        }
    }
    (k..limit).rev().find(|&j| !lines[j].blank).unwrap_or(k)
}

/// A top-level piece of the document, trimmed: a definition (`def`, its index) or code between.
struct Item {
    start: usize,
    end: usize,
    def: Option<usize>,
}

fn items(doc: &str, lines: &[Line], defs: &[Definition]) -> Vec<Item> {
    let (mut ranges, mut covered) = (Vec::new(), 0);
    for (d, def) in defs.iter().enumerate() {
        ranges
            .extend([(covered, lines[def.first].start, None), (lines[def.first].start, lines[def.last].end, Some(d))]);
        covered = lines[def.last].end;
    }
    ranges.push((covered, doc.len(), None));
    let trimmed = |(start, end, def): (usize, usize, Option<usize>)| {
        let (text, start) =
            (doc[start..end].trim(), start + doc[start..end].len() - doc[start..end].trim_start().len());
        (!text.is_empty()).then_some(Item { start, end: start + text.len(), def })
    };
    ranges.into_iter().filter_map(trimmed).collect()
}

pub fn code_chunks(doc: &str, cfg: &ChunkConfig, tokens: &dyn TokenCounter) -> Vec<Chunk> {
    let (family, language) = cfg.language.as_deref().map_or_else(|| detect_language(doc), named_language);
    let lines = scan_lines(doc, family);
    let defs = definitions(doc, &lines, family);
    let items = items(doc, &lines, &defs);
    let mut chunks = Chunker { doc, cfg, tokens, lines: &lines, language, defs: &defs, items: &items }.pack_items();
    add_overlap(doc, &[], &mut chunks, cfg.overlap, cfg.max_size, tokens);
    chunks
}

struct Chunker<'a> {
    doc: &'a str,
    cfg: &'a ChunkConfig,
    tokens: &'a dyn TokenCounter,
    lines: &'a [Line],
    language: String,
    defs: &'a [Definition],
    items: &'a [Item],
}

impl Chunker<'_> {
    fn size(&self, start: usize, end: usize, unit: SizeUnit) -> usize {
        measure(&self.doc[start..end], unit, self.tokens)
    }

    /// Packs consecutive items up to `target_size`, or up to `max_size` while the pack or the
    /// next item is below `min_size`. An item above `max_size` is cut on its own into pieces that
    /// leave room for its signature and the newline that joins it.
    fn pack_items(&self) -> Vec<Chunk> {
        let (items, min, max) = (self.items, self.cfg.min_size, self.cfg.max_size);
        let within = |start: usize, end: usize, cap: Size| self.size(start, end, cap.unit) <= cap.value;
        let small = |start: usize, end: usize| self.size(start, end, min.unit) < min.value;
        let (mut chunks, mut pack): (Vec<Chunk>, Option<(usize, usize)>) = (Vec::new(), None);
        for i in 0..=items.len() {
            let fits = items.get(i).is_some_and(|item| within(item.start, item.end, max));
            let joins = |(first, last): (usize, usize)| {
                let (start, end) = (items[first].start, items[i].end);
                within(start, end, self.cfg.target_size)
                    || ((small(start, items[last].end) || small(items[i].start, end)) && within(start, end, max))
            };
            if let Some((first, _)) = pack.filter(|&p| fits && joins(p)) {
                pack = Some((first, i));
                continue;
            }
            if let Some((first, last)) = pack.take() {
                self.emit(&mut chunks, first, last, vec![(items[first].start, items[last].end)]);
            }
            if fits {
                pack = Some((i, i));
            } else if let Some(item) = items.get(i) {
                let signature = item.def.map(|d| self.defs[d].signature.as_str());
                let cost = signature
                    .map_or(0, |s| measure(s, max.unit, self.tokens) + usize::from(max.unit == SizeUnit::Chars));
                let cap = if cost * 2 <= max.value { Size { value: max.value - cost, unit: max.unit } } else { max };
                self.emit(&mut chunks, i, i, self.cut(item.start, item.end, cap, true));
            }
        }
        chunks
    }

    /// Pieces of `start..end` within `cap`: runs of blank-line blocks (or of lines), each ending at
    /// the shallowest gap after half the cap, a run below `min_size` joined to the side across the
    /// deeper gap; a block too large alone is cut between lines, a line at words.
    fn cut(&self, start: usize, end: usize, cap: Size, at_blank_lines: bool) -> Vec<(usize, usize)> {
        let (mut units, mut seams): (Vec<Span>, Vec<f64>) = (Vec::new(), Vec::new());
        let mut open = false;
        for l in self.lines[self.lines.partition_point(|l| l.end < start)..].iter().take_while(|l| l.start < end) {
            let line_end = (l.start + self.doc[l.start..l.end].trim_end().len()).min(end);
            match units.last_mut() {
                _ if l.blank => open = false,
                Some(unit) if open && at_blank_lines => unit.end = line_end - start,
                _ => {
                    if !units.is_empty() {
                        // Higher where a block starts shallower; lowest inside a string or comment.
                        seams.push(-((l.depth * 100 + l.indent) as f64) - if l.code { 0.0 } else { 1e6 });
                    }
                    units.push(Span { start: (l.start + l.indent).max(start) - start, end: line_end - start }); // relative to `start`
                    open = true;
                }
            }
        }
        let sizes = UnitSizes::new(&self.doc[start..end], &units, self.tokens); // a slice: it counts characters from its start
        let mut pieces = Vec::new();
        let runs = split_oversized(Run { first: 0, last: units.len() - 1 }, &sizes, &seams, cap, cap);
        for run in merge_undersized(&runs, &sizes, &seams, self.cfg.min_size, cap) {
            let (start, end) = (start + units[run.first].start, start + units[run.last].end);
            let within = sizes.fits(run.first, run.last, cap);
            pieces.extend(if within {
                vec![(start, end)]
            } else if at_blank_lines {
                self.cut(start, end, cap, false)
            } else {
                force_split(self.doc, start, end, cap, self.tokens)
            });
        }
        pieces
    }

    /// Adds items `first..=last` cut into `pieces`, described by their first definition (else as
    /// the module header or a block); later pieces of a definition carry its signature. A piece
    /// above `max_size` (a tokenizer not additive over whitespace) is force-split.
    fn emit(&self, chunks: &mut Vec<Chunk>, first: usize, last: usize, pieces: Vec<(usize, usize)>) {
        let (items, defs, max) = (self.items, self.defs, self.cfg.max_size);
        let def = items[first..=last].iter().find_map(|item| item.def).map(|d| &defs[d]);
        let within_max = |&(s, e): &(usize, usize)| {
            if self.size(s, e, max.unit) <= max.value {
                vec![(s, e)]
            } else {
                force_split(self.doc, s, e, max, self.tokens)
            }
        };
        let mut previous_end = None;
        for (start, end) in pieces.iter().flat_map(within_max).collect::<Vec<_>>() {
            let reason = match previous_end {
                None if items[first].def.is_none() && chunks.is_empty() => "start",
                None => "code_boundary",
                Some(at) if self.doc[at..start].matches('\n').count() >= 2 => "blank_line",
                Some(_) => "forced",
            };
            let chunk_type =
                def.map_or(if first == 0 && !defs.is_empty() { "module" } else { "block" }, |d| d.header.chunk_type);
            let mut chunk = Chunk::new(start, end, reason, None)
                .with("language", self.language.as_str())
                .with("chunk_type", chunk_type);
            chunk.metadata.extend(
                def.and_then(|d| d.header.name.as_deref()).map(|name| ("function_name".to_string(), name.into())),
            );
            if let (Some(def), Some(_)) = (def.filter(|_| first == last && items[first].def.is_some()), previous_end) {
                chunk.context = Some(def.signature.clone());
                chunk = chunk.with("signature_repeated", true);
            }
            previous_end = Some(end);
            chunks.push(chunk);
        }
    }
}

#[cfg(test)]
#[path = "code_tests.rs"]
mod tests;
