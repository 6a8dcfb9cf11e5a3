//! A bad-input matrix over a real connection (issue "Reliability and security"): every public
//! SQL function of pg_chunk, and the store's tables, called with hostile text (NULLs, empty and
//! whitespace-only, one character, punctuation, emoji, mixed and right-to-left scripts,
//! combining marks, control characters, 5 MB without punctuation, 10 MB and 10 MB + 1 byte),
//! hostile cfgs and search options (unknown keys, wrong types, negative, huge, NaN and 1e400
//! numbers, deep nesting, arrays and nulls), unknown models, wrong roles and dimension
//! mismatches.
//!
//! The matrix is data: tables of texts, cfgs, model names and roles crossed with the functions,
//! each case one statement (a case that writes runs in a transaction that is rolled back). A
//! case either succeeds, and then its rows are checked (chunks are exactly
//! `substr(doc, char_offset + 1, char_length)`, vectors have the model's dimension and no NaN,
//! the store's chunks are exact and embedded), or fails with the SQLSTATE README's "Limits and
//! errors" gives it. Never XX000, never a lost backend: every mismatch is collected and listed
//! at the end, and the server log written meanwhile must hold no crash.

use pg_chunk_client_tests::{connect_database, fresh_database, sample_document, topic_document};
use postgres::types::ToSql;
use postgres::{Client, GenericClient, Row};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

const DATABASE: &str = "bad_input";
/// The cluster's log (Debian's `15 main`); PG_CHUNK_SERVER_LOG overrides it.
const SERVER_LOG: &str = "/var/log/postgresql/postgresql-15-main.log";
/// README: max_document_size defaults to 10 MB (crates/pg_chunk_core/src/config.rs).
const MAX_DOCUMENT_SIZE: usize = 10 * 1024 * 1024;
/// Dimension of the lexical embedder and of potion-base-8m.
const DIM_256: i32 = 256;
/// Dimension of all-minilm-l6-v2.
const DIM_384: i32 = 384;

type Doc = Rc<str>;

/// What a case must do.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Succeed, with exactly this many rows when given.
    Ok(Option<usize>),
    /// Fail with this SQLSTATE.
    Fails(&'static str),
    /// One of these outcomes ("00000" = success, then checked), where README leaves it open.
    OneOf(&'static [&'static str]),
}

const OK: Expect = Expect::Ok(None);
const NO_ROWS: Expect = Expect::Ok(Some(0));
const ONE_ROW: Expect = Expect::Ok(Some(1));
const BAD_CFG: Expect = Expect::Fails("22023");
const TOO_BIG: Expect = Expect::Fails("54000");
const UNKNOWN: Expect = Expect::Fails("42704");
const MISFIT: Expect = Expect::Fails("42P17");
const NOT_NULL: Expect = Expect::Fails("23502");
const CHECK_VIOLATION: Expect = Expect::Fails("23514");
const DENIED: Expect = Expect::Fails("42501");

/// How the rows of a successful case are checked.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Check {
    Nothing,
    /// (index int, content text, char_offset int, char_length int[, token_count int]), in order:
    /// indexes count from 0 and each content is the document's characters at its offsets. The
    /// document is the case's first parameter.
    Spans,
    /// chunk_explain: (sentence_index, char_offset, char_length, distance, smoothed_distance,
    /// threshold, score): in order, inside the document, no NaN.
    Explain,
    /// One text: a whole SVG document without NaN.
    Svg,
    /// (dims int, has_nan bool) per row: each non-NULL vector has this dimension and no NaN.
    Vectors(i32),
    /// Every non-NULL first column (an int) is at least 0.
    Count,
    /// One row whose first column is true.
    IsTrue,
    /// knowledge.search: (chunk_id bigint, score float8, similarity float8): finite scores, no
    /// NaN similarity.
    Search,
    /// `INSERT INTO knowledge.documents … RETURNING id`: the document's chunks are exact, embedded
    /// with their model's dimension and free of NaN.
    Stored,
    /// Every chunk in the store is exact and embedded (after attach, mirroring, config changes).
    StoreExact,
}

struct Case {
    label: String,
    sql: String,
    /// $1, $2, …: all text.
    params: Vec<Option<Doc>>,
    /// Statements run first; set for cases that write: they run in a transaction rolled back after.
    setup: Vec<String>,
    in_transaction: bool,
    check: Check,
    expect: Expect,
}

#[derive(Default)]
struct Matrix {
    cases: Vec<Case>,
}

impl Matrix {
    fn add(&mut self, label: impl Into<String>, sql: impl Into<String>, params: Vec<Option<Doc>>, check: Check, expect: Expect) -> &mut Case {
        self.cases.push(Case { label: label.into(), sql: sql.into(), params, setup: Vec::new(), in_transaction: false, check, expect });
        self.cases.last_mut().unwrap()
    }
}

impl Case {
    /// Runs the case in a transaction that is rolled back, after `setup`.
    fn rolled_back(&mut self, setup: &[&str]) -> &mut Case {
        self.in_transaction = true;
        self.setup = setup.iter().map(|s| s.to_string()).collect();
        self
    }
}

fn doc(text: &str) -> Option<Doc> {
    Some(Rc::from(text))
}

// ---------------------------------------------------------------------------------------------
// The inputs.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// "" or spaces: no rows anywhere (README), an empty search query included.
    Empty,
    /// Whitespace only, but not only spaces: no chunks or sentences.
    Blank,
    Normal,
    /// 5 MB and more, within max_document_size: left out of the slow paths (search, potion store).
    Huge,
    /// Above max_document_size: 54000 wherever a cfg applies.
    TooBig,
}

struct Text {
    label: &'static str,
    body: Doc,
    kind: Kind,
}

/// A document of exactly `bytes` bytes: `sentence` repeated, padded with 'x'.
fn sized(sentence: &str, bytes: usize) -> String {
    let mut s = sentence.repeat(bytes / sentence.len());
    while s.len() < bytes {
        s.push('x');
    }
    assert_eq!(s.len(), bytes);
    s
}

/// One line of `bytes` bytes: words separated by single spaces, no punctuation, no newline.
fn line_without_punctuation(bytes: usize) -> String {
    let words = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod", "tempor", "incididunt", "labore", "magna", "aliqua", "bees", "volcano", "river", "glacier"];
    let mut s = String::with_capacity(bytes + 16);
    let mut i = 0usize;
    while s.len() < bytes {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(words[(i * 7 + i / 3) % words.len()]);
        i += 1;
    }
    s.truncate(bytes);
    s.trim_end().to_string()
}

fn texts() -> Vec<Text> {
    let control: String = (1u8..=0x1f).chain([0x7f]).map(|b| format!("word{}", b as char)).collect();
    let control_only: String = (1u8..=0x1f).chain([0x7f]).filter(|b| !(b'\t'..=b'\r').contains(b)).map(char::from).collect::<String>().repeat(20);
    let zalgo: String = "Zalgo comes. He waits."
        .chars()
        .flat_map(|c| std::iter::once(c).chain((0..30).map(move |i| char::from_u32(0x300 + (i * 7 + c as u32) % 0x70).unwrap())))
        .collect();
    let one_cluster = format!("a{}. Then more text.", "\u{301}\u{316}\u{35c}".repeat(2000));
    let emoji = "👩‍👩‍👧‍👦🏳️‍🌈🇯🇵👍🏽1️⃣🧪🫠 ".repeat(300);
    let mixed = "The bees are back. 蜜蜂回来了。मधुमक्खियाँ लौट आई हैं। Пчёлы вернулись! Οι μέλισσες επέστρεψαν; ミツバチが戻った。벌들이 돌아왔다. ผึ้งกลับมาแล้ว ".repeat(40);
    let arabic = "عادت النحل إلى الخلية. هل تعود النحل في الشتاء؟ نعم، تعود النحل ١٢٣ مرة. البراكين تثور عندما ترتفع الصهارة.\n\n".repeat(40);
    let hebrew = "\u{200f}הַדְּבוֹרִים חָזְרוּ לַכַּוֶּרֶת. \u{202e}override text\u{202c} האם הן יחזרו? \u{2067}isolate\u{2069} כן!\u{200e} ".repeat(40);
    let invisible = "zero\u{200b}width\u{200c}joiners\u{200d}and\u{feff}bom\u{ad}soft\u{2060}joiner. ".repeat(50);
    let specials = "\u{ffff}\u{10ffff}\u{e000}\u{fdd0} noncharacters and private use. \u{fffd} replacement. ".repeat(30);
    vec![
        Text { label: "empty", body: Rc::from(""), kind: Kind::Empty },
        Text { label: "spaces", body: Rc::from("     "), kind: Kind::Empty },
        Text { label: "whitespace mix", body: Rc::from(" \t\n\r\n\x0b\x0c  \n\n\t"), kind: Kind::Blank },
        Text { label: "unicode whitespace", body: Rc::from("\u{a0}\u{2028}\u{2029}\u{3000}\u{2003}\u{85}\u{1680} \u{202f}"), kind: Kind::Blank },
        Text { label: "one char", body: Rc::from("a"), kind: Kind::Normal },
        Text { label: "one emoji", body: Rc::from("🧪"), kind: Kind::Normal },
        Text { label: "lone combining mark", body: Rc::from("\u{301}"), kind: Kind::Normal },
        Text { label: "punctuation only", body: Rc::from("?!.,;:…—–-()[]{}\"'«»¿¡。！？।॥ ".repeat(100).as_str()), kind: Kind::Normal },
        Text { label: "ellipses only", body: Rc::from(". .. ... .... ..... ……".repeat(50).as_str()), kind: Kind::Normal },
        Text { label: "emoji only", body: Rc::from(emoji.as_str()), kind: Kind::Normal },
        Text { label: "mixed scripts", body: Rc::from(mixed.as_str()), kind: Kind::Normal },
        Text { label: "arabic rtl", body: Rc::from(arabic.as_str()), kind: Kind::Normal },
        Text { label: "hebrew rtl with bidi controls", body: Rc::from(hebrew.as_str()), kind: Kind::Normal },
        Text { label: "combining marks (zalgo)", body: Rc::from(zalgo.repeat(20).as_str()), kind: Kind::Normal },
        Text { label: "one grapheme of 6000 marks", body: Rc::from(one_cluster.as_str()), kind: Kind::Normal },
        Text { label: "control characters", body: Rc::from(control.repeat(30).as_str()), kind: Kind::Normal },
        Text { label: "control characters only", body: Rc::from(control_only.as_str()), kind: Kind::Normal },
        Text { label: "invisible format characters", body: Rc::from(invisible.as_str()), kind: Kind::Normal },
        Text { label: "noncharacters and private use", body: Rc::from(specials.as_str()), kind: Kind::Normal },
        Text { label: "CR-only line breaks", body: Rc::from("Line one.\rLine two.\r\rParagraph two.\r\nWindows line.\r\n\r\n".repeat(50).as_str()), kind: Kind::Normal },
        Text { label: "markdown skeleton", body: Rc::from("#\n##\n- \n* \n1.\n> \n```\n```\n---\n|a|b|\n".repeat(50).as_str()), kind: Kind::Normal },
        Text { label: "abbreviations, numbers, urls", body: Rc::from("Mr. Dr. e.g. i.e. etc. U.S. 3.14 v1.2.3 https://a.b/c.d?e=f. a@b.co ... ".repeat(60).as_str()), kind: Kind::Normal },
        Text { label: "one sentence repeated", body: Rc::from("Same sentence here. ".repeat(4000).as_str()), kind: Kind::Normal },
        Text { label: "200 KB without a space", body: Rc::from("a".repeat(200_000).as_str()), kind: Kind::Normal },
        Text { label: "300 KB of CJK without punctuation", body: Rc::from("蜜蜂回来了天气很好我们去公园".repeat(7_200).as_str()), kind: Kind::Normal },
        Text { label: "100 KB of emoji without a space", body: Rc::from("🧪🫠👍🏽".repeat(8_000).as_str()), kind: Kind::Normal },
        Text { label: "5 MB line without punctuation", body: Rc::from(line_without_punctuation(5 * 1024 * 1024).as_str()), kind: Kind::Huge },
        Text {
            label: "max_document_size + 1 byte",
            body: Rc::from(sized(&format!("{}. ", "Words of a long sentence that goes on ".repeat(25)), MAX_DOCUMENT_SIZE + 1).as_str()),
            kind: Kind::TooBig,
        },
    ]
}

