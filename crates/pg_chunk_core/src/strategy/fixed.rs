//! `strategy: "fixed"`: a sliding window of `max_size`, snapped to word boundaries, each
//! window starting up to `overlap` characters before the previous one ended (the fallback's
//! sizes, 350 characters, overlap 50: docs/design.md, "Short documents and the fixed fallback").

use super::{Chunk, SplitReason};
use crate::config::Overlap;
use crate::error::ChunkError;
use crate::guards::word_starts_before;
use crate::size::{fitting_prefix, Size, TokenCounter};

/// `interrupt` is called before each window.
pub fn fixed_chunks(
    doc: &str,
    max: Size,
    overlap: Overlap,
    tokens: &dyn TokenCounter,
    interrupt: &dyn Fn() -> Result<(), ChunkError>,
) -> Result<Vec<Chunk>, ChunkError> {
    let overlap_chars = match overlap {
        Overlap::Chars(n) => n,
        Overlap::None | Overlap::Sentences(_) => 0,
    };
    let window_end = |at: usize| at + doc[at..][..fitting_prefix(&doc[at..], max, tokens)].trim_end().len();
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut at = doc.len() - doc.trim_start().len();
    while at < doc.len() {
        interrupt()?;
        let mut chunk = Chunk::new(at, window_end(at), SplitReason::Window, None);
        if let Some(previous) = chunks.last() {
            chunk.core_start = previous.end.max(at);
        }
        let (start, end) = (chunk.start, chunk.end);
        chunks.push(chunk);
        let rest = &doc[end..];
        let next = end + (rest.len() - rest.trim_start().len());
        if next >= doc.len() {
            break;
        }
        // The next window starts at the earliest word start within the overlap, when a
        // window from there reaches past this one; otherwise right after this one.
        let floor = start + doc[start..].chars().next().map_or(1, char::len_utf8);
        at = match word_starts_before(doc, next, overlap_chars, floor).first() {
            Some(&overlapped) if window_end(overlapped) > end => overlapped,
            _ => next,
        };
    }
    Ok(chunks)
}
