//! Measuring text in the units that sizes are given in: characters, words or tokens.

use pg_chunk_ideograph::is_ideograph;
use std::cell::OnceCell;

use crate::sentences::Span;

/// The unit a size is expressed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeUnit {
    /// Characters (Unicode scalar values).
    Chars,
    /// Whitespace-separated words.
    Words,
    /// Tokens, as the model's tokenizer (or the estimate) counts them.
    Tokens,
}

impl SizeUnit {
    /// The unit's name in a cfg (`chars`, `words`, `tokens`).
    pub fn as_str(self) -> &'static str {
        match self {
            SizeUnit::Chars => "chars",
            SizeUnit::Words => "words",
            SizeUnit::Tokens => "tokens",
        }
    }
}

/// A size limit such as "1000 chars".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// How many units.
    pub value: usize,
    /// Which unit.
    pub unit: SizeUnit,
}

impl Size {
    /// `value` characters.
    pub const fn chars(value: usize) -> Size {
        Size { value, unit: SizeUnit::Chars }
    }

    /// `value` tokens.
    pub const fn tokens(value: usize) -> Size {
        Size { value, unit: SizeUnit::Tokens }
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.value, self.unit.as_str())
    }
}

/// Counts tokens the way some model's tokenizer does.
pub trait TokenCounter {
    /// Tokens in `text`, without special tokens.
    fn count_tokens(&self, text: &str) -> usize;
}

/// A model-free token estimate: a run of letters or digits costs one token per four
/// characters (the usual rule of thumb for BPE/WordPiece vocabularies), every other visible
/// symbol and every CJK ideograph one token, whitespace nothing. It is additive over
/// whitespace-separated words, which the size guards rely on.
pub struct EstimatedTokens;

impl TokenCounter for EstimatedTokens {
    fn count_tokens(&self, text: &str) -> usize {
        let mut tokens = 0;
        let mut run = 0usize;
        for c in text.chars() {
            if c.is_alphanumeric() && !is_ideograph(c) {
                if run.is_multiple_of(4) {
                    tokens += 1;
                }
                run += 1;
            } else {
                run = 0;
                if !c.is_whitespace() {
                    tokens += 1;
                }
            }
        }
        tokens
    }
}

/// Whitespace-separated words in `text`.
pub fn count_words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The size of `text` in `unit`.
pub fn measure(text: &str, unit: SizeUnit, tokens: &dyn TokenCounter) -> usize {
    match unit {
        SizeUnit::Chars => text.chars().count(),
        SizeUnit::Words => count_words(text),
        SizeUnit::Tokens => tokens.count_tokens(text),
    }
}

/// Sizes of runs of consecutive units, answered in O(1) from prefix sums.
///
/// A run's text is `doc[units[first].start..units[last].end]`, whitespace between units
/// included, so its character size counts that whitespace while its word and token sizes
/// (whitespace costs nothing) are sums over the units. Token counts are taken on the first
/// question in tokens: a model's tokenizer costs as much as the rest of chunking together, and
/// most configs size in characters.
pub struct UnitSizes<'a> {
    doc: &'a str,
    units: &'a [Span],
    counter: &'a dyn TokenCounter,
    /// Character offset of each unit's start and end.
    char_start: Vec<usize>,
    char_end: Vec<usize>,
    /// Prefix sums: `words[i]` is the number of words in units `0..i`.
    words: Vec<usize>,
    tokens: OnceCell<Vec<usize>>,
}

