//! `strategy: "markdown"`: chunks that follow a Markdown document's structure.
//!
//! The document is read as blocks (a subset of CommonMark, with GitHub tables): ATX (`#` to
//! `######`) and Setext (`===`, `---` under a paragraph) headings; fenced code (three or more
//! backticks or tildes, any info string; an unclosed fence runs to the end); indented code;
//! tables (lines starting with `|`, or a row holding `|` over a delimiter row like `--- | :-:`);
//! list items with their continuation lines (nested lists and fences included); block quotes;
//! thematic breaks; YAML front matter (a first line `---` closed by `---` or `...`, no blank line
//! between); paragraphs (HTML blocks read as paragraphs). Then:
//!
//! 1. **Sections follow headings**: a heading and the blocks up to the next heading of any
//!    level; text before the first heading is a section without one.
//! 2. **Small sections merge**: one below `min_size` takes in the next section while that is its
//!    sibling or child (same or deeper level) and the merge fits `max_size`.
//! 3. **A section within `max_size` is one chunk**, heading included; a larger one is packed
//!    block by block up to `max_size`, never cutting inside a block.
//! 4. **Only a block that alone exceeds `max_size` is cut**: a list item between its inner
//!    blocks (by these same rules, so a fence inside it stays whole when it fits), other blocks
//!    at line ends, a line above the cap at sentence ends, a sentence above it at words
//!    ([`force_split`]). A cut block starts a new chunk (its section's heading stays with it
//!    when the chunk holds nothing else yet); every chunk holding a piece of it is `forced`.
//!
//! Split reasons: `heading` (the chunk starts at a heading), `block` (at a block inside a
//! section), `start` (at the document's first block, not a heading), `forced`. Metadata:
//! `heading_path`, the texts (without `#`s) of the headings enclosing the chunk's start,
//! outermost first, its own heading included when it starts at one; `blocks`, the kinds of blocks
//! it holds. With cfg `heading_context`, `context` is the heading path joined with ` > ` (None
//! before the first heading), for the embedded text only: `content` and offsets stay exact.
//! `target_size` plays no part: sections decide where chunks end.

use super::{add_overlap, Chunk};
use crate::config::ChunkConfig;
use crate::guards::{force_split, Run};
use crate::sentences::{split_sentences, Span};
use crate::size::{measure, Size, SizeUnit, TokenCounter, UnitSizes};

/// List items nested deeper than this are cut at lines rather than between their inner blocks;
/// it bounds the recursion on adversarial input.
const MAX_NESTING: usize = 32;

/// One block: its kind (as metadata `blocks` names it: `heading`, `paragraph`, `code`,
/// `indented_code`, `table`, `list_item`, `quote`, `rule`, `front_matter`), its lines (indices
/// into its reader's lines), its whitespace-trimmed byte range, and a heading's level (1 to 6;
/// 0 for other blocks) and text.
struct Block {
    kind: &'static str,
    level: usize,
    first_line: usize,
    last_line: usize,
    span: Span,
    title: String,
}

/// A piece of the document that packing never cuts: a whole block, or a piece of a block above
/// the cap (`whole` false). `block` indexes the document's blocks.
struct Piece {
    span: Span,
    block: usize,
    whole: bool,
}

/// A heading and the pieces up to the next heading (indices into the pieces), and the path of
/// headings enclosing it, its own last.
struct Section {
    first: usize,
    last: usize,
    /// 1 to 6 for `#` to `######`; 0 for the text before the first heading.
    level: usize,
    path: Vec<String>,
}

pub fn markdown_chunks(doc: &str, cfg: &ChunkConfig, tokens: &dyn TokenCounter) -> Vec<Chunk> {
    let max = cfg.max_size;
    let reader = Reader::of(doc);
    let blocks = reader.document_blocks();
    let mut pieces = Vec::new();
    for (b, block) in blocks.iter().enumerate() {
        if measure(block.span.text(doc), max.unit, tokens) <= max.value {
            pieces.push(Piece { span: block.span, block: b, whole: true });
        } else {
            let mut spans = Vec::new();
            reader.cut(block, max, tokens, 0, &mut spans);
            pieces.extend(spans.into_iter().map(|span| Piece { span, block: b, whole: false }));
        }
    }
    let spans: Vec<Span> = pieces.iter().map(|p| p.span).collect();
    let sizes = UnitSizes::new(doc, &spans, tokens);
    let sections = sections(&blocks, &pieces);
    let mut chunks = Vec::new();
    for (first, last) in merge_small_sections(&sections, &sizes, cfg.min_size, max) {
        let path = &sections[first].path;
        for packed in
            pack(&blocks, &pieces, Run { first: sections[first].first, last: sections[last].last }, &sizes, max)
        {
            for run in within_cap(doc, &spans, packed, max, tokens) {
                let mut chunk = section_chunk(&blocks, &pieces, run, path);
                chunk.context = (cfg.heading_context && !path.is_empty()).then(|| path.join(" > "));
                chunks.push(chunk);
            }
        }
    }
    add_overlap(doc, &[], &mut chunks, cfg.overlap, max, tokens);
    chunks
}

