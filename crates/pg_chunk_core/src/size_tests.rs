use super::*;

#[test]
fn estimated_tokens_counts_runs_symbols_and_ideographs() {
    let cases =
        [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("hello, world!", 6), ("中文", 2), ("  \n", 0), ("3.14", 3)];
    for (text, want) in cases {
        assert_eq!(EstimatedTokens.count_tokens(text), want, "{text:?}");
    }
}

#[test]
fn fitting_prefix_prefers_word_boundaries() {
    let t = &EstimatedTokens;
    let cases = [
        ("alpha beta gamma", Size::chars(12), "alpha beta"),
        ("alpha beta gamma", Size::chars(16), "alpha beta gamma"),
        ("alpha beta gamma", Size { value: 2, unit: SizeUnit::Words }, "alpha beta"),
        ("abcdefghij", Size::chars(4), "abcd"),
        ("中文中文中文", Size::chars(4), "中文中文"),
        ("alpha beta", Size { value: 2, unit: SizeUnit::Tokens }, "alpha"),
        ("abcdefghijkl", Size { value: 2, unit: SizeUnit::Tokens }, "abcdefgh"),
        ("x", Size::chars(0), "x"),
    ];
    for (text, cap, want) in cases {
        assert_eq!(&text[..fitting_prefix(text, cap, t)], want, "{text:?} in {cap}");
    }
}

#[test]
fn unit_sizes_count_whitespace_between_units_as_chars_only() {
    let doc = "One two.  Three four five.";
    let units = [Span { start: 0, end: 8 }, Span { start: 10, end: 26 }];
    let sizes = UnitSizes::new(doc, &units, &EstimatedTokens);
    assert_eq!(sizes.run(0, 1, SizeUnit::Chars), 26);
    assert_eq!(sizes.run(1, 1, SizeUnit::Chars), 16);
    assert_eq!(sizes.run(0, 1, SizeUnit::Words), 5);
    assert_eq!(sizes.run(0, 0, SizeUnit::Tokens), 3);
}

/// Counts the texts it is asked about.
struct CountingCalls(std::cell::Cell<usize>);

impl TokenCounter for CountingCalls {
    fn count_tokens(&self, text: &str) -> usize {
        self.0.set(self.0.get() + 1);
        EstimatedTokens.count_tokens(text)
    }
}

#[test]
fn unit_sizes_tokenize_only_when_asked_in_tokens_and_then_once() {
    let doc = "One two.  Three four five. Six.";
    let units = [Span { start: 0, end: 8 }, Span { start: 10, end: 26 }, Span { start: 27, end: 31 }];
    let counter = CountingCalls(std::cell::Cell::new(0));
    let sizes = UnitSizes::new(doc, &units, &counter);
    assert_eq!(sizes.run(0, 2, SizeUnit::Chars), 31);
    assert_eq!(sizes.run(0, 2, SizeUnit::Words), 6);
    assert_eq!(counter.0.get(), 0, "no tokenizing for character and word sizes");
    assert_eq!(sizes.run(0, 1, SizeUnit::Tokens), 8);
    assert_eq!(sizes.run(1, 2, SizeUnit::Tokens), 7);
    assert_eq!(counter.0.get(), units.len(), "each unit tokenized once");
}

/// Counts the bytes it is asked to tokenize.
struct CountingBytes(std::cell::Cell<usize>);

impl TokenCounter for CountingBytes {
    fn count_tokens(&self, text: &str) -> usize {
        self.0.set(self.0.get() + text.len());
        EstimatedTokens.count_tokens(text)
    }
}

#[test]
fn cutting_a_long_word_reads_each_piece_not_the_rest_of_the_word() {
    let word = "a".repeat(200_000);
    let counter = CountingBytes(std::cell::Cell::new(0));
    let cap = Size { value: 10, unit: SizeUnit::Tokens };
    let (mut at, mut pieces) = (0, 0);
    while at < word.len() {
        let len = fitting_prefix(&word[at..], cap, &counter);
        assert!(EstimatedTokens.count_tokens(&word[at..at + len]) <= 10);
        at += len;
        pieces += 1;
    }
    assert_eq!(pieces, 200_000 / 40);
    // Each piece reads a bounded window (16 characters per token of the cap, and the
    // bisection's prefixes of it), so the bytes read grow with the word, not its square.
    assert!(
        counter.0.get() < 2_000 * word.len() / 40,
        "{} bytes tokenized for a {} byte word",
        counter.0.get(),
        word.len()
    );
}
