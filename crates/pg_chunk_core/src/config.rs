//! The typed chunking configuration, parsed from the `cfg jsonb` argument.
//!
//! Every key is checked: an unknown key, a wrong type or a value out of range is an error
//! that names the key and the value. A JSON `null` means "not set" (the default applies).

use crate::error::ChunkError;
use crate::names::{named_enum, NamedSet};
use crate::segmentation::DEFAULT_PENALTY;
use crate::size::{Size, SizeUnit};
use crate::threshold::Threshold;
use serde_json::{Map, Value};

named_enum! {
    /// Which algorithm cuts the document (cfg `strategy`).
    pub enum Strategy ("strategy") {
        /// Cut where neighbouring sentences drift apart in meaning, then apply size guards.
        Semantic = "semantic",
        /// A sliding window of `max_size` with `overlap`, snapped to word boundaries.
        Fixed = "fixed",
        /// Pack paragraphs, then sentences, then words up to `max_size`.
        Recursive = "recursive",
        /// Source code: chunks at function and class boundaries (strategy/code/).
        Code = "code",
        /// Markdown: sections follow headings; fences, tables and list items stay whole
        /// (strategy/markdown/).
        Markdown = "markdown",
        /// Continue a chunk while its keywords overlap the next sentence's (Jaccard ≥ 0.3), no
        /// embeddings (seed design 004).
        TopicCoherence = "topic_coherence",
        /// Close a chunk when its Shannon entropy passes 120% of the document's average (seed 004).
        InformationDensity = "information_density",
        /// Parents at 2 × target_size, children inside them (seed 004).
        Hierarchical = "hierarchical",
        /// Runs several strategies and keeps the best by the seed's quality score (seed 004).
        Adaptive = "adaptive",
    }
}

/// How the semantic strategy decides where chunks start (cfg `method`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Boundaries {
    /// Optimal segmentation: the cuts that maximise every chunk's coherence at once, each
    /// chunk costing `penalty` (cfg `penalty`; see segmentation.rs). The default.
    Optimal { penalty: f64 },
    /// A threshold on the smoothed distance curve between neighbouring units (cfg
    /// `threshold`): the seed design, and LangChain's family of rules.
    Threshold(Threshold),
}

/// Context repeated at the start of each chunk from the text before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    None,
    Sentences(usize),
    Chars(usize),
}

named_enum! {
    /// What to do when the embedding model cannot be loaded (cfg `fallback`; seed design 000).
    pub enum Fallback ("fallback") {
        /// Raise the error.
        Error = "error",
        /// Chunk with the model-free lexical embedder instead, with a warning.
        Lexical = "lexical",
        /// Chunk with the fixed strategy (350 characters, overlap 50) instead, with a warning.
        Fixed = "fixed",
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChunkConfig {
    pub strategy: Strategy,
    pub boundaries: Boundaries,
    /// Neighbours on each side averaged into a unit's vector before the distance curve.
    pub smoothing: usize,
    pub min_size: Size,
    pub target_size: Size,
    /// Hard cap: no chunk is ever larger.
    pub max_size: Size,
    /// The sizes the cfg set itself; the others follow the strategy's defaults, or the model's
    /// window ([`ChunkConfig::for_model_window`]).
    pub explicit_sizes: ExplicitSizes,
    pub overlap: Overlap,
    /// Embedding model for the semantic strategy; `None` = the default model.
    pub model: Option<String>,
    pub fallback: Fallback,
    /// Documents shorter than this many characters (and within `max_size`) are one chunk.
    pub inline_threshold: usize,
    /// Largest document accepted, in bytes.
    pub max_document_size: usize,
    pub language: Option<String>,
    /// Markdown: the heading path is prefixed to the text that is embedded (not to `content`).
    pub heading_context: bool,
    /// Per-chunk quality metadata: entropy, topic_coherence, semantic_density, importance_score.
    pub metadata: bool,
    /// Post-filters: drop short, separator-only, heading-only and box-drawing chunks.
    pub filters: bool,
}

/// `min_size`, `target_size` and `max_size` as the cfg gave them (`None`: not set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExplicitSizes {
    pub min: Option<Size>,
    pub target: Option<Size>,
    pub max: Option<Size>,
}

pub const DEFAULT_MAX_DOCUMENT_SIZE: usize = 10 * 1024 * 1024;
/// Seed design 000 keeps documents under 3,000 characters whole.
pub const DEFAULT_INLINE_THRESHOLD: usize = 3000;
/// Offsets are SQL `int`, so no size can exceed it.
const MAX_SIZE_VALUE: u64 = i32::MAX as u64;
const KEYS: &[&str] = &[
    "strategy",
    "method",
    "penalty",
    "threshold",
    "smoothing",
    "min_size",
    "target_size",
    "max_size",
    "overlap",
    "model",
    "fallback",
    "inline_threshold",
    "max_document_size",
    "language",
    "heading_context",
    "metadata",
    "filters",
];

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig::parse(&Value::Object(Map::new())).expect("the empty configuration is valid")
        // invariant
    }
}