/// (label, cfg as JSON text, expected from knowledge.chunk, expected from the semantic-only
/// functions semantic_chunk, chunk_explain and chunk_plot). Run on the sample document with the
/// lexical model as pg_chunk.default_model.
fn cfgs() -> Vec<(String, String, Expect, Expect)> {
    let same = |label: &str, cfg: &str, expect: Expect| (label.to_string(), cfg.to_string(), expect, expect);
    let not_semantic = |label: &str, cfg: &str| (label.to_string(), cfg.to_string(), OK, BAD_CFG);
    let mut cfgs = vec![
        // Valid, if odd.
        same("empty object", "{}", OK),
        same("every key null", r#"{"strategy": null, "method": null, "penalty": null, "threshold": null, "smoothing": null, "min_size": null, "target_size": null, "max_size": null, "overlap": null, "model": null, "fallback": null, "inline_threshold": null, "max_document_size": null, "language": null}"#, OK),
        same("strategy null", r#"{"strategy": null}"#, OK),
        not_semantic("strategy fixed", r#"{"strategy": "fixed"}"#),
        not_semantic("strategy recursive", r#"{"strategy": "recursive"}"#),
        not_semantic("fixed, max_size 1, no overlap", r#"{"strategy": "fixed", "max_size": 1, "overlap": 0}"#),
        same("max_size 1", r#"{"max_size": 1}"#, OK),
        same("max_size i32::MAX", r#"{"max_size": 2147483647}"#, OK),
        same("max_size 1 token", r#"{"max_size": "1 tokens"}"#, OK),
        same("max_size i32::MAX tokens", r#"{"max_size": "2147483647 tokens"}"#, OK),
        same("max_size 1 word", r#"{"max_size": "1 words"}"#, OK),
        same("max_size object, unit null", r#"{"max_size": {"value": 10, "unit": null}}"#, OK),
        same("duplicate key, last wins", r#"{"max_size": 5, "max_size": 500}"#, OK),
        same("min_size 0", r#"{"min_size": 0, "max_size": 1}"#, OK),
        same("penalty 0", r#"{"penalty": 0}"#, OK),
        same("penalty 100", r#"{"penalty": 100}"#, OK),
        same("penalty -0.0", r#"{"penalty": -0.0}"#, OK),
        same("penalty 1e-300", r#"{"penalty": 1e-300}"#, OK),
        same("penalty 1e-400 (underflows to 0)", r#"{"penalty": 1e-400}"#, OK),
        same("smoothing 0", r#"{"smoothing": 0}"#, OK),
        same("smoothing 50", r#"{"smoothing": 50, "method": "threshold"}"#, OK),
        same("threshold by name", r#"{"threshold": "gradient"}"#, OK),
        same("threshold value omitted", r#"{"threshold": {"type": "percentile"}}"#, OK),
        same("threshold value null", r#"{"threshold": {"type": "stddev", "value": null}}"#, OK),
        same("percentile 0", r#"{"threshold": {"type": "percentile", "value": 0}}"#, OK),
        same("percentile 100", r#"{"threshold": {"type": "percentile", "value": 100}}"#, OK),
        same("similarity -1", r#"{"threshold": {"type": "similarity", "value": -1}}"#, OK),
        same("similarity 1", r#"{"threshold": {"type": "similarity", "value": 1}}"#, OK),
        same("stddev -10", r#"{"threshold": {"type": "stddev", "value": -10}}"#, OK),
        same("interquartile 10", r#"{"threshold": {"type": "interquartile", "value": 10}}"#, OK),
        same("overlap 1000 sentences", r#"{"overlap": "1000 sentences"}"#, OK),
        same("overlap just below max_size", r#"{"overlap": 1999}"#, OK),
        same("inline_threshold i32::MAX", r#"{"inline_threshold": 2147483647}"#, OK),
        same("inline_threshold 0", r#"{"inline_threshold": 0}"#, OK),
        same("max_document_size 1 GB", r#"{"max_document_size": 1073741824}"#, OK),
        same("unknown language kept", r#"{"language": "klingon"}"#, OK),
        same("fallback fixed", r#"{"fallback": "fixed"}"#, OK),
        same("fallback null", r#"{"fallback": null}"#, OK),
        // Not an object.
        same("array", "[]", BAD_CFG),
        same("array of object", "[{}]", BAD_CFG),
        same("string", r#""semantic""#, BAD_CFG),
        same("number", "1", BAD_CFG),
        same("boolean", "true", BAD_CFG),
        same("JSON null", "null", BAD_CFG),
        // Unknown keys.
        same("unknown key", r#"{"bogus": 1}"#, BAD_CFG),
        same("key in capitals", r#"{"MAX_SIZE": 5}"#, BAD_CFG),
        same("empty key", r#"{"": 1}"#, BAD_CFG),
        same("key with trailing space", r#"{"max_size ": 5}"#, BAD_CFG),
        same("nested unknown key", r#"{"a": {"b": {"c": {}}}}"#, BAD_CFG),
        same("unknown key in threshold", r#"{"threshold": {"type": "percentile", "value": 92, "extra": 1}}"#, BAD_CFG),
        same("unknown key in size", r#"{"max_size": {"value": 10, "units": "words"}}"#, BAD_CFG),
        // Wrong types.
        same("strategy number", r#"{"strategy": 1}"#, BAD_CFG),
        same("strategy array", r#"{"strategy": ["fixed"]}"#, BAD_CFG),
        same("strategy object", r#"{"strategy": {"name": "fixed"}}"#, BAD_CFG),
        same("strategy in capitals", r#"{"strategy": "FIXED"}"#, BAD_CFG),
        same("strategy empty", r#"{"strategy": ""}"#, BAD_CFG),
        same("method unknown", r#"{"method": "best"}"#, BAD_CFG),
        same("method number", r#"{"method": 1}"#, BAD_CFG),
        same("penalty string", r#"{"penalty": "1.3"}"#, BAD_CFG),
        same("penalty boolean", r#"{"penalty": true}"#, BAD_CFG),
        same("penalty array", r#"{"penalty": [1]}"#, BAD_CFG),
        same("smoothing fraction", r#"{"smoothing": 1.5}"#, BAD_CFG),
        same("smoothing string", r#"{"smoothing": "1"}"#, BAD_CFG),
        same("max_size boolean", r#"{"max_size": true}"#, BAD_CFG),
        same("max_size array", r#"{"max_size": []}"#, BAD_CFG),
        same("max_size pair array", r#"{"max_size": [300, "words"]}"#, BAD_CFG),
        same("max_size fraction", r#"{"max_size": 1.5}"#, BAD_CFG),
        same("max_size words in letters", r#"{"max_size": "ten words"}"#, BAD_CFG),
        same("max_size unknown unit", r#"{"max_size": "10 bytes"}"#, BAD_CFG),
        same("max_size three parts", r#"{"max_size": "10 words extra"}"#, BAD_CFG),
        same("max_size blank string", r#"{"max_size": "  "}"#, BAD_CFG),
        same("max_size object unknown unit", r#"{"max_size": {"value": 10, "unit": "pages"}}"#, BAD_CFG),
        same("max_size object without value", r#"{"max_size": {"unit": "words"}}"#, BAD_CFG),
        same("max_size object value null", r#"{"max_size": {"value": null}}"#, BAD_CFG),
        same("max_size object value string", r#"{"max_size": {"value": "10"}}"#, BAD_CFG),
        same("max_size object unit number", r#"{"max_size": {"value": 10, "unit": 5}}"#, BAD_CFG),
        same("max_size object nested", r#"{"max_size": {"value": {"value": 1}}}"#, BAD_CFG),
        same("overlap array", r#"{"overlap": ["1", "sentences"]}"#, BAD_CFG),
        same("overlap unknown unit", r#"{"overlap": "1 paragraphs"}"#, BAD_CFG),
        same("threshold array", r#"{"threshold": []}"#, BAD_CFG),
        same("threshold array of object", r#"{"threshold": [{"type": "percentile"}]}"#, BAD_CFG),
        same("threshold number", r#"{"threshold": 92}"#, BAD_CFG),
        same("threshold type null", r#"{"threshold": {"type": null}}"#, BAD_CFG),
        same("threshold type unknown", r#"{"threshold": {"type": "median"}}"#, BAD_CFG),
        same("threshold name in capitals", r#"{"threshold": "PERCENTILE"}"#, BAD_CFG),
        same("fallback unknown", r#"{"fallback": "none"}"#, BAD_CFG),
        same("fallback boolean", r#"{"fallback": true}"#, BAD_CFG),
        same("model number", r#"{"model": 5}"#, BAD_CFG),
        same("model array", r#"{"model": ["lexical"]}"#, BAD_CFG),
        same("language number", r#"{"language": 5}"#, BAD_CFG),
        same("language empty", r#"{"language": ""}"#, BAD_CFG),
        same("language array", r#"{"language": []}"#, BAD_CFG),
        // Negative, zero and huge.
        same("max_size -1", r#"{"max_size": -1}"#, BAD_CFG),
        same("max_size 0", r#"{"max_size": 0}"#, BAD_CFG),
        same("max_size i32::MAX + 1", r#"{"max_size": 2147483648}"#, BAD_CFG),
        same("max_size 2^64", r#"{"max_size": 18446744073709551616}"#, BAD_CFG),
        same("max_size 1e20", r#"{"max_size": 1e20}"#, BAD_CFG),
        same("max_size huge string", r#"{"max_size": "99999999999999999999999 chars"}"#, BAD_CFG),
        same("max_size negative string", r#"{"max_size": "-5 words"}"#, BAD_CFG),
        same("min_size -1", r#"{"min_size": -1}"#, BAD_CFG),
        same("target_size 0", r#"{"target_size": 0}"#, BAD_CFG),
        same("overlap -1", r#"{"overlap": -1}"#, BAD_CFG),
        same("inline_threshold -1", r#"{"inline_threshold": -1}"#, BAD_CFG),
        same("inline_threshold i32::MAX + 1", r#"{"inline_threshold": 2147483648}"#, BAD_CFG),
        same("max_document_size -1", r#"{"max_document_size": -1}"#, BAD_CFG),
        same("max_document_size 0", r#"{"max_document_size": 0}"#, BAD_CFG),
        same("max_document_size 1 GB + 1", r#"{"max_document_size": 1073741825}"#, BAD_CFG),
        same("smoothing -1", r#"{"smoothing": -1}"#, BAD_CFG),
        same("smoothing 51", r#"{"smoothing": 51}"#, BAD_CFG),
        same("smoothing i64::MAX", r#"{"smoothing": 9223372036854775807}"#, BAD_CFG),
        same("penalty -0.001", r#"{"penalty": -0.001}"#, BAD_CFG),
        same("penalty 100.0001", r#"{"penalty": 100.0001}"#, BAD_CFG),
        same("penalty 1e308", r#"{"penalty": 1e308}"#, BAD_CFG),
        same("percentile 101", r#"{"threshold": {"type": "percentile", "value": 101}}"#, BAD_CFG),
        same("similarity 1.5", r#"{"threshold": {"type": "similarity", "value": 1.5}}"#, BAD_CFG),
        // NaN and infinity, as strings and as numbers beyond f64.
        same("penalty \"NaN\"", r#"{"penalty": "NaN"}"#, BAD_CFG),
        same("penalty \"Infinity\"", r#"{"penalty": "Infinity"}"#, BAD_CFG),
        same("penalty \"-Infinity\"", r#"{"penalty": "-Infinity"}"#, BAD_CFG),
        same("max_size \"NaN\"", r#"{"max_size": "NaN"}"#, BAD_CFG),
        same("similarity \"NaN\"", r#"{"threshold": {"type": "similarity", "value": "NaN"}}"#, BAD_CFG),
        same("stddev \"inf\"", r#"{"threshold": {"type": "stddev", "value": "inf"}}"#, BAD_CFG),
        same("penalty 1e400", r#"{"penalty": 1e400}"#, BAD_CFG),
        same("penalty -1e400", r#"{"penalty": -1e400}"#, BAD_CFG),
        same("max_size 1e400", r#"{"max_size": 1e400}"#, BAD_CFG),
        same("percentile 1e400", r#"{"threshold": {"type": "percentile", "value": 1e400}}"#, BAD_CFG),
        same("unknown key 1e400", r#"{"bogus": 1e400}"#, BAD_CFG),
        // Contradictions.
        same("min_size above max_size", r#"{"min_size": 100, "max_size": 10}"#, BAD_CFG),
        same("target_size above max_size", r#"{"target_size": 100, "max_size": 10}"#, BAD_CFG),
        same("min_size above target_size", r#"{"min_size": 50, "target_size": 40, "max_size": 100}"#, BAD_CFG),
        same("tokens min above tokens max", r#"{"max_size": "10 tokens", "min_size": "20 tokens"}"#, BAD_CFG),
        same("optimal with threshold", r#"{"method": "optimal", "threshold": "percentile"}"#, BAD_CFG),
        same("threshold with penalty", r#"{"method": "threshold", "penalty": 1}"#, BAD_CFG),
        same("fixed with sentence overlap", r#"{"strategy": "fixed", "overlap": "1 sentences"}"#, BAD_CFG),
        same("recursive with sentence overlap", r#"{"strategy": "recursive", "overlap": "2 sentences"}"#, BAD_CFG),
        same("fixed overlap = max_size", r#"{"strategy": "fixed", "overlap": 350}"#, BAD_CFG),
        same("fixed max_size 1 with default overlap", r#"{"strategy": "fixed", "max_size": 1}"#, BAD_CFG),
        same("semantic overlap = max_size", r#"{"overlap": 2000}"#, BAD_CFG),
        // Models.
        same("unknown model", r#"{"model": "nope"}"#, UNKNOWN),
        same("unknown model with lexical fallback", r#"{"model": "nope", "fallback": "lexical"}"#, Expect::OneOf(&["42704", "00000"])),
        same("model empty", r#"{"model": ""}"#, BAD_CFG),
        same("model blank", r#"{"model": "   "}"#, BAD_CFG),
        same("model lexical with a space", r#"{"model": "lexical "}"#, UNKNOWN),
        same("model registered with the wrong dimension", r#"{"model": "potion-384"}"#, MISFIT),
        same("wrong dimension, lexical fallback", r#"{"model": "potion-384", "fallback": "lexical"}"#, OK),
        same("wrong dimension, fixed fallback", r#"{"model": "potion-384", "fallback": "fixed"}"#, OK),
        same("model file missing", r#"{"model": "missing-file"}"#, Expect::Fails("58P01")),
        same("model file missing, lexical fallback", r#"{"model": "missing-file", "fallback": "lexical"}"#, OK),
        same("tokenizer of another model", r#"{"model": "tok-swapped"}"#, MISFIT),
        // Limits.
        same("max_document_size 1", r#"{"max_document_size": 1}"#, TOO_BIG),
    ];
    // Deep nesting: a depth serde_json takes, depths it refuses (128 and more), and one that
    // PostgreSQL's own jsonb parser may refuse.
    for depth in [100usize, 200, 1_000, 10_000] {
        let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        cfgs.push(same(&format!("max_size nested {depth} deep"), &format!(r#"{{"max_size": {nested}}}"#), BAD_CFG));
        cfgs.push(same(&format!("array {depth} deep"), &nested, BAD_CFG));
        let objects = format!("{}1{}", r#"{"a": "#.repeat(depth), "}".repeat(depth));
        cfgs.push(same(&format!("unknown key, objects {depth} deep"), &objects, BAD_CFG));
    }
    let very_deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    cfgs.push(same("array 100000 deep", &very_deep, Expect::OneOf(&["22023", "54001"])));
    // Not JSON at all: PostgreSQL's jsonb input refuses it (22P02), or its \u0000 (22P05).
    cfgs.push(same("not JSON", "{max_size: 5}", Expect::Fails("22P02")));
    cfgs.push(same("truncated JSON", r#"{"max_size":"#, Expect::Fails("22P02")));
    cfgs.push(same("NUL escape in a key", r#"{"\u0000": 1}"#, Expect::Fails("22P05")));
    cfgs
}

/// Model names nobody registered (and, last, ones a cfg refuses as empty).
const UNKNOWN_MODELS: &[&str] = &[
    "nope",
    "ALL-MINILM-L6-V2",
    "potion-base-8m ",
    " lexical",
    "LEXICAL",
    "../potion-base-8m",
    "/etc/passwd",
    "potion-base-8m\u{200b}",
    "модель",
    "lexical'; DROP TABLE knowledge.models; --",
];

/// Roles other than `query` and `passage`.
const BAD_ROLES: &[&str] = &["QUERY", "Passage", " query", "query ", "", "document", "query\tpassage", "запрос", "passage'; DROP TABLE knowledge.documents; --"];

// ---------------------------------------------------------------------------------------------
// The matrix.

/// The functions that take a document, crossed with every text.
fn texts_by_functions(m: &mut Matrix) {
    for text in texts() {
        let t = Some(Rc::clone(&text.body));
        let label = |f: &str| format!("{f} × {}", text.label);
        let rows = |blank_rows: Expect| match text.kind {
            Kind::Empty | Kind::Blank => blank_rows,
            Kind::TooBig => TOO_BIG,
            _ => OK,
        };
        let chunk_cfgs = [
            ("chunk semantic lexical", r#"{"model": "lexical"}"#),
            ("chunk semantic lexical threshold, sentence overlap, token sizes", r#"{"model": "lexical", "method": "threshold", "overlap": "1 sentences", "max_size": "40 tokens", "inline_threshold": 0}"#),
            ("chunk fixed", r#"{"model": "lexical", "strategy": "fixed"}"#),
            ("chunk recursive", r#"{"model": "lexical", "strategy": "recursive", "max_size": 300}"#),
            ("chunk semantic potion", r#"{"model": "potion-base-8m", "inline_threshold": 0}"#),
        ];
        for (name, cfg) in chunk_cfgs {
            m.add(label(name), format!("SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, '{cfg}') ORDER BY chunk_index"), vec![t.clone()], Check::Spans, rows(NO_ROWS));
        }
        m.add(label("semantic_chunk"), "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.semantic_chunk($1::text, '{\"inline_threshold\": 0, \"min_size\": 0}') ORDER BY chunk_index", vec![t.clone()], Check::Spans, rows(NO_ROWS));
        // split_sentences takes no cfg, so no max_document_size.
        let sentences = match text.kind {
            Kind::Empty | Kind::Blank => NO_ROWS,
            _ => OK,
        };
        m.add(label("split_sentences"), "SELECT sentence_index, content, char_offset, char_length FROM knowledge.split_sentences($1::text) ORDER BY sentence_index", vec![t.clone()], Check::Spans, sentences);
        m.add(label("chunk_explain"), "SELECT sentence_index, char_offset, char_length, distance, smoothed_distance, threshold, score FROM knowledge.chunk_explain($1::text, '{\"inline_threshold\": 0, \"min_size\": 0}') ORDER BY sentence_index", vec![t.clone()], Check::Explain, rows(NO_ROWS));
        let plot = if text.kind == Kind::TooBig { TOO_BIG } else { ONE_ROW };
        m.add(label("chunk_plot"), "SELECT knowledge.chunk_plot($1::text)", vec![t.clone()], Check::Svg, plot);
        // Embeddings and token counts take any text: long ones are truncated with a NOTICE.
        m.add(label("embed lexical"), "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed($1::text, 'lexical') AS e) AS s", vec![t.clone()], Check::Vectors(DIM_256), ONE_ROW);
        m.add(label("embed potion as query"), "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed($1::text, 'potion-base-8m', 'query') AS e) AS s", vec![t.clone()], Check::Vectors(DIM_256), ONE_ROW);
        m.add(label("embed_batch potion"), "SELECT vector_dims(embedding), embedding::text LIKE '%NaN%' FROM knowledge.embed_batch(ARRAY[$1::text, NULL, $1::text], 'potion-base-8m')", vec![t.clone()], Check::Vectors(DIM_256), Expect::Ok(Some(3)));
        m.add(label("token_count lexical"), "SELECT knowledge.token_count($1::text, 'lexical')", vec![t.clone()], Check::Count, ONE_ROW);
        m.add(label("token_count potion"), "SELECT knowledge.token_count($1::text, 'potion-base-8m')", vec![t.clone()], Check::Count, ONE_ROW);
        // The store: a document of this text, chunked and embedded by the triggers.
        let stored = match text.kind {
            Kind::TooBig => TOO_BIG,
            _ => OK,
        };
        m.add(label("store insert (lexical config)"), "INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1::text, 'lex') RETURNING id", vec![t.clone()], Check::Stored, stored).rolled_back(&[]);
        if !matches!(text.kind, Kind::Huge | Kind::TooBig) {
            m.add(label("store insert (potion config)"), "INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1::text, 'potion') RETURNING id", vec![t.clone()], Check::Stored, stored).rolled_back(&[]);
            m.add(label("attached table row"), "INSERT INTO bad_src VALUES (1000, $1::text)", vec![t.clone()], Check::StoreExact, stored)
                .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
            // A text as a search query. Left out for the 5 MB ones: parsing them as a tsquery
            // alone takes PostgreSQL most of a minute (see search_of_long_queries below).
            // README: a query above 10,000 characters is refused with 54000.
            let search = match text.kind {
                Kind::Empty => NO_ROWS,
                _ if text.body.chars().count() > 10_000 => TOO_BIG,
                _ => OK,
            };
            m.add(label("search hybrid (lexical config)"), "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 5, '{\"config\": \"lex\"}')", vec![t.clone()], Check::Search, search);
            m.add(label("search vector (potion config)"), "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 3, '{\"config\": \"potion\", \"mode\": \"vector\", \"min_score\": 0.1}')", vec![t.clone()], Check::Search, search);
        } else {
            m.add(label("store update to it"), "UPDATE knowledge.documents SET content = $1::text WHERE id = (SELECT min(id) FROM knowledge.documents) RETURNING id", vec![t.clone()], Check::Stored, stored).rolled_back(&[]);
        }
    }
    // A handful with the transformer (all-MiniLM-L6-v2).
    let hostile = texts();
    for text in hostile.iter().filter(|t| ["mixed scripts", "hebrew rtl with bidi controls", "emoji only", "control characters only"].contains(&t.label)) {
        let t = Some(Rc::clone(&text.body));
        m.add(format!("embed minilm × {}", text.label), "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed($1::text, 'all-minilm-l6-v2') AS e) AS s", vec![t.clone()], Check::Vectors(DIM_384), ONE_ROW);
        m.add(format!("token_count minilm × {}", text.label), "SELECT knowledge.token_count($1::text, 'all-minilm-l6-v2')", vec![t], Check::Count, ONE_ROW);
    }
    let mixed = hostile.iter().find(|t| t.label == "mixed scripts").map(|t| Rc::clone(&t.body));
    m.add("chunk semantic minilm × mixed scripts", "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, '{\"model\": \"all-minilm-l6-v2\", \"inline_threshold\": 0}') ORDER BY chunk_index", vec![mixed], Check::Spans, OK);

    // Exactly max_document_size: accepted (cheap strategies only).
    let at_limit: Doc = Rc::from(sized(&format!("{}. ", "Words of a long sentence that goes on ".repeat(25)), MAX_DOCUMENT_SIZE).as_str());
    m.add("chunk fixed × exactly max_document_size", "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, '{\"model\": \"lexical\", \"strategy\": \"fixed\", \"max_size\": 20000, \"overlap\": 100}') ORDER BY chunk_index", vec![Some(Rc::clone(&at_limit))], Check::Spans, OK);
    m.add("chunk semantic lexical × exactly max_document_size", "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, '{\"model\": \"lexical\", \"max_size\": 20000}') ORDER BY chunk_index", vec![Some(Rc::clone(&at_limit))], Check::Spans, OK);
    // max_document_size counts bytes: 3.6 M CJK characters are 10.8 MB.
    let cjk: Doc = Rc::from("蜜蜂回来了。".repeat(600_000).as_str());
    m.add("chunk × CJK under the limit in characters, over it in bytes", "SELECT count(*) FROM knowledge.chunk($1::text, '{\"model\": \"lexical\"}')", vec![Some(Rc::clone(&cjk))], Check::Nothing, TOO_BIG);
    m.add("store insert × CJK over the limit in bytes", "INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1::text, 'lex')", vec![Some(cjk)], Check::Nothing, TOO_BIG).rolled_back(&[]);
    m.add("chunk semantic lexical × max_document_size + 1 via cfg", "SELECT count(*) FROM knowledge.chunk($1::text, '{\"model\": \"lexical\", \"max_document_size\": 10485759}')", vec![Some(at_limit)], Check::Nothing, TOO_BIG);
}

/// The functions that take a cfg, crossed with every cfg, on the sample document.
fn cfgs_by_functions(m: &mut Matrix) {
    let sample = doc(&sample_document());
    for (label, cfg, chunk, semantic) in cfgs() {
        let params = vec![sample.clone(), Some(Rc::from(cfg.as_str()))];
        m.add(format!("chunk × cfg {label}"), "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, $2::text::jsonb) ORDER BY chunk_index", params.clone(), Check::Spans, chunk);
        m.add(format!("semantic_chunk × cfg {label}"), "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.semantic_chunk($1::text, $2::text::jsonb) ORDER BY chunk_index", params.clone(), Check::Spans, semantic);
        m.add(format!("chunk_explain × cfg {label}"), "SELECT sentence_index, char_offset, char_length, distance, smoothed_distance, threshold, score FROM knowledge.chunk_explain($1::text, $2::text::jsonb) ORDER BY sentence_index", params.clone(), Check::Explain, semantic);
        let plot = if matches!(semantic, Expect::Ok(_)) { ONE_ROW } else { semantic };
        m.add(format!("chunk_plot × cfg {label}"), "SELECT knowledge.chunk_plot($1::text, $2::text::jsonb)", params.clone(), Check::Svg, plot);
        // A chunk config with this cfg rechunks the store's documents with it at once.
        m.add(format!("chunk_configs insert × cfg {label}"), "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('cfg-case', $1::text::jsonb, 'lexical')", vec![Some(Rc::from(cfg.as_str()))], Check::StoreExact, chunk)
            .rolled_back(&[]);
    }
}

/// NULL in each argument of each function, and in each NOT NULL column of the store.
fn nulls(m: &mut Matrix) {
    let cfg = r#"'{"model": "lexical"}'"#;
    for f in ["chunk", "semantic_chunk"] {
        m.add(format!("{f}(NULL, cfg)"), format!("SELECT * FROM knowledge.{f}(NULL, {cfg})"), vec![], Check::Nothing, NO_ROWS);
        m.add(format!("{f}(doc, NULL)"), format!("SELECT * FROM knowledge.{f}('Some text. More text.', NULL)"), vec![], Check::Nothing, NO_ROWS);
        m.add(format!("{f}(NULL, NULL)"), format!("SELECT * FROM knowledge.{f}(NULL, NULL)"), vec![], Check::Nothing, NO_ROWS);
        m.add(format!("{f}(NULL)"), format!("SELECT * FROM knowledge.{f}(NULL)"), vec![], Check::Nothing, NO_ROWS);
        m.add(format!("{f}($1 = NULL)"), format!("SELECT * FROM knowledge.{f}($1::text, {cfg})"), vec![None], Check::Nothing, NO_ROWS);
    }
    m.add("split_sentences(NULL)", "SELECT * FROM knowledge.split_sentences(NULL)", vec![], Check::Nothing, NO_ROWS);
    m.add("chunk_explain(NULL, cfg)", format!("SELECT * FROM knowledge.chunk_explain(NULL, {cfg})"), vec![], Check::Nothing, NO_ROWS);
    m.add("chunk_explain(doc, NULL)", "SELECT * FROM knowledge.chunk_explain('Some text. More text.', NULL)", vec![], Check::Nothing, NO_ROWS);
    m.add("chunk_plot(NULL, cfg)", format!("SELECT knowledge.chunk_plot(NULL, {cfg}) IS NULL"), vec![], Check::IsTrue, ONE_ROW);
    m.add("chunk_plot(doc, NULL)", "SELECT knowledge.chunk_plot('Some text. More text.', NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add("chunk_plot(NULL)", "SELECT knowledge.chunk_plot(NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);

    m.add("embed(NULL, model)", "SELECT knowledge.embed(NULL, 'lexical') IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add("embed(NULL)", "SELECT knowledge.embed(NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add("embed(text, NULL): the default model", "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed('Bees fly.', NULL) AS e) AS s", vec![], Check::Vectors(DIM_256), ONE_ROW);
    // README: a NULL role means passage, as a NULL model means the default one.
    m.add("embed(text, model, NULL role)", "SELECT knowledge.embed('Bees fly.', 'lexical', NULL) = knowledge.embed('Bees fly.', 'lexical', 'passage')", vec![], Check::IsTrue, ONE_ROW);
    m.add("embed(NULL, model, NULL role)", "SELECT knowledge.embed(NULL, 'lexical', NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add("embed(NULL, NULL, NULL)", "SELECT knowledge.embed(NULL, NULL, NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add("embed_batch(NULL, model)", "SELECT * FROM knowledge.embed_batch(NULL, 'lexical')", vec![], Check::Nothing, NO_ROWS);
    m.add("embed_batch(ARRAY[NULL], model)", "SELECT embedding IS NULL FROM knowledge.embed_batch(ARRAY[NULL]::text[], 'potion-base-8m')", vec![], Check::IsTrue, ONE_ROW);
    m.add("embed_batch(empty array, model)", "SELECT * FROM knowledge.embed_batch(ARRAY[]::text[], 'potion-base-8m')", vec![], Check::Nothing, NO_ROWS);
    m.add("embed_batch(texts, NULL): the default model", "SELECT vector_dims(embedding), embedding::text LIKE '%NaN%' FROM knowledge.embed_batch(ARRAY['a', 'b'], NULL)", vec![], Check::Vectors(DIM_256), Expect::Ok(Some(2)));
    m.add("embed_batch(texts, model, NULL role)", "SELECT * FROM knowledge.embed_batch(ARRAY['a', 'b'], 'lexical', NULL)", vec![], Check::Nothing, OK);
    m.add("embed_batch(NULL, NULL, NULL)", "SELECT * FROM knowledge.embed_batch(NULL, NULL, NULL)", vec![], Check::Nothing, Expect::OneOf(&["00000", "22023", "22004"]));
    m.add("embed_batch(100000 empty texts)", "SELECT count(*) FILTER (WHERE vector_dims(embedding) = 256) FROM knowledge.embed_batch(array_fill(''::text, ARRAY[100000]), 'lexical')", vec![], Check::Count, ONE_ROW);
    m.add("token_count(NULL, model)", "SELECT knowledge.token_count(NULL, 'potion-base-8m') IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add("token_count(NULL)", "SELECT knowledge.token_count(NULL) IS NULL", vec![], Check::IsTrue, ONE_ROW);
    m.add("token_count(text, NULL): the default model", "SELECT knowledge.token_count('Bees fly.', NULL)", vec![], Check::Count, ONE_ROW);

    m.add("search(NULL)", "SELECT * FROM knowledge.search(NULL)", vec![], Check::Nothing, NO_ROWS);
    m.add("search(query, NULL k)", "SELECT * FROM knowledge.search('bees', NULL)", vec![], Check::Nothing, BAD_CFG);
    m.add("search(query, k, NULL options)", "SELECT * FROM knowledge.search('bees', 5, NULL)", vec![], Check::Nothing, BAD_CFG);
    m.add("search(NULL, NULL, NULL)", "SELECT * FROM knowledge.search(NULL, NULL, NULL)", vec![], Check::Nothing, BAD_CFG);

    // attach/detach: a NULL where a table, column or config is needed is one that does not
    // exist (or a NULL argument); the language column is NOT NULL.
    let absent: &[&str] = &["22004", "22023", "42P01", "42703", "42704"];
    let absent = Expect::OneOf(absent);
    m.add("attach(NULL, id, text)", "SELECT knowledge.attach(NULL, 'id', 'body', 'lex')", vec![], Check::Nothing, absent).rolled_back(&[]);
    m.add("attach(table, NULL, text)", "SELECT knowledge.attach('bad_src', NULL, 'body', 'lex')", vec![], Check::Nothing, absent).rolled_back(&[]);
    m.add("attach(table, id, NULL)", "SELECT knowledge.attach('bad_src', 'id', NULL, 'lex')", vec![], Check::Nothing, absent).rolled_back(&[]);
    m.add("attach(table, id, text, NULL config)", "SELECT knowledge.attach('bad_src', 'id', 'body', NULL)", vec![], Check::Nothing, absent).rolled_back(&[]);
    m.add("attach(table, id, text, config, NULL language)", "SELECT knowledge.attach('bad_src', 'id', 'body', 'lex', NULL)", vec![], Check::Nothing, Expect::OneOf(&["22004", "22023", "23502"])).rolled_back(&[]);
    m.add("detach(NULL)", "SELECT knowledge.detach(NULL)", vec![], Check::Nothing, absent).rolled_back(&[]);
    m.add("detach(table, NULL keep)", "SELECT knowledge.detach('bad_src', NULL)", vec![], Check::Count, ONE_ROW).rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);

    m.add("rechunk(NULL)", "SELECT knowledge.rechunk(NULL)", vec![], Check::Nothing, Expect::OneOf(&["P0002", "22004"])).rolled_back(&[]);
    m.add("rechunk(id, NULL config)", "SELECT knowledge.rechunk((SELECT min(id) FROM knowledge.documents), NULL)", vec![], Check::StoreExact, ONE_ROW).rolled_back(&[]);
    m.add("rechunk_all(NULL)", "SELECT knowledge.rechunk_all(NULL)", vec![], Check::StoreExact, ONE_ROW).rolled_back(&[]);
    m.add("rechunk_all(NULL, NULL)", "SELECT knowledge.rechunk_all(NULL, NULL)", vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    m.add("process_queue(NULL)", "SELECT knowledge.process_queue(NULL)", vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    m.add("process_queue(1, NULL)", "SELECT knowledge.process_queue(1, NULL)", vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    m.add("wait_for_queue(NULL)", "SELECT knowledge.wait_for_queue(NULL)", vec![], Check::Nothing, BAD_CFG);
    m.add("retry_failed(NULL)", "SELECT knowledge.retry_failed(NULL)", vec![], Check::Count, ONE_ROW).rolled_back(&[]);
    m.add("embed_chunks(NULL, cfg, model)", "SELECT * FROM knowledge.embed_chunks(NULL, '{}', 'lexical')", vec![], Check::Nothing, NO_ROWS);
    m.add("embed_chunks(doc, NULL, model)", "SELECT * FROM knowledge.embed_chunks('Some text.', NULL, 'lexical')", vec![], Check::Nothing, NO_ROWS);
    m.add("embed_chunks_batch(NULL, docs)", "SELECT * FROM knowledge.embed_chunks_batch(NULL, ARRAY['x'])", vec![], Check::Nothing, NO_ROWS);

    // The store's NOT NULL columns.
    for (column, sql) in [
        ("content", "INSERT INTO knowledge.documents (content) VALUES (NULL)"),
        ("language", "INSERT INTO knowledge.documents (content, language) VALUES ('x', NULL)"),
        ("metadata", "INSERT INTO knowledge.documents (content, metadata) VALUES ('x', NULL)"),
        ("chunk_configs.name", "INSERT INTO knowledge.chunk_configs (name) VALUES (NULL)"),
        ("chunk_configs.cfg", "INSERT INTO knowledge.chunk_configs (name, cfg) VALUES ('n', NULL)"),
        ("chunk_configs.model", "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('n', NULL)"),
        ("chunk_configs.active", "INSERT INTO knowledge.chunk_configs (name, model, active) VALUES ('n', 'lexical', NULL)"),
        ("chunk_configs.mode", "INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES ('n', 'lexical', NULL)"),
    ] {
        m.add(format!("NULL {column}"), sql, vec![], Check::Nothing, NOT_NULL).rolled_back(&[]);
    }
    m.add("NULL chunk_config: every active config", "INSERT INTO knowledge.documents (content, chunk_config) VALUES ('Bees fly. Lava flows.', NULL) RETURNING id", vec![], Check::Stored, ONE_ROW).rolled_back(&[]);
    m.add("NULL halfvec: by dimension", "INSERT INTO knowledge.chunk_configs (name, model, halfvec) VALUES ('n', 'potion-base-8m', NULL)", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
}

/// Unknown model names in every place a model is named, and roles other than query/passage.
fn models_and_roles(m: &mut Matrix) {
    let sample = doc(&sample_document());
    for name in UNKNOWN_MODELS {
        let n = doc(name);
        let short: String = name.chars().take(24).collect();
        let label = |f: &str| format!("{f} × unknown model {short:?}");
        m.add(label("embed"), "SELECT knowledge.embed('Bees fly.', $1::text)", vec![n.clone()], Check::Nothing, UNKNOWN);
        m.add(label("embed_batch"), "SELECT * FROM knowledge.embed_batch(ARRAY['Bees fly.'], $1::text)", vec![n.clone()], Check::Nothing, UNKNOWN);
        m.add(label("token_count"), "SELECT knowledge.token_count('Bees fly.', $1::text)", vec![n.clone()], Check::Nothing, UNKNOWN);
        let cfg = Some(Rc::from(serde_json::json!({ "model": name }).to_string().as_str()));
        for f in ["chunk", "semantic_chunk", "chunk_explain"] {
            m.add(label(&format!("{f} cfg")), format!("SELECT * FROM knowledge.{f}($1::text, $2::text::jsonb)"), vec![sample.clone(), cfg.clone()], Check::Nothing, UNKNOWN);
        }
        m.add(label("chunk of one char, cfg"), "SELECT * FROM knowledge.chunk('a', $1::text::jsonb)", vec![cfg.clone()], Check::Nothing, UNKNOWN);
        m.add(label("chunk_plot cfg"), "SELECT knowledge.chunk_plot($1::text, $2::text::jsonb)", vec![sample.clone(), cfg.clone()], Check::Nothing, UNKNOWN);
        m.add(label("embed_chunks model"), "SELECT * FROM knowledge.embed_chunks('Bees fly. Lava flows.', '{\"model\": \"lexical\"}', $1::text)", vec![n.clone()], Check::Nothing, UNKNOWN);
        m.add(label("chunk_configs.model"), "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('m', $1::text)", vec![n.clone()], Check::Nothing, UNKNOWN).rolled_back(&[]);
        m.add(label("chunk_configs.cfg model"), "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('m', $1::text::jsonb, 'lexical')", vec![cfg.clone()], Check::Nothing, UNKNOWN).rolled_back(&[]);
        m.add(label("search config"), "SELECT * FROM knowledge.search('bees', 5, jsonb_build_object('config', $1::text))", vec![n.clone()], Check::Nothing, UNKNOWN);
        m.add(label("rechunk config"), "SELECT knowledge.rechunk((SELECT min(id) FROM knowledge.documents), $1::text)", vec![n.clone()], Check::Nothing, UNKNOWN).rolled_back(&[]);
        m.add(label("rechunk_all config"), "SELECT knowledge.rechunk_all($1::text)", vec![n.clone()], Check::Nothing, UNKNOWN).rolled_back(&[]);
        m.add(label("attach config"), "SELECT knowledge.attach('bad_src', 'id', 'body', $1::text)", vec![n.clone()], Check::Nothing, UNKNOWN).rolled_back(&[]);
        m.add(label("default_model setting"), "SELECT knowledge.embed('Bees fly.')", vec![], Check::Nothing, UNKNOWN)
            .rolled_back(&[&format!("SET LOCAL pg_chunk.default_model = '{}'", name.replace('\'', "''"))]);
    }
    for name in ["", "   "] {
        let label = |f: &str| format!("{f} × empty model {name:?}");
        m.add(label("embed"), "SELECT knowledge.embed('Bees fly.', $1::text)", vec![doc(name)], Check::Nothing, UNKNOWN);
        m.add(label("token_count"), "SELECT knowledge.token_count('Bees fly.', $1::text)", vec![doc(name)], Check::Nothing, UNKNOWN);
        m.add(label("chunk cfg"), "SELECT * FROM knowledge.chunk('Bees fly.', jsonb_build_object('model', $1::text))", vec![doc(name)], Check::Nothing, BAD_CFG);
        m.add(label("chunk_configs.model"), "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('m', $1::text)", vec![doc(name)], Check::Nothing, UNKNOWN).rolled_back(&[]);
    }

    for role in BAD_ROLES {
        let r = doc(role);
        let label = |f: &str| format!("{f} × role {role:?}");
        m.add(label("embed lexical"), "SELECT knowledge.embed('Bees fly.', 'lexical', $1::text)", vec![r.clone()], Check::Nothing, BAD_CFG);
        m.add(label("embed potion"), "SELECT knowledge.embed('Bees fly.', 'potion-base-8m', $1::text)", vec![r.clone()], Check::Nothing, BAD_CFG);
        m.add(label("embed e5 (prefixed model)"), "SELECT knowledge.embed('Bees fly.', 'multilingual-e5-small', $1::text)", vec![r.clone()], Check::Nothing, BAD_CFG);
        m.add(label("embed_batch potion"), "SELECT * FROM knowledge.embed_batch(ARRAY['Bees fly.', NULL], 'potion-base-8m', $1::text)", vec![r.clone()], Check::Nothing, BAD_CFG);
        m.add(label("embed NULL text"), "SELECT knowledge.embed(NULL, 'lexical', $1::text)", vec![r.clone()], Check::Nothing, Expect::OneOf(&["00000", "22023"]));
    }
    for role in ["query", "passage"] {
        m.add(format!("embed potion × role {role}"), "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed('Bees fly.', 'potion-base-8m', $1::text) AS e) AS s", vec![doc(role)], Check::Vectors(DIM_256), ONE_ROW);
    }
    let long_role = "q".repeat(10_000);
    m.add("embed × role of 10000 chars", "SELECT knowledge.embed('Bees fly.', 'lexical', $1::text)", vec![doc(&long_role)], Check::Nothing, BAD_CFG);
    let long_name = "x".repeat(10_000);
    m.add("embed × model name of 10000 chars", "SELECT knowledge.embed('Bees fly.', $1::text)", vec![doc(&long_name)], Check::Nothing, UNKNOWN);
    m.add("chunk × model name of 10000 chars", "SELECT * FROM knowledge.chunk('Bees fly.', jsonb_build_object('model', $1::text))", vec![doc(&long_name)], Check::Nothing, UNKNOWN);
}

/// Models whose registration does not fit their files (dimension, kind, tokenizer, missing
/// file), vectors of the wrong dimension in the store, and a config whose model went away.
fn dimension_mismatches(m: &mut Matrix) {
    let sample = doc(&sample_document());
    for (model, expect) in [
        ("potion-384", MISFIT),
        ("minilm-as-static", MISFIT),
        ("tok-swapped", MISFIT),
        ("missing-file", Expect::Fails("58P01")),
        // A safetensors file registered as an ONNX transformer: ONNX Runtime refuses it.
        ("potion-as-onnx", Expect::OneOf(&["42P17", "38000"])),
    ] {
        let n = doc(model);
        let label = |f: &str| format!("{f} × model {model}");
        m.add(label("embed"), "SELECT knowledge.embed('Bees fly.', $1::text)", vec![n.clone()], Check::Nothing, expect);
        m.add(label("embed_batch"), "SELECT * FROM knowledge.embed_batch(ARRAY['Bees fly.', 'Lava flows.'], $1::text)", vec![n.clone()], Check::Nothing, expect);
        m.add(label("token_count"), "SELECT knowledge.token_count('Bees fly.', $1::text)", vec![n.clone()], Check::Nothing, expect);
        m.add(label("chunk"), "SELECT * FROM knowledge.chunk($1::text, jsonb_build_object('model', $2::text))", vec![sample.clone(), n.clone()], Check::Nothing, expect);
        m.add(label("chunk_explain"), "SELECT * FROM knowledge.chunk_explain($1::text, jsonb_build_object('model', $2::text))", vec![sample.clone(), n.clone()], Check::Nothing, expect);
        m.add(label("chunk with lexical fallback"), "SELECT chunk_index, content, char_offset, char_length FROM knowledge.chunk($1::text, jsonb_build_object('model', $2::text, 'fallback', 'lexical')) ORDER BY 1", vec![sample.clone(), n.clone()], Check::Spans, OK);
        m.add(label("chunk with fixed fallback"), "SELECT chunk_index, content, char_offset, char_length FROM knowledge.chunk($1::text, jsonb_build_object('model', $2::text, 'fallback', 'fixed')) ORDER BY 1", vec![sample.clone(), n.clone()], Check::Spans, OK);
        m.add(label("embed_chunks"), "SELECT * FROM knowledge.embed_chunks($1::text, '{\"model\": \"lexical\"}', $2::text)", vec![sample.clone(), n.clone()], Check::Nothing, expect);
        // A config embedding with it rechunks the store's documents at once: refused whole.
        m.add(label("chunk_configs insert"), "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('misfit', $1::text)", vec![n.clone()], Check::Nothing, expect).rolled_back(&[]);
        m.add(label("chunk_configs model changed"), "UPDATE knowledge.chunk_configs SET model = $1::text WHERE name = 'potion'", vec![n.clone()], Check::Nothing, expect).rolled_back(&[]);
        m.add(label("chunk_configs cuts with it, lexical embeds"), "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('misfit', jsonb_build_object('model', $1::text), 'lexical')", vec![n.clone()], Check::Nothing, expect).rolled_back(&[]);
    }
    // The transformer registered with the wrong dimension (one MiniLM load).
    m.add("embed × transformer registered with 256 dimensions", "SELECT knowledge.embed('Bees fly.', 'minilm-256')", vec![], Check::Nothing, MISFIT);
    // A config whose cut model (cfg) and embedding model (column) differ in dimension: allowed,
    // and its vectors are the column model's.
    m.add("config cutting with potion (256), embedding with lexical", "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('two-models', '{\"model\": \"potion-base-8m\"}', 'lexical')", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    m.add("config halfvec with a 256-dimension model", "INSERT INTO knowledge.chunk_configs (name, model, halfvec) VALUES ('half', 'potion-base-8m', true)", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    m.add("search of a config cutting and embedding with different models", "SELECT chunk_id, score, similarity FROM knowledge.search('bees in winter', 5, '{\"config\": \"two-models\"}')", vec![], Check::Search, OK)
        .rolled_back(&["INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('two-models', '{\"model\": \"potion-base-8m\"}', 'lexical')"]);
    // Vectors of the wrong dimension written into knowledge.chunks by hand: the config's HNSW
    // index refuses them (pgvector, 22000); a lexical config has no index, so search meets them.
    let bad_chunk = "INSERT INTO knowledge.chunks (document_id, chunk_config, chunk_index, content, char_offset, char_length, token_count, model, embedding, tsv, run_id) \
         SELECT c.document_id, c.chunk_config, 1000, 'x', 0, 1, 1, c.model, '[1,2,3]', to_tsvector('bees'), c.run_id FROM knowledge.chunks AS c WHERE c.chunk_config = '{config}' LIMIT 1";
    m.add("3-dimension vector into an indexed config's chunks", bad_chunk.replace("{config}", "potion"), vec![], Check::Nothing, Expect::Fails("22000")).rolled_back(&[]);
    m.add("search meeting a 3-dimension vector", "SELECT chunk_id, score, similarity FROM knowledge.search('bees', 5, '{\"config\": \"lex\", \"mode\": \"vector\"}')", vec![], Check::Search, Expect::OneOf(&["00000", "22000"]))
        .rolled_back(&[&bad_chunk.replace("{config}", "lex")]);
    m.add("model's registered dimension changed under its chunks", "UPDATE knowledge.models SET dimension = 384 WHERE name = 'potion-base-8m'", vec![], Check::Nothing, Expect::OneOf(&["22000", "42P17"])).rolled_back(&[]);
    m.add("search of a config whose model was unregistered", "SELECT * FROM knowledge.search('bees', 5, '{\"config\": \"potion\"}')", vec![], Check::Nothing, UNKNOWN)
        .rolled_back(&["DELETE FROM knowledge.models WHERE name = 'potion-base-8m'"]);
    m.add("rechunk of a config whose model was unregistered", "SELECT knowledge.rechunk((SELECT min(id) FROM knowledge.documents), 'potion')", vec![], Check::Nothing, UNKNOWN)
        .rolled_back(&["DELETE FROM knowledge.models WHERE name = 'potion-base-8m'"]);
    m.add("embed_chunks_batch with arrays of different lengths", "SELECT * FROM knowledge.embed_chunks_batch(ARRAY[1, 2]::bigint[], ARRAY['a'], '{}', 'lexical')", vec![], Check::Nothing, BAD_CFG);
    // Registrations the models table refuses.
    for (label, values) in [
        ("named lexical", "('lexical', 'static', 'a/m', 'a/t', 256)"),
        ("name in capitals", "('Bad', 'static', 'a/m', 'a/t', 256)"),
        ("absolute model file", "('bad', 'static', '/etc/passwd', 'a/t', 256)"),
        ("model file with ..", "('bad', 'static', 'a/../../../etc/passwd', 'a/t', 256)"),
        ("tokenizer file with ..", "('bad', 'static', 'a/m', '../t', 256)"),
        ("dimension 0", "('bad', 'static', 'a/m', 'a/t', 0)"),
        ("dimension -1", "('bad', 'static', 'a/m', 'a/t', -1)"),
        ("dimension 16001", "('bad', 'static', 'a/m', 'a/t', 16001)"),
        ("unknown kind", "('bad', 'magic', 'a/m', 'a/t', 256)"),
    ] {
        m.add(format!("register model {label}"), format!("INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension) VALUES {values}"), vec![], Check::Nothing, CHECK_VIOLATION).rolled_back(&[]);
    }
}

/// Search options, and a search query too long for full text.
fn search_options(m: &mut Matrix) {
    for (label, options, expect) in [
        ("none", "{}", OK),
        ("mode vector", r#"{"mode": "vector"}"#, OK),
        ("mode text", r#"{"mode": "text"}"#, OK),
        ("mode null", r#"{"mode": null}"#, OK),
        ("mode in capitals", r#"{"mode": "VECTOR"}"#, BAD_CFG),
        ("mode number", r#"{"mode": 1}"#, BAD_CFG),
        ("mode array", r#"{"mode": ["text"]}"#, BAD_CFG),
        ("unknown option", r#"{"bogus": 1}"#, BAD_CFG),
        ("option in capitals", r#"{"Mode": "text"}"#, BAD_CFG),
        ("array", "[]", BAD_CFG),
        ("JSON null", "null", BAD_CFG),
        ("string", r#""hybrid""#, BAD_CFG),
        ("number", "1", BAD_CFG),
        ("min_score 2", r#"{"min_score": 2}"#, OK),
        ("min_score -2", r#"{"min_score": -2}"#, OK),
        ("min_score null", r#"{"min_score": null}"#, OK),
        ("min_score as a numeric string", r#"{"min_score": "0.5"}"#, Expect::OneOf(&["00000", "22023"])),
        ("min_score word", r#"{"min_score": "abc"}"#, BAD_CFG),
        ("min_score \"NaN\"", r#"{"min_score": "NaN"}"#, BAD_CFG),
        ("min_score \"Infinity\"", r#"{"min_score": "Infinity"}"#, Expect::OneOf(&["00000", "22023"])),
        ("min_score 1e400", r#"{"min_score": 1e400}"#, BAD_CFG),
        ("min_score boolean", r#"{"min_score": true}"#, BAD_CFG),
        ("min_score array", r#"{"min_score": [0.5]}"#, BAD_CFG),
        ("min_score object", r#"{"min_score": {"value": 0.5}}"#, BAD_CFG),
        ("min_score in text mode", r#"{"mode": "text", "min_score": 0.5}"#, BAD_CFG),
        ("document_ids empty", r#"{"document_ids": []}"#, OK),
        ("document_ids [1]", r#"{"document_ids": [1]}"#, OK),
        ("document_ids [null]", r#"{"document_ids": [null]}"#, OK),
        ("document_ids null", r#"{"document_ids": null}"#, Expect::OneOf(&["00000", "22023"])),
        ("document_ids words", r#"{"document_ids": ["x"]}"#, BAD_CFG),
        ("document_ids fraction", r#"{"document_ids": [1.5]}"#, BAD_CFG),
        ("document_ids 1e400", r#"{"document_ids": [1e400]}"#, BAD_CFG),
        ("document_ids beyond bigint", r#"{"document_ids": [99999999999999999999]}"#, BAD_CFG),
        ("document_ids object", r#"{"document_ids": {"a": 1}}"#, BAD_CFG),
        ("document_ids string", r#"{"document_ids": "1"}"#, BAD_CFG),
        ("document_ids nested", r#"{"document_ids": [[1]]}"#, BAD_CFG),
        ("metadata empty", r#"{"metadata": {}}"#, OK),
        ("metadata array", r#"{"metadata": []}"#, BAD_CFG),
        ("metadata string", r#"{"metadata": "x"}"#, BAD_CFG),
        ("metadata JSON null", r#"{"metadata": null}"#, Expect::OneOf(&["00000", "22023"])),
        ("language english", r#"{"language": "english"}"#, OK),
        ("language schema-qualified", r#"{"language": "pg_catalog.simple"}"#, OK),
        ("language unknown", r#"{"language": "klingon"}"#, UNKNOWN),
        ("language as a numeric oid string", r#"{"language": "5"}"#, Expect::OneOf(&["42704", "22023"])),
        ("language empty", r#"{"language": ""}"#, Expect::OneOf(&["42704", "22023", "42602"])),
        ("language injection", r#"{"language": "english'); DROP TABLE knowledge.documents; --"}"#, Expect::OneOf(&["42704", "22023", "42602"])),
        ("config empty", r#"{"config": ""}"#, UNKNOWN),
        ("config number", r#"{"config": 1}"#, UNKNOWN),
        ("config null: default (MiniLM, no chunks)", r#"{"config": null}"#, NO_ROWS),
        ("config default, vector mode (MiniLM)", r#"{"config": "default", "mode": "vector"}"#, NO_ROWS),
    ] {
        m.add(format!("search options {label}"), "SELECT chunk_id, score, similarity FROM knowledge.search('bees in the hive', 5, $1::text::jsonb)", vec![doc(options)], Check::Search, expect);
    }
    let deep = format!(r#"{{"metadata": {}{{}}{}}}"#, r#"{"a": "#.repeat(100), "}".repeat(100));
    m.add("search options metadata 100 deep", "SELECT chunk_id, score, similarity FROM knowledge.search('bees', 5, $1::text::jsonb)", vec![doc(&deep)], Check::Search, OK);
    for (label, k) in [("0", "0"), ("-1", "-1"), ("1001", "1001"), ("i32::MAX", "2147483647")] {
        m.add(format!("search k = {label}"), format!("SELECT * FROM knowledge.search('bees', {k})"), vec![], Check::Nothing, BAD_CFG);
    }
    // README: k from 1 to 1000; search takes 4 × k candidates with hnsw.ef_search = max(100, 4 × k).
    for k in ["1", "250", "251", "1000"] {
        m.add(format!("search k = {k}"), format!("SELECT chunk_id, score, similarity FROM knowledge.search('bees', {k}, '{{\"config\": \"lex\"}}')"), vec![], Check::Search, OK);
    }
    // README: a query of up to 10,000 characters is searched, a longer one refused with 54000
    // (PostgreSQL's tsquery parser would run out of stack near 20,000 words).
    let at_limit = "word ".repeat(2_000);
    m.add("search with a query of 10000 characters", "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 5, '{\"config\": \"lex\"}')", vec![doc(&at_limit)], Check::Search, OK);
    let long_query = "word ".repeat(20_000);
    m.add("search with a query of 20000 words", "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 5, '{\"config\": \"lex\"}')", vec![doc(&long_query)], Check::Search, TOO_BIG);
    let long_word = "a".repeat(100_000);
    m.add("search with a query of one 100 KB word", "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 5, '{\"config\": \"lex\"}')", vec![doc(&long_word)], Check::Search, TOO_BIG);
}

/// The store's tables and functions with bad values, attach/detach, the queue, the settings and
/// another role's privileges.
fn store(m: &mut Matrix) {
    let first = "(SELECT min(id) FROM knowledge.documents)";
    // Documents.
    m.add("document in an unknown language", "INSERT INTO knowledge.documents (content, language) VALUES ('x', 'klingon')", vec![], Check::Nothing, UNKNOWN).rolled_back(&[]);
    m.add("document naming an unknown config", "INSERT INTO knowledge.documents (content, chunk_config) VALUES ('x', 'nope')", vec![], Check::Nothing, Expect::Fails("23503")).rolled_back(&[]);
    m.add("document with array metadata", "INSERT INTO knowledge.documents (content, metadata, chunk_config) VALUES ('Bees fly.', '[1, 2]', 'lex') RETURNING id", vec![], Check::Stored, ONE_ROW).rolled_back(&[]);
    m.add("document in the simple language", "INSERT INTO knowledge.documents (content, language, chunk_config) VALUES ('Bees fly. Lava flows.', 'simple', 'lex') RETURNING id", vec![], Check::Stored, ONE_ROW).rolled_back(&[]);
    m.add("document content updated to empty", &format!("UPDATE knowledge.documents SET content = '' WHERE id = {first} RETURNING id"), vec![], Check::Stored, ONE_ROW).rolled_back(&[]);
    m.add("document moved to an unknown config", &format!("UPDATE knowledge.documents SET chunk_config = 'nope' WHERE id = {first}"), vec![], Check::Nothing, Expect::Fails("23503")).rolled_back(&[]);
    // Chunk configs.
    let long_name = "x".repeat(64);
    for (label, name) in [("empty", ""), ("blank", " "), ("with a space", "a b"), ("leading dash", "-x"), ("64 characters", long_name.as_str()), ("with a quote", "x'y"), ("non-ASCII", "ünï")] {
        m.add(format!("chunk config named {label}"), "INSERT INTO knowledge.chunk_configs (name, model) VALUES ($1::text, 'lexical')", vec![doc(name)], Check::Nothing, CHECK_VIOLATION).rolled_back(&[]);
    }
    m.add("chunk config named like an existing one", "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('lex', 'lexical')", vec![], Check::Nothing, Expect::Fails("23505")).rolled_back(&[]);
    m.add("chunk config in an unknown mode", "INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES ('m', 'lexical', 'later')", vec![], Check::Nothing, CHECK_VIOLATION).rolled_back(&[]);
    m.add("chunk config cfg changed to a bad one", "UPDATE knowledge.chunk_configs SET cfg = '{\"max_size\": -1}' WHERE name = 'lex'", vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    m.add("chunk config cfg changed to a document limit of 1 byte", "UPDATE knowledge.chunk_configs SET cfg = '{\"max_document_size\": 1}' WHERE name = 'lex'", vec![], Check::Nothing, TOO_BIG).rolled_back(&[]);
    // README: "setting the default row's model to potion-base-8m (the static model) makes writes
    // much faster". The config's HNSW index is on its old model's dimension (384) until rebuilt.
    m.add("default config's model set to potion-base-8m (README's tip), reactivated", "UPDATE knowledge.chunk_configs SET active = true, model = 'potion-base-8m' WHERE name = 'default'", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    m.add("default config's model set to lexical, reactivated", "UPDATE knowledge.chunk_configs SET active = true, model = 'lexical' WHERE name = 'default'", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    m.add("config's model changed from 256 to 384 dimensions (potion to MiniLM)", "UPDATE knowledge.chunk_configs SET model = 'all-minilm-l6-v2' WHERE name = 'potion'", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    m.add("config's model changed to lexical (no index)", "UPDATE knowledge.chunk_configs SET model = 'lexical' WHERE name = 'potion'", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    m.add("chunk config renamed under its chunks", "UPDATE knowledge.chunk_configs SET name = 'lex2' WHERE name = 'lex'", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    m.add("chunk config deleted with its chunks", "DELETE FROM knowledge.chunk_configs WHERE name = 'lex'", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    // Rechunking and the queue.
    m.add("rechunk of a missing document", "SELECT knowledge.rechunk(-1)", vec![], Check::Nothing, Expect::Fails("P0002")).rolled_back(&[]);
    m.add("rechunk of the largest bigint", "SELECT knowledge.rechunk(9223372036854775807, 'lex')", vec![], Check::Nothing, Expect::Fails("P0002")).rolled_back(&[]);
    m.add("rechunk with one config", &format!("SELECT knowledge.rechunk({first}, 'lex')"), vec![], Check::StoreExact, ONE_ROW).rolled_back(&[]);
    m.add("rechunk_all progress_every 0", "SELECT knowledge.rechunk_all(NULL, 0)", vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    m.add("rechunk_all progress_every -5", "SELECT knowledge.rechunk_all('lex', -5)", vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    m.add("rechunk_all progress_every i32::MAX", "SELECT knowledge.rechunk_all('lex', 2147483647)", vec![], Check::StoreExact, ONE_ROW).rolled_back(&[]);
    m.add("process_queue batch 0", "SELECT knowledge.process_queue(0)", vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    m.add("process_queue attempts 0", "SELECT knowledge.process_queue(1, 0)", vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    m.add("process_queue batch i32::MAX", "SELECT knowledge.process_queue(2147483647)", vec![], Check::Count, ONE_ROW).rolled_back(&[]);
    m.add("wait_for_queue negative", "SELECT knowledge.wait_for_queue('-1 second')", vec![], Check::Nothing, BAD_CFG);
    m.add("wait_for_queue zero", "SELECT knowledge.wait_for_queue('0')", vec![], Check::Nothing, ONE_ROW);
    m.add("retry_failed of an unknown config", "SELECT knowledge.retry_failed('nope')", vec![], Check::Count, Expect::OneOf(&["00000", "42704"])).rolled_back(&[]);
    m.add("embedding_stats", "SELECT * FROM knowledge.embedding_stats()", vec![], Check::Nothing, OK);
    // attach / detach.
    m.add("attach a table with hostile rows", "SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')", vec![], Check::StoreExact, ONE_ROW).rolled_back(&[]);
    m.add("attach a table with quoted names", r#"SELECT knowledge.attach('"Weird ""Quoted"" Table"', 'Doc; ID', 'Body'' Text', 'lex')"#, vec![], Check::StoreExact, ONE_ROW).rolled_back(&[]);
    m.add("attach with the id as the text", "SELECT knowledge.attach('bad_src', 'id', 'id', 'lex')", vec![], Check::StoreExact, ONE_ROW).rolled_back(&[]);
    m.add("attach twice", "SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')", vec![], Check::Nothing, Expect::Fails("42710"))
        .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
    m.add("attach a view", "SELECT knowledge.attach('bad_src_view', 'id', 'body', 'lex')", vec![], Check::Nothing, Expect::Fails("42809")).rolled_back(&[]);
    m.add("attach a system catalog", "SELECT knowledge.attach('pg_catalog.pg_class', 'oid', 'relname', 'lex')", vec![], Check::Nothing, DENIED).rolled_back(&[]);
    m.add("attach a missing table", "SELECT knowledge.attach('no_such_table', 'id', 'body')", vec![], Check::Nothing, Expect::Fails("42P01")).rolled_back(&[]);
    m.add("attach a missing id column", "SELECT knowledge.attach('bad_src', 'nope', 'body', 'lex')", vec![], Check::Nothing, Expect::Fails("42703")).rolled_back(&[]);
    m.add("attach a missing text column", "SELECT knowledge.attach('bad_src', 'id', 'nope', 'lex')", vec![], Check::Nothing, Expect::Fails("42703")).rolled_back(&[]);
    m.add("attach a system column", "SELECT knowledge.attach('bad_src', 'ctid', 'body', 'lex')", vec![], Check::Nothing, Expect::Fails("42703")).rolled_back(&[]);
    m.add("attach in an unknown language", "SELECT knowledge.attach('bad_src', 'id', 'body', 'lex', 'klingon')", vec![], Check::Nothing, UNKNOWN).rolled_back(&[]);
    m.add("attach a table with a document above max_document_size", "SELECT knowledge.attach('big_src', 'id', 'body', 'lex')", vec![], Check::Nothing, TOO_BIG).rolled_back(&[]);
    m.add("attached row grown above max_document_size", "UPDATE bad_src SET body = repeat('a', 10485761) WHERE id = 1", vec![], Check::Nothing, TOO_BIG)
        .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
    m.add("attached table truncated", "TRUNCATE bad_src", vec![], Check::StoreExact, NO_ROWS).rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
    m.add("attached row's text set to NULL", "UPDATE bad_src SET body = NULL WHERE id = 1", vec![], Check::StoreExact, NO_ROWS).rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
    m.add("detach of a table never attached", "SELECT knowledge.detach('bad_src')", vec![], Check::Nothing, UNKNOWN).rolled_back(&[]);
    m.add("detach of a missing table", "SELECT knowledge.detach('no_such_table')", vec![], Check::Nothing, Expect::Fails("42P01")).rolled_back(&[]);
    // Settings out of range (22023) and settings only a superuser may change.
    for (label, setting) in [
        ("batch_size 0", "pg_chunk.batch_size = 0"),
        ("batch_size 1025", "pg_chunk.batch_size = 1025"),
        ("threads 0", "pg_chunk.threads = 0"),
        ("threads 65", "pg_chunk.threads = 65"),
        ("embedding_cache_mb -1", "pg_chunk.embedding_cache_mb = -1"),
        ("embedding_cache_mb 1 TB", "pg_chunk.embedding_cache_mb = '1TB'"),
        ("batch_size word", "pg_chunk.batch_size = 'many'"),
        ("maintain_chunks word", "pg_chunk.maintain_chunks = 'sometimes'"),
    ] {
        m.add(format!("setting {label}"), format!("SET LOCAL {setting}"), vec![], Check::Nothing, BAD_CFG).rolled_back(&[]);
    }
    m.add("embed_batch with batch_size 1 and no cache", "SELECT vector_dims(embedding), embedding::text LIKE '%NaN%' FROM knowledge.embed_batch(ARRAY['a b', 'c d', NULL, ''], 'potion-base-8m')", vec![], Check::Vectors(DIM_256), Expect::Ok(Some(4)))
        .rolled_back(&["SET LOCAL pg_chunk.batch_size = 1", "SET LOCAL pg_chunk.embedding_cache_mb = 0"]);
    m.add("document written with maintain_chunks off", "INSERT INTO knowledge.documents (content, chunk_config) VALUES ('Bees fly.', 'lex')", vec![], Check::Nothing, NO_ROWS)
        .rolled_back(&["SET LOCAL pg_chunk.maintain_chunks = off"]);
    // Another role: what README reserves for superusers, and what it needs grants for.
    let as_app: &[&str] = &["CREATE ROLE bad_input_app_role", "SET LOCAL ROLE bad_input_app_role"];
    for (label, sql, expect) in [
        ("registers a model", "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension) VALUES ('evil', 'static', 'a/m', 'a/t', 256)", DENIED),
        ("repoints a model", "UPDATE knowledge.models SET model_file = 'potion-base-8m/tokenizer.json'", DENIED),
        ("sets model_dir", "SET LOCAL pg_chunk.model_dir = '/tmp'", DENIED),
        ("sets onnxruntime_library", "SET LOCAL pg_chunk.onnxruntime_library = '/tmp/libevil.so'", DENIED),
        ("deletes chunks", "DELETE FROM knowledge.chunks", DENIED),
        ("writes a document without a grant", "INSERT INTO knowledge.documents (content) VALUES ('x')", DENIED),
        ("adds a chunk config", "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('app', 'lexical')", DENIED),
        ("searches chunks without a grant", "SELECT * FROM knowledge.search('bees', 5, '{\"config\": \"lex\"}')", DENIED),
        ("attaches the store's own table", "SELECT knowledge.attach('knowledge.documents', 'id', 'content', 'lex')", DENIED),
    ] {
        m.add(format!("another role {label}"), sql, vec![], Check::Nothing, expect).rolled_back(as_app);
    }
    m.add("another role chunks", "SELECT chunk_index, content, char_offset, char_length FROM knowledge.chunk($1::text, '{\"model\": \"lexical\"}')", vec![doc("Bees fly. Lava flows.")], Check::Spans, ONE_ROW)
        .rolled_back(as_app);
    m.add("another role embeds", "SELECT vector_dims(knowledge.embed('Bees fly.', 'lexical')), false", vec![], Check::Vectors(DIM_256), ONE_ROW).rolled_back(as_app);
}

fn matrix() -> Vec<Case> {
    let mut m = Matrix::default();
    texts_by_functions(&mut m);
    cfgs_by_functions(&mut m);
    nulls(&mut m);
    models_and_roles(&mut m);
    dimension_mismatches(&mut m);
    search_options(&mut m);
    store(&mut m);
    m.cases
}

// ---------------------------------------------------------------------------------------------
// Running and judging.

struct Outcome {
    /// "00000" for success, the SQLSTATE of an error, or "lost" / "client" when there was none.
    code: String,
    message: String,
    rows: usize,
    /// What the rows of a success got wrong.
    problem: Option<String>,
    elapsed: Duration,
}

fn describe(e: &postgres::Error) -> (String, String) {
    match e.as_db_error() {
        Some(db) => (db.code().code().to_string(), db.message().to_string()),
        None if e.is_closed() => ("lost".to_string(), e.to_string()),
        None => ("client".to_string(), e.to_string()),
    }
}

fn run_case(client: &mut Client, case: &Case) -> Outcome {
    let started = Instant::now();
    let values: Vec<Option<&str>> = case.params.iter().map(|p| p.as_deref()).collect();
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
    let mut outcome = Outcome { code: "00000".into(), message: String::new(), rows: 0, problem: None, elapsed: Duration::ZERO };
    let result = if case.in_transaction {
        match client.transaction() {
            Err(e) => Err((describe(&e), "begin")),
            Ok(mut tx) => {
                let mut result = Ok(Vec::new());
                for statement in &case.setup {
                    if let Err(e) = tx.batch_execute(statement) {
                        result = Err((describe(&e), "setup"));
                        break;
                    }
                }
                if result.is_ok() {
                    result = tx.query(case.sql.as_str(), &params).map_err(|e| (describe(&e), ""));
                }
                if let Ok(rows) = &result {
                    outcome.problem = check(&mut tx, case, rows);
                }
                let _ = tx.rollback();
                result
            }
        }
    } else {
        let result = client.query(case.sql.as_str(), &params).map_err(|e| (describe(&e), ""));
        if let Ok(rows) = &result {
            outcome.problem = check(client, case, rows);
        }
        result
    };
    match result {
        Ok(rows) => outcome.rows = rows.len(),
        Err(((code, message), stage)) => {
            outcome.code = code;
            outcome.message = if stage.is_empty() { message } else { format!("({stage}) {message}") };
        }
    }
    outcome.elapsed = started.elapsed();
    outcome
}

/// What is wrong with the rows of a successful case, if anything.
fn check(db: &mut impl GenericClient, case: &Case, rows: &[Row]) -> Option<String> {
    let problems = match case.check {
        Check::Nothing => Vec::new(),
        Check::Spans => check_spans(case.params.first().cloned().flatten().as_deref().unwrap_or(""), rows),
        Check::Explain => check_explain(case.params.first().cloned().flatten().as_deref().unwrap_or(""), rows),
        Check::Svg => rows
            .iter()
            .filter_map(|r| {
                let svg: Option<String> = r.get(0);
                let svg = svg?;
                let t = svg.trim();
                (!(t.starts_with("<svg") || t.starts_with("<?xml")) || !t.ends_with("</svg>") || t.contains("NaN")).then(|| format!("not a clean SVG: {}", truncate(t, 80)))
            })
            .collect(),
        Check::Vectors(dim) => rows
            .iter()
            .filter_map(|r| {
                let (dims, nan): (Option<i32>, Option<bool>) = (r.get(0), r.get(1));
                match dims {
                    Some(d) if d != dim => Some(format!("{d} dimensions, not {dim}")),
                    Some(_) if nan == Some(true) => Some("NaN in a vector".to_string()),
                    _ => None,
                }
            })
            .collect(),
        Check::Count => rows.iter().filter_map(|r| first_int(r).filter(|&n| n < 0).map(|n| format!("negative count {n}"))).collect(),
        Check::IsTrue => match rows.first().map(|r| r.get::<_, Option<bool>>(0)) {
            Some(Some(true)) => Vec::new(),
            other => vec![format!("expected true, got {other:?}")],
        },
        Check::Search => rows
            .iter()
            .filter_map(|r| {
                let (id, score, similarity): (i64, Option<f64>, Option<f64>) = (r.get(0), r.get(1), r.get(2));
                if !score.is_some_and(f64::is_finite) {
                    Some(format!("chunk {id}: score {score:?}"))
                } else if similarity.is_some_and(f64::is_nan) {
                    Some(format!("chunk {id}: similarity NaN"))
                } else {
                    None
                }
            })
            .collect(),
        Check::Stored => match rows.first() {
            None => vec!["no document id returned".to_string()],
            Some(r) => store_problems(db, Some(r.get::<_, i64>(0))),
        },
        Check::StoreExact => store_problems(db, None),
    };
    (!problems.is_empty()).then(|| format!("{} problem(s), first {}", problems.len(), problems[..problems.len().min(3)].join("; ")))
}

fn first_int(row: &Row) -> Option<i64> {
    row.try_get::<_, Option<i32>>(0).map(|v| v.map(i64::from)).or_else(|_| row.try_get::<_, Option<i64>>(0)).ok().flatten()
}

/// Rows of (index, content, char_offset, char_length[, token_count]) against the document.
fn check_spans(doc: &str, rows: &[Row]) -> Vec<String> {
    let chars: Vec<char> = doc.chars().collect();
    let mut problems = Vec::new();
    let mut previous_offset = -1i64;
    for (i, row) in rows.iter().enumerate() {
        let (index, content, offset, length): (i32, String, i32, i32) = (row.get(0), row.get(1), row.get(2), row.get(3));
        let (offset, length) = (offset as i64, length as i64);
        if index as usize != i {
            problems.push(format!("row {i} has index {index}"));
        }
        if length <= 0 || content.is_empty() {
            problems.push(format!("row {i} is empty (char_length {length})"));
        }
        if offset < previous_offset {
            problems.push(format!("row {i} starts at {offset}, before row {}'s {previous_offset}", i - 1));
        }
        previous_offset = offset;
        if offset < 0 || offset + length > chars.len() as i64 {
            problems.push(format!("row {i}: offsets {offset}+{length} outside a document of {} characters", chars.len()));
            continue;
        }
        let expected: String = chars[offset as usize..(offset + length) as usize].iter().collect();
        if expected != content {
            problems.push(format!("row {i}: content {:?} is not substr(doc, {}, {length}) = {:?}", truncate(&content, 40), offset + 1, truncate(&expected, 40)));
        }
        if content.chars().count() as i64 != length {
            problems.push(format!("row {i}: char_length {length}, content has {} characters", content.chars().count()));
        }
        if row.len() > 4 {
            let tokens: i32 = row.get(4);
            if tokens < 0 {
                problems.push(format!("row {i}: token_count {tokens}"));
            }
        }
    }
    problems
}

/// chunk_explain rows: (sentence_index, char_offset, char_length, distance, smoothed_distance,
/// threshold, score).
fn check_explain(doc: &str, rows: &[Row]) -> Vec<String> {
    let n = doc.chars().count() as i64;
    let mut problems = Vec::new();
    let mut end = 0i64;
    for (i, row) in rows.iter().enumerate() {
        let (index, offset, length): (i32, i32, i32) = (row.get(0), row.get(1), row.get(2));
        let (offset, length) = (offset as i64, length as i64);
        if index as usize != i {
            problems.push(format!("row {i} has index {index}"));
        }
        if offset < end || length <= 0 || offset + length > n {
            problems.push(format!("row {i}: sentence {offset}+{length} out of order or outside {n} characters"));
        }
        end = offset + length;
        for (column, name) in [(3, "distance"), (4, "smoothed_distance"), (5, "threshold"), (6, "score")] {
            let value: Option<f64> = row.get(column);
            if value.is_some_and(|v| !v.is_finite()) {
                problems.push(format!("row {i}: {name} {value:?}"));
            }
        }
    }
    problems
}

/// Chunks in the store (of one document, or all) that are not their document's text at their
/// offsets, are not numbered 0, 1, … per document and config, or lack a sound embedding of their
/// model's dimension. Compared here rather than with substr in SQL, which would read a 5 MB
/// document once per chunk.
fn store_problems(db: &mut impl GenericClient, document: Option<i64>) -> Vec<String> {
    let docs = "SELECT d.id, d.content FROM knowledge.documents AS d
                WHERE ($1::bigint IS NULL OR d.id = $1) AND EXISTS (SELECT FROM knowledge.chunks AS c WHERE c.document_id = d.id)";
    let chunks = "SELECT c.document_id, c.chunk_config, c.chunk_index, c.content, c.char_offset, c.char_length,
                         CASE WHEN c.embedding IS NULL THEN 'no embedding'
                              WHEN vector_dims(c.embedding) <> coalesce(m.dimension, 256) THEN format('an embedding of %s dimensions', vector_dims(c.embedding))
                              WHEN c.embedding::text LIKE '%NaN%' THEN 'NaN in its embedding' END
                  FROM knowledge.chunks AS c LEFT JOIN knowledge.models AS m ON m.name = c.model
                  WHERE ($1::bigint IS NULL OR c.document_id = $1)
                  ORDER BY c.document_id, c.chunk_config, c.chunk_index";
    let (docs, chunks) = match (db.query(docs, &[&document]), db.query(chunks, &[&document])) {
        (Ok(d), Ok(c)) => (d, c),
        (Err(e), _) | (_, Err(e)) => return vec![format!("checking the store failed: {}", describe(&e).1)],
    };
    let texts: std::collections::HashMap<i64, Vec<char>> = docs.iter().map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1).chars().collect())).collect();
    let mut problems = Vec::new();
    let mut expected_index = (0i64, String::new(), 0i32);
    for row in &chunks {
        let (document_id, config, index, content, offset, length, embedding): (i64, String, i32, String, i32, i32, Option<String>) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4), row.get(5), row.get(6));
        let at = format!("chunk {index} of document {document_id} ({config})");
        if (document_id, &config) != (expected_index.0, &expected_index.1) {
            expected_index = (document_id, config.clone(), 0);
        }
        if index != expected_index.2 {
            problems.push(format!("{at}: expected chunk_index {}", expected_index.2));
        }
        expected_index.2 = index + 1;
        let chars = &texts[&document_id];
        let (start, end) = (offset as usize, offset as usize + length as usize);
        if offset < 0 || length <= 0 || end > chars.len() {
            problems.push(format!("{at}: offsets {offset}+{length} outside a document of {} characters", chars.len()));
        } else if chars[start..end].iter().collect::<String>() != content {
            problems.push(format!("{at}: content {:?} is not substr(content, {}, {length})", truncate(&content, 40), offset + 1));
        }
        if let Some(embedding) = embedding {
            problems.push(format!("{at}: {embedding}"));
        }
    }
    problems
}

/// Why an outcome does not match what the case expects, if it does not.
fn verdict(expect: Expect, outcome: &Outcome) -> Option<String> {
    let code = outcome.code.as_str();
    if code == "XX000" {
        return Some("internal error (XX000)".to_string());
    }
    if code == "lost" {
        return Some("the connection was lost".to_string());
    }
    let succeeded = code == "00000";
    let wrong = match expect {
        Expect::Ok(_) if !succeeded => Some("expected success".to_string()),
        Expect::Ok(Some(n)) if outcome.rows != n => Some(format!("expected {n} row(s), got {}", outcome.rows)),
        Expect::Ok(_) => None,
        Expect::Fails(expected) if code != expected => Some(format!("expected SQLSTATE {expected}")),
        Expect::Fails(_) => None,
        Expect::OneOf(codes) if !codes.contains(&code) => Some(format!("expected one of {codes:?}")),
        Expect::OneOf(_) => None,
    };
    wrong.or_else(|| if succeeded { outcome.problem.clone() } else { None })
}

fn truncate(s: &str, chars: usize) -> String {
    let mut t: String = s.chars().take(chars).collect::<String>().escape_debug().to_string();
    if s.chars().count() > chars {
        t.push('…');
    }
    t
}

fn describe_params(params: &[Option<Doc>]) -> String {
    params
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            None => format!("${} = NULL", i + 1),
            Some(p) => format!("${} = \"{}\" ({} bytes)", i + 1, truncate(p, 40), p.len()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// The database, the session and the server log.

/// Retries `f` (which panics when the cluster is unreachable) for up to 3 minutes: another
/// process may be restarting the cluster.
fn retrying<T>(what: &str, f: impl Fn() -> T) -> T {
    let started = Instant::now();
    loop {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(&f)) {
            Ok(value) => return value,
            Err(e) if started.elapsed() > Duration::from_secs(180) => std::panic::resume_unwind(e),
            Err(_) => {
                eprintln!("bad_input: {what} failed; the cluster may be restarting, retrying in 5 s");
                std::thread::sleep(Duration::from_secs(5));
            }
        }
    }
}

fn prepare_session(client: &mut Client) {
    client
        .batch_execute(
            "SET client_min_messages = warning;
             SET pg_chunk.default_model = 'lexical';
             SET statement_timeout = '120s';",
        )
        .unwrap();
}

/// The store and tables the cases use: chunk configs `lex` (lexical) and `potion`
/// (potion-base-8m) over a few documents, the `default` config (MiniLM) inactive, models
/// registered against the wrong files or dimension, and tables to attach.
fn prepare_database(client: &mut Client) {
    prepare_session(client);
    client
        .batch_execute(
            "UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, model) VALUES ('lex', 'lexical'), ('potion', 'potion-base-8m');
             INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension) VALUES
                 ('potion-384', 'static', 'potion-base-8m/model.safetensors', 'potion-base-8m/tokenizer.json', 384),
                 ('minilm-as-static', 'static', 'all-minilm-l6-v2/model.optimized.onnx', 'all-minilm-l6-v2/tokenizer.json', 384),
                 ('tok-swapped', 'static', 'potion-base-8m/model.safetensors', 'all-minilm-l6-v2/tokenizer.json', 256),
                 ('missing-file', 'static', 'no-such-model/model.safetensors', 'no-such-model/tokenizer.json', 256),
                 ('potion-as-onnx', 'transformer', 'potion-base-8m/model.safetensors', 'potion-base-8m/tokenizer.json', 256);
             INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension, optimize_graph) VALUES
                 ('minilm-256', 'transformer', 'all-minilm-l6-v2/model.optimized.onnx', 'all-minilm-l6-v2/tokenizer.json', 256, false);
             CREATE TABLE bad_src (id int PRIMARY KEY, body text);
             INSERT INTO bad_src VALUES
                 (1, 'Hello there. General Kenobi!'), (2, NULL), (3, ''), (4, '   '),
                 (5, '👩‍👩‍👧‍👦🏳️‍🌈 🇯🇵👍🏽'), (6, 'عادت النحل إلى الخلية. هل تعود؟'), (7, E'ctrl\\x01\\x02\\x1f\\x7f text'),
                 (8, 'e' || repeat(U&'\\0301', 500));
             CREATE VIEW bad_src_view AS SELECT * FROM bad_src;
             CREATE TABLE big_src (id int PRIMARY KEY, body text);
             INSERT INTO big_src VALUES (1, repeat('a', 10485761));
             CREATE TABLE \"Weird \"\"Quoted\"\" Table\" (\"Doc; ID\" int PRIMARY KEY, \"Body' Text\" text);
             INSERT INTO \"Weird \"\"Quoted\"\" Table\" VALUES (1, 'Glaciers carve valleys.'), (2, 'Sourdough rises. Bees fly.');",
        )
        .unwrap();
    let sample = sample_document();
    client.execute("INSERT INTO knowledge.documents (title, content) VALUES ('sample', $1)", &[&sample]).unwrap();
    for i in 0..5 {
        client.execute("INSERT INTO knowledge.documents (title, content, metadata) VALUES ($1, $2, '{\"topic\": true}')", &[&format!("topic {i}"), &topic_document(i)]).unwrap();
    }
}

fn server_log() -> String {
    std::env::var("PG_CHUNK_SERVER_LOG").unwrap_or_else(|_| SERVER_LOG.to_string())
}

/// Lines of the server log written since `from` (bytes) that tell of a crashed backend.
fn crashes_logged_since(from: u64) -> Vec<String> {
    let log = std::fs::read(server_log()).unwrap_or_else(|e| panic!("cannot read the server log {}: {e}", server_log()));
    let start = if (log.len() as u64) < from { 0 } else { from as usize }; // rotated: read it all
    String::from_utf8_lossy(&log[start..])
        .lines()
        .filter(|line| ["terminated by signal", "PANIC", "was terminated"].iter().any(|p| line.contains(p)))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_function_refuses_bad_input_deliberately() {
    let log_start = std::fs::metadata(server_log()).unwrap_or_else(|e| panic!("cannot read the server log {}: {e}", server_log())).len();
    let started = Instant::now();
    let mut client = retrying("making the database", || fresh_database(DATABASE));
    prepare_database(&mut client);
    let original_backend: i32 = client.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);

    let cases = matrix();
    let mut mismatches = Vec::new();
    let mut by_code: BTreeMap<String, usize> = BTreeMap::new();
    let mut timings = Vec::new();
    let mut reconnected = false;
    let mut ok_rows = 0;
    for case in &cases {
        let outcome = run_case(&mut client, case);
        *by_code.entry(outcome.code.clone()).or_default() += 1;
        ok_rows += outcome.rows;
        timings.push((outcome.elapsed, case.label.clone()));
        if let Some(why) = verdict(case.expect, &outcome) {
            mismatches.push(format!(
                "{}\n    sql: {}\n    params: {}\n    {why}; got {} {}",
                case.label,
                truncate(&case.sql, 200),
                describe_params(&case.params),
                outcome.code,
                truncate(&outcome.message, 300)
            ));
        }
        if client.is_closed() {
            reconnected = true;
            client = retrying("reconnecting", || connect_database(DATABASE));
            prepare_session(&mut client);
        }
    }

    // The connection that ran every case is still the same backend, alive.
    let alive = client.query_one("SELECT pg_backend_pid(), 1", &[]);
    let still_alive = matches!(&alive, Ok(row) if row.get::<_, i32>(0) == original_backend && row.get::<_, i32>(1) == 1);

    let ok = by_code.get("00000").copied().unwrap_or(0);
    let errors: Vec<String> = by_code.iter().filter(|(c, _)| *c != "00000").map(|(c, n)| format!("{c}: {n}")).collect();
    println!(
        "bad_input: {} cases in {:.1} s: {ok} ok ({ok_rows} rows), errors by SQLSTATE: {}; {} mismatch(es)",
        cases.len(),
        started.elapsed().as_secs_f64(),
        errors.join(", "),
        mismatches.len()
    );
    timings.sort_by(|a, b| b.0.cmp(&a.0));
    for (elapsed, label) in timings.iter().take(8) {
        println!("  slowest: {:>7.3} s  {label}", elapsed.as_secs_f64());
    }

    let crashes = crashes_logged_since(log_start);
    let mut failures = Vec::new();
    if !mismatches.is_empty() {
        failures.push(format!("{} of {} cases did not do what README says:\n  {}", mismatches.len(), cases.len(), mismatches.join("\n  ")));
    }
    if reconnected || !still_alive {
        failures.push(format!("the test's connection did not survive the matrix (reconnected: {reconnected}, final check: {:?})", alive.map(|r| r.get::<_, i32>(0))));
    }
    if !crashes.is_empty() {
        failures.push(format!("the server log tells of crashes during the test:\n  {}", crashes.join("\n  ")));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
