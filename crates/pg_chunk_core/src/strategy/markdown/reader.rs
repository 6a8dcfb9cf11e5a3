//! Reading Markdown into blocks: the lines of a document (or of a list item's inside) and the
//! block rules.

use super::{Block, BlockKind, MAX_NESTING};
use crate::guards::force_split;
use crate::sentences::{split_sentences, Span};
use crate::size::{measure, Size, TokenCounter};

/// Lines of a document, or of a list item's inside, and the column its blocks start at (`base`:
/// 0 for the document, a list item's content indent for its inside).
pub(super) struct Reader<'a> {
    pub(super) doc: &'a str,
    /// Each line without its line break (`\n`, `\r\n` or a lone `\r`).
    pub(super) lines: Vec<Span>,
    pub(super) base: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn of(doc: &'a str) -> Reader<'a> {
        let (mut lines, mut start) = (Vec::new(), 0);
        for (at, _) in doc.match_indices(['\n', '\r']).filter(|&(at, c)| !(c == "\n" && doc[..at].ends_with('\r'))) {
            lines.push(Span { start, end: at });
            start = at + if doc[at..].starts_with("\r\n") { 2 } else { 1 };
        }
        if start < doc.len() {
            lines.push(Span { start, end: doc.len() });
        }
        Reader { doc, lines, base: 0 }
    }

    pub(super) fn text(&self, i: usize) -> &'a str {
        self.lines[i].text(self.doc)
    }

    pub(super) fn is_blank(&self, i: usize) -> bool {
        self.text(i).trim().is_empty()
    }

    /// Columns of indentation past `base` (a tab advances to the next multiple of 4).
    pub(super) fn indent(&self, i: usize) -> usize {
        let whitespace = self.text(i).chars().take_while(|c| matches!(c, ' ' | '\t'));
        whitespace
            .fold(0usize, |columns, c| if c == '\t' { columns + 4 - columns % 4 } else { columns + 1 })
            .saturating_sub(self.base)
    }

    /// The document's blocks: front matter, when there is some, then [`Reader::blocks`].
    pub(super) fn document_blocks(&self) -> Vec<Block> {
        let opens = !self.lines.is_empty() && self.text(0).trim_end() == "---";
        let closing = (1..self.lines.len())
            .take_while(|&j| opens && !self.is_blank(j))
            .find(|&j| matches!(self.text(j).trim_end(), "---" | "..."));
        let mut blocks: Vec<Block> =
            closing.map(|last| self.block(BlockKind::FrontMatter, 0, last)).into_iter().collect();
        blocks.extend(self.blocks(closing.map_or(0, |last| last + 1)));
        blocks
    }

    /// The blocks from line `from` on; together they hold every non-blank line.
    pub(super) fn blocks(&self, from: usize) -> Vec<Block> {
        let (mut blocks, mut from) = (Vec::new(), from);
        while let Some(i) = (from..self.lines.len()).find(|&i| !self.is_blank(i)) {
            let (kind, last) = self.block_at(i);
            blocks.push(self.block(kind, i, last));
            from = last + 1;
        }
        blocks
    }

    /// The kind and last line of the block that starts at non-blank line `i`.
    pub(super) fn block_at(&self, i: usize) -> (BlockKind, usize) {
        if self.indent(i) >= 4 {
            let last = (i + 1..self.lines.len())
                .take_while(|&j| self.is_blank(j) || self.indent(j) >= 4)
                .filter(|&j| !self.is_blank(j))
                .last();
            return (BlockKind::IndentedCode, last.unwrap_or(i));
        }
        let rest = self.text(i).trim_start();
        if let Some(fence) = fence_open(rest) {
            return (BlockKind::Code, self.fence_end(i, fence, self.indent(i) + 3));
        }
        if atx_heading(rest).is_some() {
            return (BlockKind::Heading, i);
        }
        if thematic_break(rest) {
            return (BlockKind::Rule, i);
        }
        if rest.starts_with('>') {
            return (
                BlockKind::Quote,
                self.last_line_while(i, |j| !self.interrupts(j) || self.text(j).trim_start().starts_with('>')),
            );
        }
        if let Some(marker) = list_marker(rest) {
            return (BlockKind::ListItem, self.list_item_end(i, &marker));
        }
        if self.table_starts(i) {
            return (BlockKind::Table, self.last_line_while(i, |j| self.text(j).contains('|')));
        }
        let is_underline = |j: usize| self.indent(j) <= 3 && setext_level(self.text(j).trim()).is_some();
        let last = self.last_line_while(i, |j| !is_underline(j) && !self.interrupts(j));
        match last + 1 < self.lines.len() && !self.is_blank(last + 1) && is_underline(last + 1) {
            true => (BlockKind::Heading, last + 1),
            false => (BlockKind::Paragraph, last),
        }
    }

    /// The last line from `i` on such that every line after `i` up to it is non-blank and
    /// satisfies `continues`.
    pub(super) fn last_line_while(&self, i: usize, continues: impl Fn(usize) -> bool) -> usize {
        let mut last = i;
        while last + 1 < self.lines.len() && !self.is_blank(last + 1) && continues(last + 1) {
            last += 1;
        }
        last
    }

    /// Whether line `j` starts a block that ends a paragraph (CommonMark: an ordered item must
    /// start at 1 and no empty item may, so that "2019. A year" stays text).
    pub(super) fn interrupts(&self, j: usize) -> bool {
        if self.indent(j) > 3 {
            return false;
        }
        let rest = self.text(j).trim_start();
        let item = list_marker(rest).is_some_and(|m| !m.content.is_empty() && m.number.is_none_or(|n| n == 1));
        item || fence_open(rest).is_some()
            || atx_heading(rest).is_some()
            || thematic_break(rest)
            || rest.starts_with('>')
            || self.table_starts(j)
    }

    pub(super) fn table_starts(&self, i: usize) -> bool {
        let rest = self.text(i).trim_start();
        let delimiter_follows =
            i + 1 < self.lines.len() && self.indent(i + 1) <= 3 && is_delimiter_row(self.text(i + 1).trim());
        self.indent(i) <= 3 && (rest.starts_with('|') || (rest.contains('|') && delimiter_follows))
    }

    /// The closing line of the fence opened at line `open`, or the last line when none closes it.
    pub(super) fn fence_end(&self, open: usize, (mark, len): (u8, usize), max_indent: usize) -> usize {
        let closes = |j: usize| self.indent(j) <= max_indent && closes_fence(self.text(j).trim_start(), mark, len);
        (open + 1..self.lines.len()).find(|&j| closes(j)).unwrap_or(self.lines.len() - 1)
    }

    /// The last line of the list item at line `i`: lines indented to its content (fences among
    /// them read to their close), blank lines followed by such lines, and lazy continuation
    /// lines directly after text.
    pub(super) fn list_item_end(&self, i: usize, marker: &Marker<'_>) -> usize {
        let content_indent = self.indent(i) + marker.width;
        let mut last = fence_open(marker.content).map_or(i, |fence| self.fence_end(i, fence, content_indent + 3));
        let (mut after_blank, mut j) = (false, last + 1);
        while j < self.lines.len() {
            if self.is_blank(j) {
                after_blank = true;
                j += 1;
                continue;
            }
            let indent = self.indent(j);
            if indent >= content_indent {
                last = fence_open(self.text(j).trim_start()).map_or(j, |fence| self.fence_end(j, fence, indent + 3));
            } else if after_blank || self.interrupts(j) || list_marker(self.text(j).trim_start()).is_some() {
                break;
            } else {
                last = j;
            }
            after_blank = false;
            j = last + 1;
        }
        last
    }

    pub(super) fn block(&self, kind: BlockKind, first: usize, last: usize) -> Block {
        let start = self.lines[first].start;
        let text = &self.doc[start..self.lines[last].end];
        let span = Span { start: start + text.len() - text.trim_start().len(), end: start + text.trim_end().len() };
        let (level, title) = match (kind, atx_heading(self.text(first).trim_start())) {
            (BlockKind::Heading, Some((level, title))) => (level, title.to_string()),
            (BlockKind::Heading, None) => (
                setext_level(self.text(last).trim()).unwrap_or(2),
                (first..last).map(|j| self.text(j).trim()).collect::<Vec<_>>().join(" "),
            ),
            _ => (0, String::new()),
        };
        Block { kind, level, first_line: first, last_line: last, span, title }
    }

    /// Cuts a block above `max` into pieces within it, in document order, together holding all
    /// of its text (rule 4 of the module comment).
    pub(super) fn cut(&self, block: &Block, max: Size, tokens: &dyn TokenCounter, depth: usize, out: &mut Vec<Span>) {
        let fits = |span: Span| measure(span.text(self.doc), max.unit, tokens) <= max.value;
        let forced = |span: Span| {
            force_split(self.doc, span.start, span.end, max, tokens).into_iter().map(|(start, end)| Span { start, end })
        };
        if let Some(inside) =
            (block.kind == BlockKind::ListItem && depth < MAX_NESTING).then(|| self.list_item_inside(block)).flatten()
        {
            let from = out.len();
            for inner in inside.blocks(0) {
                if fits(inner.span) {
                    out.push(inner.span);
                } else {
                    inside.cut(&inner, max, tokens, depth + 1, out);
                }
            }
            // The marker belongs to the first piece, or stands alone when that would not fit.
            let marker = &self.doc[block.span.start..inside.lines[0].start];
            let marker = Span { start: block.span.start, end: block.span.start + marker.trim_end().len() };
            match out.get_mut(from) {
                Some(first) if fits(Span { start: marker.start, end: first.end }) => first.start = marker.start,
                _ => drop(out.splice(from..from, forced(marker))),
            }
            return;
        }
        let prose = matches!(block.kind, BlockKind::Paragraph | BlockKind::ListItem | BlockKind::Quote);
        for j in block.first_line..=block.last_line {
            let line = self.text(j);
            let start = self.lines[j].start + line.len() - line.trim_start().len();
            let line = Span { start, end: start + line.trim().len() };
            if line.start == line.end {
                continue;
            }
            let sentences = if prose && !fits(line) {
                split_sentences(line.text(self.doc))
            } else {
                vec![Span { start: 0, end: line.end - line.start }]
            };
            for sentence in sentences {
                let sentence = Span { start: start + sentence.start, end: start + sentence.end };
                if fits(sentence) {
                    out.push(sentence);
                } else {
                    out.extend(forced(sentence));
                }
            }
        }
    }

    /// A list item's lines read without its marker: the first line starts at the item's content,
    /// the rest are read from its content indent. None only when `block` is not a list item.
    pub(super) fn list_item_inside(&self, block: &Block) -> Option<Reader<'a>> {
        let marker = list_marker(self.text(block.first_line).trim_start())?;
        let mut lines = self.lines[block.first_line..=block.last_line].to_vec();
        lines[0].start = lines[0].end - marker.content.len();
        let base = self.base + self.indent(block.first_line) + marker.width;
        Some(Reader { doc: self.doc, lines, base })
    }
}