impl ChunkConfig {
    pub fn parse(cfg: &Value) -> Result<ChunkConfig, ChunkError> {
        let Value::Object(map) = cfg else {
            return Err(ChunkError::config("cfg", cfg, "must be a JSON object"));
        };
        if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(ChunkError::config(key, &map[key], format!("unknown key; known keys are {}", KEYS.join(", "))));
        }
        let get = |key: &str| map.get(key).filter(|v| !v.is_null());

        let strategy = get("strategy").map_or(Ok(Strategy::Semantic), |v| one_of("strategy", v))?;
        let boundaries = parse_boundaries(get("method"), get("penalty"), get("threshold"))?;
        let smoothing = get("smoothing").map(|v| integer("smoothing", v, 0, 50)).transpose()?.unwrap_or(1) as usize;
        let explicit_min = get("min_size").map(|v| parse_size("min_size", v, 0)).transpose()?;
        let explicit_target = get("target_size").map(|v| parse_size("target_size", v, 1)).transpose()?;
        let explicit_max = get("max_size").map(|v| parse_size("max_size", v, 1)).transpose()?;
        let overlap = get("overlap").map(parse_overlap).transpose()?;
        let model = get("model").map(|v| non_empty_string("model", v)).transpose()?;
        let fallback = get("fallback").map_or(Ok(Fallback::Error), |v| one_of("fallback", v))?;
        let inline_threshold = get("inline_threshold")
            .map(|v| integer("inline_threshold", v, 0, MAX_SIZE_VALUE))
            .transpose()?
            .map_or(DEFAULT_INLINE_THRESHOLD, |n| n as usize);
        let max_document_size = get("max_document_size")
            .map(|v| integer("max_document_size", v, 1, 1 << 30))
            .transpose()?
            .map_or(DEFAULT_MAX_DOCUMENT_SIZE, |n| n as usize);
        let language = get("language").map(|v| non_empty_string("language", v)).transpose()?;
        let heading_context =
            get("heading_context").map(|v| boolean("heading_context", v)).transpose()?.unwrap_or(false);
        let metadata = get("metadata").map(|v| boolean("metadata", v)).transpose()?.unwrap_or(false);
        let filters = get("filters").map(|v| boolean("filters", v)).transpose()?.unwrap_or(false);

        let explicit_sizes = ExplicitSizes { min: explicit_min, target: explicit_target, max: explicit_max };
        let (min_size, target_size, max_size) = derive_sizes(strategy, explicit_sizes, default_max_size(strategy))?;
        let overlap = overlap.unwrap_or(default_overlap(strategy));
        match (strategy, overlap) {
            (Strategy::Fixed | Strategy::Recursive | Strategy::Code | Strategy::Markdown, Overlap::Sentences(_)) => {
                return Err(ChunkError::config(
                    "overlap",
                    get("overlap").unwrap_or(&Value::Null),
                    "sentence overlap applies to the semantic strategy only; use chars",
                ));
            }
            (_, Overlap::Chars(n)) if max_size.unit == SizeUnit::Chars && n >= max_size.value => {
                return Err(ChunkError::config("overlap", n, format!("must be below max_size ({max_size})")));
            }
            _ => {}
        }
        Ok(ChunkConfig {
            strategy,
            boundaries,
            smoothing,
            min_size,
            target_size,
            max_size,
            explicit_sizes,
            overlap,
            model,
            fallback,
            inline_threshold,
            max_document_size,
            language,
            heading_context,
            metadata,
            filters,
        })
    }
}

impl ChunkConfig {
    /// The configuration for chunks that a model reads `window` tokens of (its max_tokens less
    /// its special tokens, prefix and any context): when the cfg sets no max_size, every
    /// strategy but fixed (whose 350 characters are its point, and well inside any window) caps
    /// chunks at `window` tokens, and unset min and target sizes follow by the strategy's
    /// ratios. A min or target size the cfg set above the window is an error that says so.
    pub fn for_model_window(&self, window: usize) -> Result<ChunkConfig, ChunkError> {
        if self.explicit_sizes.max.is_some() || self.strategy == Strategy::Fixed {
            return Ok(self.clone());
        }
        let (min_size, target_size, max_size) =
            derive_sizes(self.strategy, self.explicit_sizes, Size::tokens(window.max(1))).map_err(|e| match e {
                ChunkError::InvalidConfig { key, value, reason } => ChunkError::InvalidConfig {
                    key,
                    value,
                    reason: format!("{reason}: max_size is unset, so it is the model's window"),
                },
                other => other,
            })?;
        Ok(ChunkConfig { min_size, target_size, max_size, ..self.clone() })
    }
}

