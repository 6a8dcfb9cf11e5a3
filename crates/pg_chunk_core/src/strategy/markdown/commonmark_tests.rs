//! The block structure CommonMark (with GitHub's tables and YAML front matter) gives a set of
//! documents, as lines (first and last, from 0) and block kinds, against the reader's.
//!
//! These cases chose the reader: the hand-written one that pulldown-cmark replaced read 5 of
//! them wrongly (a lazy line after a quoted fence, `<pre>` and comment HTML blocks holding blank
//! lines, a `|` line without a delimiter row, a table row without a pipe).

use serde_json::json;

use super::reader::Reader;
use crate::strategy::test_support::{chunk_checked, with_strategy};
use crate::strategy::BlockKind::{self, *};

/// A document and its top-level blocks by CommonMark; a list's items are blocks of their own,
/// and an HTML block or a link reference definition reads as a paragraph (the strategy has no
/// kind for them).
struct Case {
    name: &'static str,
    doc: &'static str,
    blocks: &'static [(BlockKind, usize, usize)],
}

const CASES: &[Case] = &[
    Case { name: "setext h1", doc: "Title\n=====\n\nText", blocks: &[(Heading, 0, 1), (Paragraph, 3, 3)] },
    Case { name: "setext over two lines", doc: "Two lines\nof title\n---\n", blocks: &[(Heading, 0, 2)] },
    Case { name: "--- after a blank line is a rule", doc: "Text\n\n---\n", blocks: &[(Paragraph, 0, 0), (Rule, 2, 2)] },
    Case { name: "--- indented 4 continues the paragraph", doc: "Foo\n    ---", blocks: &[(Paragraph, 0, 1)] },
    Case { name: "= = is no underline", doc: "Foo\n= =", blocks: &[(Paragraph, 0, 1)] },
    Case {
        name: "backtick fence holds a heading",
        doc: "```\n# not a heading\n```\nafter",
        blocks: &[(Code, 0, 2), (Paragraph, 3, 3)],
    },
    Case { name: "tilde fence with info", doc: "~~~ rust\nfn x() {}\n~~~\n", blocks: &[(Code, 0, 2)] },
    Case { name: "a shorter fence does not close", doc: "````\n```\nstill code\n````\n", blocks: &[(Code, 0, 3)] },
    Case {
        name: "backticks do not close tildes",
        doc: "~~~\n```\n~~~\nafter",
        blocks: &[(Code, 0, 2), (Paragraph, 3, 3)],
    },
    Case { name: "an unclosed fence runs to the end", doc: "```\ncode\n\n# x\n", blocks: &[(Code, 0, 3)] },
    Case {
        name: "backtick in a backtick fence's info is inline code",
        doc: "``` not a fence ` here\ntext",
        blocks: &[(Paragraph, 0, 1)],
    },
    Case {
        name: "indented code across a blank line",
        doc: "    code\n\n    more\ntext",
        blocks: &[(IndentedCode, 0, 2), (Paragraph, 3, 3)],
    },
    Case { name: "a tab indents code", doc: "\tcode\n", blocks: &[(IndentedCode, 0, 0)] },
    Case {
        name: "indented code cannot interrupt a paragraph",
        doc: "text\n    more text",
        blocks: &[(Paragraph, 0, 1)],
    },
    Case { name: "nested list", doc: "- a\n  - b\n    - c\n- d", blocks: &[(ListItem, 0, 2), (ListItem, 3, 3)] },
    Case {
        name: "list item holds a fence with a heading",
        doc: "- item\n\n  ```\n  # in code\n  ```\n- next",
        blocks: &[(ListItem, 0, 4), (ListItem, 5, 5)],
    },
    Case {
        name: "loose item's second paragraph",
        doc: "- a\n\n  continued\n- b",
        blocks: &[(ListItem, 0, 2), (ListItem, 3, 3)],
    },
    Case {
        name: "an unindented paragraph after a blank ends the item",
        doc: "- a\n\nparagraph",
        blocks: &[(ListItem, 0, 0), (Paragraph, 2, 2)],
    },
    Case { name: "indented code in a list item", doc: "- a\n\n      code", blocks: &[(ListItem, 0, 2)] },
    Case { name: "an item starting with a blank line", doc: "-\n  foo\n", blocks: &[(ListItem, 0, 1)] },
    Case { name: "lazy === continues the item's paragraph", doc: "- item\n===", blocks: &[(ListItem, 0, 1)] },
    Case { name: "--- after an item is a rule", doc: "- a\n---", blocks: &[(ListItem, 0, 0), (Rule, 1, 1)] },
    Case { name: "2019. does not interrupt a paragraph", doc: "The year\n2019. A year", blocks: &[(Paragraph, 0, 1)] },
    Case { name: "1. interrupts a paragraph", doc: "Text\n1. one", blocks: &[(Paragraph, 0, 0), (ListItem, 1, 1)] },
    Case { name: "ordered items with )", doc: "1) one\n2) two", blocks: &[(ListItem, 0, 0), (ListItem, 1, 1)] },
    Case {
        name: "emphasis and markers without a space are text",
        doc: "*emphasis* here\n-not a list\n+also not",
        blocks: &[(Paragraph, 0, 2)],
    },
    Case { name: "* * * is a rule, not an item", doc: "* * *\n- item", blocks: &[(Rule, 0, 0), (ListItem, 1, 1)] },
    Case {
        name: "a quote's lazy line",
        doc: "> quoted\nlazy line\n\nafter",
        blocks: &[(Quote, 0, 1), (Paragraph, 3, 3)],
    },
    Case {
        name: "no lazy line after a quoted fence",
        doc: "> ```\n> code\nnot in the quote",
        blocks: &[(Quote, 0, 1), (Paragraph, 2, 2)],
    },
    Case { name: "no lazy setext underline in a quote", doc: "> foo\n---", blocks: &[(Quote, 0, 0), (Rule, 1, 1)] },
    Case { name: "a blank line splits quotes", doc: "> a\n\n> b", blocks: &[(Quote, 0, 0), (Quote, 2, 2)] },
    Case { name: "a heading in a quote", doc: "> # x\n> text", blocks: &[(Quote, 0, 1)] },
    Case {
        name: "HTML block ends at a blank line",
        doc: "<div>\n*text*\n</div>\n\nafter",
        blocks: &[(Paragraph, 0, 2), (Paragraph, 4, 4)],
    },
    Case {
        name: "<pre> holds blank lines and a heading",
        doc: "<pre>\n# not a heading\n\nstill pre\n</pre>\nafter",
        blocks: &[(Paragraph, 0, 4), (Paragraph, 5, 5)],
    },
    Case { name: "an HTML comment holds a blank line", doc: "<!--\n\n# hidden\n-->\n", blocks: &[(Paragraph, 0, 3)] },
    Case {
        name: "inline HTML does not interrupt a paragraph",
        doc: "text\n<span>x</span>",
        blocks: &[(Paragraph, 0, 1)],
    },
    Case {
        name: "ATX heading with a closing run",
        doc: "## Title ##\ntext",
        blocks: &[(Heading, 0, 0), (Paragraph, 1, 1)],
    },
    Case { name: "#hashtag is text", doc: "#hashtag\ntext", blocks: &[(Paragraph, 0, 1)] },
    Case { name: "seven #s is text", doc: "####### seven", blocks: &[(Paragraph, 0, 0)] },
    Case {
        name: "table",
        doc: "| a | b |\n|---|---|\n| 1 | 2 |\n\nafter",
        blocks: &[(Table, 0, 2), (Paragraph, 4, 4)],
    },
    Case { name: "table without outer pipes", doc: "a | b\n--- | ---\n1 | 2", blocks: &[(Table, 0, 2)] },
    Case { name: "a pipe without a delimiter row is text", doc: "| just a pipe\nline", blocks: &[(Paragraph, 0, 1)] },
    Case { name: "a table row needs no pipe", doc: "| a |\n|---|\n| 1 |\nnext", blocks: &[(Table, 0, 3)] },
    Case { name: "front matter", doc: "---\ntitle: x\n---\n# H", blocks: &[(FrontMatter, 0, 2), (Heading, 3, 3)] },
    Case {
        name: "link reference definition",
        doc: "[a]: /url\n\ntext [a]",
        blocks: &[(Paragraph, 0, 0), (Paragraph, 2, 2)],
    },
    Case {
        name: "a table interrupts a paragraph",
        doc: "Words.\nname | value\n--- | ---\na | 1",
        blocks: &[(Paragraph, 0, 0), (Table, 1, 3)],
    },
    Case {
        name: "front matter's # lines are not headings",
        doc: "---\n# a comment\nkey: v\n---\ntext",
        blocks: &[(FrontMatter, 0, 3), (Paragraph, 4, 4)],
    },
    Case { name: "a link definition inside an item", doc: "- [a]: /url\n\n  text", blocks: &[(ListItem, 0, 2)] },
];

