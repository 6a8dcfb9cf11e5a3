use super::*;
use crate::size::EstimatedTokens;
use crate::strategy::test_support::{chunk_checked, reasons, texts, with_strategy};
use proptest::prelude::{prop, prop_assert_eq, prop_oneof, proptest, ProptestConfig};
use proptest::strategy::Strategy as _;
use serde_json::{json, Value};

/// Chunks `doc` with the markdown strategy and `cfg`, checking the invariants every strategy
/// promises.
fn chunk_with(doc: &str, cfg: Value) -> (ChunkConfig, Vec<Chunk>) {
    chunk_checked(doc, &with_strategy("markdown", cfg))
}

fn chunk(doc: &str, cfg: Value) -> Vec<Chunk> {
    chunk_with(doc, cfg).1
}

fn paths(chunks: &[Chunk]) -> Vec<Vec<String>> {
    chunks
        .iter()
        .map(|c| {
            c.metadata["heading_path"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()
        })
        .collect()
}

/// Lines of `doc`: start offset and text without the line break.
fn lines_of(doc: &str) -> Vec<(usize, &str)> {
    let mut start = 0;
    doc.split_inclusive('\n')
        .map(|line| {
            let at = start;
            start += line.len();
            (at, line.trim_end_matches(['\n', '\r']))
        })
        .collect()
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A fence, table or list item found by [`regions`]: kind and trimmed byte range.
#[derive(Debug)]
struct Region {
    kind: &'static str,
    start: usize,
    end: usize,
}

/// The fenced blocks, tables and list items of `doc`, found line by line by simpler rules than
/// the strategy's reader, so that the checks below do not take the reader's word for them:
/// a fence runs from a line starting (after spaces) with three backticks or tildes to a line
/// holding a run as long of the same character, or to the end; a table is a run of lines
/// starting with `|`; a list item is a `- `, `* `, `+ ` or `1. ` line and the lines after it
/// that are indented deeper (blank lines among them), or directly follow it unindented.
fn regions(doc: &str) -> Vec<Region> {
    let lines = lines_of(doc);
    let mut fence_close = vec![None; lines.len()]; // for each opening line, its closing line
    let mut i = 0;
    while i < lines.len() {
        let rest = lines[i].1.trim_start();
        let mark = rest.chars().next().filter(|c| *c == '`' || *c == '~');
        let len = mark.map_or(0, |m| rest.chars().take_while(|c| *c == m).count());
        if let (Some(mark), true) = (mark, len >= 3) {
            let closes = |line: &str| {
                let rest = line.trim();
                rest.chars().take_while(|c| *c == mark).count() >= len && rest.chars().all(|c| c == mark)
            };
            let close = (i + 1..lines.len()).find(|&j| closes(lines[j].1)).unwrap_or(lines.len() - 1);
            fence_close[i] = Some(close);
            i = close;
        }
        i += 1;
    }
    let span = |first: usize, last: usize| {
        let text = &doc[lines[first].0..lines[last].0 + lines[last].1.len()];
        let start = lines[first].0 + text.len() - text.trim_start().len();
        (start, lines[first].0 + text.trim_end().len())
    };
    let is_item = |line: &str| {
        let rest = line.trim_start();
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let marker = if rest.starts_with(['-', '*', '+']) {
            1
        } else if digits > 0 && rest[digits..].starts_with(['.', ')']) {
            digits + 1
        } else {
            0
        };
        let thematic = rest.chars().all(|c| matches!(c, '-' | '*' | '_' | ' '));
        marker > 0 && !thematic && (rest.len() == marker || rest[marker..].starts_with(' '))
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(close) = fence_close[i] {
            let (start, end) = span(i, close);
            found.push(Region { kind: "fence", start, end });
            i = close + 1;
            continue;
        }
        let line = lines[i].1;
        if line.trim_start().starts_with('|') {
            let last = (i..lines.len()).take_while(|&j| lines[j].1.trim_start().starts_with('|')).last().unwrap_or(i);
            let (start, end) = span(i, last);
            found.push(Region { kind: "table", start, end });
            i = last + 1;
            continue;
        }
        if is_item(line) {
            let (mut last, mut j, mut after_text) = (i, i + 1, true);
            while j < lines.len() {
                let next = lines[j].1;
                let deeper = indent_of(next) > indent_of(line);
                if next.trim().is_empty() {
                    after_text = false;
                    j += 1;
                    continue;
                }
                let lazy = after_text && !is_item(next) && !next.trim_start().starts_with(['#', '|', '`', '~', '>']);
                if !(deeper || lazy) {
                    break;
                }
                last = fence_close[j].unwrap_or(j);
                after_text = fence_close[j].is_none();
                j = last + 1;
            }
            let (start, end) = span(i, last);
            found.push(Region { kind: "list item", start, end });
        }
        i += 1; // nested items are regions of their own
    }
    found
}

/// Every region within `max_size` lies inside one chunk, and a chunk that holds part of a
/// region (one above the cap) is marked `forced`.
fn assert_regions_whole(doc: &str, cfg: &ChunkConfig, chunks: &[Chunk], name: &str) {
    for region in regions(doc) {
        let text = &doc[region.start..region.end];
        let fits = measure(text, cfg.max_size.unit, &EstimatedTokens) <= cfg.max_size.value;
        let holder = chunks.iter().find(|c| c.start <= region.start && region.end <= c.end);
        assert!(
            !fits || holder.is_some(),
            "{name}, max {}: {} cut although it fits:\n{text}",
            cfg.max_size,
            region.kind
        );
        for c in chunks.iter().filter(|c| {
            c.core_start < region.end && region.start < c.end && !(c.start <= region.start && region.end <= c.end)
        }) {
            assert_eq!(
                c.split_reason.as_str(),
                "forced",
                "{name}, max {}: {} cut by a chunk not marked forced:\n{}",
                cfg.max_size,
                region.kind,
                c.text(doc)
            );
        }
    }
}

/// The ATX headings enclosing `at`, outside fences: the expected `heading_path`.
fn headings_before(doc: &str, at: usize) -> Vec<String> {
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut in_fence = false;
    for (start, line) in lines_of(doc).into_iter().take_while(|(start, _)| *start <= at) {
        let rest = line.trim_start();
        if rest.starts_with("```") {
            in_fence = !in_fence;
        }
        let level = rest.chars().take_while(|c| *c == '#').count();
        if in_fence || level == 0 || level > 6 || !rest[level..].starts_with(' ') || indent_of(line) > 3 || start > at {
            continue;
        }
        open.retain(|(l, _)| *l < level);
        open.push((level, rest[level..].trim().to_string()));
    }
    open.into_iter().map(|(_, title)| title).collect()
}

/// Frozen copies of this repository's own pages, some trimmed (tests/fixtures/README.md):
/// (the page each was copied from, its text).
const FILES: [(&str, &str); 4] = [
    ("README.md", include_str!("../../../tests/fixtures/README.md.txt")),
    ("bench/README.md", include_str!("../../../tests/fixtures/bench_README.md.txt")),
    ("fuzz/README.md", include_str!("../../../tests/fixtures/fuzz_README.md.txt")),
    ("DEVELOPERS.md", include_str!("../../../tests/fixtures/DEVELOPERS.md.txt")),
];

#[test]
fn real_files_keep_fences_tables_and_list_items_whole() {
    for (name, doc) in FILES {
        assert!(
            regions(doc).iter().any(|r| r.kind != "list item") || name != "README.md",
            "README.md has fences and tables to check"
        );
        for max in ["500 chars", "1500 chars", "4000 chars", "300 tokens", "120 words"] {
            let (cfg, chunks) = chunk_with(doc, json!({ "max_size": max }));
            assert!(chunks.len() > 1 || doc.len() < 500, "{name} in {max}: {} chunks", chunks.len());
            assert_regions_whole(doc, &cfg, &chunks, name);
            for (c, path) in chunks.iter().zip(paths(&chunks)) {
                assert_eq!(
                    path,
                    headings_before(doc, c.core_start),
                    "{name} in {max}: heading path of {:?}",
                    c.text(doc)
                );
                if c.split_reason.as_str() == "heading" {
                    assert!(c.text(doc).starts_with('#'), "{name} in {max}: {:?}", c.text(doc));
                }
            }
        }
    }
}

#[test]
fn heading_path_follows_the_heading_tree() {
    let doc = "Intro before any heading.\n\n# Install\n\nInstall intro.\n\n## From source\n\nBuild it.\n\n### Linux ###\n\nUse apt.\n\n## From packages\n\nUse the package.\n\n# Usage\n\nCall it.\n";
    let chunks = chunk(doc, json!({"min_size": 0, "max_size": 1000}));
    let want: [&[&str]; 6] = [
        &[],
        &["Install"],
        &["Install", "From source"],
        &["Install", "From source", "Linux"],
        &["Install", "From packages"],
        &["Usage"],
    ];
    assert_eq!(paths(&chunks), want.map(|p| p.iter().map(|t| t.to_string()).collect::<Vec<_>>()));
    assert_eq!(reasons(&chunks), ["start", "heading", "heading", "heading", "heading", "heading"]);
    assert_eq!(texts(doc, &chunks)[3], "### Linux ###\n\nUse apt.");
    assert_eq!(chunks[3].metadata["blocks"], json!(["heading", "paragraph"]));
}

#[test]
fn heading_context_sets_context_and_leaves_content_exact() {
    let doc = "Preamble.\n\n# Guide\n\n## Setup\n\nRun the installer.\n";
    let plain = chunk(doc, json!({"min_size": 0}));
    let with_context = chunk(doc, json!({"min_size": 0, "heading_context": true}));
    let offsets = |chunks: &[Chunk]| chunks.iter().map(|c| (c.start, c.end)).collect::<Vec<_>>();
    assert_eq!(offsets(&plain), offsets(&with_context));
    let contexts: Vec<Option<&str>> = with_context.iter().map(|c| c.context.as_deref()).collect();
    assert_eq!(contexts, [None, Some("Guide"), Some("Guide > Setup")]);
    assert!(plain.iter().all(|c| c.context.is_none()));
    assert_eq!(texts(doc, &with_context), ["Preamble.", "# Guide", "## Setup\n\nRun the installer."]);
}

#[test]
fn setext_headings_start_sections_and_a_rule_after_a_blank_line_does_not() {
    let doc = "Title\n=====\n\nOpening words.\n\nPart one\n--------\n\nFirst part.\n\n---\n\nAfter a rule.\n\nTwo line\ntitle\n===\n\nEnd.";
    let chunks = chunk(doc, json!({"min_size": 0}));
    assert_eq!(paths(&chunks), [vec!["Title"], vec!["Title", "Part one"], vec!["Two line title"]]);
    assert_eq!(texts(doc, &chunks)[1], "Part one\n--------\n\nFirst part.\n\n---\n\nAfter a rule.");
    assert_eq!(chunks[1].metadata["blocks"], json!(["heading", "paragraph", "rule"]));
}

#[test]
fn an_unclosed_fence_runs_to_the_end_and_hides_headings() {
    let doc = "# Code\n\nSome text here.\n\n```rust\nfn main() {}\n\n# not a heading\n\nmore code\n";
    let chunks = chunk(doc, json!({"min_size": 0, "max_size": 1000}));
    assert_eq!(texts(doc, &chunks), [doc.trim_end()]);
    let chunks = chunk(doc, json!({"min_size": 0, "max_size": 60}));
    assert_eq!(
        texts(doc, &chunks),
        ["# Code\n\nSome text here.", "```rust\nfn main() {}\n\n# not a heading\n\nmore code"]
    );
    assert_eq!((reasons(&chunks), paths(&chunks)), (vec!["heading", "block"], vec![vec!["Code".to_string()]; 2]));
}

#[test]
fn fences_with_info_strings_tildes_and_longer_runs_stay_whole() {
    let tilde = "~~~python title=\"x.py\"\nprint('a')\n```\nnot a close\n```\n\nprint('b')\n~~~";
    let long = "````md\n```\ninner\n```\n\n# inside\n````";
    let doc = format!("# F\n\nAn introduction that is long enough to fill a chunk.\n\n{tilde}\n\nBetween the two.\n\n{long}\n\nEnd.\n");
    let (cfg, chunks) = chunk_with(&doc, json!({"min_size": 0, "max_size": 80}));
    assert!(
        texts(&doc, &chunks).contains(&tilde) && texts(&doc, &chunks).iter().any(|t| t.contains(long)),
        "{:#?}",
        texts(&doc, &chunks)
    );
    assert_regions_whole(&doc, &cfg, &chunks, "fences");
    assert_eq!(paths(&chunks).last().unwrap(), &["F"], "`# inside` is code");
}

#[test]
fn an_oversized_fence_is_cut_at_line_ends_and_marked_forced() {
    let code: String = (0..30).map(|i| format!("let x{i} = {i};\n")).collect();
    let doc = format!("# Big\n\n```rust\n{code}```\n\n## Next\n\nText.\n");
    let chunks = chunk(&doc, json!({"min_size": 0, "max_size": 120}));
    let got = texts(&doc, &chunks);
    assert!(got[0].starts_with("# Big\n\n```rust\nlet x0"), "the heading stays with the fence: {got:#?}");
    assert_eq!(*got.last().unwrap(), "## Next\n\nText.");
    for c in &chunks[..chunks.len() - 1] {
        assert_eq!(c.split_reason.as_str(), "forced");
        assert_eq!(doc.as_bytes()[c.end], b'\n', "ends at a line end: {:?}", c.text(&doc));
    }
    assert!(chunks.len() >= 5);
}

#[test]
fn consecutive_pipe_lines_are_one_table_that_is_never_cut() {
    let table = "| name | value |\n|------|-------|\n| a    | 1     |\n| b    | 2     |";
    let para = "A paragraph of about fifty characters in length.";
    let doc = format!("# T\n\n{para}\n{table}\n\n{para}\n");
    let chunks = chunk(&doc, json!({"min_size": 0, "max_size": table.len() + 10}));
    assert_eq!(texts(&doc, &chunks), [format!("# T\n\n{para}").as_str(), table, para]);
    assert_eq!((chunks[1].split_reason.as_str(), &chunks[1].metadata["blocks"]), ("block", &json!(["table"])));
}

#[test]
fn a_pipe_table_without_outer_pipes_is_one_table() {
    let table = "name | value\n--- | :---:\na | 1\nb | 2";
    let doc = format!("Words before the table.\n{table}\n\nAfter.");
    let chunks = chunk(&doc, json!({"min_size": 0, "max_size": table.len()}));
    assert_eq!(texts(&doc, &chunks), ["Words before the table.", table, "After."]);
    assert_eq!(chunks[1].metadata["blocks"], json!(["table"]));
}

#[test]
fn an_oversized_table_is_cut_between_rows() {
    let rows: Vec<String> = (0..20).map(|i| format!("| row {i} | value {i} |")).collect();
    let doc = format!("| row | value |\n|---|---|\n{}\n", rows.join("\n"));
    let chunks = chunk(&doc, json!({"min_size": 0, "max_size": 100}));
    assert!(chunks.len() >= 4);
    for (c, text) in chunks.iter().zip(texts(&doc, &chunks)) {
        assert_eq!(c.split_reason.as_str(), "forced");
        assert!(text.lines().all(|l| l.starts_with('|') && l.ends_with('|')), "whole rows only: {text:?}");
    }
}

#[test]
fn a_table_row_above_the_cap_is_force_split() {
    let doc = format!("| a | b |\n|---|---|\n| {} |\n| short | row |", "word ".repeat(60).trim());
    let chunks = chunk(&doc, json!({"min_size": 0, "max_size": 100}));
    assert!(chunks.iter().all(|c| c.split_reason.as_str() == "forced"));
    assert!(texts(&doc, &chunks).iter().any(|t| !t.starts_with('|')), "the long row is cut inside");
    assert!(texts(&doc, &chunks).last().unwrap().ends_with("\n| short | row |"), "rows that fit are not cut");
}

#[test]
fn list_items_keep_their_continuation_lines_nested_items_and_fences() {
    let items = [
        "- first item\n  continues here\n  - nested one\n  - nested two",
        "- second item\n\n  second paragraph of item two\n\n  ```sh\n  cargo test\n\n  cargo build\n  ```",
        "- third item, lazy\ncontinuation line",
    ];
    let doc = format!("# List\n\n{}\n", items.join("\n"));
    let (cfg, chunks) = chunk_with(&doc, json!({"min_size": 0, "max_size": 95}));
    assert_eq!(texts(&doc, &chunks), [format!("# List\n\n{}", items[0]).as_str(), items[1], items[2]]);
    assert_eq!(reasons(&chunks), ["heading", "block", "block"]);
    assert_regions_whole(&doc, &cfg, &chunks, "list");
}

#[test]
fn an_oversized_list_item_is_cut_between_its_inner_blocks() {
    // An ordered item's content starts three columns in (after "1. "), so its fence does too.
    let fence = "```sh\n   cargo build --release\n   cargo test --workspace\n   ```";
    let doc = format!(
        "1. Build the project, then run the test suite to check it.\n\n   {fence}\n\n   Then read the output and compare it with expectations.\n2. Next."
    );
    let (cfg, chunks) = chunk_with(&doc, json!({"min_size": 0, "max_size": 70}));
    let got = texts(&doc, &chunks);
    assert_eq!(
        got[..3],
        [
            "1. Build the project, then run the test suite to check it.",
            fence,
            "Then read the output and compare it with expectations.\n2. Next."
        ]
    );
    assert_eq!(reasons(&chunks), ["forced", "forced", "forced"]);
    assert_regions_whole(&doc, &cfg, &chunks, "list");
}

/// An item whose text is only a no-break space (not blank to CommonMark, whitespace to the
/// chunk invariants) and a nested list: the marker is cut alone, with no empty text block after
/// it to stretch it over the space (found by `invariants_hold_for_any_markdown`).
#[test]
fn an_item_of_only_a_no_break_space_is_its_marker() {
    let doc = "* \u{a0}\n  - nested\n";
    let chunks = chunk(doc, json!({"max_size": "1 chars", "min_size": "0 chars"}));
    assert_eq!(texts(doc, &chunks)[0], "*");
}

#[test]
fn small_sections_merge_with_the_next_sibling_or_child_only() {
    let long = "This section is long enough on its own to pass the minimum size.";
    let doc = format!(
        "# A\n\nshort a.\n\n## A1\n\nshort a1.\n\n### A1x\n\nshort deep.\n\n## B\n\nshort b.\n\n# C\n\n{long}\n\n### C1\n\nsmall.\n\n## C2\n\nsmall too.\n"
    );
    let chunks = chunk(&doc, json!({"min_size": 60, "max_size": 200}));
    assert_eq!(
        texts(&doc, &chunks),
        [
            "# A\n\nshort a.\n\n## A1\n\nshort a1.\n\n### A1x\n\nshort deep.\n\n## B\n\nshort b.",
            &format!("# C\n\n{long}"),
            "### C1\n\nsmall.",
            "## C2\n\nsmall too."
        ]
    );
    assert_eq!(paths(&chunks), [vec!["A"], vec!["C"], vec!["C", "C1"], vec!["C", "C2"]]);
}

#[test]
fn a_section_above_the_cap_is_packed_between_blocks() {
    let paragraphs: Vec<String> = (0..6).map(|i| format!("Paragraph {i} says a few words about the topic.")).collect();
    let doc = format!("Preamble line.\n\n## Topic\n\n{}\n", paragraphs.join("\n\n"));
    let chunks = chunk(&doc, json!({"min_size": 0, "max_size": 110}));
    assert_eq!(reasons(&chunks), ["start", "heading", "block", "block"]);
    assert_eq!(texts(&doc, &chunks)[2], format!("{}\n\n{}", paragraphs[2], paragraphs[3]));
    assert!(paths(&chunks)[1..].iter().all(|p| p == &["Topic"]));
}

#[test]
fn front_matter_is_one_block_and_its_comments_are_not_headings() {
    let doc = "---\ntitle: Notes\n# a yaml comment\n---\n\n# Notes\n\nBody.\n";
    let chunks = chunk(doc, json!({"min_size": 0}));
    assert_eq!(texts(doc, &chunks), ["---\ntitle: Notes\n# a yaml comment\n---", "# Notes\n\nBody."]);
    assert_eq!((reasons(&chunks), &chunks[0].metadata["blocks"]), (vec!["start", "heading"], &json!(["front_matter"])));
}

#[test]
fn empty_documents_give_no_chunks_and_char_overlap_keeps_the_cap() {
    for empty in ["", "  \n\n\t", "\r\n"] {
        assert!(chunk(empty, json!({})).is_empty());
    }
    let doc = (0..12).map(|i| format!("## Part {i}\n\nSome words for part {i}.")).collect::<Vec<_>>().join("\n\n");
    let chunks = chunk(&doc, json!({"min_size": 0, "max_size": 80, "overlap": 20}));
    assert!(chunks.iter().skip(1).any(|c| c.start < c.core_start));
}

fn markdown_doc() -> impl proptest::strategy::Strategy<Value = String> {
    let fragment = prop::sample::select(vec![
        "# Head\n",
        "## Sub\n",
        "Setext\n",
        "===\n",
        "---\n",
        "\n",
        "\n\n",
        "```rust\n",
        "~~~\n",
        "````\n",
        "| a | b |\n",
        "|---|---|\n",
        "a | b\n",
        "- item\n",
        "  continued\n",
        "1. first\n",
        "10) tenth ",
        "    indented code\n",
        "> quote\n",
        "Plain words here. ",
        "Another sentence! ",
        "loooooooooooooooooooooongword ",
        "中文句子。",
        "😀 ",
        "\t",
        "\r\n",
        "\r",
        "*",
        "  - nested\n",
        "  ```\n",
        "-",
        " ",
        "\u{3000}# 全角\n",
        " \u{a0}\n",
    ]);
    prop_oneof![prop::collection::vec(fragment, 0..100).prop_map(|v| v.concat()), "\\PC{0,300}"]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn invariants_hold_for_any_markdown(
        doc in markdown_doc(),
        max in 1usize..300,
        unit in prop::sample::select(vec!["chars", "words", "tokens"]),
        min in 0usize..100,
        heading_context in proptest::bool::ANY,
        overlap in 0usize..30,
    ) {
        let overlap = if unit == "chars" && overlap >= max { 0 } else { overlap };
        let cfg = json!({"max_size": format!("{max} {unit}"), "min_size": format!("{} {unit}", min.min(max)), "heading_context": heading_context, "overlap": overlap});
        let (_, first) = chunk_with(&doc, cfg.clone());
        let (_, again) = chunk_with(&doc, cfg);
        prop_assert_eq!(first, again, "deterministic");
    }
}
