//! The one definition of the characters that pg_chunk treats as a unit of meaning each: the
//! chunker's token estimate and model-free embedder count them one by one, and the text search
//! writes their runs as bigrams.
//!
//! Defined by Unicode blocks, not by the Script property (the `unicode-script` crate): the
//! Script property calls the kana prolonged sound mark and middle dot (U+30FC, U+30FB) Common,
//! which would split a katakana word such as データベース at every ー, and it counts conjoining
//! Hangul jamo, Kangxi radicals and halfwidth katakana in (the blocks here leave them out, and
//! leave out extensions G and H too).

#![warn(missing_docs)]

/// CJK ideographs, kana and Hangul syllables: scripts where one character is a unit of meaning.
/// The blocks Hiragana, Katakana, CJK Unified Ideographs and its extensions A to F and I, CJK
/// Compatibility Ideographs (and Supplement), Hangul Syllables.
pub fn is_ideograph(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

#[cfg(test)]
mod tests;
