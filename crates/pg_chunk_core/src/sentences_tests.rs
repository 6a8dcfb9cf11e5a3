use super::*;
use proptest::prelude::*;

/// Checks the contract of `split_sentences` on one output: spans in order, non-overlapping,
/// non-empty, on char boundaries, trimmed, and the text between them whitespace only, so that
/// every other character lies in exactly one span.
fn check_invariants(doc: &str, spans: &[Span]) -> Result<(), String> {
    let mut covered_to = 0;
    for span in spans {
        if span.start < covered_to || span.end <= span.start || span.end > doc.len() {
            return Err(format!("{span:?} is out of order, empty or past the end ({covered_to})"));
        }
        if !doc.is_char_boundary(span.start) || !doc.is_char_boundary(span.end) {
            return Err(format!("{span:?} is not on char boundaries"));
        }
        let gap = &doc[covered_to..span.start];
        if !gap.chars().all(char::is_whitespace) {
            return Err(format!("text {gap:?} before {span:?} is in no span"));
        }
        let text = span.text(doc);
        if text.trim() != text {
            return Err(format!("{span:?} = {text:?} has surrounding whitespace"));
        }
        covered_to = span.end;
    }
    let tail = &doc[covered_to..];
    if !tail.chars().all(char::is_whitespace) {
        return Err(format!("trailing text {tail:?} is in no span"));
    }
    Ok(())
}

/// Splits every input, checks the invariants and that the unit texts are the expected ones.
fn assert_units(cases: &[(&str, &[&str])]) {
    for &(doc, expected) in cases {
        let spans = split_sentences(doc);
        if let Err(problem) = check_invariants(doc, &spans) {
            panic!("{doc:?}: {problem}");
        }
        let texts: Vec<&str> = spans.iter().map(|s| s.text(doc)).collect();
        assert_eq!(texts, expected, "splitting {doc:?}");
    }
}

#[test]
fn invariant_check_rejects_broken_outputs() {
    let doc = "Ab. Cd é"; // 'é' is bytes 7..9
    let span = |start, end| Span { start, end };
    assert!(check_invariants(doc, &[span(0, 3), span(4, 9)]).is_ok());
    let broken: &[&[Span]] = &[
        &[span(0, 3)],                         // "Cd é" in no span
        &[span(4, 9), span(0, 3)],             // out of order
        &[span(0, 3), span(2, 9)],             // overlapping
        &[span(0, 3), span(4, 4), span(4, 9)], // empty
        &[span(0, 4), span(4, 9)],             // trailing space in a span
        &[span(0, 3), span(4, 8)],             // ends inside 'é'
        &[span(0, 3), span(4, 10)],            // past the end
        &[span(1, 3), span(4, 9)],             // 'A' in no span
    ];
    for spans in broken {
        assert!(check_invariants(doc, spans).is_err(), "accepted {spans:?}");
    }
}

// The tables below keep one case per line; rustfmt would spread each over five.

#[test]
fn paragraph_breaks_mark_the_gaps_at_a_blank_line() {
    let cases: &[(&str, &[bool])] = &[
        ("One. Two.\n\nThree.\nFour.", &[false, true, false]),
        ("Spaces\n \t \nnext", &[true]),
        ("Windows.\r\n\r\nNext.\r\nWrapped", &[true, false]),
        ("Old Mac\r\rnext", &[true]),
        ("Single\r\nbreak. Then", &[false]),
        ("# Title\nText.\n\n- item\n- item two", &[false, true, false]),
        ("Text.\n## Next section\nMore.", &[true, false]),
        ("Text. # not a heading", &[false]),
        ("Alone.", &[]),
    ];
    for (doc, expected) in cases {
        assert_eq!(paragraph_breaks(doc, &split_sentences(doc)), *expected, "{doc:?}");
    }
}

#[rustfmt::skip]
#[test]
fn plain_sentences() {
    assert_units(&[
        ("", &[]),
        (" \n\t \r\n ", &[]),
        ("Hello world. How are you? I'm fine!", &["Hello world.", "How are you?", "I'm fine!"]),
        ("What?! No way... Really.", &["What?!", "No way...", "Really."]),
        ("No terminator at all", &["No terminator at all"]),
        ("  Padded. Both sides.  ", &["Padded.", "Both sides."]),
        ("Hello.World stays one word.", &["Hello.World stays one word."]),
        ("Ideographic space.\u{3000}Next.", &["Ideographic space.", "Next."]),
        ("Number 42. 7 came next.", &["Number 42.", "7 came next."]),
    ]);
}

