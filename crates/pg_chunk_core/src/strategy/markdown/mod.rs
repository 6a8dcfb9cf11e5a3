//! `strategy: "markdown"`: chunks that follow a Markdown document's structure.
//!
//! The document is read as blocks by pulldown-cmark (CommonMark, with GitHub's tables and YAML
//! front matter; commonmark_tests.rs holds the cases): ATX and Setext headings; fenced code (an
//! unclosed fence runs to the end of its container); indented code; tables (a table may also
//! interrupt a paragraph, as on GitHub); list items, each a block holding its inner blocks;
//! block quotes; thematic breaks; front matter; paragraphs (HTML blocks and link reference
//! definitions read as paragraphs). Then:
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
//!    ([`force_split`](crate::guards::force_split)). A cut block starts a new chunk (its section's heading stays with it
//!    when the chunk holds nothing else yet); every chunk holding a piece of it is `forced`.
//!
//! Split reasons: `heading` (the chunk starts at a heading), `block` (at a block inside a
//! section), `start` (at the document's first block, not a heading), `forced`. Metadata:
//! `heading_path`, the texts (without `#`s) of the headings enclosing the chunk's start,
//! outermost first, its own heading included when it starts at one; `blocks`, the kinds of blocks
//! it holds. With cfg `heading_context`, `context` is the heading path joined with ` > ` (None
//! before the first heading), for the embedded text only: `content` and offsets stay exact.
//! `target_size` plays no part: sections decide where chunks end.

use super::{add_overlap, BlockKind, Chunk, SplitReason};
use crate::config::ChunkConfig;
use crate::error::ChunkError;
use crate::guards::Run;
use crate::sentences::Span;
use crate::size::{measure, Size, SizeUnit, TokenCounter, UnitSizes};

mod reader;

use reader::Reader;

/// Lists nested deeper than this are read as lines of the item holding them, and items this
/// deep are cut at lines rather than between their inner blocks: it bounds the depth of the
/// block tree and of the recursion on adversarial input.
const MAX_NESTING: usize = 32;

/// One block: its kind (as metadata `blocks` names it: `heading`, `paragraph`, `code`,
/// `indented_code`, `table`, `list_item`, `quote`, `rule`, `front_matter`), its lines (indices
/// into its reader's lines), its whitespace-trimmed byte range, a heading's level (1 to 6; 0 for
/// other blocks) and text, and a list item's inner blocks (its marker left out).
pub(super) struct Block {
    pub(super) kind: BlockKind,
    pub(super) level: usize,
    pub(super) first_line: usize,
    pub(super) last_line: usize,
    pub(super) span: Span,
    pub(super) title: String,
    pub(super) inner: Vec<Block>,
}

impl Block {
    /// Whether its trimmed span holds nothing: text of only whitespace that CommonMark does not
    /// count as blank (U+00A0, say) makes no block.
    pub(super) fn is_empty(&self) -> bool {
        self.span.start == self.span.end
    }
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

/// `interrupt` is called after reading the blocks, for each block measured and for each section packed.
pub fn markdown_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<Chunk>, ChunkError> {
    let max = cfg.max_size;
    let reader = Reader::of(doc);
    let blocks = reader.document_blocks();
    let mut pieces = Vec::new();
    for (b, block) in blocks.iter().enumerate() {
        interrupt()?;
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
    interrupt()?;
    for (first, last) in merge_small_sections(&sections, &sizes, cfg.min_size, max) {
        interrupt()?;
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
    add_overlap(doc, &[], &mut chunks, cfg.overlap, max, tokens, interrupt)?;
    Ok(chunks)
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
        _ if held.iter().any(|p| !p.whole) => SplitReason::Forced,
        1.. => SplitReason::Heading,
        _ if run.first == 0 => SplitReason::Start,
        _ => SplitReason::Block,
    };
    let mut kinds: Vec<BlockKind> = Vec::new();
    for kind in held.iter().map(|p| blocks[p.block].kind) {
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Chunk::new(held[0].span.start, held[held.len() - 1].span.end, reason, None)
        .with("heading_path", path.to_vec())
        .with("blocks", kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>())
}

#[cfg(test)]
mod commonmark_tests;
#[cfg(test)]
mod tests;
