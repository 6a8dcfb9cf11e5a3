//! A document and a configuration → `chunk_document` with the lexical embedder and
//! `EstimatedTokens`.
//!
//! Input layout: the first `HEADER` bytes choose the configuration (see `config_from`; a
//! shorter input is padded with zeros), the rest is the document (its longest valid UTF-8
//! prefix). Sizes are small (max_size 1..=64, sometimes up to 1024, in chars, words or tokens)
//! so that short inputs already need many chunks, forced splits and overlap.
//!
//! Invariants: no panic, no error, `pg_chunk_core::invariants::check_chunks` (offsets on char
//! boundaries and in order, caps held, no text lost, token counts, sentence boundaries; the
//! unit tests run the same check), and a second run gives the same chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_chunk_core::config::Strategy;
use pg_chunk_core::invariants::check_chunks;
use pg_chunk_core::lexical::LexicalEmbedder;
use pg_chunk_core::size::EstimatedTokens;
use pg_chunk_core::{chunk_document, ChunkConfig};
use serde_json::{json, Value};

const HEADER: usize = 10;
const UNITS: [&str; 3] = ["chars", "words", "tokens"];
const THRESHOLDS: [&str; 5] = ["percentile", "similarity", "stddev", "interquartile", "gradient"];

/// The `cfg` JSON that header bytes `h` describe; always a valid configuration.
///
/// h[0] strategy and method, h[1..3] max_size, h[3..5] min_size, h[5..7] overlap, h[7]
/// smoothing, inline_threshold, metadata, filters and heading_context, h[8] target_size, h[9]
/// penalty or threshold value.
fn config_from(h: &[u8; HEADER]) -> Value {
    let strategy = Strategy::ALL[h[0] as usize % Strategy::ALL.len()].as_str();
    let max_unit = h[1] as usize % 3;
    let max = if h[1] & 0x80 == 0 { 1 + h[2] as usize % 64 } else { 1 + h[2] as usize * 4 };
    let inline_threshold = [0, 0, 40, 3000][(h[7] >> 2) as usize % 4];
    let mut cfg = json!({
        "strategy": strategy,
        "max_size": format!("{max} {}", UNITS[max_unit]),
        "smoothing": h[7] % 4,
        "inline_threshold": inline_threshold,
        "metadata": h[7] & 0x10 != 0,
        "filters": h[7] & 0x20 != 0,
        "heading_context": h[7] & 0x40 != 0,
    });

    // min_size: unset (the strategy's default ratio of max_size) or any unit; at most max_size
    // when in max_size's unit.
    let min_unit = h[3] as usize % 4;
    let min_value = h[4] as usize % 70;
    if min_unit < 3 {
        let min_value = if min_unit == max_unit { min_value.min(max) } else { min_value };
        cfg["min_size"] = json!(format!("{min_value} {}", UNITS[min_unit]));
    }

    // target_size: unset, or between min_size and max_size when in their unit. Skipped when
    // min_size is unset (its default depends on the strategy).
    if h[8] & 0x80 != 0 && min_unit < 3 {
        let target_unit = h[8] as usize % 3;
        let mut low = 1;
        let mut high = usize::MAX;
        if target_unit == max_unit {
            high = max;
        }
        if target_unit == min_unit {
            low = low.max(min_value.min(if min_unit == max_unit { max } else { usize::MAX }));
        }
        let target = (low + (h[8] as usize & 0x3f)).min(high).max(low);
        if target <= high {
            cfg["target_size"] = json!(format!("{target} {}", UNITS[target_unit]));
        }
    }

    // overlap: unset (the strategy's default, checked against max_size by parse), 0,
    // characters below a character max_size, or sentences (semantic only).
    let amount = h[6] as usize;
    match h[5] % 4 {
        0 => {}
        1 => cfg["overlap"] = json!(0),
        2 => {
            let n = if max_unit == 0 { amount % max } else { amount % 80 };
            cfg["overlap"] = json!(n);
        }
        _ if !matches!(strategy, "fixed" | "recursive" | "code" | "markdown") => cfg["overlap"] = json!(format!("{} sentences", amount % 4)),
        _ => cfg["overlap"] = json!(0),
    }
    if cfg.get("overlap").is_none() && strategy != "semantic" && max_unit == 0 {
        // The defaults (50 and 100 chars) are refused above a smaller character max_size.
        cfg["overlap"] = json!(amount % max);
    }

    // Boundaries (semantic only; the others ignore them): optimal with a penalty and an extra
    // penalty inside paragraphs, or one of the threshold rules with a value from its range.
    let x = h[9] as f64 / 255.0;
    match (h[0] as usize / Strategy::ALL.len()) % 7 {
        0 => {}
        1 => {
            cfg["penalty"] = json!(x * 4.0);
            cfg["mid_paragraph_penalty"] = json!((1.0 - x) * 2.0);
        }
        k => {
            let kind = THRESHOLDS[k - 2];
            let value = match kind {
                "percentile" | "gradient" => x * 100.0,
                "similarity" => x * 2.0 - 1.0,
                _ => x * 20.0 - 10.0,
            };
            cfg["threshold"] = if h[9] & 1 == 0 { json!(kind) } else { json!({"type": kind, "value": value}) };
        }
    }
    cfg
}

fuzz_target!(|data: &[u8]| {
    let mut header = [0u8; HEADER];
    let split = data.len().min(HEADER);
    header[..split].copy_from_slice(&data[..split]);
    let rest = &data[split..];
    let doc = match std::str::from_utf8(rest) {
        Ok(doc) => doc,
        Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap(),
    };
    let json = config_from(&header);
    let cfg = ChunkConfig::parse(&json).unwrap_or_else(|e| panic!("harness bug: {json} is refused: {e}"));
    let chunks = chunk_document(doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap_or_else(|e| panic!("cfg {json}: {e}"));
    if let Err(broken) = check_chunks(doc, &cfg, &chunks, &EstimatedTokens) {
        panic!("cfg {json}: {broken}");
    }
    let again = chunk_document(doc, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap();
    assert_eq!(chunks, again, "not deterministic");
});