/// Blocks as (kind, first line, last line).
type Blocks = Vec<(BlockKind, usize, usize)>;

fn read(doc: &str) -> Blocks {
    Reader::of(doc).document_blocks().iter().map(|b| (b.kind, b.first_line, b.last_line)).collect()
}

#[test]
fn the_reader_gives_commonmarks_blocks() {
    let wrong: Vec<String> = CASES
        .iter()
        .filter_map(|case| {
            let got = read(case.doc);
            (got != case.blocks).then(|| format!("{}: {:?}, expected {:?}", case.name, got, case.blocks))
        })
        .collect();
    assert!(wrong.is_empty(), "wrong on {} of {}:\n{}", wrong.len(), CASES.len(), wrong.join("\n"));
}

#[test]
fn a_list_item_holds_its_inner_blocks_without_its_marker() {
    let doc = "- first line\n  lazy *and* `code`\n\n  ```\n  fence\n  ```\n  - nested\n- next";
    let blocks = Reader::of(doc).document_blocks();
    let inner: Vec<(BlockKind, &str)> = blocks[0].inner.iter().map(|b| (b.kind, b.span.text(doc))).collect();
    assert_eq!(
        inner,
        [(Paragraph, "first line\n  lazy *and* `code`"), (Code, "```\n  fence\n  ```"), (ListItem, "- nested")]
    );
    assert_eq!(blocks[0].inner[2].inner.iter().map(|b| b.span.text(doc)).collect::<Vec<_>>(), ["nested"]);
    assert_eq!(blocks[1].inner.iter().map(|b| b.span.text(doc)).collect::<Vec<_>>(), ["next"]);
}

