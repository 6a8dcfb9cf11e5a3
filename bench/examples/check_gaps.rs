//! How long chunking a 5 MB document runs without asking whether to stop: each strategy with
//! the model-free embedder and estimated tokens, an `Embedder::check_interrupt` that records the
//! time since its last call, and the longest such stretch (from the call's start, between two
//! checks, or from the last check to the call's end). A backend answers a cancel or
//! statement_timeout only at a check, so the longest stretch bounds how late it answers in the
//! core (bench/cancel/run.sh measures the whole statement through SQL).
//!
//!   cargo run --release -p pg_chunk_bench --example check_gaps [bytes]

use pg_chunk_bench::english_prose;
use pg_chunk_core::curve::Embeddings;
use pg_chunk_core::embed::Embedder;
use pg_chunk_core::lexical::lexical_embeddings;
use pg_chunk_core::size::EstimatedTokens;
use pg_chunk_core::{chunk_document, ChunkConfig, ChunkError};
use serde_json::json;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// The lexical embedder, timing the stretches between the checks it is asked for.
struct Timing {
    last: Cell<Instant>,
    longest: Cell<Duration>,
    /// The check that ended the longest stretch, counted from 1 (0: the call's end).
    longest_ended_at: Cell<usize>,
    checks: Cell<usize>,
}

impl Timing {
    fn new() -> Timing {
        Timing {
            last: Cell::new(Instant::now()),
            longest: Cell::new(Duration::ZERO),
            longest_ended_at: Cell::new(0),
            checks: Cell::new(0),
        }
    }

    /// Ends the stretch that began at the last check; `check` is its number, 0 for the end.
    fn stretch_ends(&self, check: usize) {
        let now = Instant::now();
        let stretch = now - self.last.get();
        if stretch > self.longest.get() {
            self.longest.set(stretch);
            self.longest_ended_at.set(check);
        }
        self.last.set(now);
    }
}

impl Embedder for Timing {
    fn embed(&mut self, texts: &[&str]) -> Result<Embeddings, ChunkError> {
        lexical_embeddings(texts, &|| self.check_interrupt())
    }

    fn check_interrupt(&self) -> Result<(), ChunkError> {
        self.checks.set(self.checks.get() + 1);
        self.stretch_ends(self.checks.get());
        Ok(())
    }
}

fn main() {
    let bytes = std::env::args().nth(1).map_or(5 << 20, |b| b.parse().expect("a size in bytes"));
    let doc = english_prose(bytes);
    let cfgs = [
        json!({"strategy": "semantic"}),
        json!({"strategy": "semantic", "method": "threshold"}),
        json!({"strategy": "semantic", "max_size": 300, "overlap": 50}),
        json!({"strategy": "semantic", "metadata": true, "filters": true}),
        json!({"strategy": "fixed"}),
        json!({"strategy": "fixed", "max_size": 300, "overlap": 50}),
        json!({"strategy": "recursive"}),
        json!({"strategy": "markdown"}),
        json!({"strategy": "code"}),
        json!({"strategy": "topic_coherence"}),
        json!({"strategy": "information_density"}),
        json!({"strategy": "hierarchical"}),
        json!({"strategy": "adaptive"}),
    ];
    println!("{} bytes of English prose; longest stretch without a check, per cfg", doc.len());
    println!("| cfg | whole call | checks | longest stretch | ended at |");
    println!("|---|---|---|---|---|");
    for cfg in cfgs {
        let parsed = ChunkConfig::parse(&cfg).unwrap_or_else(|e| panic!("{cfg}: {e}"));
        let mut timing = Timing::new();
        let started = Instant::now();
        timing.last.set(started);
        let chunks = chunk_document(&doc, &parsed, &mut timing, &EstimatedTokens).expect("chunks");
        timing.stretch_ends(0);
        let whole = started.elapsed();
        let checks = timing.checks.get();
        let ended = match timing.longest_ended_at.get() {
            0 => "the call's end".to_string(),
            1 => "the first check".to_string(),
            n => format!("check {n} of {checks}"),
        };
        println!(
            "| `{cfg}` | {:.1} ms ({} chunks) | {checks} | {:.1} ms | {ended} |",
            whole.as_secs_f64() * 1e3,
            chunks.len(),
            timing.longest.get().as_secs_f64() * 1e3
        );
    }
}
