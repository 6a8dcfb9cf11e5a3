//! Reading Markdown into blocks with pulldown-cmark, and cutting a block above the cap.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use super::{Block, BlockKind, MAX_NESTING};
use crate::guards::force_split;
use crate::sentences::{split_sentences, Span};
use crate::size::{measure, Size, TokenCounter};

/// CommonMark with GitHub's tables and YAML front matter.
const OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_YAML_STYLE_METADATA_BLOCKS);

/// A document's lines, which blocks are cut at.
pub(super) struct Reader<'a> {
    pub(super) doc: &'a str,
    /// Each line without its line break (`\n`, `\r\n` or a lone `\r`).
    pub(super) lines: Vec<Span>,
}

/// A list item being read: the item and whether its last inner block is the text of a tight
/// item (pulldown-cmark gives that text without a paragraph around it), which further inline
/// events extend.
struct OpenItem {
    item: Block,
    in_text: bool,
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
        Reader { doc, lines }
    }

    /// The document's blocks, in order; together they hold every non-blank line. A list's items
    /// are blocks of their own, each holding its inner blocks.
    pub(super) fn document_blocks(&self) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut items: Vec<OpenItem> = Vec::new();
        // Events inside a block already taken whole (a paragraph's inlines, a table's rows, a
        // quote's blocks) are skipped: `skipping` counts the tags open inside it.
        let mut skipping = 0usize;
        for (event, range) in Parser::new_ext(self.doc, OPTIONS).into_offset_iter() {
            if skipping > 0 {
                match event {
                    Event::Start(_) => skipping += 1,
                    Event::End(_) => skipping -= 1,
                    _ => {}
                }
                continue;
            }
            let span = Span { start: range.start, end: range.end };
            let block = match event {
                Event::Start(Tag::Item) => {
                    items.push(OpenItem { item: self.block(BlockKind::ListItem, span, 0), in_text: false });
                    continue;
                }
                Event::End(TagEnd::Item) => {
                    let Some(OpenItem { mut item, .. }) = items.pop() else { continue };
                    let marker_end = item.span.start + marker_len(&self.doc[item.span.start..]);
                    let within = Span { start: marker_end, end: item.span.end };
                    self.add_unread_lines(within, item.first_line..item.last_line + 1, &mut item.inner);
                    item
                }
                // Lists nested deeper than MAX_NESTING are read as their item's lines.
                Event::Start(Tag::List(_)) if items.len() >= MAX_NESTING => {
                    skipping = 1;
                    continue;
                }
                Event::Start(Tag::List(_)) | Event::End(TagEnd::List(_)) => continue,
                Event::Start(Tag::Paragraph) => {
                    skipping = 1;
                    let (paragraph, table) = self.paragraph_and_table(self.block(BlockKind::Paragraph, span, 0));
                    if let Some(table) = table {
                        match items.last_mut() {
                            Some(open) => open.item.inner.push(paragraph),
                            None => blocks.push(paragraph),
                        }
                        table
                    } else {
                        paragraph
                    }
                }
                Event::Start(tag) => {
                    skipping = 1;
                    match block_kind(&tag) {
                        Some((kind, level)) => self.block(kind, span, level),
                        // An inline tag (emphasis, a link) in a tight item's text.
                        None => {
                            extend_text(&mut items, span, self);
                            continue;
                        }
                    }
                }
                Event::Rule => self.block(BlockKind::Rule, span, 0),
                Event::End(_) => continue,
                // Text, code spans, inline HTML, breaks: a tight item's text.
                _ => {
                    extend_text(&mut items, span, self);
                    continue;
                }
            };
            if block.is_empty() {
                continue;
            }
            match items.last_mut() {
                Some(open) => {
                    open.item.inner.push(block);
                    open.in_text = false;
                }
                None => blocks.push(block),
            }
        }
        self.add_unread_lines(Span { start: 0, end: self.doc.len() }, 0..self.lines.len(), &mut blocks);
        blocks
    }

    /// Adds a paragraph for each run of non-blank lines (`lines`, clipped to `within`) that
    /// none of `blocks` holds (link reference definitions give no event), keeping `blocks` in
    /// order. `blocks` are in order and do not overlap, so one pass over both does.
    fn add_unread_lines(&self, within: Span, lines: std::ops::Range<usize>, blocks: &mut Vec<Block>) {
        let mut unread: Vec<Block> = Vec::new();
        let mut next = 0; // the first block that does not end before the current line
        for j in lines {
            let line = Span { start: self.lines[j].start.max(within.start), end: self.lines[j].end.min(within.end) };
            let text = &self.doc[line.start.min(line.end)..line.end];
            if text.trim().is_empty() {
                continue;
            }
            let start = line.start + text.len() - text.trim_start().len();
            while next < blocks.len() && blocks[next].span.end <= start {
                next += 1;
            }
            if blocks.get(next).is_some_and(|block| block.span.start <= start) {
                continue;
            }
            let span = Span { start, end: start + text.trim().len() };
            match unread.last_mut() {
                Some(paragraph) if paragraph.last_line + 1 == j => {
                    *paragraph =
                        self.block(BlockKind::Paragraph, Span { start: paragraph.span.start, end: span.end }, 0);
                }
                _ => unread.push(self.block(BlockKind::Paragraph, span, 0)),
            }
        }
        if !unread.is_empty() {
            blocks.extend(unread);
            blocks.sort_by_key(|b| b.span.start);
        }
    }

    /// `paragraph`, or its lines before a table and the table: GitHub's tables may interrupt a
    /// paragraph, which pulldown-cmark does not read. A line over a delimiter row of as many
    /// cells starts a table that runs to the paragraph's end (both end at a blank line or a
    /// block that interrupts them).
    fn paragraph_and_table(&self, paragraph: Block) -> (Block, Option<Block>) {
        let line = |j: usize| self.lines[j].text(self.doc).trim();
        let header = (paragraph.first_line + 1..paragraph.last_line)
            .find(|&j| is_delimiter_row(line(j + 1)) && cells(line(j + 1)) == cells(line(j)));
        match header {
            Some(j) => (
                self.block(BlockKind::Paragraph, Span { start: paragraph.span.start, end: self.lines[j - 1].end }, 0),
                Some(self.block(BlockKind::Table, Span { start: self.lines[j].start, end: paragraph.span.end }, 0)),
            ),
            None => (paragraph, None),
        }
    }

    /// A block of `kind` over `span` (trimmed here), with its lines and, for a heading, its
    /// level and text as written (without `#`s or the Setext underline).
    fn block(&self, kind: BlockKind, span: Span, level: usize) -> Block {
        let text = &self.doc[span.start..span.end];
        let start = span.start + text.len() - text.trim_start().len();
        let span = Span { start, end: start + text.trim().len() };
        let first_line = self.lines.partition_point(|line| line.end < span.start);
        let last_line = self.lines.partition_point(|line| line.end < span.end).max(first_line);
        let title = match kind {
            BlockKind::Heading => {
                match self.lines.get(first_line).and_then(|line| atx_title(line.text(self.doc).trim())) {
                    Some(title) => title.to_string(),
                    None => (first_line..last_line)
                        .map(|j| self.lines[j].text(self.doc).trim())
                        .collect::<Vec<_>>()
                        .join(" "),
                }
            }
            _ => String::new(),
        };
        Block { kind, level, first_line, last_line, span, title, inner: Vec::new() }
    }

    /// Cuts a block above `max` into pieces within it, in document order, together holding all
    /// of its text (rule 4 of the module comment).
    pub(super) fn cut(&self, block: &Block, max: Size, tokens: &dyn TokenCounter, depth: usize, out: &mut Vec<Span>) {
        let fits = |span: Span| measure(span.text(self.doc), max.unit, tokens) <= max.value;
        let forced = |span: Span| {
            force_split(self.doc, span.start, span.end, max, tokens).into_iter().map(|(start, end)| Span { start, end })
        };
        if let (BlockKind::ListItem, Some(first), true) = (block.kind, block.inner.first(), depth < MAX_NESTING) {
            let from = out.len();
            for inner in &block.inner {
                if fits(inner.span) {
                    out.push(inner.span);
                } else {
                    self.cut(inner, max, tokens, depth + 1, out);
                }
            }
            // The marker belongs to the first piece, or stands alone when that would not fit.
            let marker = &self.doc[block.span.start..first.span.start];
            let marker = Span { start: block.span.start, end: block.span.start + marker.trim_end().len() };
            match out.get_mut(from) {
                Some(first) if fits(Span { start: marker.start, end: first.end }) => first.start = marker.start,
                _ => drop(out.splice(from..from, forced(marker))),
            }
            return;
        }
        let prose = matches!(block.kind, BlockKind::Paragraph | BlockKind::ListItem | BlockKind::Quote);
        for j in block.first_line..=block.last_line {
            // A line of the block, without what lies outside it (an item's marker).
            let line =
                Span { start: self.lines[j].start.max(block.span.start), end: self.lines[j].end.min(block.span.end) };
            let text = &self.doc[line.start.min(line.end)..line.end];
            let start = line.start + text.len() - text.trim_start().len();
            let line = Span { start, end: start + text.trim().len() };
            if line.start >= line.end {
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
}

/// The kind and heading level of a block tag; None for an inline tag.
fn block_kind(tag: &Tag<'_>) -> Option<(BlockKind, usize)> {
    let kind = match tag {
        Tag::Heading { level, .. } => return Some((BlockKind::Heading, *level as usize)),
        Tag::Paragraph | Tag::HtmlBlock => BlockKind::Paragraph,
        Tag::CodeBlock(CodeBlockKind::Fenced(_)) => BlockKind::Code,
        Tag::CodeBlock(CodeBlockKind::Indented) => BlockKind::IndentedCode,
        Tag::Table(_) => BlockKind::Table,
        Tag::BlockQuote(_) => BlockKind::Quote,
        Tag::MetadataBlock(_) => BlockKind::FrontMatter,
        // Not enabled (footnotes, definition lists) or only inside a table; read as text.
        Tag::FootnoteDefinition(_)
        | Tag::DefinitionList
        | Tag::DefinitionListTitle
        | Tag::DefinitionListDefinition
        | Tag::TableHead
        | Tag::TableRow
        | Tag::TableCell => BlockKind::Paragraph,
        // Read before this is asked.
        Tag::List(_) | Tag::Item => BlockKind::ListItem,
        Tag::Emphasis
        | Tag::Strong
        | Tag::Strikethrough
        | Tag::Superscript
        | Tag::Subscript
        | Tag::Link { .. }
        | Tag::Image { .. } => return None,
    };
    Some((kind, 0))
}

/// Adds `span` to the text of the innermost open item: to its text block when that is its last
/// inner block, else as a new paragraph. Outside an item there is no bare text.
fn extend_text(items: &mut [OpenItem], span: Span, reader: &Reader<'_>) {
    let Some(open) = items.last_mut() else { return };
    match open.item.inner.last_mut() {
        Some(text) if open.in_text => {
            *text =
                reader.block(BlockKind::Paragraph, Span { start: text.span.start, end: span.end.max(text.span.end) }, 0)
        }
        _ => {
            let text = reader.block(BlockKind::Paragraph, span, 0);
            if text.is_empty() {
                return;
            }
            open.item.inner.push(text)
        }
    }
    open.in_text = true;
}

/// The length of the list marker at the start of `item` (`-`, `*`, `+`, or digits and `.` or
/// `)`).
fn marker_len(item: &str) -> usize {
    let digits = item.bytes().take_while(u8::is_ascii_digit).count();
    digits + 1
}

/// An ATX heading line's text, without `#`s and an optional closing run of them.
fn atx_title(line: &str) -> Option<&str> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    let after = &line[level..];
    if !(1..=6).contains(&level) || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let title = after.trim();
    let unclosed = title.trim_end_matches('#');
    Some(if unclosed.is_empty() || unclosed.ends_with([' ', '\t']) { unclosed.trim_end() } else { title })
}

/// A table's delimiter row, such as `|---|:---:|` or `--- | ---`.
fn is_delimiter_row(line: &str) -> bool {
    line.contains('-') && line.contains('|') && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// The cells of a table row: its `|`-separated parts, without the outer pipes.
fn cells(row: &str) -> usize {
    let row = row.strip_prefix('|').unwrap_or(row);
    row.strip_suffix('|').unwrap_or(row).split('|').count()
}
