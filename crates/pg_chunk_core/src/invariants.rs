//! What every strategy promises for every document and configuration, as one check that the
//! unit tests and the fuzzer (fuzz/fuzz_targets/chunker.rs) both run on their outputs.

use crate::config::{ChunkConfig, Strategy};
use crate::sentences::split_sentences;
use crate::size::{measure, TokenCounter};
use crate::strategy::{Chunk, SplitReason};

/// Checks `chunks` of `doc` made with `cfg` and token counter `tokens`:
/// - each chunk: `start <= core_start < end <= doc.len()`, all on char boundaries; its text is
///   non-empty and whitespace-trimmed;
/// - each measures at most `max_size` in its unit, unless it is a single character (nothing
///   smaller exists);
/// - document order: starts never decrease, and each chunk's own text (`core_start..end`)
///   begins at or after the previous chunk's end (overlap repeats text only before it);
/// - coverage: only whitespace lies outside the chunks' own texts (unless cfg `filters` dropped
///   some chunks);
/// - `token_count` is what `tokens` counts;
/// - with the strategies that pack whole sentences, chunks not `forced` start and end on
///   sentence boundaries.
///
/// The hierarchical strategy's parents and children (metadata `level`) are two chunkings of the
/// same document: each level is checked on its own.
pub fn check_chunks(doc: &str, cfg: &ChunkConfig, chunks: &[Chunk], tokens: &dyn TokenCounter) -> Result<(), String> {
    let level = |chunk: &Chunk| chunk.metadata.get("level").and_then(|v| v.as_str()).map(str::to_string);
    let mut levels: Vec<Option<String>> = chunks.iter().map(level).collect();
    levels.dedup();
    levels.sort();
    levels.dedup();
    for name in levels {
        let members: Vec<Chunk> = chunks.iter().filter(|c| level(c) == name).cloned().collect();
        check_level(doc, cfg, &members, tokens).map_err(|e| match &name {
            Some(name) => format!("level {name}: {e}"),
            None => e,
        })?;
    }
    Ok(())
}

fn check_level(doc: &str, cfg: &ChunkConfig, chunks: &[Chunk], tokens: &dyn TokenCounter) -> Result<(), String> {
    let units = split_sentences(doc);
    // The adaptive strategy returns one candidate's chunks: that candidate's rules apply.
    let chosen = chunks.first().and_then(|c| c.metadata.get("adaptive")?.get("chosen")?.as_str()?.parse().ok());
    let strategy: Strategy = chosen.unwrap_or(cfg.strategy);
    let sentence_aligned = matches!(
        strategy,
        Strategy::Semantic
            | Strategy::Recursive
            | Strategy::TopicCoherence
            | Strategy::InformationDensity
            | Strategy::Hierarchical
    );
    let mut covered_to = 0;
    let mut previous_start = 0;
    for (k, c) in chunks.iter().enumerate() {
        let fail = |what: String| Err(format!("chunk {k} {c:?}: {what}"));
        if !(c.start <= c.core_start && c.core_start < c.end && c.end <= doc.len()) {
            return fail(format!("out of range (the document is {} bytes)", doc.len()));
        }
        if let Some(at) = [c.start, c.core_start, c.end].into_iter().find(|&at| !doc.is_char_boundary(at)) {
            return fail(format!("{at} is not a char boundary"));
        }
        let text = c.text(doc);
        if text.is_empty() || text.trim() != text {
            return fail(format!("{text:?} is empty or untrimmed"));
        }
        let size = measure(text, cfg.max_size.unit, tokens);
        if size > cfg.max_size.value && text.chars().count() > 1 {
            return fail(format!("{text:?} is {size}, above {}", cfg.max_size));
        }
        if c.start < previous_start {
            return fail("starts before the previous chunk".to_string());
        }
        if c.core_start < covered_to {
            return fail(format!("overlaps the previous chunk's own text, which ends at {covered_to}"));
        }
        if !cfg.filters && !doc[covered_to..c.core_start].trim().is_empty() {
            return fail(format!("text before it is lost: {:?}", &doc[covered_to..c.core_start]));
        }
        if c.token_count != tokens.count_tokens(text) {
            return fail(format!("token_count {} but {} tokens", c.token_count, tokens.count_tokens(text)));
        }
        if sentence_aligned && c.split_reason != SplitReason::Forced {
            if !units.iter().any(|u| u.start == c.core_start) {
                return fail("starts inside a sentence".to_string());
            }
            if !units.iter().any(|u| u.end == c.end) {
                return fail("ends inside a sentence".to_string());
            }
        }
        covered_to = c.end;
        previous_start = c.start;
    }
    if !cfg.filters && !doc[covered_to..].trim().is_empty() {
        return Err(format!("the tail {:?} is lost", &doc[covered_to..]));
    }
    Ok(())
}
