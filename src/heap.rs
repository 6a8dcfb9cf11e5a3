//! Returning freed heap to the system after a transaction that embedded a lot.
//!
//! glibc keeps the memory a process frees for its next allocations instead of handing it back, so
//! a backend that once embedded 2,000 sentences or chunked a large document would hold its peak
//! for as long as it lives: behind a pool of connections, every backend its own peak. After a
//! transaction in which one embedding call produced at least [`TRIM_AFTER_BYTES`] of vectors, the
//! free heap is given back (`malloc_trim`). What that saves an idle backend, and what it costs a
//! commit, is in bench/README.md, "Decisions"; tests/tests/idle_memory.rs checks that the memory
//! comes back.

use pgrx::{register_xact_callback, PgXactCallbackEvent};
use std::cell::Cell;

/// Vectors of one call, in bytes, above which the transaction's end trims the heap: a call of
/// about 1,000 potion or 700 MiniLM vectors. Smaller calls' memory is reused by the next.
pub const TRIM_AFTER_BYTES: usize = 1 << 20;

thread_local! {
    /// Whether this transaction already has its trim registered (a backend is single-threaded).
    static TRIM_REGISTERED: Cell<bool> = const { Cell::new(false) };
}

/// Notes an embedding call that produced `vector_bytes` of vectors; above [`TRIM_AFTER_BYTES`]
/// the heap is trimmed when the transaction commits or aborts.
pub fn trim_after_transaction_if_large(vector_bytes: usize) {
    if vector_bytes < TRIM_AFTER_BYTES || TRIM_REGISTERED.with(Cell::get) {
        return;
    }
    TRIM_REGISTERED.with(|registered| registered.set(true));
    // pgrx runs a transaction's callbacks once, on commit or abort, then forgets them.
    for event in [PgXactCallbackEvent::Commit, PgXactCallbackEvent::Abort] {
        register_xact_callback(event, trim_heap);
    }
}

fn trim_heap() {
    if TRIM_REGISTERED.with(|registered| registered.replace(false)) {
        // SAFETY: malloc_trim only walks glibc's own free lists; it cannot fail or raise.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}
