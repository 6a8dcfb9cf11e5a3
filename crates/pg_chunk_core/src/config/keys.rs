//! A cfg's keys, read group by group: the strategy, the semantic method, the sizes, the model,
//! the limits, the structure strategies' keys and the output's. `ChunkConfig::parse` reads the
//! groups in the order of `KEYS`, and a group reads its keys in that order too.

use super::values::{boolean, integer, non_empty_string, one_of, parse_boundaries, parse_overlap, parse_size};
use super::{
    Boundaries, ExplicitSizes, Fallback, Overlap, Strategy, DEFAULT_INLINE_THRESHOLD, DEFAULT_MAX_DOCUMENT_SIZE, KEYS,
    MAX_SIZE_VALUE,
};
use crate::error::ChunkError;
use serde_json::{Map, Value};

/// The keys of a cfg: a JSON object holding known keys only.
pub(super) struct Keys<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Keys<'a> {
    /// `cfg`'s keys, or an error for a cfg that is no object or holds an unknown key.
    pub(super) fn of(cfg: &'a Value) -> Result<Keys<'a>, ChunkError> {
        let Value::Object(map) = cfg else {
            return Err(ChunkError::config("cfg", cfg, "must be a JSON object"));
        };
        if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(ChunkError::config(key, &map[key], format!("unknown key; known keys are {}", KEYS.join(", "))));
        }
        Ok(Keys { map })
    }

    /// The value of `key`; JSON `null` is no value (the default applies).
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// `strategy` (default semantic).
    pub(super) fn strategy(&self) -> Result<Strategy, ChunkError> {
        self.get("strategy").map_or(Ok(Strategy::Semantic), |v| one_of("strategy", v))
    }

    /// `method` with `penalty` or `threshold`, and `smoothing` (default 1): how the semantic
    /// strategy finds where meaning changes.
    pub(super) fn semantic_method(&self) -> Result<(Boundaries, usize), ChunkError> {
        let boundaries = parse_boundaries(
            self.get("method"),
            self.get("penalty"),
            self.get("mid_paragraph_penalty"),
            self.get("threshold"),
        )?;
        let smoothing = self.get("smoothing").map(|v| integer("smoothing", v, 0, 50)).transpose()?.unwrap_or(1);
        Ok((boundaries, smoothing as usize))
    }

    /// `min_size`, `target_size`, `max_size` and `overlap` as the cfg gives them; the strategy
    /// and the model decide the others.
    pub(super) fn sizes(&self) -> Result<(ExplicitSizes, Option<Overlap>), ChunkError> {
        let min = self.get("min_size").map(|v| parse_size("min_size", v, 0)).transpose()?;
        let target = self.get("target_size").map(|v| parse_size("target_size", v, 1)).transpose()?;
        let max = self.get("max_size").map(|v| parse_size("max_size", v, 1)).transpose()?;
        let overlap = self.get("overlap").map(parse_overlap).transpose()?;
        Ok((ExplicitSizes { min, target, max }, overlap))
    }

    /// `model` (default: the server's default model) and `fallback` (default error).
    pub(super) fn embedding(&self) -> Result<(Option<String>, Fallback), ChunkError> {
        let model = self.get("model").map(|v| non_empty_string("model", v)).transpose()?;
        let fallback = self.get("fallback").map_or(Ok(Fallback::Error), |v| one_of("fallback", v))?;
        Ok((model, fallback))
    }

    /// `inline_threshold` and `max_document_size`.
    pub(super) fn limits(&self) -> Result<(usize, usize), ChunkError> {
        let inline_threshold = self
            .get("inline_threshold")
            .map(|v| integer("inline_threshold", v, 0, MAX_SIZE_VALUE))
            .transpose()?
            .map_or(DEFAULT_INLINE_THRESHOLD, |n| n as usize);
        let max_document_size = self
            .get("max_document_size")
            .map(|v| integer("max_document_size", v, 1, 1 << 30))
            .transpose()?
            .map_or(DEFAULT_MAX_DOCUMENT_SIZE, |n| n as usize);
        Ok((inline_threshold, max_document_size))
    }

    /// The structure strategies' keys: `language` (code) and `heading_context` (Markdown).
    pub(super) fn structure(&self) -> Result<(Option<String>, bool), ChunkError> {
        let language = self.get("language").map(|v| non_empty_string("language", v)).transpose()?;
        let heading_context =
            self.get("heading_context").map(|v| boolean("heading_context", v)).transpose()?.unwrap_or(false);
        Ok((language, heading_context))
    }

    /// `metadata` and `filters`: what is added to and removed from the chunks.
    pub(super) fn output(&self) -> Result<(bool, bool), ChunkError> {
        let metadata = self.get("metadata").map(|v| boolean("metadata", v)).transpose()?.unwrap_or(false);
        let filters = self.get("filters").map(|v| boolean("filters", v)).transpose()?.unwrap_or(false);
        Ok((metadata, filters))
    }
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
