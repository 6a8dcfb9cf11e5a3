use super::*;
use crate::size::EstimatedTokens;
use proptest::prelude::{prop, proptest, ProptestConfig};
use serde_json::{json, Value};

/// Chunks `doc` with the code strategy and the keys of `cfg`, checking every invariant.
pub(super) fn chunk(doc: &str, cfg: Value) -> (ChunkConfig, Vec<Chunk>) {
    crate::strategy::test_support::chunk_checked(doc, &crate::strategy::test_support::with_strategy("code", cfg))
}

pub(super) fn meta<'c>(chunk: &'c Chunk, key: &str) -> Option<&'c str> {
    chunk.metadata.get(key).and_then(Value::as_str)
}

/// Frozen copies of this repository's own Rust, SQL and Python, some trimmed
/// (tests/fixtures/README.md): (the file each was copied from, its language, its text).
/// A fixture that is missing fails the build of these tests.
const REAL_FILES: [(&str, &str, &str); 6] = [
    ("src/api.rs", "rust", include_str!("../../../tests/fixtures/api.rs.txt")),
    ("strategy/semantic.rs", "rust", include_str!("../../../tests/fixtures/semantic.rs.txt")),
    ("guards.rs", "rust", include_str!("../../../tests/fixtures/guards.rs.txt")),
    ("sql/store.sql", "sql", include_str!("../../../tests/fixtures/store.sql.txt")),
    ("sql/queue.sql", "sql", include_str!("../../../tests/fixtures/queue.sql.txt")),
    ("scripts/e5/convert.py", "python", include_str!("../../../tests/fixtures/convert.py.txt")),
];

/// Top-level definitions found independently of the chunker, by the formatting conventions
/// these files follow: (byte range from the definition line to its end, the definition line).
fn simple_definitions<'d>(doc: &'d str, language: &str) -> Vec<(usize, usize, &'d str)> {
    let mut lines = Vec::new();
    let mut at = 0;
    for line in doc.split_inclusive('\n') {
        lines.push((at, line.trim_end()));
        at += line.len();
    }
    let mut defs = Vec::new();
    for (k, &(start, text)) in lines.iter().enumerate() {
        let rest = text.trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        let is_def = match language {
            "rust" => {
                ["fn ", "struct ", "enum ", "impl", "trait ", "mod "].iter().any(|kw| rest.starts_with(kw))
                    && !text.ends_with(';')
            }
            "python" => ["def ", "class ", "async def "].iter().any(|kw| text.starts_with(kw)),
            _ => text.starts_with("CREATE "),
        };
        if !is_def {
            continue;
        }
        let mut dollars = 0;
        let end = lines[k..].iter().enumerate().find(|&(j, &(_, line))| {
            dollars += line.matches("$$").count();
            match language {
                "rust" => line == "}",
                "python" => lines.get(k + j + 1).is_none_or(|(_, next)| !next.is_empty() && !next.starts_with(' ')),
                _ => line.ends_with(';') && dollars % 2 == 0,
            }
        });
        let (last_start, last) = end.map_or(lines[lines.len() - 1], |(j, _)| lines[k + j]);
        let end = doc[..last_start + last.len()].trim_end().len();
        defs.push((start, end, text.trim()));
    }
    defs
}

/// Every chunk that starts inside a definition starts after a blank line, or is cut where no
/// blank line was near enough (its block is larger than half the cap), and repeats the signature.
fn assert_definitions_cut_at_blank_lines(
    name: &str,
    doc: &str,
    cfg: &ChunkConfig,
    chunks: &[Chunk],
    defs: &[(usize, usize, &str)],
) {
    for &(start, end, signature) in defs {
        for (k, c) in chunks.iter().enumerate().filter(|(_, c)| start < c.start && c.start < end) {
            let gap = &doc[chunks[k - 1].end..c.start];
            let place = format!("{name}, max {}: chunk {k} at {} inside {signature:?}", cfg.max_size, c.start);
            if gap.matches('\n').count() >= 2 {
                assert_eq!(c.split_reason.as_str(), "blank_line", "{place}");
            } else {
                assert_eq!(c.split_reason.as_str(), "forced", "{place}: {gap:?} is no blank line");
                let block_start = doc[..c.start].rfind("\n\n").map_or(0, |p| p + 2).max(start);
                let block_end = doc[c.start..].find("\n\n").map_or(doc.len(), |p| c.start + p).min(end);
                let block = measure(&doc[block_start..block_end], cfg.max_size.unit, &EstimatedTokens);
                assert!(block > cfg.max_size.value / 2, "{place}: its block of {block} would have fitted");
            }
            let context = c.context.as_deref().unwrap_or_else(|| panic!("{place}: no context"));
            assert!(
                context.starts_with(signature.trim_end_matches(['(', '{']).trim_end()),
                "{place}: context {context:?}"
            );
            assert_eq!(c.metadata.get("signature_repeated"), Some(&json!(true)), "{place}");
        }
    }
}

