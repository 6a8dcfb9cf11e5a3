use super::*;
use serde_json::json;

fn path(filter: Value) -> String {
    jsonpath(&filter).unwrap_or_else(|e| panic!("{filter} refused: {e}"))
}

fn refusal(filter: Value) -> String {
    match jsonpath(&filter) {
        Ok(path) => panic!("{filter} written as {path}"),
        Err(FilterError(message)) => message,
    }
}

#[test]
fn a_field_and_a_value_is_equality() {
    assert_eq!(path(json!({"collection": "sample"})), r#"$."collection" == "sample""#);
    assert_eq!(
        path(json!({"n": 3, "ok": true, "gone": null})),
        r#"($."gone" == null) && ($."n" == 3) && ($."ok" == true)"#
    );
    assert_eq!(path(json!({})), "true");
}

#[test]
fn each_field_operator_is_written() {
    let cases = [
        (json!({"$eq": "a"}), r#"$."f" == "a""#),
        (json!({"$ne": 2}), r#"exists($."f") && !($."f" == 2)"#),
        (json!({"$lt": 2.5}), r#"$."f" < 2.5"#),
        (json!({"$lte": -1}), r#"$."f" <= -1"#),
        (json!({"$gt": "m"}), r#"$."f" > "m""#),
        (json!({"$gte": 1e300}), r#"$."f" >= 1e+300"#),
        (json!({"$in": [1, "a", null]}), r#"($."f" == 1) || ($."f" == "a") || ($."f" == null)"#),
        (json!({"$in": []}), "false"),
        (json!({"$nin": [1, 2]}), r#"exists($."f") && !(($."f" == 1) || ($."f" == 2))"#),
        (json!({"$nin": []}), r#"exists($."f") && !(false)"#),
        (json!({"$between": [1, 5]}), r#"$."f" >= 1 && $."f" <= 5"#),
        (json!({"$like": "a%b_c"}), r#"$."f" like_regex "^a.*b.c$" flag "s""#),
        (json!({"$ilike": "A%"}), r#"$."f" like_regex "^A.*$" flag "is""#),
        (json!({"$exists": true}), r#"exists($."f")"#),
        (json!({"$exists": false}), r#"!exists($."f")"#),
        (json!({"$empty": true}), r#"!exists($."f" ? (@ != null))"#),
        (json!({"$empty": false}), r#"exists($."f" ? (@ != null))"#),
    ];
    for (condition, expected) in &cases {
        assert_eq!(&path(json!({ "f": condition })), expected, "{condition}");
    }
    // Every operator has its case.
    let tested: std::collections::BTreeSet<&str> =
        cases.iter().filter_map(|(c, _)| c.as_object()?.keys().next().map(String::as_str)).collect();
    assert_eq!(tested, FIELD_OPERATORS.into_iter().collect());
}

#[test]
fn operators_of_one_field_all_hold() {
    assert_eq!(path(json!({"year": {"$gte": 2000, "$lt": 2010}})), r#"($."year" >= 2000) && ($."year" < 2010)"#);
}

#[test]
fn logical_operators_combine_filters() {
    assert_eq!(
        path(json!({"$or": [{"a": 1}, {"$and": [{"b": {"$gt": 2}}, {"$not": {"c": "x"}}]}]})),
        r#"($."a" == 1) || (($."b" > 2) && (!($."c" == "x")))"#
    );
    assert_eq!(path(json!({"$and": [{"a": 1}]})), r#"$."a" == 1"#);
}

#[test]
fn keys_and_strings_are_json_literals() {
    // A key or value cannot end the literal early: quotes and backslashes are escaped.
    assert_eq!(path(json!({"a\" || true || \"": "x\\\"y"})), r#"$."a\" || true || \"" == "x\\\"y""#);
    assert_eq!(path(json!({"line\n": "é"})), r#"$."line\n" == "é""#);
}

#[test]
fn like_patterns_become_anchored_regular_expressions() {
    assert_eq!(like_regex("100%"), "^100.*$");
    assert_eq!(like_regex(r"100\%"), r"^100%$");
    assert_eq!(like_regex(r"a\_b"), "^a_b$");
    assert_eq!(like_regex("(a.b)*[c]$^|?+{}"), r"^\(a\.b\)\*\[c\]\$\^\|\?\+\{\}$");
    assert_eq!(like_regex(r"end\"), r"^end\\$");
    assert_eq!(like_regex(r"a\\b"), r"^a\\b$");
}

#[test]
fn bad_filters_are_refused_naming_what_is_wrong() {
    let cases = [
        (json!([1]), "search option filter must be a JSON object, not [1]"),
        (json!({"$nope": 1}), "unknown filter operator \"$nope\": operators are $eq $ne $lt $lte $gt $gte $in $nin $between $like $ilike $exists $empty, $and $or $not"),
        (json!({"a": {"$regex": "x"}}), "unknown filter operator \"$regex\""),
        (json!({"a": {"$gt": 1, "b": 2}}), "filter field \"a\" mixes operators with the key \"b\""),
        (json!({"a": {"$gt": null}}), "filter operator $gt on field \"a\" needs a string, number or boolean, not null"),
        (json!({"a": {"$eq": [1]}}), "filter operator $eq on field \"a\" needs a string, number, boolean or null, not [1]"),
        (json!({"a": [1, 2]}), "filter operator $eq on field \"a\" needs a string, number, boolean or null, not [1,2]"),
        (json!({"a": {"b": 1}}), "filter operator $eq on field \"a\" needs a string, number, boolean or null, not {\"b\":1}"),
        (json!({"a": {"$in": "x"}}), "filter operator $in on field \"a\" needs an array of strings, numbers, booleans or nulls, not \"x\""),
        (json!({"a": {"$nin": [[1]]}}), "filter operator $nin on field \"a\" needs an array of strings"),
        (json!({"a": {"$between": [1]}}), "filter operator $between on field \"a\" needs an array of two strings, numbers or booleans, not [1]"),
        (json!({"a": {"$between": [1, null]}}), "filter operator $between on field \"a\" needs an array of two"),
        (json!({"a": {"$like": 5}}), "filter operator $like on field \"a\" needs a string, not 5"),
        (json!({"a": {"$ilike": null}}), "filter operator $ilike on field \"a\" needs a string, not null"),
        (json!({"a": {"$exists": "yes"}}), "filter operator $exists on field \"a\" needs true or false, not \"yes\""),
        (json!({"a": {"$empty": 1}}), "filter operator $empty on field \"a\" needs true or false, not 1"),
        (json!({"a": {"$and": []}}), "filter operator $and combines filters: write it beside the fields, not under field \"a\""),
        (json!({"$and": []}), "filter operator $and needs a non-empty array of filters, not []"),
        (json!({"$or": {"a": 1}}), "filter operator $or needs a non-empty array of filters, not {\"a\":1}"),
        (json!({"$or": [1]}), "filter operator $or needs filters (JSON objects), not 1"),
        (json!({"$not": [{"a": 1}]}), "filter operator $not needs a filter (a JSON object), not [{\"a\":1}]"),
        (json!({"": 1}), "a filter's field name must not be empty"),
        (json!({"$or": [{"a": {"$in": 3}}]}), "filter operator $in on field \"a\" needs an array"),
    ];
    for (filter, expected) in cases {
        let message = refusal(filter.clone());
        assert!(message.starts_with(expected), "{filter}: {message}");
    }
}

#[test]
fn a_long_operand_is_shortened_in_the_message() {
    let message = refusal(json!({"a": {"$like": ["x".repeat(100)]}}));
    assert!(message.ends_with("…"), "{message}");
    assert!(message.chars().count() < 140, "{message}");
}