#[rustfmt::skip]
#[test]
fn paragraphs_and_line_breaks() {
    assert_units(&[
        (
            "First line\nwrapped here. Second.\n\nNew paragraph\nstill going",
            &["First line\nwrapped here.", "Second.", "New paragraph\nstill going"],
        ),
        ("No terminator\n\nnor here", &["No terminator", "nor here"]),
        ("Blank line with spaces\n \t \nnext", &["Blank line with spaces", "next"]),
        ("Windows\r\nwrapped.\r\n\r\nNext para", &["Windows\r\nwrapped.", "Next para"]),
        ("Windows\r\n  \r\nspaced blank", &["Windows", "spaced blank"]),
        ("Old Mac\r\rnext", &["Old Mac", "next"]),
        ("one line\r\nwrapped", &["one line\r\nwrapped"]),
        ("ends with break.\n", &["ends with break."]),
    ]);
}

#[rustfmt::skip]
#[test]
fn abbreviations_and_initials() {
    assert_units(&[
        (
            "Mr. Smith met Dr. Jones at St. Paul's. They talked.",
            &["Mr. Smith met Dr. Jones at St. Paul's.", "They talked."],
        ),
        ("MRS. Brown and PROF. Green left. Done.", &["MRS. Brown and PROF. Green left.", "Done."]),
        ("It was Smith vs. Jones. Fine.", &["It was Smith vs. Jones.", "Fine."]),
        ("J. R. R. Tolkien wrote it. Then he rested.", &["J. R. R. Tolkien wrote it.", "Then he rested."]),
        ("Tools, e.g. hammers. Or not.", &["Tools, e.g. hammers.", "Or not."]),
        ("Tools, e.g. Hammers, i.e. Things.", &["Tools, e.g. Hammers, i.e. Things."]),
        ("Back in the U.S. Army base. Done.", &["Back in the U.S. Army base.", "Done."]),
        ("At 10 a.m. sharp. Or later.", &["At 10 a.m. sharp.", "Or later."]),
        ("See Fig. 3 and cf. Table 2. Done.", &["See Fig. 3 and cf. Table 2.", "Done."]),
        ("Acme Inc. Announced results.", &["Acme Inc. Announced results."]),
        ("(Dr. Who) is here. Yes.", &["(Dr. Who) is here.", "Yes."]),
        ("He holds a Ph.D. From Oxford.", &["He holds a Ph.D. From Oxford."]),
        // "No", "p" and "vol" are abbreviations only before a number.
        ("Item No. 5 shipped. No. It did not.", &["Item No. 5 shipped.", "No.", "It did not."]),
        ("See p. 12 and vol. 3. Then stop.", &["See p. 12 and vol. 3.", "Then stop."]),
        // etc. ends the sentence before a capital; mid-sentence a lowercase word follows.
        ("Fruit, etc. Then vegetables.", &["Fruit, etc.", "Then vegetables."]),
        ("Fruit, etc. and more.", &["Fruit, etc. and more."]),
        // An abbreviation followed by "!" or a closer is not a lone dot.
        ("Call the Dr.! Now.", &["Call the Dr.!", "Now."]),
        ("Hello Mr. A lone dot. Then more", &["Hello Mr. A lone dot.", "Then more"]),
    ]);
}

#[rustfmt::skip]
#[test]
fn numbers_urls_and_emails() {
    assert_units(&[
        (
            "Pi is 3.14 roughly. Version v1.2.3 is out. It costs $1,000.50 now.",
            &["Pi is 3.14 roughly.", "Version v1.2.3 is out.", "It costs $1,000.50 now."],
        ),
        ("See https://example.com/a.b?c=d. Then click.", &["See https://example.com/a.b?c=d.", "Then click."]),
        ("Go to www.example.org/p?x=1&y=2 now! Great.", &["Go to www.example.org/p?x=1&y=2 now!", "Great."]),
        ("Mail john.doe@example.co.uk. Reply soon.", &["Mail john.doe@example.co.uk.", "Reply soon."]),
        ("Mail john.doe@example.co.uk for help.", &["Mail john.doe@example.co.uk for help."]),
    ]);
}

