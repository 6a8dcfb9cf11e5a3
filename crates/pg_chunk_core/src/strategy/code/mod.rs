//! `strategy: "code"`: source code cut at function and class boundaries (docs/design.md,
//! "The structure-aware strategies") for Python, JavaScript/TypeScript, Java, Go, Rust, C/C++ and SQL.
//!
//! A scanner follows bracket depth, strings, comments and SQL dollar quotes, so a `}` in a string
//! or a `def` in a docstring changes nothing; line rules (`header`) find top-level definitions,
//! each with the comments, decorators and attributes directly above it, ending where indentation
//! returns to column 0 (Python), where its brackets close, or at its `;` (SQL). Code between
//! definitions forms blocks. Definitions and blocks are packed up to `target_size`; one above
//! `max_size` is cut at its blank lines, the shallowest first, a block still too large between
//! lines. Later pieces of a definition carry its signature as `context` (embedded, not content).
//!
//! Tree-sitter would parse exactly, but its parse alone takes 9 to 14 times this whole strategy
//! (bench/README.md, Decisions), and each grammar adds a C build and 0.5 to 1.1 MB; line rules
//! with indentation and bracket tracking find the boundaries chunking needs.

use super::{add_overlap, Chunk, ChunkType, SplitReason};
use crate::config::ChunkConfig;
use crate::error::ChunkError;
use crate::guards::{force_split, merge_undersized, split_oversized, Run};
use crate::sentences::Span;
use crate::size::{measure, Size, SizeUnit, TokenCounter, UnitSizes};

mod definitions;
mod languages;
mod scan;

use definitions::*;
use languages::*;
use scan::*;

/// `interrupt` is called between the passes over the lines and for each item packed.
pub fn code_chunks(
    doc: &str,
    cfg: &ChunkConfig,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<Chunk>, ChunkError> {
    let (family, language) = cfg.language.as_deref().map_or_else(|| detect_language(doc), named_language);
    let lines = scan_lines(doc, family);
    interrupt()?;
    let defs = definitions(doc, &lines, family);
    interrupt()?;
    let items = items(doc, &lines, &defs);
    interrupt()?;
    let chunker = Chunker { doc, cfg, tokens, lines: &lines, language, defs: &defs, items: &items };
    let mut chunks = chunker.pack_items(interrupt)?;
    add_overlap(doc, &[], &mut chunks, cfg.overlap, cfg.max_size, tokens, interrupt)?;
    Ok(chunks)
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
    fn pack_items(&self, interrupt: &dyn Fn() -> Result<(), ChunkError>) -> Result<Vec<Chunk>, ChunkError> {
        let (items, min, max) = (self.items, self.cfg.min_size, self.cfg.max_size);
        let within = |start: usize, end: usize, cap: Size| self.size(start, end, cap.unit) <= cap.value;
        let small = |start: usize, end: usize| self.size(start, end, min.unit) < min.value;
        let (mut chunks, mut pack): (Vec<Chunk>, Option<(usize, usize)>) = (Vec::new(), None);
        for i in 0..=items.len() {
            interrupt()?;
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
        Ok(chunks)
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
                None if items[first].def.is_none() && chunks.is_empty() => SplitReason::Start,
                None => SplitReason::CodeBoundary,
                Some(at) if self.doc[at..start].matches('\n').count() >= 2 => SplitReason::BlankLine,
                Some(_) => SplitReason::Forced,
            };
            let chunk_type = def
                .map_or(if first == 0 && !defs.is_empty() { ChunkType::Module } else { ChunkType::Block }, |d| {
                    d.header.chunk_type
                });
            let mut chunk = Chunk::new(start, end, reason, None)
                .with("language", self.language.as_str())
                .with("chunk_type", chunk_type.as_str());
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
mod language_tests;
#[cfg(test)]
mod tests;