#[test]
fn real_files_keep_every_definition_whole_or_cut_at_its_blank_lines() {
    let mut checked = 0;
    for (name, language, doc) in REAL_FILES {
        let defs = simple_definitions(doc, language);
        assert!(defs.len() >= 3, "{name}: the independent check found {} definitions", defs.len());
        for max in [json!(300), json!(800), json!(2000), json!("200 tokens")] {
            let (cfg, chunks) = chunk(doc, json!({ "max_size": max }));
            assert_definitions_cut_at_blank_lines(name, doc, &cfg, &chunks, &defs);
            checked += chunks.iter().filter(|c| c.context.is_some()).count();
            // A definition well within the cap is never cut.
            for &(start, end, signature) in defs.iter().filter(|(s, e, _)| {
                measure(&doc[*s..*e], cfg.max_size.unit, &EstimatedTokens) * 2 <= cfg.max_size.value
            }) {
                assert!(
                    !chunks.iter().any(|c| start < c.start && c.start < end),
                    "{name}, max {}: {signature:?} is cut",
                    cfg.max_size
                );
            }
        }
    }
    assert!(checked > 10, "only {checked} continuation chunks were checked");
}

#[test]
fn real_files_hold_every_cap_with_the_signature_added() {
    for (name, language, doc) in REAL_FILES {
        for max in [json!(300), json!(800), json!(2000), json!("200 tokens")] {
            let (cfg, chunks) = chunk(doc, json!({ "max_size": max }));
            let cap = cfg.max_size;
            for c in &chunks {
                assert_eq!(meta(c, "language"), Some(language), "{name}");
                assert!(
                    ["function", "class", "statement", "module", "block"].contains(&meta(c, "chunk_type").unwrap()),
                    "{name}: {c:?}"
                );
                assert!(
                    ["code_boundary", "blank_line", "forced", "start"].contains(&c.split_reason.as_str()),
                    "{name}: {c:?}"
                );
                assert_eq!(c.context.is_some(), c.metadata.contains_key("signature_repeated"), "{name}: {c:?}");
                let Some(context) = &c.context else { continue };
                if measure(context, cap.unit, &EstimatedTokens) * 2 + 2 <= cap.value {
                    let embedded = format!("{context}\n{}", c.text(doc));
                    assert!(
                        measure(&embedded, cap.unit, &EstimatedTokens) <= cap.value,
                        "{name}, max {cap}: {embedded:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn real_sql_starts_a_chunk_at_every_create_function() {
    let doc = include_str!("../../../tests/fixtures/queue.sql.txt");
    let (_, chunks) = chunk(doc, json!({"max_size": 2000, "target_size": 1, "min_size": 0}));
    let functions: Vec<&str> = chunks
        .iter()
        .filter(|c| meta(c, "chunk_type") == Some("function"))
        .filter_map(|c| meta(c, "function_name"))
        .collect();
    assert!(
        functions.contains(&"knowledge.process_queue") && functions.contains(&"knowledge.wait_for_queue"),
        "{functions:?}"
    );
    for (k, c) in chunks
        .iter()
        .enumerate()
        .filter(|(_, c)| c.split_reason.as_str() == "code_boundary" && meta(c, "chunk_type") == Some("function"))
    {
        let text = c.text(doc);
        let create = text.lines().find(|l| !l.starts_with("--")).unwrap();
        assert!(create.starts_with("CREATE FUNCTION"), "{text}");
        let continued = chunks.get(k + 1).is_some_and(|next| next.context.is_some());
        assert!(continued || text.ends_with(';'), "a statement is whole unless continued: {text}");
    }
}

#[test]
fn small_definitions_are_packed_up_to_the_target() {
    let doc = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n";
    let (_, chunks) = chunk(doc, json!({"max_size": 2000}));
    assert_eq!(chunks.len(), 1);
    assert_eq!((meta(&chunks[0], "function_name"), chunks[0].split_reason.as_str()), (Some("a"), "code_boundary"));
    let (_, chunks) = chunk(doc, json!({"max_size": 2000, "target_size": 45, "min_size": 0}));
    assert_eq!(
        chunks.iter().map(|c| c.text(doc)).collect::<Vec<_>>(),
        ["def a():\n    return 1\n\n\ndef b():\n    return 2", "def c():\n    return 3"]
    );
}

#[test]
fn a_large_class_is_cut_between_its_methods_with_the_signature_repeated() {
    // Blocks of 78 characters: a gap inside the first method already leaves more than half the cap.
    let body = |name: &str| {
        format!(
            "    def {name}(self):\n        first = [{}]\n\n        second = [{}]\n\n        return first + second\n",
            "1, ".repeat(22),
            "2, ".repeat(22)
        )
    };
    let doc = format!("class Pool:\n{}\n{}", body("first_method"), body("second_method"));
    let (_, chunks) = chunk(&doc, json!({"max_size": 400, "language": "python"}));
    assert_eq!(chunks.len(), 2, "{:#?}", chunks.iter().map(|c| c.text(&doc)).collect::<Vec<_>>());
    assert!(chunks[1].text(&doc).starts_with("def second_method(self):"), "{}", chunks[1].text(&doc));
    assert_eq!((chunks[1].split_reason.as_str(), chunks[1].context.as_deref()), ("blank_line", Some("class Pool:")));
    assert_eq!((meta(&chunks[1], "chunk_type"), meta(&chunks[1], "function_name")), (Some("class"), Some("Pool")));
}

#[test]
fn a_multi_line_signature_is_repeated_whole_and_long_lines_are_forced() {
    let statements: String = (0..40).map(|i| format!("    let value_{i} = a + b + {i};\n")).collect();
    let doc = format!("pub fn long_one(\n    a: u32,\n    b: u32,\n) -> u32 {{\n{statements}    a\n}}\n");
    let (_, chunks) = chunk(&doc, json!({"max_size": 300, "language": "rust"}));
    assert!(chunks.len() > 3);
    for (k, c) in chunks.iter().enumerate().skip(1) {
        assert_eq!(c.context.as_deref(), Some("pub fn long_one( a: u32, b: u32, ) -> u32 {"));
        assert_eq!(c.split_reason.as_str(), "forced", "no blank line inside: cut between lines");
        assert!(doc[chunks[k - 1].end..c.start].contains('\n'), "cut at a line start: {:?}", c.text(&doc));
    }
    let long_line = format!("def f():\n    x = \"{}\"\n", "word ".repeat(200));
    let (_, chunks) = chunk(&long_line, json!({"max_size": 300, "language": "python"}));
    assert!(chunks
        .iter()
        .skip(1)
        .all(|c| c.split_reason.as_str() == "forced" && c.context.as_deref() == Some("def f():")));
}

#[test]
fn offsets_are_exact_with_multibyte_text_and_overlap() {
    let doc = "# Grüße, 世界\ndef grüße(name):\n    \"\"\"Sagt «Hallo» – 你好.\"\"\"\n\n    return f\"Hallo {name} 😀\"\n\u{3000}\ndef zwei():\n    return '}'\n";
    for max in [json!(40), json!(2000), json!("12 tokens")] {
        let (_, chunks) = chunk(doc, json!({"max_size": max, "language": "python", "target_size": 1, "min_size": 0}));
        for c in &chunks {
            assert_eq!(c.text(doc), doc[c.start..c.end].trim(), "{max}");
        }
        assert_eq!(chunks[0].start, 0, "the comment belongs to the definition below it");
    }
    let (_, chunks) = chunk(doc, json!({"max_size": 60, "overlap": 20}));
    assert!(chunks.iter().skip(1).any(|c| c.start < c.core_start), "overlap repeats earlier text");
}

#[test]
fn empty_and_blank_documents_have_no_chunks() {
    for doc in ["", "  \n\n\t", "\u{3000}\n"] {
        assert!(chunk(doc, json!({})).1.is_empty(), "{doc:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn invariants_hold_for_any_code_like_text(
        fragments in prop::collection::vec(prop::sample::select(vec![
            "def f(x):\n", "    return x\n", "class A:\n", "@dec\n", "fn g() {\n", "}\n", "{", "(", ")", "'", "\"", "\"\"\"", "`", "r#\"", "\"#",
            "/*", "*/", "//", "#", "--", "$$", "$x$", "CREATE FUNCTION f() ", ";\n", "\n", "\n\n", "    ", "\t", "é", "中文", "😀", "\u{3000}",
            "int main(void)\n", "func (r T) M() {\n", "export const h = () => {\n", "'{'", "word ",
        ]), 0..80),
        language in prop::sample::select(vec!["python", "rust", "javascript", "java", "go", "c", "sql", "text", "detect"]),
        max in prop::sample::select(vec!["1", "7", "40", "300", "5 words", "9 tokens"]),
    ) {
        let doc = fragments.concat();
        let mut cfg = json!({"max_size": max, "min_size": 0, "target_size": 1});
        if language != "detect" {
            cfg["language"] = json!(language);
        }
        chunk(&doc, cfg);
    }
}