#[rustfmt::skip]
#[test]
fn ellipses() {
    assert_units(&[
        ("Wait... what happened? Nothing.", &["Wait... what happened?", "Nothing."]),
        ("Wait... What happened?", &["Wait...", "What happened?"]),
        ("Wait… what? Hmm… Okay.", &["Wait… what?", "Hmm…", "Okay."]),
        ("And then...", &["And then..."]),
        ("Wait...\nwrapped lowercase", &["Wait...\nwrapped lowercase"]),
    ]);
}

#[rustfmt::skip]
#[test]
fn quotes_and_brackets() {
    assert_units(&[
        ("He said \"Stop.\" Then he left.", &["He said \"Stop.\"", "Then he left."]),
        ("(This is an aside.) Next one.", &["(This is an aside.)", "Next one."]),
        ("\"Help!\" he cried. Nobody came.", &["\"Help!\" he cried.", "Nobody came."]),
        ("She wrote ‘done.’ Then “really?” Yes.", &["She wrote ‘done.’", "Then “really?”", "Yes."]),
        ("It ended [finally.] Good.", &["It ended [finally.]", "Good."]),
        ("Over. (but not quite) yet.", &["Over. (but not quite) yet."]),
        ("Over.\" Glued\"quote.\"Next", &["Over.\"", "Glued\"quote.\"Next"]),
    ]);
}

#[rustfmt::skip]
#[test]
fn chinese() {
    assert_units(&[
        ("你好。我很好！你呢？", &["你好。", "我很好！", "你呢？"]),
        ("他说：“走吧。”然后走了。", &["他说：“走吧。”", "然后走了。"]),
        ("「好！」他說。", &["「好！」", "他說。"]),
        ("真的吗？！是的｡", &["真的吗？！", "是的｡"]),
        ("第一段。\n\n第二段", &["第一段。", "第二段"]),
        ("他走了……", &["他走了……"]),
        ("版本3.14发布了。", &["版本3.14发布了。"]),
    ]);
}

#[rustfmt::skip]
#[test]
fn hindi() {
    assert_units(&[
        ("यह पहला वाक्य है। यह दूसरा है॥ तीसरा", &["यह पहला वाक्य है।", "यह दूसरा है॥", "तीसरा"]),
        ("नमस्ते।दुनिया", &["नमस्ते।", "दुनिया"]),
        ("क्या आप ठीक हैं? हाँ।", &["क्या आप ठीक हैं?", "हाँ।"]),
        ("वह आया ।\nफिर गया ।", &["वह आया ।", "फिर गया ।"]),
    ]);
}

#[rustfmt::skip]
#[test]
fn mixed_scripts_and_emoji() {
    assert_units(&[
        (
            "Hello world. 你好。Next one! नमस्ते। done",
            &["Hello world.", "你好。", "Next one!", "नमस्ते।", "done"],
        ),
        ("I said 你好. Then left.", &["I said 你好.", "Then left."]),
        ("Great job! 🎉 Party time. 😀", &["Great job!", "🎉 Party time.", "😀"]),
        ("Café. Élan vital. école.", &["Café.", "Élan vital. école."]),
    ]);
}

#[rustfmt::skip]
#[test]
fn headings() {
    assert_units(&[
        (
            "# Title\nFirst sentence. Second.\n## Sub\nText",
            &["# Title", "First sentence.", "Second.", "## Sub", "Text"],
        ),
        ("# 1. Introduction. Part two\nBody", &["# 1. Introduction. Part two", "Body"]),
        ("Text before\n# Heading", &["Text before", "# Heading"]),
        ("  ### Indented heading  \n", &["### Indented heading"]),
        ("#\nAfter an empty heading", &["#", "After an empty heading"]),
        ("###### Six\r\nbody", &["###### Six", "body"]),
        ("####### seven is not a heading\nwrapped", &["####### seven is not a heading\nwrapped"]),
        ("#hashtag here\nwrapped", &["#hashtag here\nwrapped"]),
        ("Mid-line # is text\nwrapped", &["Mid-line # is text\nwrapped"]),
    ]);
}

