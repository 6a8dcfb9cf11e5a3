//! Threads that ONNX Runtime starts must block every Postgres signal, so cancel and terminate
//! reach the backend's own thread. Alone in its test binary, so no other test starts threads
//! between the two snapshots. Needs PG_CHUNK_MODEL_DIR and PG_CHUNK_ONNXRUNTIME (see models.rs).

#![cfg(target_os = "linux")]

use std::collections::BTreeSet;

use pg_chunk_embed::{load_model, Role};

mod support;

fn thread_ids() -> BTreeSet<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|task| task.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn blocked_signals(thread: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{thread}/status")).unwrap();
    let mask = status.lines().find_map(|line| line.strip_prefix("SigBlk:")).unwrap().trim();
    u64::from_str_radix(mask, 16).unwrap()
}

#[test]
fn onnx_runtime_threads_block_postgres_signals() {
    let spec = support::minilm_spec();
    // two intra-op threads, so a session pool thread is started as well
    let runtime = support::runtime_with_threads(2);

    let before = thread_ids();
    let mut model = load_model(&spec, &runtime).expect("load");
    model.embed(&["a sentence", "another, longer sentence"], Role::Passage, 2, &mut || {}).expect("embed");
    let started: Vec<String> = thread_ids().difference(&before).cloned().collect();
    assert!(!started.is_empty(), "expected ONNX Runtime to start threads");

    // SIGHUP 1, SIGINT 2, SIGQUIT 3, SIGUSR1 10, SIGUSR2 12, SIGALRM 14, SIGTERM 15, SIGURG 23
    for thread in &started {
        let mask = blocked_signals(thread);
        for signal in [1, 2, 3, 10, 12, 14, 15, 23] {
            assert!(mask & (1u64 << (signal - 1)) != 0, "thread {thread} does not block signal {signal}: {mask:x}");
        }
    }
}
