//! Byte offsets (what Rust slices use) to character offsets (what SQL's `substr` counts).

/// Converts byte offsets of one document to character offsets, walking forward from the
/// last answer, so a sequence of non-decreasing offsets costs one pass over the document.
pub struct CharCursor<'a> {
    doc: &'a str,
    byte: usize,
    chars: usize,
}

impl<'a> CharCursor<'a> {
    /// A cursor at the start of `doc`.
    pub fn new(doc: &'a str) -> CharCursor<'a> {
        CharCursor { doc, byte: 0, chars: 0 }
    }

    /// Characters before byte offset `byte` (a char boundary of the document).
    pub fn char_offset(&mut self, byte: usize) -> usize {
        if byte < self.byte {
            self.byte = 0;
            self.chars = 0;
        }
        self.chars += self.doc[self.byte..byte].chars().count();
        self.byte = byte;
        self.chars
    }
}

#[cfg(test)]
#[path = "offsets_tests.rs"]
mod tests;