#[rustfmt::skip]
#[test]
fn list_items() {
    assert_units(&[
        (
            "Intro:\n- one\n- two. Still two? Yes.\n* three\n+ four",
            &["Intro:", "- one", "- two.", "Still two?", "Yes.", "* three", "+ four"],
        ),
        (
            "1. First step. Do it.\n2) Second\n10. Tenth",
            &["1. First step.", "Do it.", "2) Second", "10. Tenth"],
        ),
        ("- item wraps\n  onto next line\n- next", &["- item wraps\n  onto next line", "- next"]),
        ("\t- tab indented\n    * nested", &["- tab indented", "* nested"]),
        ("- a\r\n- b\r\n", &["- a", "- b"]),
        ("- item\n\nParagraph", &["- item", "Paragraph"]),
        ("- item\n# Heading\n- item", &["- item", "# Heading", "- item"]),
        ("-not a list\nwrapped", &["-not a list\nwrapped"]),
        ("*emphasis* here\nwrapped", &["*emphasis* here\nwrapped"]),
        ("1.5 is a number\nwrapped", &["1.5 is a number\nwrapped"]),
        ("1234567890. ten digits is no marker", &["1234567890. ten digits is no marker"]),
        ("Mid-line - dash\nand 1. number", &["Mid-line - dash\nand 1. number"]),
    ]);
}

#[test]
fn splitting_checks_for_an_interrupt_every_interval_and_stops_with_its_error() {
    let doc = "A sentence that ends. Another one? Yes!\n\n".repeat(20_000); // 840 KB
    let checks = std::cell::Cell::new(0);
    let count = || -> Result<(), &str> {
        checks.set(checks.get() + 1);
        Ok(())
    };
    assert_eq!(split_sentences_interruptible(&doc, &count), Ok(split_sentences(&doc)));
    assert!(checks.get() >= doc.len() / INTERRUPT_EVERY_BYTES, "{} checks", checks.get());

    checks.set(0);
    let stop_at_third = || {
        checks.set(checks.get() + 1);
        if checks.get() == 3 {
            Err("canceled")
        } else {
            Ok(())
        }
    };
    assert_eq!(split_sentences_interruptible(&doc, &stop_at_third), Err("canceled"));
    assert_eq!(checks.get(), 3, "no splitting after the check that said stop");
}

#[test]
fn spans_point_into_the_document() {
    let doc = "  Hi there.\n\n- Next. 你好。";
    let spans = split_sentences(doc);
    assert_eq!(spans, vec![Span { start: 2, end: 11 }, Span { start: 13, end: 20 }, Span { start: 21, end: 30 },]);
}

/// Byte offsets where each line starts, with `\r\n`, `\n` and a lone `\r` as line breaks.
fn line_starts(doc: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let bytes = doc.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let breaks = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
        if breaks {
            starts.push(i + 1);
        }
    }
    starts
}

