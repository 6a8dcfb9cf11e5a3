//! Readers of one cfg value each: a number in a range, a name from a closed set, a size with
//! its unit, the semantic method and its threshold. Each error names the key and quotes the
//! value.

use super::{Boundaries, Overlap, MAX_SIZE_VALUE};
use crate::error::ChunkError;
use crate::names::NamedSet;
use crate::segmentation::{DEFAULT_MID_PARAGRAPH_PENALTY, DEFAULT_PENALTY};
use crate::size::{Size, SizeUnit};
use crate::threshold::Threshold;
use serde_json::Value;

pub(super) fn integer(key: &str, v: &Value, min: u64, max: u64) -> Result<u64, ChunkError> {
    match v.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(ChunkError::config(key, v, format!("must be an integer from {min} to {max}"))),
    }
}

fn number(key: &str, v: &Value, min: f64, max: f64) -> Result<f64, ChunkError> {
    match v.as_f64() {
        Some(x) if x.is_finite() && (min..=max).contains(&x) => Ok(x),
        _ => Err(ChunkError::config(key, v, format!("must be a number from {min} to {max}"))),
    }
}

/// A name from a closed set (`T::ALL`), as a JSON string.
pub(super) fn one_of<T: NamedSet>(key: &str, v: &Value) -> Result<T, ChunkError> {
    v.as_str()
        .and_then(|name| name.parse().ok())
        .ok_or_else(|| ChunkError::config(key, v, format!("must be one of {}", T::quoted_names())))
}

pub(super) fn boolean(key: &str, v: &Value) -> Result<bool, ChunkError> {
    v.as_bool().ok_or_else(|| ChunkError::config(key, v, "must be true or false"))
}

pub(super) fn non_empty_string(key: &str, v: &Value) -> Result<String, ChunkError> {
    match v.as_str() {
        Some(s) if !s.trim().is_empty() => Ok(s.to_string()),
        _ => Err(ChunkError::config(key, v, "must be a non-empty string")),
    }
}

/// `method` with its own keys: `"optimal"` with `penalty` and `mid_paragraph_penalty`, `"threshold"`
/// with `threshold`. A config that sets `threshold` alone means the threshold method.
pub(super) fn parse_boundaries(
    method: Option<&Value>,
    penalty: Option<&Value>,
    mid_paragraph_penalty: Option<&Value>,
    threshold: Option<&Value>,
) -> Result<Boundaries, ChunkError> {
    let method = match method {
        None if threshold.is_some() => "threshold",
        None => "optimal",
        Some(v) => match v.as_str() {
            Some(m @ ("optimal" | "threshold")) => m,
            _ => return Err(ChunkError::config("method", v, "must be one of \"optimal\", \"threshold\"")),
        },
    };
    match (method, penalty, threshold) {
        ("optimal", _, Some(t)) => Err(ChunkError::config(
            "threshold",
            t,
            "applies to method \"threshold\" only; method \"optimal\" takes penalty",
        )),
        ("optimal", p, None) => {
            let penalty = p.map_or(Ok(DEFAULT_PENALTY), |p| number("penalty", p, 0.0, 100.0))?;
            let mid_paragraph_penalty = mid_paragraph_penalty
                .map_or(Ok(DEFAULT_MID_PARAGRAPH_PENALTY), |b| number("mid_paragraph_penalty", b, 0.0, 100.0))?;
            Ok(Boundaries::Optimal { penalty, mid_paragraph_penalty })
        }
        (_, Some(p), _) => Err(ChunkError::config("penalty", p, "applies to method \"optimal\" only")),
        (_, None, t) => match mid_paragraph_penalty {
            Some(m) => Err(ChunkError::config("mid_paragraph_penalty", m, "applies to method \"optimal\" only")),
            None => {
                Ok(Boundaries::Threshold(t.map(parse_threshold).transpose()?.unwrap_or(Threshold::Percentile(92.0))))
            }
        },
    }
}

