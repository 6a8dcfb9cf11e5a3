//! Splits a document into the units that chunking works on: sentences, Markdown headings and
//! list items, as byte spans into the document.
//!
//! The rules, in the order they apply:
//!
//! 1. **Paragraphs.** A blank line (only whitespace between two line breaks; `\n`, `\r\n` and a
//!    lone `\r` are line breaks) always ends a unit. Any other single line break is wrapping.
//! 2. **Headings.** A line that starts, after optional indentation, with `#` to `######` followed by
//!    a space, a tab or the end of the line is one unit on its own. It is not split further: a
//!    title such as `# 2. Results. Part one` is not a run of sentences.
//! 3. **List items.** A line that starts, after optional indentation, with `- `, `* `, `+ `, or one
//!    to nine digits and `. ` or `) ` starts a new unit. Its text, with any wrapped continuation
//!    lines, is split by the sentence rules; the next item, heading or blank line ends it.
//! 4. **Sentence ends.** A run of terminators (`.` `!` `?` `…` and their mixes such as `?!`,
//!    `...`), followed by any closing quotes and brackets, which stay on the sentence.
//!    - CJK `。！？｡` and the Devanagari danda `।` and double danda `॥` end a sentence right
//!      after the run and its closers; Chinese and Japanese put no space between sentences.
//!    - The other terminators end a sentence only when whitespace or the end of the text
//!      follows. That alone keeps `3.14`, `v1.2.3`, `a.b@c.org` and `https://x.org/a.b?c=d` whole.
//!    - They do not end one when the next word (past whitespace and opening quotes or brackets)
//!      starts with a lowercase letter: `e.g. the`, `Wait... what`, `"Help!" he cried`.
//!    - A single `.` directly after an abbreviation does not end one: a word from
//!      [`ABBREVIATIONS`] (any case), a single capital initial (`J. R. R. Tolkien`), or single
//!      letters joined by dots (`e.g.`, `U.S.`, `p.m.`). Words from [`NUMBER_ABBREVIATIONS`] count
//!      only before a number, because `No.` before a capital is usually the answer "No.".
//!
//! Deliberate choices a reader might not expect:
//! - `etc.` is not an abbreviation here. Mid-sentence it is followed by a lowercase word and the
//!   lowercase rule keeps the sentence whole; before a capital it usually ends the sentence.
//! - The price of the abbreviation rules: a sentence that really ends on one (`at 5 p.m. The`,
//!   `Acme Inc. The`, `plan B. Then`) is not split there.
//! - `…` counts as a Latin terminator, so a Chinese `……` with no space after it does not split.
//! - Setext headings, tables and fenced code are not recognised; their lines read as prose.

use std::convert::Infallible;

/// Byte range of one unit (a sentence, heading or list item) in the document, with
/// surrounding whitespace excluded. `&doc[start..end]` is the unit's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset just past the last byte.
    pub end: usize,
}

impl Span {
    /// The unit's text; `doc` must be the document the span came from.
    pub fn text<'a>(&self, doc: &'a str) -> &'a str {
        &doc[self.start..self.end]
    }
}

/// Whether each gap between units ends a paragraph: a blank line lies between them (rule 1),
/// or the next unit is a Markdown heading on a line of its own (rule 2). One entry per gap.
pub fn paragraph_breaks(doc: &str, units: &[Span]) -> Vec<bool> {
    units
        .windows(2)
        .map(|pair| {
            let between = &doc[pair[0].end..pair[1].start];
            // `\r\n` is one line break; a lone `\r` or `\n` is one too.
            let breaks = between
                .char_indices()
                .filter(|&(i, c)| c == '\n' || c == '\r' && !between[i + 1..].starts_with('\n'))
                .count();
            breaks >= 2 || breaks == 1 && matches!(classify_line(doc, pair[1].start), Line::Heading { .. })
        })
        .collect()
}

/// Words that a single `.` follows without ending the sentence, compared ignoring ASCII case and
/// without their dot. Dotted single letters (`e.g`, `i.e`, `U.S`, `a.m`) are recognised by
/// shape instead of being listed.
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "cf", "approx", "fig", "figs", "eq", "inc", "ltd",
    "co", "corp", "dept", "gen", "col", "lt", "capt", "sgt", "rev", "hon", "jan", "feb", "mar", "apr", "jun", "jul",
    "aug", "sep", "sept", "oct", "nov", "dec", "ph.d",
];

/// Abbreviations that also stand as words, so they count only when a digit follows (`No. 5`,
/// `p. 12`, `vol. 3`).
const NUMBER_ABBREVIATIONS: &[&str] = &["no", "nos", "p", "pp", "vol", "ch"];

