//! Arbitrary UTF-8 text → `split_sentences`.
//!
//! Invariants (sentences.rs: "Byte range of one unit ... with surrounding whitespace
//! excluded", "Splits a document into units in document order. Never panics, on any &str"):
//! - no panic;
//! - every span lies within the text, on char boundaries, and is non-empty and trimmed;
//! - spans are in document order and do not overlap;
//! - nothing but whitespace lies outside the spans (no text is dropped);
//! - the result is deterministic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_chunk_core::sentences::split_sentences;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = std::str::from_utf8(data) else { return };
    let spans = split_sentences(doc);
    let mut previous_end = 0;
    for (k, span) in spans.iter().enumerate() {
        assert!(span.start < span.end && span.end <= doc.len(), "span {k} {span:?} is empty or outside the text of {} bytes", doc.len());
        assert!(doc.is_char_boundary(span.start) && doc.is_char_boundary(span.end), "span {k} {span:?} is not on char boundaries");
        assert!(span.start >= previous_end, "span {k} {span:?} starts before the previous one ends at {previous_end}");
        let text = span.text(doc);
        assert_eq!(text.trim(), text, "span {k} {span:?} is not trimmed");
        let gap = &doc[previous_end..span.start];
        assert!(gap.trim().is_empty(), "text {gap:?} before span {k} {span:?} is in no span");
        previous_end = span.end;
    }
    let tail = &doc[previous_end..];
    assert!(tail.trim().is_empty(), "the tail {tail:?} is in no span");
    assert_eq!(spans, split_sentences(doc), "not deterministic");
});
