//! knowledge.search's `filter` option: a JSON object of conditions on a document's metadata, in
//! the operator set of LangChain's PostgreSQL vector store (`$eq $ne $lt $lte $gt $gte $in $nin
//! $between $like $ilike $exists $and $or $not`), written as a PostgreSQL jsonpath predicate that
//! the search tests with `metadata @@ path`. The path is a value, never SQL: a key or a string is
//! written as a JSON string literal, which jsonpath reads with the same escapes.
//!
//! - `{"field": value}` is `{"field": {"$eq": value}}`; an object of several fields, or of several
//!   operators for one field, holds when each holds.
//! - `$eq $ne $lt $lte $gt $gte` take a string, number, boolean or null (`$eq` and `$ne` only:
//!   null); `$in $nin` an array of them; `$between` an array of two, both ends included; `$like
//!   $ilike` a string in SQL's LIKE syntax (`%`, `_`, `\` escapes either); `$exists` a boolean;
//!   `$empty` a boolean: true for a field that is missing, null or an array of no other value
//!   (LlamaIndex's IS_EMPTY; LangChain has no such operator).
//! - `$and $or` take a non-empty array of filters, `$not` a filter.
//!
//! jsonpath's lax mode decides the rest: a field holding an array matches when one of its elements
//! does (so `{"tags": "a"}` finds `{"tags": ["a", "b"]}`); a field that is missing, or of another
//! type than the operand (a string against a number), matches no comparison, `$ne` and `$nin`
//! included; `$ne` and `$nin` match a field none of whose values is the operand.

use serde_json::{Map, Value};

/// A filter that cannot be written: what is wrong, naming the operator or field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FilterError(pub String);

/// The operators a field's condition may use, in the order the documentation lists them.
pub const FIELD_OPERATORS: [&str; 13] =
    ["$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$in", "$nin", "$between", "$like", "$ilike", "$exists", "$empty"];
/// The operators that combine filters.
pub const LOGICAL_OPERATORS: [&str; 3] = ["$and", "$or", "$not"];

/// `filter` as a jsonpath predicate over a document's metadata (`true` for an empty object).
pub fn jsonpath(filter: &Value) -> Result<String, FilterError> {
    let object = filter
        .as_object()
        .ok_or_else(|| FilterError(format!("search option filter must be a JSON object, not {}", shown(filter))))?;
    conjunction(object)
}

// Each key of `object` a condition, all of them holding.
fn conjunction(object: &Map<String, Value>) -> Result<String, FilterError> {
    let parts = object.iter().map(|(key, value)| condition(key, value)).collect::<Result<Vec<_>, _>>()?;
    Ok(joined(parts, " && ", "true"))
}

