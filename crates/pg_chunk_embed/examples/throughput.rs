//! Embedding throughput on one thread, batch 16, for MiniLM (ONNX) and potion (static).
//!
//! PG_CHUNK_MODEL_DIR=... PG_CHUNK_ONNXRUNTIME=.../libonnxruntime.so \
//!   cargo run --release -p pg_chunk_embed --example throughput [all-minilm | potion]
//!
//! Also prints each model's load time, the process's resident memory after embedding (with
//! both models, the second figure includes what the first left behind), and its
//! threads: a Postgres backend should not grow any beyond ONNX Runtime's own.

use std::time::Instant;

use pg_chunk_embed::{load_model, Role};

const SENTENCES: usize = 2_000;
const BATCH_SIZE: usize = 16;

#[path = "../tests/support/mod.rs"]
mod support;

fn main() {
    let runtime = support::runtime_with_threads(1);
    let sentences = generate_sentences(SENTENCES);
    let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let words: usize = texts.iter().map(|t| t.split_whitespace().count()).sum();
    println!("resident before loading: {:.0} MiB", resident_mib());
    println!(
        "{SENTENCES} sentences, {:.1} words on average, batch {BATCH_SIZE}, 1 thread",
        words as f64 / SENTENCES as f64
    );

    // An argument picks one model by name prefix, e.g. `potion`, for a clean memory figure.
    let only = std::env::args().nth(1).unwrap_or_default();
    for spec in [support::minilm_spec(), support::potion_spec()] {
        if !spec.name.starts_with(&only) {
            continue;
        }
        let started = Instant::now();
        let mut model = match load_model(&spec, &runtime) {
            Ok(model) => model,
            Err(error) => {
                eprintln!("{}: {error}", spec.name);
                std::process::exit(1);
            }
        };
        let load_seconds = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let output = match model.embed(&texts, Role::Passage, BATCH_SIZE, &mut || {}) {
            Ok(output) => output,
            Err(error) => {
                eprintln!("{}: {error}", spec.name);
                std::process::exit(1);
            }
        };
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "{:<18} {:>8.0} sentences/s   embed {:.3} s   load {:.3} s",
            spec.name,
            SENTENCES as f64 / seconds,
            seconds,
            load_seconds,
        );
        println!(
            "{:<18} dim {}, truncated {}, resident {:.0} MiB, threads {}",
            "",
            output.dimension,
            output.truncated,
            resident_mib(),
            thread_count()
        );
    }
}

/// Deterministic sentences of about 5–30 words (15 on average) drawn from a small vocabulary with a linear
/// congruential generator, so runs are comparable.
fn generate_sentences(count: usize) -> Vec<String> {
    const SUBJECTS: &[&str] = &[
        "The database",
        "A careful reader",
        "Our team",
        "The old bridge",
        "Each backend",
        "The river",
        "A small model",
        "The committee",
        "Every index",
        "The weather",
    ];
    const VERBS: &[&str] = &[
        "stores",
        "describes",
        "changes",
        "measures",
        "ignores",
        "improves",
        "follows",
        "replaces",
        "explains",
        "delays",
    ];
    const WORDS: &[&str] = &[
        "rows",
        "pages",
        "quickly",
        "in winter",
        "tokens",
        "after lunch",
        "the vector",
        "carefully",
        "its neighbours",
        "every night",
        "without warning",
        "on the north bank",
        "for the audit",
        "with great care",
        "twelve",
        "embeddings",
        "under load",
        "the budget",
        "by hand",
        "in Paris",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |bound: usize| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % bound
    };
    (0..count)
        .map(|_| {
            let mut sentence = format!("{} {}", SUBJECTS[next(SUBJECTS.len())], VERBS[next(VERBS.len())]);
            for _ in 0..2 + next(11) {
                sentence.push(' ');
                sentence.push_str(WORDS[next(WORDS.len())]);
            }
            sentence.push('.');
            sentence
        })
        .collect()
}

/// Resident memory of this process in MiB (Linux).
fn resident_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

/// Threads of this process, by name (Linux).
fn thread_count() -> String {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return "?".into();
    };
    let names: Vec<String> = tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect();
    format!("{} {names:?}", names.len())
}