/// Structure checked independently of the splitter's own line parser: no unit runs across a
/// blank line or into a heading or list item line, each heading line is a unit of its own, each
/// list item starts one, outside headings nothing follows a CJK or danda terminator within its
/// unit, and every boundary between units has one of these reasons.
fn check_structure(doc: &str, spans: &[Span]) -> Result<(), String> {
    let mut heading_starts = Vec::new();
    let mut block_starts = Vec::new();
    for start in line_starts(doc) {
        let line = &doc[start..];
        let line = &line[..line.find(['\n', '\r']).unwrap_or(line.len())];
        let marker = start + (line.len() - line.trim_start().len());
        let block = starts_block(line);
        let crossing = spans.iter().find(|s| s.start < start && start < s.end);
        if let (Some(span), true) = (crossing, line.trim().is_empty() || block.is_some()) {
            return Err(format!("{:?} runs across or into the line {line:?}", span.text(doc)));
        }
        if block.is_some() {
            block_starts.push(marker);
        }
        match block {
            Some(true) => {
                let whole_line = Span { start: marker, end: start + line.trim_end().len() };
                if !spans.contains(&whole_line) {
                    return Err(format!("heading {line:?} is not a unit of its own"));
                }
                heading_starts.push(marker);
            }
            Some(false) if !spans.iter().any(|s| s.start == marker) => {
                return Err(format!("list item {line:?} does not start a unit"));
            }
            _ => {}
        }
    }
    for span in spans.iter().filter(|s| !heading_starts.contains(&s.start)) {
        let text = span.text(doc);
        let mut chars = text.chars().skip_while(|&c| !ends_without_space(c));
        if chars.any(|c| !is_terminator(c) && !is_closer(c)) {
            return Err(format!("{text:?} goes on past a CJK or danda terminator"));
        }
    }
    for pair in spans.windows(2) {
        let (before, after) = (pair[0].text(doc), pair[1]);
        let gap = doc[pair[0].end..after.start].replace("\r\n", "\n").replace('\r', "\n");
        let ends_sentence = before.trim_end_matches(is_closer).ends_with(is_terminator);
        let blank_line = gap.split('\n').count() > 2;
        let reason = ends_sentence
            || blank_line
            || heading_starts.contains(&pair[0].start)
            || block_starts.contains(&after.start);
        if !reason {
            return Err(format!("no reason to end {before:?} before {:?}", after.text(doc)));
        }
    }
    Ok(())
}

/// `Some(true)` for a heading line, `Some(false)` for a list item, `None` otherwise.
fn starts_block(line: &str) -> Option<bool> {
    let line = line.trim_start();
    let hashes = line.len() - line.trim_start_matches('#').len();
    let after_hashes = &line[hashes..];
    if (1..=6).contains(&hashes) && (after_hashes.is_empty() || after_hashes.starts_with([' ', '\t'])) {
        return Some(true);
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let marker = match digits {
        0 => line.strip_prefix(['-', '*', '+']),
        1..=9 => line[digits..].strip_prefix(['.', ')']),
        _ => None,
    };
    marker.filter(|rest| rest.starts_with([' ', '\t'])).map(|_| false)
}

/// Pieces that exercise every rule when strung together at random.
#[rustfmt::skip]
const FRAGMENTS: &[&str] = &[
    "Hello", "world", "the", "The", " ", "  ", "\t", "\n", "\r\n", "\r", "\n\n", ". ", ".", "!",
    "?", "?! ", "...", "… ", "。", "！", "？", "।", "॥", "- ", "* ", "1. ", "2) ", "# ", "### ", "#",
    "e.g. ", "Mr. ", "J. ", "U.S. ", "No. ", "3.14", "https://x.org/a.b?c=d", "a@b.co", "\"", "'",
    "”", ")", "(", "「", "」", "你好", "नमस्ते", "🎉", "👩‍👩‍👧", "e\u{301}", "\u{3000}", "\u{0}",
    "\u{85}", "\u{2028}",
];

/// Characters that make punctuation, markers and line breaks dense.
const CHARS: &[char] = &[
    'a', 'A', 'z', '.', '.', '!', '?', ' ', ' ', '\n', '\r', '\t', '#', '-', '*', '1', '(', ')', '"', '”', '。', '？',
    '।', '॥', '…', '你', 'é', '\u{301}', '🎉', '\u{3000}', '\u{a0}',
];

fn check_all(doc: &str) -> Result<(), TestCaseError> {
    let spans = split_sentences(doc);
    check_invariants(doc, &spans).map_err(TestCaseError::fail)?;
    check_structure(doc, &spans).map_err(TestCaseError::fail)?;
    prop_assert_eq!(&spans, &split_sentences(doc), "not deterministic");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn invariants_hold_on_printable_text(doc in "\\PC{0,200}") {
        check_all(&doc)?;
    }

    #[test]
    fn invariants_hold_on_any_chars(chars in prop::collection::vec(any::<char>(), 0..200)) {
        check_all(&chars.into_iter().collect::<String>())?;
    }

    #[test]
    fn invariants_hold_on_dense_punctuation(
        chars in prop::collection::vec(prop::sample::select(CHARS), 0..200)
    ) {
        check_all(&chars.into_iter().collect::<String>())?;
    }

    #[test]
    fn invariants_hold_on_fragments(
        parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..60)
    ) {
        check_all(&parts.concat())?;
    }
}