fn condition(key: &str, value: &Value) -> Result<String, FilterError> {
    match key {
        "$and" | "$or" => {
            let filters = value.as_array().filter(|filters| !filters.is_empty()).ok_or_else(|| {
                FilterError(format!("filter operator {key} needs a non-empty array of filters, not {}", shown(value)))
            })?;
            let parts = filters
                .iter()
                .map(|f| {
                    f.as_object().map(conjunction).unwrap_or_else(|| {
                        Err(FilterError(format!(
                            "filter operator {key} needs filters (JSON objects), not {}",
                            shown(f)
                        )))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(joined(parts, if key == "$and" { " && " } else { " || " }, "true"))
        }
        "$not" => match value {
            Value::Object(object) => Ok(format!("!({})", conjunction(object)?)),
            other => {
                Err(FilterError(format!("filter operator $not needs a filter (a JSON object), not {}", shown(other))))
            }
        },
        _ if key.starts_with('$') => Err(unknown_operator(key)),
        "" => Err(FilterError("a filter's field name must not be empty".into())),
        field => field_condition(field, value),
    }
}

fn field_condition(field: &str, value: &Value) -> Result<String, FilterError> {
    let path = format!("$.{}", literal(field));
    match value {
        Value::Object(operators) if operators.keys().any(|k| k.starts_with('$')) => {
            let parts = operators
                .iter()
                .map(|(operator, operand)| {
                    if !operator.starts_with('$') {
                        return Err(FilterError(format!(
                            "filter field {} mixes operators with the key {}: write operators only",
                            literal(field),
                            literal(operator)
                        )));
                    }
                    comparison(field, &path, operator, operand)
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(joined(parts, " && ", "true"))
        }
        _ => comparison(field, &path, "$eq", value),
    }
}

fn comparison(field: &str, path: &str, operator: &str, operand: &Value) -> Result<String, FilterError> {
    let needs = |what: &str| {
        FilterError(format!(
            "filter operator {operator} on field {} needs {what}, not {}",
            literal(field),
            shown(operand)
        ))
    };
    let scalar = |value: &Value, null_allowed: bool| -> Result<String, FilterError> {
        match value {
            Value::String(s) => Ok(literal(s)),
            Value::Number(n) => Ok(n.to_string()),
            Value::Bool(b) => Ok(b.to_string()),
            Value::Null if null_allowed => Ok("null".into()),
            _ => Err(needs(if null_allowed {
                "a string, number, boolean or null"
            } else {
                "a string, number or boolean"
            })),
        }
    };
    let list = || -> Result<Vec<String>, FilterError> {
        let values = operand.as_array().ok_or_else(|| needs("an array of strings, numbers, booleans or nulls"))?;
        values
            .iter()
            .map(|v| scalar(v, true).map_err(|_| needs("an array of strings, numbers, booleans or nulls")))
            .collect()
    };
    let compare = |op: &str, value: String| format!("{path} {op} {value}");
    Ok(match operator {
        "$eq" => compare("==", scalar(operand, true)?),
        // Not equal: the field is there and none of its values is the operand.
        "$ne" => format!("exists({path}) && !({})", compare("==", scalar(operand, true)?)),
        "$lt" => compare("<", scalar(operand, false)?),
        "$lte" => compare("<=", scalar(operand, false)?),
        "$gt" => compare(">", scalar(operand, false)?),
        "$gte" => compare(">=", scalar(operand, false)?),
        // An empty $in matches nothing, an empty $nin every document that has the field.
        "$in" => joined(list()?.into_iter().map(|v| compare("==", v)).collect(), " || ", "false"),
        "$nin" => {
            let any = joined(list()?.into_iter().map(|v| compare("==", v)).collect(), " || ", "false");
            format!("exists({path}) && !({any})")
        }
        "$between" => match operand.as_array().map(Vec::as_slice) {
            Some([low, high]) => {
                let pair = |v| scalar(v, false).map_err(|_| needs("an array of two strings, numbers or booleans"));
                format!("{} && {}", compare(">=", pair(low)?), compare("<=", pair(high)?))
            }
            _ => return Err(needs("an array of two strings, numbers or booleans")),
        },
        "$like" | "$ilike" => {
            let pattern = operand.as_str().ok_or_else(|| needs("a string"))?;
            // "s": `.` matches a newline too, as `%` and `_` do in LIKE.
            let flags = if operator == "$ilike" { "is" } else { "s" };
            format!("{path} like_regex {} flag \"{flags}\"", literal(&like_regex(pattern)))
        }
        "$exists" => match operand {
            Value::Bool(true) => format!("exists({path})"),
            Value::Bool(false) => format!("!exists({path})"),
            _ => return Err(needs("true or false")),
        },
        // Empty: missing, null, or an array of nothing but nulls (a filter on an array is applied
        // to its elements), as LlamaIndex's IS_EMPTY.
        "$empty" => match operand {
            Value::Bool(true) => format!("!exists({path} ? (@ != null))"),
            Value::Bool(false) => format!("exists({path} ? (@ != null))"),
            _ => return Err(needs("true or false")),
        },
        other if LOGICAL_OPERATORS.contains(&other) => {
            return Err(FilterError(format!(
                "filter operator {other} combines filters: write it beside the fields, not under field {}",
                literal(field)
            )))
        }
        other => return Err(unknown_operator(other)),
    })
}

/// A LIKE pattern as an anchored regular expression (PostgreSQL's advanced syntax).
fn like_regex(pattern: &str) -> String {
    let mut regex = String::from("^");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => regex.push_str(".*"),
            '_' => regex.push('.'),
            // A backslash takes the next character as it is (a trailing one stands for itself).
            '\\' => escape_regex(&mut regex, chars.next().unwrap_or('\\')),
            c => escape_regex(&mut regex, c),
        }
    }
    regex.push('$');
    regex
}

fn escape_regex(regex: &mut String, c: char) {
    if "\\^$.|?*+()[]{}".contains(c) {
        regex.push('\\');
    }
    regex.push(c);
}

fn unknown_operator(operator: &str) -> FilterError {
    FilterError(format!(
        "unknown filter operator {}: operators are {}, {}",
        literal(operator),
        FIELD_OPERATORS.join(" "),
        LOGICAL_OPERATORS.join(" ")
    ))
}

/// `s` as a JSON string literal, which jsonpath reads as the same string.
fn literal(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

fn joined(parts: Vec<String>, separator: &str, empty: &str) -> String {
    match parts.len() {
        0 => empty.to_owned(),
        1 => parts.concat(),
        _ => parts.iter().map(|part| format!("({part})")).collect::<Vec<_>>().join(separator),
    }
}

#[cfg(test)]
mod tests;
