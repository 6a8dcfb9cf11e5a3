//! Arbitrary JSON text → `ChunkConfig::parse`.
//!
//! Invariants (config.rs: "Every key is checked: an unknown key, a wrong type or a value out of
//! range is an error that names the key and the value"):
//! - no panic: any JSON value gives a config or an error (whose message is printable);
//! - an accepted config keeps the orders it checks: min_size <= target_size <= max_size when
//!   in the same unit, a character overlap below a character max_size, sentence overlap only
//!   for the semantic strategy, max_size >= 1;
//! - an accepted config chunks a short sample document without panic or error, within the
//!   hard cap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_chunk_core::config::{Overlap, Strategy};
use pg_chunk_core::lexical::LexicalEmbedder;
use pg_chunk_core::size::{measure, EstimatedTokens, SizeUnit};
use pg_chunk_core::{chunk_document, ChunkConfig};
use serde_json::Value;

const SAMPLE: &str = "# Cats\n\nThe cat sat on the mat. A kitten purrs softly!\n\n- Rust borrows are checked.\n- The compiler rejects bad borrows.\n\n中文句子。第二句。 Bakers knead bread dough with flour and yeast at dawn.";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(value) = serde_json::from_str::<Value>(text) else { return };
    let cfg = match ChunkConfig::parse(&value) {
        Ok(cfg) => cfg,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let (min, target, max) = (cfg.min_size, cfg.target_size, cfg.max_size);
    assert!(max.value >= 1, "max_size {max} accepted");
    if min.unit == max.unit {
        assert!(min.value <= max.value, "min_size {min} above max_size {max} accepted");
    }
    if target.unit == max.unit {
        assert!(target.value <= max.value, "target_size {target} above max_size {max} accepted");
    }
    if min.unit == target.unit {
        assert!(min.value <= target.value, "min_size {min} above target_size {target} accepted");
    }
    match cfg.overlap {
        Overlap::Chars(n) if max.unit == SizeUnit::Chars => assert!(n < max.value, "overlap {n} chars not below max_size {max}"),
        Overlap::Sentences(_) => assert_eq!(cfg.strategy, Strategy::Semantic, "sentence overlap accepted for {:?}", cfg.strategy),
        _ => {}
    }
    if SAMPLE.len() > cfg.max_document_size {
        return;
    }
    let chunks = chunk_document(SAMPLE, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap_or_else(|e| panic!("{value} chunks nothing: {e}"));
    for (k, c) in chunks.iter().enumerate() {
        let text = c.text(SAMPLE);
        let size = measure(text, max.unit, &EstimatedTokens);
        assert!(size <= max.value || text.chars().count() == 1, "chunk {k} {text:?} is {size}, above {max}");
    }
});