/// Longer words are never abbreviations; checking the length first keeps the look-up cheap.
const LONGEST_ABBREVIATION: usize = 8;

/// How much of the document [`split_sentences_interruptible`] reads between two calls of its
/// `interrupt`: 64 KiB, about 0.2 ms of splitting (5 MB take 15 ms).
pub const INTERRUPT_EVERY_BYTES: usize = 1 << 16;

/// Splits a document into units in document order. Never panics, on any &str.
pub fn split_sentences(doc: &str) -> Vec<Span> {
    let Ok(units) = split_sentences_interruptible(doc, &|| Ok::<(), Infallible>(()));
    units
}

/// [`split_sentences`], calling `interrupt` every [`INTERRUPT_EVERY_BYTES`] of the document and
/// stopping with its error: what chunking a whole document uses
/// ([`Embedder::check_interrupt`](crate::embed::Embedder::check_interrupt)).
///
/// One pass over the characters: each line is classified when the scan reaches its start, and
/// sentence ends are decided with a look-ahead that only crosses whitespace and opening
/// punctuation, so the work is linear in the length of the document.
pub fn split_sentences_interruptible<E>(doc: &str, interrupt: &dyn Fn() -> Result<(), E>) -> Result<Vec<Span>, E> {
    let mut units = Units { doc, spans: Vec::new(), open_since: 0 };
    let mut i = 0;
    let mut next_interrupt_check = 0;
    // Start of the whitespace-delimited word the scan is in, for the abbreviation check.
    let mut word_start = 0;
    let mut at_line_start = true;
    while i < doc.len() {
        if i >= next_interrupt_check {
            interrupt()?;
            next_interrupt_check = i + INTERRUPT_EVERY_BYTES;
        }
        if at_line_start {
            at_line_start = false;
            match classify_line(doc, i) {
                Line::Blank { line_end } => {
                    units.end_at(i);
                    i = line_end;
                    continue;
                }
                Line::Heading { line_end } => {
                    units.end_at(i);
                    units.end_at(line_end);
                    i = line_end;
                    continue;
                }
                Line::ListItem { text_start } => {
                    units.end_at(i);
                    i = text_start;
                }
                Line::Prose { text_start } => i = text_start,
            }
            word_start = i;
            continue;
        }
        let Some(c) = char_at(doc, i) else { break };
        match c {
            '\n' => {
                i += 1;
                at_line_start = true;
            }
            '\r' => {
                i += if doc.as_bytes().get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                at_line_start = true;
            }
            _ if is_terminator(c) => {
                let (after, ends_sentence) = terminator_run(doc, i, word_start);
                if ends_sentence {
                    units.end_at(after);
                    word_start = after;
                }
                i = after;
            }
            _ if c.is_whitespace() => {
                i += c.len_utf8();
                word_start = i;
            }
            _ => i += c.len_utf8(),
        }
    }
    units.end_at(doc.len());
    Ok(units.spans)
}

/// The units found so far and where the open one began.
struct Units<'a> {
    doc: &'a str,
    spans: Vec<Span>,
    open_since: usize,
}

impl Units<'_> {
    /// Closes the open unit at byte `at`, trimmed of whitespace; a unit that is all whitespace
    /// is dropped. The next unit opens at `at`.
    fn end_at(&mut self, at: usize) {
        let piece = &self.doc[self.open_since..at];
        let trimmed = piece.trim();
        if !trimmed.is_empty() {
            let start = self.open_since + (piece.len() - piece.trim_start().len());
            self.spans.push(Span { start, end: start + trimmed.len() });
        }
        self.open_since = at;
    }
}

/// What a line is, judged from its first characters.
enum Line {
    /// Whitespace only; `line_end` is where its line break (or the text) begins.
    Blank { line_end: usize },
    /// A Markdown heading, a unit up to `line_end`.
    Heading { line_end: usize },
    /// A list item whose text (after the marker) begins at `text_start`.
    ListItem { text_start: usize },
    /// Any other line; `text_start` is past its indentation.
    Prose { text_start: usize },
}