/// A list item's marker: its width in columns with the spaces after it, its number when
/// ordered, and the text after it.
pub(super) struct Marker<'a> {
    pub(super) width: usize,
    pub(super) number: Option<u64>,
    pub(super) content: &'a str,
}

/// `- `, `* `, `+ `, or one to nine digits and `. ` or `) ` at the start of `rest` (a line
/// without its indentation), or the marker alone on its line.
pub(super) fn list_marker(rest: &str) -> Option<Marker<'_>> {
    let bytes = rest.as_bytes();
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let marker_len = match bytes.first()? {
        b'-' | b'*' | b'+' => 1,
        _ if (1..=9).contains(&digits) && matches!(bytes.get(digits), Some(b'.' | b')')) => digits + 1,
        _ => return None,
    };
    let after = &rest[marker_len..];
    let content = after.trim_start_matches([' ', '\t']);
    let spaces = after.len() - content.len();
    if spaces == 0 && !after.is_empty() {
        return None;
    }
    // Content five or more columns past the marker is indented code: the item's content
    // column is then one past the marker (CommonMark).
    let width = marker_len + if content.is_empty() || spaces > 4 { 1 } else { spaces };
    let number = (marker_len > 1).then(|| rest[..marker_len - 1].parse().ok()).flatten();
    Some(Marker { width, number, content })
}