/// The cap a strategy uses when the cfg sets none and no model window applies: semantic 2000
/// characters; the seed's fixed fallback (350) and recursive splitter (1500); seed 004's 1500
/// for its keyword, entropy and adaptive strategies; code and Markdown 2000 (whole functions and
/// sections); hierarchical parents of 2 × target_size = 1000.
fn default_max_size(strategy: Strategy) -> Size {
    Size::chars(match strategy {
        Strategy::Semantic | Strategy::Code | Strategy::Markdown => 2000,
        Strategy::Fixed => 350,
        Strategy::Recursive | Strategy::TopicCoherence | Strategy::InformationDensity | Strategy::Adaptive => 1500,
        Strategy::Hierarchical => 1000,
    })
}

fn default_overlap(strategy: Strategy) -> Overlap {
    match strategy {
        Strategy::Fixed => Overlap::Chars(50),
        Strategy::Recursive => Overlap::Chars(100),
        _ => Overlap::None,
    }
}

/// (min, target, max): the explicit sizes, the others derived from max_size (explicit, else
/// `default_max`) by the strategy's ratios in its unit: semantic, code and Markdown min 1/10 and
/// target 1/2 (200/1000/2000 characters by default); recursive min 1/3 and target = max; seed
/// 004's strategies 1/15 and 1/3 (100/500/1500); hierarchical children (target) of 1/2;
/// fixed has no min. A target below an unset-derived min is raised to it.
fn derive_sizes(
    strategy: Strategy,
    explicit: ExplicitSizes,
    default_max: Size,
) -> Result<(Size, Size, Size), ChunkError> {
    let (min_ratio, target_ratio) = match strategy {
        Strategy::Semantic | Strategy::Code | Strategy::Markdown | Strategy::Hierarchical => (10, 2),
        Strategy::Fixed => (usize::MAX, 1),
        Strategy::Recursive => (3, 1),
        Strategy::TopicCoherence | Strategy::InformationDensity | Strategy::Adaptive => (15, 3),
    };
    let max_size = explicit.max.unwrap_or(default_max);
    let scaled = |ratio: usize| Size { value: max_size.value.checked_div(ratio).unwrap_or(0), unit: max_size.unit };
    let min_size = explicit.min.unwrap_or(scaled(min_ratio));
    let mut target_size = explicit.target.unwrap_or(scaled(target_ratio));
    if explicit.target.is_none() && target_size.unit == min_size.unit && target_size.value < min_size.value {
        target_size.value = min_size.value;
    }
    check_order("min_size", min_size, "max_size", max_size)?;
    check_order("target_size", target_size, "max_size", max_size)?;
    check_order("min_size", min_size, "target_size", target_size)?;
    Ok((min_size, target_size, max_size))
}

/// `smaller` must not exceed `larger` when both are in the same unit.
fn check_order(small_key: &str, smaller: Size, large_key: &str, larger: Size) -> Result<(), ChunkError> {
    if smaller.unit == larger.unit && smaller.value > larger.value {
        return Err(ChunkError::config(
            small_key,
            format!("\"{smaller}\""),
            format!("must not exceed {large_key} ({larger})"),
        ));
    }
    Ok(())
}

fn integer(key: &str, v: &Value, min: u64, max: u64) -> Result<u64, ChunkError> {
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
fn one_of<T: NamedSet>(key: &str, v: &Value) -> Result<T, ChunkError> {
    v.as_str()
        .and_then(|name| name.parse().ok())
        .ok_or_else(|| ChunkError::config(key, v, format!("must be one of {}", T::quoted_names())))
}

fn boolean(key: &str, v: &Value) -> Result<bool, ChunkError> {
    v.as_bool().ok_or_else(|| ChunkError::config(key, v, "must be true or false"))
}

fn non_empty_string(key: &str, v: &Value) -> Result<String, ChunkError> {
    match v.as_str() {
        Some(s) if !s.trim().is_empty() => Ok(s.to_string()),
        _ => Err(ChunkError::config(key, v, "must be a non-empty string")),
    }
}

/// `method` with its own key: `"optimal"` with `penalty`, `"threshold"` with `threshold`. A
/// config that sets `threshold` alone means the threshold method.
fn parse_boundaries(
    method: Option<&Value>,
    penalty: Option<&Value>,
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
            Ok(Boundaries::Optimal { penalty: p.map_or(Ok(DEFAULT_PENALTY), |p| number("penalty", p, 0.0, 100.0))? })
        }
        (_, Some(p), _) => Err(ChunkError::config("penalty", p, "applies to method \"optimal\" only")),
        (_, None, t) => {
            Ok(Boundaries::Threshold(t.map(parse_threshold).transpose()?.unwrap_or(Threshold::Percentile(92.0))))
        }
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
fn parse_size(key: &str, v: &Value, min: u64) -> Result<Size, ChunkError> {
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
fn parse_overlap(v: &Value) -> Result<Overlap, ChunkError> {
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

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
