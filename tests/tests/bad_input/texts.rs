//! The hostile texts, and the functions that take a document crossed with each of them.

use super::{Check, Doc, Expect, Matrix, DIM_256, DIM_384, MAX_DOCUMENT_SIZE, NO_ROWS, OK, ONE_ROW, TOO_BIG};
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// "" or spaces: no rows anywhere (docs/sql.md), an empty search query included.
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
    let words = [
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
        "sed",
        "do",
        "eiusmod",
        "tempor",
        "incididunt",
        "labore",
        "magna",
        "aliqua",
        "bees",
        "volcano",
        "river",
        "glacier",
    ];
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
    let control_only: String = (1u8..=0x1f)
        .chain([0x7f])
        .filter(|b| !(b'\t'..=b'\r').contains(b))
        .map(char::from)
        .collect::<String>()
        .repeat(20);
    let zalgo: String = "Zalgo comes. He waits."
        .chars()
        .flat_map(|c| {
            std::iter::once(c).chain((0..30).map(move |i| char::from_u32(0x300 + (i * 7 + c as u32) % 0x70).unwrap()))
        })
        .collect();
    let one_cluster = format!("a{}. Then more text.", "\u{301}\u{316}\u{35c}".repeat(2000));
    let emoji = "👩‍👩‍👧‍👦🏳️‍🌈🇯🇵👍🏽1️⃣🧪🫠 ".repeat(300);
    let mixed = "The bees are back. 蜜蜂回来了。मधुमक्खियाँ लौट आई हैं। Пчёлы вернулись! Οι μέλισσες επέστρεψαν; ミツバチが戻った。벌들이 돌아왔다. ผึ้งกลับมาแล้ว ".repeat(40);
    let arabic = "عادت النحل إلى الخلية. هل تعود النحل في الشتاء؟ نعم، تعود النحل ١٢٣ مرة. البراكين تثور عندما ترتفع الصهارة.\n\n".repeat(40);
    let hebrew =
        "\u{200f}הַדְּבוֹרִים חָזְרוּ לַכַּוֶּרֶת. \u{202e}override text\u{202c} האם הן יחזרו? \u{2067}isolate\u{2069} כן!\u{200e} "
            .repeat(40);
    let invisible = "zero\u{200b}width\u{200c}joiners\u{200d}and\u{feff}bom\u{ad}soft\u{2060}joiner. ".repeat(50);
    let specials =
        "\u{ffff}\u{10ffff}\u{e000}\u{fdd0} noncharacters and private use. \u{fffd} replacement. ".repeat(30);
    vec![
        Text { label: "empty", body: Rc::from(""), kind: Kind::Empty },
        Text { label: "spaces", body: Rc::from("     "), kind: Kind::Empty },
        Text { label: "whitespace mix", body: Rc::from(" \t\n\r\n\x0b\x0c  \n\n\t"), kind: Kind::Blank },
        Text {
            label: "unicode whitespace",
            body: Rc::from("\u{a0}\u{2028}\u{2029}\u{3000}\u{2003}\u{85}\u{1680} \u{202f}"),
            kind: Kind::Blank,
        },
        Text { label: "one char", body: Rc::from("a"), kind: Kind::Normal },
        Text { label: "one emoji", body: Rc::from("🧪"), kind: Kind::Normal },
        Text { label: "lone combining mark", body: Rc::from("\u{301}"), kind: Kind::Normal },
        Text {
            label: "punctuation only",
            body: Rc::from("?!.,;:…—–-()[]{}\"'«»¿¡。！？।॥ ".repeat(100).as_str()),
            kind: Kind::Normal,
        },
        Text {
            label: "ellipses only",
            body: Rc::from(". .. ... .... ..... ……".repeat(50).as_str()),
            kind: Kind::Normal,
        },
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
        Text {
            label: "CR-only line breaks",
            body: Rc::from("Line one.\rLine two.\r\rParagraph two.\r\nWindows line.\r\n\r\n".repeat(50).as_str()),
            kind: Kind::Normal,
        },
        Text {
            label: "markdown skeleton",
            body: Rc::from("#\n##\n- \n* \n1.\n> \n```\n```\n---\n|a|b|\n".repeat(50).as_str()),
            kind: Kind::Normal,
        },
        Text {
            label: "abbreviations, numbers, urls",
            body: Rc::from(
                "Mr. Dr. e.g. i.e. etc. U.S. 3.14 v1.2.3 https://a.b/c.d?e=f. a@b.co ... ".repeat(60).as_str(),
            ),
            kind: Kind::Normal,
        },
        Text {
            label: "one sentence repeated",
            body: Rc::from("Same sentence here. ".repeat(4000).as_str()),
            kind: Kind::Normal,
        },
        Text { label: "200 KB without a space", body: Rc::from("a".repeat(200_000).as_str()), kind: Kind::Normal },
        Text {
            label: "300 KB of CJK without punctuation",
            body: Rc::from("蜜蜂回来了天气很好我们去公园".repeat(7_200).as_str()),
            kind: Kind::Normal,
        },
        Text {
            label: "100 KB of emoji without a space",
            body: Rc::from("🧪🫠👍🏽".repeat(8_000).as_str()),
            kind: Kind::Normal,
        },
        Text {
            label: "5 MB line without punctuation",
            body: Rc::from(line_without_punctuation(5 * 1024 * 1024).as_str()),
            kind: Kind::Huge,
        },
        Text {
            label: "max_document_size + 1 byte",
            body: Rc::from(
                sized(&format!("{}. ", "Words of a long sentence that goes on ".repeat(25)), MAX_DOCUMENT_SIZE + 1)
                    .as_str(),
            ),
            kind: Kind::TooBig,
        },
    ]
}

