//! The typed chunking configuration, parsed from the `cfg jsonb` argument.
//!
//! Every key is checked: an unknown key, a wrong type or a value out of range is an error
//! that names the key and the value. A JSON `null` means "not set" (the default applies).

use crate::error::ChunkError;
use crate::names::named_enum;
#[cfg(test)] // config_tests.rs names it through `super::*`
use crate::segmentation::{DEFAULT_MID_PARAGRAPH_PENALTY, DEFAULT_PENALTY};
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
        /// embeddings (docs/strategies.md, "topic_coherence and information_density").
        TopicCoherence = "topic_coherence",
        /// Close a chunk when its Shannon entropy passes 120% of the document's average
        /// (docs/strategies.md, "topic_coherence and information_density").
        InformationDensity = "information_density",
        /// Parents at 2 × target_size, children inside them (docs/strategies.md, "hierarchical").
        Hierarchical = "hierarchical",
        /// Runs several strategies and keeps the best by a quality score (docs/strategies.md, "adaptive").
        Adaptive = "adaptive",
    }
}

/// How the semantic strategy decides where chunks start (cfg `method`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Boundaries {
    /// Optimal segmentation: the cuts that maximise every chunk's coherence at once, each
    /// chunk costing `penalty` (cfg `penalty`; see segmentation.rs). The default.
    Optimal {
        /// What each chunk costs: higher makes fewer, longer chunks.
        penalty: f64,
        /// What a chunk that starts inside a paragraph costs on top of `penalty`, in a document
        /// whose paragraphs are marked (cfg `mid_paragraph_penalty`; see semantic.rs).
        mid_paragraph_penalty: f64,
    },
    /// A threshold on the smoothed distance curve between neighbouring units (cfg
    /// `threshold`): percentile breakpoints, LangChain's family of rules (docs/design.md, "Percentile breakpoints and valleys").
    Threshold(Threshold),
}

/// Context repeated at the start of each chunk from the text before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// No overlap.
    None,
    /// This many whole sentences before the chunk.
    Sentences(usize),
    /// Up to this many characters before the chunk, from a word start.
    Chars(usize),
}

named_enum! {
    /// What to do when the embedding model cannot be loaded (cfg `fallback`; docs/design.md, "Short documents and the fixed fallback").
    pub enum Fallback ("fallback") {
        /// Raise the error.
        Error = "error",
        /// Chunk with the model-free lexical embedder instead, with a warning.
        Lexical = "lexical",
        /// Chunk with the fixed strategy (350 characters, overlap 50) instead, with a warning.
        Fixed = "fixed",
    }
}

/// A parsed `cfg`: every key with its value or its default.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkConfig {
    /// Which algorithm cuts the document.
    pub strategy: Strategy,
    /// How the semantic strategy finds where meaning changes.
    pub boundaries: Boundaries,
    /// Neighbours on each side averaged into a unit's vector before the distance curve.
    pub smoothing: usize,
    /// Chunks below it are merged with a neighbour where `max_size` allows.
    pub min_size: Size,
    /// The size chunks are packed or split towards.
    pub target_size: Size,
    /// Hard cap: no chunk is ever larger.
    pub max_size: Size,
    /// The sizes the cfg set itself; the others follow the strategy's defaults, or the model's
    /// window ([`ChunkConfig::for_model_window`]).
    pub explicit_sizes: ExplicitSizes,
    /// Text repeated at the start of each chunk from before it.
    pub overlap: Overlap,
    /// Embedding model for the semantic strategy; `None` = the default model.
    pub model: Option<String>,
    /// What to do when the model cannot be loaded.
    pub fallback: Fallback,
    /// Documents shorter than this many characters (and within `max_size`) are one chunk.
    pub inline_threshold: usize,
    /// Largest document accepted, in bytes.
    pub max_document_size: usize,
    /// The code strategy's language; `None`: detected from the text.
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
    /// `min_size`.
    pub min: Option<Size>,
    /// `target_size`.
    pub target: Option<Size>,
    /// `max_size`.
    pub max: Option<Size>,
}

/// Largest document accepted by default, in bytes (10 MiB).
pub const DEFAULT_MAX_DOCUMENT_SIZE: usize = 10 * 1024 * 1024;
/// Documents under 3,000 characters stay whole (docs/design.md, "Short documents and the fixed fallback").
pub const DEFAULT_INLINE_THRESHOLD: usize = 3000;
/// Offsets are SQL `int`, so no size can exceed it.
const MAX_SIZE_VALUE: u64 = i32::MAX as u64;
/// Every cfg key, in the order they are checked.
const KEYS: &[&str] = &[
    "strategy",
    "method",
    "penalty",
    "mid_paragraph_penalty",
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
    /// Reads a `cfg jsonb`: every key checked, in the order of [`KEYS`], group by group, so
    /// that a cfg with several bad keys is refused for the first of them.
    pub fn parse(cfg: &Value) -> Result<ChunkConfig, ChunkError> {
        let keys = Keys::of(cfg)?;
        let strategy = keys.strategy()?;
        let (boundaries, smoothing) = keys.semantic_method()?;
        let (explicit_sizes, overlap) = keys.sizes()?;
        let (model, fallback) = keys.embedding()?;
        let (inline_threshold, max_document_size) = keys.limits()?;
        let (language, heading_context) = keys.structure()?;
        let (metadata, filters) = keys.output()?;
        let (min_size, target_size, max_size) = derive_sizes(strategy, explicit_sizes, default_max_size(strategy))?;
        let overlap = check_overlap(strategy, overlap.unwrap_or(default_overlap(strategy)), max_size, &keys)?;
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

/// `overlap` (the cfg's, else the strategy's default) if `strategy` takes it within `max_size`.
fn check_overlap(strategy: Strategy, overlap: Overlap, max_size: Size, keys: &Keys) -> Result<Overlap, ChunkError> {
    match (strategy, overlap) {
        (Strategy::Fixed | Strategy::Recursive | Strategy::Code | Strategy::Markdown, Overlap::Sentences(_)) => {
            Err(ChunkError::config(
                "overlap",
                keys.get("overlap").unwrap_or(&Value::Null),
                "sentence overlap applies to the semantic strategy only; use chars",
            ))
        }
        (_, Overlap::Chars(n)) if max_size.unit == SizeUnit::Chars && n >= max_size.value => {
            Err(ChunkError::config("overlap", n, format!("must be below max_size ({max_size})")))
        }
        _ => Ok(overlap),
    }
}

impl ChunkConfig {
    /// The tokens of a chunk's own text that a model with `passage_window` reads whole: all of
    /// them, less an eighth for the context the cfg may embed before the chunk (a Markdown
    /// heading path, a code signature; `strategy::embedded_text`).
    pub fn model_window(&self, passage_window: usize) -> usize {
        let has_context = self.heading_context || self.strategy == Strategy::Code;
        if has_context {
            passage_window - passage_window / 8
        } else {
            passage_window
        }
    }

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
/// characters; the fixed fallback (350) and the recursive splitter (1500); 1500 for the keyword,
/// entropy and adaptive strategies (docs/strategies.md); code and Markdown 2000 (whole functions and
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
/// target 1/2 (200/1000/2000 characters by default); recursive min 1/3 and target = max; the
/// keyword, entropy and adaptive strategies 1/15 and 1/3 (100/500/1500); hierarchical children (target) of 1/2;
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

mod keys;
mod values;

use keys::Keys;

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