/// Splits the pieces at headings. A heading cut into pieces (one above the cap) starts its
/// section at its first piece.
fn sections(blocks: &[Block], pieces: &[Piece]) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    let mut enclosing: Vec<(usize, &str)> = Vec::new(); // (level, title), outermost first
    for (p, piece) in pieces.iter().enumerate() {
        let block = &blocks[piece.block];
        match sections.last_mut() {
            _ if block.level > 0 && (p == 0 || pieces[p - 1].block != piece.block) => {
                let level = block.level;
                enclosing.retain(|(open, _)| *open < level);
                enclosing.push((level, &block.title));
                let path = enclosing.iter().map(|(_, title)| title.to_string()).collect();
                sections.push(Section { first: p, last: p, level, path });
            }
            Some(section) => section.last = p,
            None => sections.push(Section { first: p, last: p, level: 0, path: Vec::new() }),
        }
    }
    sections
}

/// Groups of consecutive sections (first and last index): a group below `min` takes in the next
/// section while that one is a sibling or child of the group's first and the group still fits
/// `max`.
fn merge_small_sections(sections: &[Section], sizes: &UnitSizes<'_>, min: Size, max: Size) -> Vec<(usize, usize)> {
    let (mut groups, mut first) = (Vec::new(), 0);
    while first < sections.len() {
        let mut last = first;
        let small = |last: usize| sizes.run(sections[first].first, sections[last].last, min.unit) < min.value;
        let joins =
            |next: &Section| next.level >= sections[first].level && sizes.fits(sections[first].first, next.last, max);
        while small(last) && sections.get(last + 1).is_some_and(joins) {
            last += 1;
        }
        groups.push((first, last));
        first = last + 1;
    }
    groups
}

/// Packs the pieces of `group` into runs within `max`, greedily in document order. A run within
/// the cap is kept whole; the first piece of a cut block starts a new run unless the run so far
/// holds only headings.
fn pack(blocks: &[Block], pieces: &[Piece], group: Run, sizes: &UnitSizes<'_>, max: Size) -> Vec<Run> {
    if sizes.fits(group.first, group.last, max) {
        return vec![group];
    }
    let is_heading = |p: usize| blocks[pieces[p].block].level > 0;
    let (mut runs, mut run, mut only_headings) =
        (Vec::new(), Run { first: group.first, last: group.first }, is_heading(group.first));
    for p in group.first + 1..=group.last {
        let starts_cut_block = !pieces[p].whole && pieces[p].block != pieces[p - 1].block;
        if sizes.fits(run.first, p, max) && (only_headings || !starts_cut_block) {
            run.last = p;
            only_headings &= is_heading(p);
        } else {
            runs.push(run);
            run = Run { first: p, last: p };
            only_headings = is_heading(p);
        }
    }
    runs.push(run);
    runs
}

/// Piece sizes add up exactly in characters and at worst over-count words (a word cut in two
/// counts twice), but a tokenizer need not be additive: in tokens each run is measured whole
/// and gives up pieces from its end while it is above the cap. One measurement per chunk in
/// the usual case.
fn within_cap(doc: &str, spans: &[Span], run: Run, max: Size, tokens: &dyn TokenCounter) -> Vec<Run> {
    let (mut runs, mut first) = (Vec::new(), run.first);
    while first <= run.last {
        let above = |last: usize| {
            max.unit == SizeUnit::Tokens && tokens.count_tokens(&doc[spans[first].start..spans[last].end]) > max.value
        };
        let last = (first + 1..=run.last).rev().find(|&last| !above(last)).unwrap_or(first);
        runs.push(Run { first, last });
        first = last + 1;
    }
    runs
}

/// The chunk of pieces `run`, with its split reason and metadata.
fn section_chunk(blocks: &[Block], pieces: &[Piece], run: Run, path: &[String]) -> Chunk {
    let held = &pieces[run.first..=run.last];
    let reason = match blocks[held[0].block].level {
        _ if held.iter().any(|p| !p.whole) => "forced",
        1.. => "heading",
        _ if run.first == 0 => "start",
        _ => "block",
    };
    let mut kinds: Vec<&str> = Vec::new();
    for kind in held.iter().map(|p| blocks[p.block].kind) {
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Chunk::new(held[0].span.start, held[held.len() - 1].span.end, reason, None)
        .with("heading_path", path.to_vec())
        .with("blocks", kinds)
}

/// Lines of a document, or of a list item's inside, and the column its blocks start at (`base`:
/// 0 for the document, a list item's content indent for its inside).
struct Reader<'a> {
    doc: &'a str,
    /// Each line without its line break (`\n`, `\r\n` or a lone `\r`).
    lines: Vec<Span>,
    base: usize,
}

