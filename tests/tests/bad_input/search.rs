//! Search options, k and query lengths.

use super::{doc, Check, Expect, Matrix, BAD_CFG, NO_ROWS, OK, TOO_BIG, UNKNOWN};
use pg_chunk_client_tests::connect;
use std::collections::BTreeSet;

/// Search options: (label, options, what the search must do). Every option is tried with a value
/// that is refused (`search_options_are_one_list`).
fn option_cases() -> Vec<(&'static str, &'static str, Expect)> {
    vec![
        ("none", "{}", OK),
        ("mode vector", r#"{"mode": "vector"}"#, OK),
        ("mode text", r#"{"mode": "text"}"#, OK),
        ("mode null", r#"{"mode": null}"#, OK),
        ("mode in capitals", r#"{"mode": "VECTOR"}"#, BAD_CFG),
        ("mode number", r#"{"mode": 1}"#, BAD_CFG),
        ("mode array", r#"{"mode": ["text"]}"#, BAD_CFG),
        ("fusion scores", r#"{"fusion": "scores"}"#, OK),
        ("fusion rrf", r#"{"fusion": "rrf"}"#, OK),
        ("fusion null", r#"{"fusion": null}"#, OK),
        ("fusion rrf in text mode", r#"{"mode": "text", "fusion": "rrf"}"#, OK),
        ("fusion in capitals", r#"{"fusion": "RRF"}"#, BAD_CFG),
        ("fusion unknown", r#"{"fusion": "z"}"#, BAD_CFG),
        ("fusion number", r#"{"fusion": 1}"#, BAD_CFG),
        ("fusion array", r#"{"fusion": ["rrf"]}"#, BAD_CFG),
        ("neighbours 0", r#"{"neighbours": 0}"#, OK),
        ("neighbours 1", r#"{"neighbours": 1}"#, OK),
        ("neighbours 0 with fusion rrf", r#"{"fusion": "rrf", "neighbours": 0}"#, OK),
        ("neighbours with fusion rrf", r#"{"fusion": "rrf", "neighbours": 0.3}"#, BAD_CFG),
        ("neighbours in vector mode", r#"{"mode": "vector", "neighbours": 0.3}"#, BAD_CFG),
        ("neighbours negative", r#"{"neighbours": -0.1}"#, BAD_CFG),
        ("neighbours above 1", r#"{"neighbours": 1.5}"#, BAD_CFG),
        ("neighbours as a string", r#"{"neighbours": "0.3"}"#, BAD_CFG),
        ("neighbours null", r#"{"neighbours": null}"#, BAD_CFG),
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
        ("filter empty", r#"{"filter": {}}"#, OK),
        (
            "filter of every operator",
            r#"{"filter": {"$or": [{"a": 1}, {"$and": [{"b": {"$ne": null, "$nin": [1]}}, {"$not": {"c": {"$in": ["x"]}}}]}, {"d": {"$gt": 1, "$gte": 1, "$lt": 2, "$lte": 2}}, {"e": {"$between": ["a", "b"]}}, {"f": {"$like": "a%", "$exists": true, "$empty": false}}, {"g": {"$ilike": "_"}}, {"h": {"$eq": false}}]}}"#,
            OK,
        ),
        ("filter array", r#"{"filter": []}"#, BAD_CFG),
        ("filter string", r#"{"filter": "a == 1"}"#, BAD_CFG),
        ("filter JSON null", r#"{"filter": null}"#, BAD_CFG),
        ("filter unknown operator", r#"{"filter": {"a": {"$regex": "x"}}}"#, BAD_CFG),
        ("filter unknown top-level operator", r#"{"filter": {"$nor": [{"a": 1}]}}"#, BAD_CFG),
        ("filter $in of a string", r#"{"filter": {"a": {"$in": "x"}}}"#, BAD_CFG),
        ("filter $between of one", r#"{"filter": {"a": {"$between": [1]}}}"#, BAD_CFG),
        ("filter $exists of a string", r#"{"filter": {"a": {"$exists": "yes"}}}"#, BAD_CFG),
        ("filter $empty of a number", r#"{"filter": {"a": {"$empty": 1}}}"#, BAD_CFG),
        ("filter $and empty", r#"{"filter": {"$and": []}}"#, BAD_CFG),
        ("filter $not of an array", r#"{"filter": {"$not": [{"a": 1}]}}"#, BAD_CFG),
        ("filter value an object", r#"{"filter": {"a": {"b": 1}}}"#, BAD_CFG),
        ("filter number beyond f64", r#"{"filter": {"a": 1e400}}"#, BAD_CFG),
        ("filter quotes in a key", r#"{"filter": {"a\" || true || \"": 1}}"#, OK),
        ("language english", r#"{"language": "english"}"#, OK),
        ("language schema-qualified", r#"{"language": "pg_catalog.simple"}"#, OK),
        ("language unknown", r#"{"language": "klingon"}"#, UNKNOWN),
        ("language as a numeric oid string", r#"{"language": "5"}"#, Expect::OneOf(&["42704", "22023"])),
        ("language empty", r#"{"language": ""}"#, Expect::OneOf(&["42704", "22023", "42602"])),
        (
            "language injection",
            r#"{"language": "english'); DROP TABLE knowledge.documents; --"}"#,
            Expect::OneOf(&["42704", "22023", "42602"]),
        ),
        ("config empty", r#"{"config": ""}"#, UNKNOWN),
        ("config number", r#"{"config": 1}"#, UNKNOWN),
        ("config null: default (MiniLM, no chunks)", r#"{"config": null}"#, NO_ROWS),
        ("config default, vector mode (MiniLM)", r#"{"config": "default", "mode": "vector"}"#, NO_ROWS),
        ("k1 0", r#"{"k1": 0}"#, OK),
        ("k1 10", r#"{"k1": 10}"#, OK),
        ("k1 negative", r#"{"k1": -0.1}"#, BAD_CFG),
        ("k1 above 10", r#"{"k1": 11}"#, BAD_CFG),
        ("k1 1e400", r#"{"k1": 1e400}"#, BAD_CFG),
        ("k1 as a string", r#"{"k1": "1.2"}"#, BAD_CFG),
        ("k1 null", r#"{"k1": null}"#, BAD_CFG),
        ("b 0", r#"{"b": 0}"#, OK),
        ("b 1", r#"{"b": 1}"#, OK),
        ("b 1e-400", r#"{"b": 1e-400}"#, BAD_CFG),
        ("b above 1", r#"{"b": 1.5}"#, BAD_CFG),
        ("b as a string", r#"{"b": "0.75"}"#, BAD_CFG),
        ("b array", r#"{"b": [0.75]}"#, BAD_CFG),
    ]
}

/// Search options, and a search query too long for full text.
pub(super) fn search_options(m: &mut Matrix) {
    for (label, options, expect) in option_cases() {
        m.add(
            format!("search options {label}"),
            "SELECT chunk_id, score, similarity FROM knowledge.search('bees in the hive', 5, $1::text::jsonb)",
            vec![doc(options)],
            Check::Search,
            expect,
        );
    }
    let deep = format!(r#"{{"metadata": {}{{}}{}}}"#, r#"{"a": "#.repeat(100), "}".repeat(100));
    m.add(
        "search options metadata 100 deep",
        "SELECT chunk_id, score, similarity FROM knowledge.search('bees', 5, $1::text::jsonb)",
        vec![doc(&deep)],
        Check::Search,
        OK,
    );
    // Nesting beyond serde_json's 128 is refused like any unreadable filter.
    let deep = format!(r#"{{"filter": {}{{}}{}}}"#, r#"{"$not": "#.repeat(200), "}".repeat(200));
    m.add(
        "search options filter 200 deep",
        "SELECT chunk_id, score, similarity FROM knowledge.search('bees', 5, $1::text::jsonb)",
        vec![doc(&deep)],
        Check::Search,
        BAD_CFG,
    );
    for (label, k) in [("0", "0"), ("-1", "-1"), ("1001", "1001"), ("i32::MAX", "2147483647")] {
        m.add(
            format!("search k = {label}"),
            format!("SELECT * FROM knowledge.search('bees', {k})"),
            vec![],
            Check::Nothing,
            BAD_CFG,
        );
    }
    // docs/errors.md: k from 1 to 1000; search takes 4 × k candidates with hnsw.ef_search = max(100, 4 × k).
    for k in ["1", "250", "251", "1000"] {
        m.add(
            format!("search k = {k}"),
            format!("SELECT chunk_id, score, similarity FROM knowledge.search('bees', {k}, '{{\"config\": \"lex\"}}')"),
            vec![],
            Check::Search,
            OK,
        );
    }
    // docs/errors.md: a query of up to 10,000 characters is searched, a longer one refused with 54000
    // (PostgreSQL's tsquery parser would run out of stack near 20,000 words).
    let at_limit = "word ".repeat(2_000);
    m.add(
        "search with a query of 10000 characters",
        "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 5, '{\"config\": \"lex\"}')",
        vec![doc(&at_limit)],
        Check::Search,
        OK,
    );
    let long_query = "word ".repeat(20_000);
    m.add(
        "search with a query of 20000 words",
        "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 5, '{\"config\": \"lex\"}')",
        vec![doc(&long_query)],
        Check::Search,
        TOO_BIG,
    );
    let long_word = "a".repeat(100_000);
    m.add(
        "search with a query of one 100 KB word",
        "SELECT chunk_id, score, similarity FROM knowledge.search($1::text, 5, '{\"config\": \"lex\"}')",
        vec![doc(&long_word)],
        Check::Search,
        TOO_BIG,
    );
}

/// The search options are one list, the fields of `knowledge_internal.search_settings`: the hint
/// of an unknown option names them in order, docs/store.md's table has a row for each, in the
/// same order, and each is tried above with a value that is refused.
#[test]
fn search_options_are_one_list() {
    let mut client = connect();
    let names: Vec<String> = client.query_one("SELECT knowledge_internal.search_option_names()", &[]).unwrap().get(0);
    assert!(names.len() > 1, "{names:?}");

    let error = client.query("SELECT * FROM knowledge.search('bees', 5, '{\"bogus\": 1}')", &[]).unwrap_err();
    let hint = error.as_db_error().and_then(|e| e.hint()).unwrap_or_default().to_string();
    let (last, rest) = names.split_last().unwrap();
    assert_eq!(hint, format!("Options are {} and {last}.", rest.join(", ")));

    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/store.md")).unwrap();
    let documented: Vec<String> = page
        .lines()
        .skip_while(|line| !line.starts_with("| option | default | meaning |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| line.split('|').nth(1).unwrap_or_default().trim().trim_matches('`').to_string())
        .collect();
    assert_eq!(documented, names, "docs/store.md's table of search options");

    let refused: BTreeSet<String> = option_cases()
        .into_iter()
        .filter(|(_, _, expect)| matches!(expect, Expect::Fails(_)))
        .filter_map(|(_, options, _)| serde_json::from_str::<serde_json::Value>(options).ok())
        .filter_map(|options| options.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()))
        .flatten()
        .collect();
    let untried: Vec<&String> = names.iter().filter(|name| !refused.contains(*name)).collect();
    assert!(untried.is_empty(), "options without a case that refuses a bad value: {untried:?}");
}