/// `#` to `######` followed by a space, a tab or the end of the line: the level and the text,
/// without an optional closing run of `#`s.
pub(super) fn atx_heading(rest: &str) -> Option<(usize, &str)> {
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    let after = &rest[level..];
    if !(1..=6).contains(&level) || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let title = after.trim();
    let unclosed = title.trim_end_matches('#');
    Some((level, if unclosed.is_empty() || unclosed.ends_with([' ', '\t']) { unclosed.trim_end() } else { title }))
}

/// Three or more backticks or tildes: the fence character and length. A backtick fence's info
/// string may not hold a backtick (CommonMark: that is inline code).
pub(super) fn fence_open(rest: &str) -> Option<(u8, usize)> {
    let mark = *rest.as_bytes().first()?;
    let len = rest.bytes().take_while(|&b| b == mark).count();
    ((mark == b'`' || mark == b'~') && len >= 3 && !(mark == b'`' && rest[len..].contains('`'))).then_some((mark, len))
}

pub(super) fn closes_fence(rest: &str, mark: u8, len: usize) -> bool {
    let run = rest.bytes().take_while(|&b| b == mark).count();
    run >= len && rest[run..].trim().is_empty()
}

/// Three or more of the same `-`, `*` or `_`, spaces and tabs between them allowed.
pub(super) fn thematic_break(rest: &str) -> bool {
    let mark = rest.chars().next().filter(|c| matches!(c, '-' | '*' | '_'));
    mark.is_some_and(|mark| {
        rest.chars().all(|c| matches!(c, ' ' | '\t') || c == mark) && rest.matches(mark).count() >= 3
    })
}

/// A Setext underline (the line trimmed): `=`s make a level-1 heading, `-`s a level-2 one.
pub(super) fn setext_level(line: &str) -> Option<usize> {
    let level = match line.bytes().next()? {
        b'=' => 1,
        b'-' => 2,
        _ => return None,
    };
    line.bytes().all(|b| b == line.as_bytes()[0]).then_some(level)
}

/// A table's delimiter row, such as `|---|:---:|` or `--- | ---`.
pub(super) fn is_delimiter_row(line: &str) -> bool {
    line.contains('-') && line.contains('|') && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}