impl<'a> Reader<'a> {
    fn of(doc: &'a str) -> Reader<'a> {
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

    fn text(&self, i: usize) -> &'a str {
        self.lines[i].text(self.doc)
    }

    fn is_blank(&self, i: usize) -> bool {
        self.text(i).trim().is_empty()
    }

    /// Columns of indentation past `base` (a tab advances to the next multiple of 4).
    fn indent(&self, i: usize) -> usize {
        let whitespace = self.text(i).chars().take_while(|c| matches!(c, ' ' | '\t'));
        whitespace
            .fold(0usize, |columns, c| if c == '\t' { columns + 4 - columns % 4 } else { columns + 1 })
            .saturating_sub(self.base)
    }

    /// The document's blocks: front matter, when there is some, then [`Reader::blocks`].
    fn document_blocks(&self) -> Vec<Block> {
        let opens = !self.lines.is_empty() && self.text(0).trim_end() == "---";
        let closing = (1..self.lines.len())
            .take_while(|&j| opens && !self.is_blank(j))
            .find(|&j| matches!(self.text(j).trim_end(), "---" | "..."));
        let mut blocks: Vec<Block> = closing.map(|last| self.block("front_matter", 0, last)).into_iter().collect();
        blocks.extend(self.blocks(closing.map_or(0, |last| last + 1)));
        blocks
    }

    /// The blocks from line `from` on; together they hold every non-blank line.
    fn blocks(&self, from: usize) -> Vec<Block> {
        let (mut blocks, mut from) = (Vec::new(), from);
        while let Some(i) = (from..self.lines.len()).find(|&i| !self.is_blank(i)) {
            let (kind, last) = self.block_at(i);
            blocks.push(self.block(kind, i, last));
            from = last + 1;
        }
        blocks
    }

    /// The kind and last line of the block that starts at non-blank line `i`.
    fn block_at(&self, i: usize) -> (&'static str, usize) {
        if self.indent(i) >= 4 {
            let last = (i + 1..self.lines.len())
                .take_while(|&j| self.is_blank(j) || self.indent(j) >= 4)
                .filter(|&j| !self.is_blank(j))
                .last();
            return ("indented_code", last.unwrap_or(i));
        }
        let rest = self.text(i).trim_start();
        if let Some(fence) = fence_open(rest) {
            return ("code", self.fence_end(i, fence, self.indent(i) + 3));
        }
        if atx_heading(rest).is_some() {
            return ("heading", i);
        }
        if thematic_break(rest) {
            return ("rule", i);
        }
        if rest.starts_with('>') {
            return (
                "quote",
                self.last_line_while(i, |j| !self.interrupts(j) || self.text(j).trim_start().starts_with('>')),
            );
        }
        if let Some(marker) = list_marker(rest) {
            return ("list_item", self.list_item_end(i, &marker));
        }
        if self.table_starts(i) {
            return ("table", self.last_line_while(i, |j| self.text(j).contains('|')));
        }
        let is_underline = |j: usize| self.indent(j) <= 3 && setext_level(self.text(j).trim()).is_some();
        let last = self.last_line_while(i, |j| !is_underline(j) && !self.interrupts(j));
        match last + 1 < self.lines.len() && !self.is_blank(last + 1) && is_underline(last + 1) {
            true => ("heading", last + 1),
            false => ("paragraph", last),
        }
    }

    /// The last line from `i` on such that every line after `i` up to it is non-blank and
    /// satisfies `continues`.
    fn last_line_while(&self, i: usize, continues: impl Fn(usize) -> bool) -> usize {
        let mut last = i;
        while last + 1 < self.lines.len() && !self.is_blank(last + 1) && continues(last + 1) {
            last += 1;
        }
        last
    }

    /// Whether line `j` starts a block that ends a paragraph (CommonMark: an ordered item must
    /// start at 1 and no empty item may, so that "2019. A year" stays text).
    fn interrupts(&self, j: usize) -> bool {
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

    fn table_starts(&self, i: usize) -> bool {
        let rest = self.text(i).trim_start();
        let delimiter_follows =
            i + 1 < self.lines.len() && self.indent(i + 1) <= 3 && is_delimiter_row(self.text(i + 1).trim());
        self.indent(i) <= 3 && (rest.starts_with('|') || (rest.contains('|') && delimiter_follows))
    }

    /// The closing line of the fence opened at line `open`, or the last line when none closes it.
    fn fence_end(&self, open: usize, (mark, len): (u8, usize), max_indent: usize) -> usize {
        let closes = |j: usize| self.indent(j) <= max_indent && closes_fence(self.text(j).trim_start(), mark, len);
        (open + 1..self.lines.len()).find(|&j| closes(j)).unwrap_or(self.lines.len() - 1)
    }

    /// The last line of the list item at line `i`: lines indented to its content (fences among
    /// them read to their close), blank lines followed by such lines, and lazy continuation
    /// lines directly after text.
    fn list_item_end(&self, i: usize, marker: &Marker<'_>) -> usize {
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

    fn block(&self, kind: &'static str, first: usize, last: usize) -> Block {
        let start = self.lines[first].start;
        let text = &self.doc[start..self.lines[last].end];
        let span = Span { start: start + text.len() - text.trim_start().len(), end: start + text.trim_end().len() };
        let (level, title) = match (kind, atx_heading(self.text(first).trim_start())) {
            ("heading", Some((level, title))) => (level, title.to_string()),
            ("heading", None) => (
                setext_level(self.text(last).trim()).unwrap_or(2),
                (first..last).map(|j| self.text(j).trim()).collect::<Vec<_>>().join(" "),
            ),
            _ => (0, String::new()),
        };
        Block { kind, level, first_line: first, last_line: last, span, title }
    }

    /// Cuts a block above `max` into pieces within it, in document order, together holding all
    /// of its text (rule 4 of the module comment).
    fn cut(&self, block: &Block, max: Size, tokens: &dyn TokenCounter, depth: usize, out: &mut Vec<Span>) {
        let fits = |span: Span| measure(span.text(self.doc), max.unit, tokens) <= max.value;
        let forced = |span: Span| {
            force_split(self.doc, span.start, span.end, max, tokens).into_iter().map(|(start, end)| Span { start, end })
        };
        if let Some(inside) =
            (block.kind == "list_item" && depth < MAX_NESTING).then(|| self.list_item_inside(block)).flatten()
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
        let prose = matches!(block.kind, "paragraph" | "list_item" | "quote");
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
    fn list_item_inside(&self, block: &Block) -> Option<Reader<'a>> {
        let marker = list_marker(self.text(block.first_line).trim_start())?;
        let mut lines = self.lines[block.first_line..=block.last_line].to_vec();
        lines[0].start = lines[0].end - marker.content.len();
        let base = self.base + self.indent(block.first_line) + marker.width;
        Some(Reader { doc: self.doc, lines, base })
    }
}

/// A list item's marker: its width in columns with the spaces after it, its number when
/// ordered, and the text after it.
struct Marker<'a> {
    width: usize,
    number: Option<u64>,
    content: &'a str,
}

/// `- `, `* `, `+ `, or one to nine digits and `. ` or `) ` at the start of `rest` (a line
/// without its indentation), or the marker alone on its line.
fn list_marker(rest: &str) -> Option<Marker<'_>> {
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
fn atx_heading(rest: &str) -> Option<(usize, &str)> {
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
fn fence_open(rest: &str) -> Option<(u8, usize)> {
    let mark = *rest.as_bytes().first()?;
    let len = rest.bytes().take_while(|&b| b == mark).count();
    ((mark == b'`' || mark == b'~') && len >= 3 && !(mark == b'`' && rest[len..].contains('`'))).then_some((mark, len))
}

fn closes_fence(rest: &str, mark: u8, len: usize) -> bool {
    let run = rest.bytes().take_while(|&b| b == mark).count();
    run >= len && rest[run..].trim().is_empty()
}

/// Three or more of the same `-`, `*` or `_`, spaces and tabs between them allowed.
fn thematic_break(rest: &str) -> bool {
    let mark = rest.chars().next().filter(|c| matches!(c, '-' | '*' | '_'));
    mark.is_some_and(|mark| {
        rest.chars().all(|c| matches!(c, ' ' | '\t') || c == mark) && rest.matches(mark).count() >= 3
    })
}

/// A Setext underline (the line trimmed): `=`s make a level-1 heading, `-`s a level-2 one.
fn setext_level(line: &str) -> Option<usize> {
    let level = match line.bytes().next()? {
        b'=' => 1,
        b'-' => 2,
        _ => return None,
    };
    line.bytes().all(|b| b == line.as_bytes()[0]).then_some(level)
}

/// A table's delimiter row, such as `|---|:---:|` or `--- | ---`.
fn is_delimiter_row(line: &str) -> bool {
    line.contains('-') && line.contains('|') && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
