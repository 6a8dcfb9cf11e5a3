//! Load time and memory of the static model (potion-base-8M): loads it N times, holding every
//! copy, and prints the median load time and the process's memory (Linux `/proc/self/status`).
//!
//! PG_CHUNK_MODEL_DIR=... cargo run --release -p pg_chunk_embed --example static_load [N]
//!
//! The embedding table is mapped, not read: holding N loaded models adds about N tokenizers of
//! anonymous memory (`RssAnon`) and no copy of the 30 MB table. `RssFile` counts the pages of
//! the page cache's one copy that each model's mapping has touched.

use std::time::Instant;

use pg_chunk_embed::{load_model, Role, RuntimeOptions};

#[path = "../tests/support/mod.rs"]
mod support;

fn main() {
    let loads: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(20);
    let spec = support::potion_spec();
    // A static model never loads ONNX Runtime, so no library path is needed.
    let runtime = RuntimeOptions { library_path: Default::default(), threads: 1 };
    let before = memory();
    let mut held = Vec::with_capacity(loads);
    let mut milliseconds = Vec::with_capacity(loads);
    for _ in 0..loads {
        let started = Instant::now();
        let model = load_model(&spec, &runtime).unwrap_or_else(|error| {
            eprintln!("{}: {error}", spec.name);
            std::process::exit(1);
        });
        milliseconds.push(started.elapsed().as_secs_f64() * 1000.0);
        held.push(model);
    }
    let loaded = memory();
    // One sentence through every copy touches the same few rows of the one mapped table.
    for model in &mut held {
        model.embed(&["The database stores rows in pages."], Role::Passage, 1, &mut || {}).expect("embeds");
    }
    let embedded = memory();
    milliseconds.sort_by(f64::total_cmp);
    println!(
        "{loads} loads of {}: median {:.2} ms, min {:.2} ms, max {:.2} ms",
        spec.name,
        milliseconds[loads / 2],
        milliseconds[0],
        milliseconds[loads - 1]
    );
    println!("memory (MiB)        VmRSS  RssAnon  RssFile   VmHWM");
    for (label, figures) in [("before loading", before), ("{loads} models held", loaded), ("after embedding", embedded)]
    {
        let label = label.replace("{loads}", &loads.to_string());
        println!(
            "{label:<18} {:>7.1} {:>8.1} {:>8.1} {:>7.1}",
            figures.resident, figures.anonymous, figures.file, figures.peak
        );
    }
    println!(
        "growth from loading: VmRSS {:+.1} MiB, RssAnon {:+.1} MiB ({:.2} MiB a model)",
        loaded.resident - before.resident,
        loaded.anonymous - before.anonymous,
        (loaded.anonymous - before.anonymous) / loads as f64
    );
}

#[derive(Clone, Copy)]
struct Memory {
    resident: f64,
    anonymous: f64,
    file: f64,
    peak: f64,
}

/// This process's memory in MiB, from `/proc/self/status` (0 where a field is missing).
fn memory() -> Memory {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    };
    Memory { resident: field("VmRSS"), anonymous: field("RssAnon"), file: field("RssFile"), peak: field("VmHWM") }
}