#[test]
fn headings_keep_their_text_as_written() {
    let doc = "# One `code` #\n\nTwo\nlines\n===\n\n## Three ##";
    let titles: Vec<(usize, String)> =
        Reader::of(doc).document_blocks().into_iter().map(|b| (b.level, b.title)).collect();
    assert_eq!(titles, [(1, "One `code`".to_string()), (1, "Two lines".to_string()), (2, "Three".to_string())]);
}

#[test]
fn lists_nested_past_the_limit_are_read_as_lines_of_their_item() {
    let doc = (0..100).map(|depth| format!("{}- item {depth}\n", "  ".repeat(depth))).collect::<String>();
    let blocks = Reader::of(&doc).document_blocks();
    let (mut depth, mut block) = (1, &blocks[0]);
    while let Some(nested) = block.inner.iter().find(|b| b.kind == ListItem) {
        (depth, block) = (depth + 1, nested);
    }
    assert_eq!(depth, super::MAX_NESTING);
    // The deepest item holds the rest of the document as paragraphs.
    assert_eq!(block.inner.last().map(|b| b.span.end), Some(doc.trim_end().len()));
    // The invariants every strategy promises, checked by chunk_checked.
    let (_, chunks) = chunk_checked(&doc, &with_strategy("markdown", json!({"max_size": 50})));
    assert!(chunks.len() > 1);
}
