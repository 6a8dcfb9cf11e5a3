//! Top-level definitions found by line rules, with what sits above them, and the items (definitions
//! and the code between them) that chunks are packed from.

use super::{ChunkType, Family, Line};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Header {
    pub(super) chunk_type: ChunkType,
    pub(super) name: Option<String>,
}

/// Words that open a statement, never a definition, in the C-like languages.
pub(super) const CONTROL: &[&str] = &[
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
pub(super) fn header(text: &str, family: Family, body_follows: bool) -> Option<Header> {
    let function = |name: &str| Some(Header { chunk_type: ChunkType::Function, name: identifier(name) });
    let class = |name: &str| Some(Header { chunk_type: ChunkType::Class, name: identifier(name) });
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
                    Some(Header {
                        chunk_type: ChunkType::Class,
                        name: Some(name.to_string()).filter(|n| !n.is_empty()),
                    })
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
            let chunk_type = if matches!(kind.as_str(), "function" | "procedure" | "aggregate") {
                ChunkType::Function
            } else {
                ChunkType::Statement
            };
            kind.bytes().all(|k| k.is_ascii_alphabetic()).then(|| Header { chunk_type, name: name.map(str::to_string) })
        }
        Family::Generic => None,
    }
}

/// A C function by its shape: `type name(`, two words or more before the parenthesis, none a
/// control keyword, and no assignment, call chain, string or comment.
pub(super) fn function_like(text: &str) -> Option<Header> {
    let head = text[..text.find('(')?].trim_end();
    let words: Vec<&str> = head.split_whitespace().collect();
    let name = words.last()?.trim_start_matches(['*', '&']);
    let shape = words.len() >= 2
        && !head.contains(['=', '"', '\'', ',', '.', ';', '}', '#', '!', '?', '/'])
        && !CONTROL.contains(&words[0])
        && !CONTROL.contains(&name);
    let plausible = name.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '~')
        && name.chars().all(|c| c.is_alphanumeric() || "_:~$<>".contains(c));
    (shape && plausible).then(|| Header { chunk_type: ChunkType::Function, name: Some(name.to_string()) })
}

/// `text` after any leading `words` (and Rust's `pub(crate)`-style visibility).
pub(super) fn strip_words<'t>(mut text: &'t str, words: &[&str]) -> &'t str {
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
pub(super) fn skip_group(text: &str, open: u8, close: u8) -> &str {
    let (text, mut depth) = (text.trim_start(), 0);
    let end = text.bytes().position(|b| {
        depth += i32::from(b == open) - i32::from(b == close);
        depth == 0
    });
    end.map_or("", |i| text[if text.as_bytes()[i] == close { i + 1 } else { 0 }..].trim_start())
}

/// The identifier `text` starts with (after spaces and pointer stars).
pub(super) fn identifier(text: &str) -> Option<String> {
    let name: String = text
        .trim_start()
        .trim_start_matches('*')
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    Some(name).filter(|n| !n.is_empty())
}

pub(super) fn line_text<'d>(doc: &'d str, l: &Line) -> &'d str {
    doc[l.start..l.end].trim()
}

/// A top-level definition: its lines (the comments and attributes above it first), what it is,
/// and its signature (its first line, with the rest of a parameter list that goes on).
pub(super) struct Definition {
    pub(super) first: usize,
    pub(super) last: usize,
    pub(super) header: Header,
    pub(super) signature: String,
}

pub(super) fn definitions(doc: &str, lines: &[Line], family: Family) -> Vec<Definition> {
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
pub(super) fn last_line(doc: &str, lines: &[Line], k: usize, limit: usize, family: Family) -> usize {
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
pub(super) struct Item {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) def: Option<usize>,
}

pub(super) fn items(doc: &str, lines: &[Line], defs: &[Definition]) -> Vec<Item> {
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