/// `{"type": "percentile", "value": 92}`, or just the type name for its default value.
fn parse_threshold(v: &Value) -> Result<Threshold, ChunkError> {
    let (kind, value) = match v {
        Value::String(s) => (s.as_str(), None),
        Value::Object(m) => {
            if let Some(key) = m.keys().find(|k| *k != "type" && *k != "value") {
                return Err(ChunkError::config(
                    &format!("threshold.{key}"),
                    &m[key],
                    "unknown key; use \"type\" and \"value\"",
                ));
            }
            let kind = m.get("type").and_then(Value::as_str).ok_or_else(|| {
                ChunkError::config("threshold.type", m.get("type").unwrap_or(&Value::Null), "must be a string")
            })?;
            (kind, m.get("value").filter(|v| !v.is_null()))
        }
        _ => {
            return Err(ChunkError::config(
                "threshold",
                v,
                "must be an object like {\"type\": \"percentile\", \"value\": 92}",
            ))
        }
    };
    let value =
        |default: f64, min: f64, max: f64| value.map_or(Ok(default), |x| number("threshold.value", x, min, max));
    Ok(match kind {
        "percentile" => Threshold::Percentile(value(92.0, 0.0, 100.0)?),
        "similarity" => Threshold::Similarity(value(0.75, -1.0, 1.0)?),
        "stddev" => Threshold::StdDev(value(3.0, -10.0, 10.0)?),
        "interquartile" => Threshold::Interquartile(value(1.5, -10.0, 10.0)?),
        "gradient" => Threshold::Gradient(value(95.0, 0.0, 100.0)?),
        other => {
            return Err(ChunkError::config(
                "threshold.type",
                format!("\"{other}\""),
                "must be one of percentile, similarity, stddev, interquartile, gradient",
            ))
        }
    })
}

/// A size: `1000` (characters), `"1000 chars"`, `"300 words"`, `"256 tokens"`, or
/// `{"value": 256, "unit": "tokens"}`.
pub(super) fn parse_size(key: &str, v: &Value, min: u64) -> Result<Size, ChunkError> {
    let (value, unit) = amount_and_unit(key, v, min)?;
    let unit = match unit {
        None | Some("chars") => SizeUnit::Chars,
        Some("words") => SizeUnit::Words,
        Some("tokens") => SizeUnit::Tokens,
        Some(other) => {
            return Err(ChunkError::config(key, v, format!("unknown unit \"{other}\"; use chars, words or tokens")))
        }
    };
    Ok(Size { value, unit })
}

/// Overlap: `100` (characters), `"100 chars"`, `"1 sentences"` or the object form.
pub(super) fn parse_overlap(v: &Value) -> Result<Overlap, ChunkError> {
    let (value, unit) = amount_and_unit("overlap", v, 0)?;
    Ok(match (value, unit) {
        (0, _) => Overlap::None,
        (n, None | Some("chars")) => Overlap::Chars(n),
        (n, Some("sentences" | "sentence")) => Overlap::Sentences(n),
        (_, Some(other)) => {
            return Err(ChunkError::config("overlap", v, format!("unknown unit \"{other}\"; use chars or sentences")))
        }
    })
}

fn amount_and_unit<'a>(key: &str, v: &'a Value, min: u64) -> Result<(usize, Option<&'a str>), ChunkError> {
    let bad = || {
        ChunkError::config(key, v, format!("must be an integer from {min} to {MAX_SIZE_VALUE}, optionally with a unit, like \"300 words\" or {{\"value\": 300, \"unit\": \"words\"}}"))
    };
    let (amount, unit) = match v {
        Value::Number(_) => (v.as_u64(), None),
        Value::String(s) => {
            let mut parts = s.split_whitespace();
            let amount = parts.next().and_then(|n| n.parse::<u64>().ok());
            let unit = parts.next();
            if parts.next().is_some() {
                return Err(bad());
            }
            (amount, unit)
        }
        Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| *k != "value" && *k != "unit") {
                return Err(ChunkError::config(
                    &format!("{key}.{k}"),
                    &m[k],
                    "unknown key; use \"value\" and \"unit\"",
                ));
            }
            let unit = match m.get("unit") {
                None | Some(Value::Null) => None,
                Some(Value::String(u)) => Some(u.as_str()),
                Some(_) => return Err(bad()),
            };
            (m.get("value").and_then(Value::as_u64), unit)
        }
        _ => return Err(bad()),
    };
    match amount {
        Some(n) if (min..=MAX_SIZE_VALUE).contains(&n) => Ok((n as usize, unit)),
        _ => Err(bad()),
    }
}