fn classify_line(doc: &str, line_start: usize) -> Line {
    let bytes = doc.as_bytes();
    let mut i = line_start;
    while let Some(c) = char_at(doc, i) {
        if !c.is_whitespace() || is_line_break(c) {
            break;
        }
        i += c.len_utf8();
    }
    let text_start = i;
    let is_marker_gap = |at: usize| matches!(bytes.get(at), Some(b' ' | b'\t'));
    let ends_line = |at: usize| matches!(bytes.get(at), None | Some(b'\n' | b'\r'));
    match bytes.get(i) {
        None | Some(b'\n' | b'\r') => Line::Blank { line_end: i },
        Some(b'#') => {
            let hashes = bytes[i..].iter().take_while(|&&b| b == b'#').count();
            if hashes <= 6 && (is_marker_gap(i + hashes) || ends_line(i + hashes)) {
                let line_len = bytes[i..].iter().position(|&b| b == b'\n' || b == b'\r');
                Line::Heading { line_end: line_len.map_or(doc.len(), |len| i + len) }
            } else {
                Line::Prose { text_start }
            }
        }
        Some(b'-' | b'*' | b'+') if is_marker_gap(i + 1) => Line::ListItem { text_start: i + 2 },
        Some(b'0'..=b'9') => {
            let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            let numbered =
                digits <= 9 && matches!(bytes.get(i + digits), Some(b'.' | b')')) && is_marker_gap(i + digits + 1);
            if numbered {
                Line::ListItem { text_start: i + digits + 2 }
            } else {
                Line::Prose { text_start }
            }
        }
        Some(_) => Line::Prose { text_start },
    }
}

/// Reads the run of terminators at `run_start` and the closing quotes and brackets after it.
/// Returns the byte just past them and whether a sentence ends there. `word_start` is where
/// the word that the run ends began.
fn terminator_run(doc: &str, run_start: usize, word_start: usize) -> (usize, bool) {
    let mut i = run_start;
    let mut needs_no_space = false;
    while let Some(c) = char_at(doc, i).filter(|&c| is_terminator(c)) {
        needs_no_space |= ends_without_space(c);
        i += c.len_utf8();
    }
    let run_end = i;
    while let Some(c) = char_at(doc, i).filter(|&c| is_closer(c)) {
        i += c.len_utf8();
    }
    let after = i;
    if needs_no_space {
        return (after, true);
    }
    match char_at(doc, after) {
        None => return (after, true),
        Some(c) if !c.is_whitespace() => return (after, false),
        Some(_) => {}
    }
    let mut k = after;
    while let Some(c) = char_at(doc, k).filter(|&c| c.is_whitespace() || is_opener(c)) {
        k += c.len_utf8();
    }
    let next = char_at(doc, k);
    if next.is_some_and(char::is_lowercase) {
        return (after, false);
    }
    let lone_dot = run_end == run_start + 1 && doc.as_bytes()[run_start] == b'.';
    if lone_dot && after == run_end && is_abbreviation(&doc[word_start..run_start], next) {
        return (after, false);
    }
    (after, true)
}

/// Whether `word` (the text before a lone `.`) is an abbreviation; `next` is the first
/// character of the following word.
fn is_abbreviation(word: &str, next: Option<char>) -> bool {
    let word = word.trim_start_matches(is_opener);
    if word.is_empty() || word.len() > LONGEST_ABBREVIATION {
        return false;
    }
    let mut chars = word.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_uppercase() {
            return true;
        }
    }
    let dotted_letters = word.contains('.')
        && word.split('.').all(|part| {
            let mut chars = part.chars();
            matches!((chars.next(), chars.next()), (Some(c), None) if c.is_alphabetic())
        });
    let listed = |list: &[&str]| list.iter().any(|a| a.eq_ignore_ascii_case(word));
    dotted_letters
        || listed(ABBREVIATIONS)
        || (next.is_some_and(|c| c.is_ascii_digit()) && listed(NUMBER_ABBREVIATIONS))
}

/// The character starting at byte `i`, or `None` at the end. `i` must be a char boundary.
fn char_at(doc: &str, i: usize) -> Option<char> {
    let b = *doc.as_bytes().get(i)?;
    if b.is_ascii() {
        Some(b as char)
    } else {
        doc[i..].chars().next()
    }
}

fn is_line_break(c: char) -> bool {
    c == '\n' || c == '\r'
}

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…' | '‼' | '⁇' | '⁈' | '⁉') || ends_without_space(c)
}

/// Terminators of scripts written without spaces between sentences (CJK), and the danda,
/// which Hindi text often sets with no space or with a space before it.
fn ends_without_space(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '｡' | '।' | '॥')
}

/// Closing quotes and brackets that stay with the sentence they end.
const CLOSERS: &str = "\"'”’»›)]}」』）】〕〉》〗〙〛］｝＂＇〞〟";

/// Opening quotes and brackets, skipped when looking for the first letter of a word.
const OPENERS: &str = "\"'“‘„‚«‹([{「『（【〔〈《〖〘〚［｛¿¡〝";

fn is_closer(c: char) -> bool {
    CLOSERS.contains(c)
}

fn is_opener(c: char) -> bool {
    OPENERS.contains(c)
}

#[cfg(test)]
#[path = "sentences_tests.rs"]
mod tests;