impl<'a> UnitSizes<'a> {
    /// Sizes of runs of `units` of `doc`; `counter` counts their tokens, on the first question
    /// in tokens.
    pub fn new(doc: &'a str, units: &'a [Span], counter: &'a dyn TokenCounter) -> UnitSizes<'a> {
        let mut char_start = Vec::with_capacity(units.len());
        let mut char_end = Vec::with_capacity(units.len());
        let mut words = Vec::with_capacity(units.len() + 1);
        words.push(0);
        let mut byte_pos = 0;
        let mut char_pos = 0;
        for unit in units {
            char_pos += doc[byte_pos..unit.start].chars().count();
            char_start.push(char_pos);
            let text = unit.text(doc);
            char_pos += text.chars().count();
            char_end.push(char_pos);
            byte_pos = unit.end;
            words.push(words.last().unwrap_or(&0) + count_words(text));
        }
        UnitSizes { doc, units, counter, char_start, char_end, words, tokens: OnceCell::new() }
    }

    /// Prefix sums of token counts: `tokens[i]` is the number of tokens in units `0..i`.
    fn tokens(&self) -> &[usize] {
        self.tokens.get_or_init(|| {
            let mut sums = Vec::with_capacity(self.units.len() + 1);
            sums.push(0);
            for unit in self.units {
                sums.push(sums.last().unwrap_or(&0) + self.counter.count_tokens(unit.text(self.doc)));
            }
            sums
        })
    }

    /// Size of the run of units `first..=last` in `unit`.
    pub fn run(&self, first: usize, last: usize, unit: SizeUnit) -> usize {
        match unit {
            SizeUnit::Chars => self.char_end[last] - self.char_start[first],
            SizeUnit::Words => self.words[last + 1] - self.words[first],
            SizeUnit::Tokens => self.tokens()[last + 1] - self.tokens()[first],
        }
    }

    /// Whether units `first..=last`, with the text between them, are within `limit`.
    pub fn fits(&self, first: usize, last: usize, limit: Size) -> bool {
        self.run(first, last, limit.unit) <= limit.value
    }
}

/// The longest prefix of `text` that measures at most `cap`, ending at a word boundary when
/// one exists inside the cap, otherwise at the last character boundary that fits. Returns
/// its length in bytes: at least one character for non-empty text, even when that single
/// character alone is above the cap (nothing smaller exists), so that callers always advance.
///
/// The work is proportional to the prefix found, not to `text`: of each word only as much is
/// read as could fit (`probe_chars`), so cutting a 10 MB word into pieces stays linear.
pub fn fitting_prefix(text: &str, cap: Size, tokens: &dyn TokenCounter) -> usize {
    let mut best_word_end = 0;
    let mut chars_before_word = 0; // characters of `text` before the current word
    let mut words = 0;
    let mut token_total = 0;
    let mut rest = text;
    let mut offset = 0;
    while let Some(word_start) = rest.find(|c: char| !c.is_whitespace()) {
        chars_before_word += rest[..word_start].chars().count();
        let (word, word_chars, whole) = next_word(&rest[word_start..], probe_chars(cap, chars_before_word));
        let word_tokens = if cap.unit == SizeUnit::Tokens { tokens.count_tokens(word) } else { 0 };
        let size_with_word = match cap.unit {
            _ if !whole => usize::MAX, // longer than anything that could fit
            SizeUnit::Chars => chars_before_word + word_chars,
            SizeUnit::Words => words + 1,
            SizeUnit::Tokens => token_total + word_tokens,
        };
        if size_with_word > cap.value {
            if best_word_end > 0 {
                return best_word_end;
            }
            // The first word alone is over the cap: cut inside it.
            return offset + word_start + fitting_word_prefix(word, cap, chars_before_word, tokens);
        }
        chars_before_word += word_chars;
        words += 1;
        token_total += word_tokens;
        offset += word_start + word.len();
        best_word_end = offset;
        rest = &rest[word_start + word.len()..];
    }
    best_word_end.max(text.len().min(first_char_len(text)))
}

/// How many characters of a word can decide whether it fits `cap` after `chars_before` of
/// text: one past what is left of a character cap; for tokens, 16 characters per token (no
/// vocabulary's tokens are longer, so a longer word cannot fit and is cut inside); for words,
/// all of it (any one word fits).
fn probe_chars(cap: Size, chars_before: usize) -> Option<usize> {
    match cap.unit {
        SizeUnit::Chars => Some(cap.value.saturating_sub(chars_before) + 1),
        SizeUnit::Tokens => Some(cap.value.saturating_add(1).saturating_mul(16)),
        SizeUnit::Words => None,
    }
}

/// The word `text` starts with, read up to `limit` characters: the word (or its first `limit`
/// characters), its length in characters, and whether it is whole.
fn next_word(text: &str, limit: Option<usize>) -> (&str, usize, bool) {
    let mut count = 0;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            return (&text[..i], count, true);
        }
        if limit == Some(count) {
            return (&text[..i], count, false);
        }
        count += 1;
    }
    (text, count, true)
}

/// Byte length of the first `n` characters of `text` (all of it when shorter).
fn byte_end_of_chars(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// Bytes of the longest prefix of one over-long `word` that fits, given `chars_before` of
/// leading whitespace already spent; at least one character. The work is proportional to the
/// prefix found, not to the word.
fn fitting_word_prefix(word: &str, cap: Size, chars_before: usize, tokens: &dyn TokenCounter) -> usize {
    let end_of = |n: usize| byte_end_of_chars(word, n);
    let fitting_chars = match cap.unit {
        SizeUnit::Chars => cap.value.saturating_sub(chars_before),
        SizeUnit::Words => return word.len(), // one word always fits a cap of at least one word
        SizeUnit::Tokens => {
            // Token counts grow with the prefix: double until a prefix does not fit, then bisect.
            let fits = |n: usize| tokens.count_tokens(&word[..end_of(n)]) <= cap.value;
            let (mut low, mut high) = (0usize, 1usize);
            while fits(high) && end_of(high) < word.len() {
                low = high;
                high *= 2;
            }
            if fits(high) {
                low = high;
            }
            while high - low > 1 {
                let mid = low + (high - low) / 2;
                if fits(mid) {
                    low = mid;
                } else {
                    high = mid;
                }
            }
            low
        }
    };
    end_of(fitting_chars.max(1))
}

fn first_char_len(text: &str) -> usize {
    text.chars().next().map_or(0, char::len_utf8)
}

#[cfg(test)]
#[path = "size_tests.rs"]
mod tests;