/// The functions that take a document, crossed with every text.
pub(super) fn texts_by_functions(m: &mut Matrix) {
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
            (
                "chunk semantic lexical threshold, sentence overlap, token sizes",
                r#"{"model": "lexical", "method": "threshold", "overlap": "1 sentences", "max_size": "40 tokens", "inline_threshold": 0}"#,
            ),
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
        m.add(
            label("embed lexical"),
            "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed($1::text, 'lexical') AS e) AS s",
            vec![t.clone()],
            Check::Vectors(DIM_256),
            ONE_ROW,
        );
        m.add(label("embed potion as query"), "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed($1::text, 'potion-base-8m', 'query') AS e) AS s", vec![t.clone()], Check::Vectors(DIM_256), ONE_ROW);
        m.add(label("embed_batch potion"), "SELECT vector_dims(embedding), embedding::text LIKE '%NaN%' FROM knowledge.embed_batch(ARRAY[$1::text, NULL, $1::text], 'potion-base-8m')", vec![t.clone()], Check::Vectors(DIM_256), Expect::Ok(Some(3)));
        m.add(
            label("token_count lexical"),
            "SELECT knowledge.token_count($1::text, 'lexical')",
            vec![t.clone()],
            Check::Count,
            ONE_ROW,
        );
        m.add(
            label("token_count potion"),
            "SELECT knowledge.token_count($1::text, 'potion-base-8m')",
            vec![t.clone()],
            Check::Count,
            ONE_ROW,
        );
        // The store: a document of this text, chunked and embedded by the triggers.
        let stored = match text.kind {
            Kind::TooBig => TOO_BIG,
            _ => OK,
        };
        m.add(
            label("store insert (lexical config)"),
            "INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1::text, 'lex') RETURNING id",
            vec![t.clone()],
            Check::Stored,
            stored,
        )
        .rolled_back(&[]);
        if !matches!(text.kind, Kind::Huge | Kind::TooBig) {
            m.add(
                label("store insert (potion config)"),
                "INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1::text, 'potion') RETURNING id",
                vec![t.clone()],
                Check::Stored,
                stored,
            )
            .rolled_back(&[]);
            m.add(
                label("attached table row"),
                "INSERT INTO bad_src VALUES (1000, $1::text)",
                vec![t.clone()],
                Check::StoreExact,
                stored,
            )
            .rolled_back(&["SELECT knowledge.attach('bad_src', 'id', 'body', 'lex')"]);
            // A text as a search query. Left out for the 5 MB ones: parsing them as a tsquery
            // alone takes PostgreSQL most of a minute (see search_of_long_queries below).
            // docs/errors.md: a query above 10,000 characters is refused with 54000.
            let search = match text.kind {
                Kind::Empty => NO_ROWS,
                _ if text.body.chars().count() > 10_000 => TOO_BIG,
                _ => OK,
            };
            m.add(
                label("search hybrid (lexical config)"),
                "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 5, '{\"config\": \"lex\"}')",
                vec![t.clone()],
                Check::Search,
                search,
            );
            m.add(label("search vector (potion config)"), "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 3, '{\"config\": \"potion\", \"mode\": \"vector\", \"min_score\": 0.1}')", vec![t.clone()], Check::Search, search);
        } else {
            m.add(label("store update to it"), "UPDATE knowledge.documents SET content = $1::text WHERE id = (SELECT min(id) FROM knowledge.documents) RETURNING id", vec![t.clone()], Check::Stored, stored).rolled_back(&[]);
        }
    }
    // A handful with the transformer (all-MiniLM-L6-v2).
    let hostile = texts();
    for text in hostile.iter().filter(|t| {
        ["mixed scripts", "hebrew rtl with bidi controls", "emoji only", "control characters only"].contains(&t.label)
    }) {
        let t = Some(Rc::clone(&text.body));
        m.add(format!("embed minilm × {}", text.label), "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed($1::text, 'all-minilm-l6-v2') AS e) AS s", vec![t.clone()], Check::Vectors(DIM_384), ONE_ROW);
        m.add(
            format!("token_count minilm × {}", text.label),
            "SELECT knowledge.token_count($1::text, 'all-minilm-l6-v2')",
            vec![t],
            Check::Count,
            ONE_ROW,
        );
    }
    let mixed = hostile.iter().find(|t| t.label == "mixed scripts").map(|t| Rc::clone(&t.body));
    m.add("chunk semantic minilm × mixed scripts", "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, '{\"model\": \"all-minilm-l6-v2\", \"inline_threshold\": 0}') ORDER BY chunk_index", vec![mixed], Check::Spans, OK);

    // Exactly max_document_size: accepted (cheap strategies only).
    let at_limit: Doc = Rc::from(
        sized(&format!("{}. ", "Words of a long sentence that goes on ".repeat(25)), MAX_DOCUMENT_SIZE).as_str(),
    );
    m.add("chunk fixed × exactly max_document_size", "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, '{\"model\": \"lexical\", \"strategy\": \"fixed\", \"max_size\": 20000, \"overlap\": 100}') ORDER BY chunk_index", vec![Some(Rc::clone(&at_limit))], Check::Spans, OK);
    m.add("chunk semantic lexical × exactly max_document_size", "SELECT chunk_index, content, char_offset, char_length, token_count FROM knowledge.chunk($1::text, '{\"model\": \"lexical\", \"max_size\": 20000}') ORDER BY chunk_index", vec![Some(Rc::clone(&at_limit))], Check::Spans, OK);
    // max_document_size counts bytes: 3.6 M CJK characters are 10.8 MB.
    let cjk: Doc = Rc::from("蜜蜂回来了。".repeat(600_000).as_str());
    m.add(
        "chunk × CJK under the limit in characters, over it in bytes",
        "SELECT count(*) FROM knowledge.chunk($1::text, '{\"model\": \"lexical\"}')",
        vec![Some(Rc::clone(&cjk))],
        Check::Nothing,
        TOO_BIG,
    );
    m.add(
        "store insert × CJK over the limit in bytes",
        "INSERT INTO knowledge.documents (content, chunk_config) VALUES ($1::text, 'lex')",
        vec![Some(cjk)],
        Check::Nothing,
        TOO_BIG,
    )
    .rolled_back(&[]);
    m.add(
        "chunk semantic lexical × max_document_size + 1 via cfg",
        "SELECT count(*) FROM knowledge.chunk($1::text, '{\"model\": \"lexical\", \"max_document_size\": 10485759}')",
        vec![Some(at_limit)],
        Check::Nothing,
        TOO_BIG,
    );
}
