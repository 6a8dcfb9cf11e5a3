//! Background workers that drain `knowledge.queue`, the documents waiting for chunk configs in
//! async mode. With pg_chunk in shared_preload_libraries the postmaster starts pg_chunk.workers
//! of them for each database in pg_chunk.worker_databases, and starts one again when it exits
//! with an error or is killed. A worker sleeps on its latch until a transaction that queued
//! work commits (`knowledge_internal.enqueue` sends a NOTIFY, which sets the latch of every backend
//! listening), then calls `knowledge.process_queue` until nothing is ready. The queue's rules
//! (claiming, retries, failures) are all in that SQL function; this file keeps the process
//! alive, connected and awake at the right times.

use crate::gucs;
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::prelude::*;
use std::time::Duration;

// port.h's pqsignal is a macro; from PostgreSQL 18 on it names the backend's pqsignal_be.
#[cfg(not(feature = "pg18"))]
use pg_sys::pqsignal;
#[cfg(feature = "pg18")]
use pg_sys::pqsignal_be as pqsignal;

/// The channel `knowledge_internal.enqueue` notifies (src/sql/queue.sql).
const CHANNEL: &std::ffi::CStr = c"pg_chunk_queue";

/// What `pg_stat_activity.backend_type` says for these workers; src/sql/queue.sql looks for it.
const WORKER_TYPE: &str = "pg_chunk worker";

/// How much the workers lower their CPU priority (nice(2)): inserting into an async config must
/// stay fast while a worker embeds beside it, so on a busy machine the inserts go first.
const NICENESS: std::ffi::c_int = 10;

/// How soon the postmaster starts a worker again after it exited with an error or was killed.
const RESTART_AFTER: Duration = Duration::from_secs(5);

// PostgreSQL functions used as they are. pgrx binds the two signal handlers only through Rust
// wrappers, which cannot be installed as handlers, and does not bind commands/async.h.
extern "C-unwind" {
    /// LISTEN, which SQL refuses in background processes because most never read their
    /// notifications; these workers do, with ProcessNotifyInterrupt.
    fn Async_Listen(channel: *const std::ffi::c_char);
    /// Reads the notifications that woke this backend, so that PostgreSQL's notification queue
    /// is not held back by a worker.
    fn ProcessNotifyInterrupt(flush: bool);
    /// The backends' SIGTERM handler: asks for exit at the next interrupt check.
    #[link_name = "die"]
    fn handle_sigterm(signal: std::ffi::c_int);
    /// Asks for the configuration file to be reread (ConfigReloadPending).
    #[link_name = "SignalHandlerForConfigReload"]
    fn handle_sighup(signal: std::ffi::c_int);
}

/// Registers the workers; called from `_PG_init`, and does nothing unless PostgreSQL is loading
/// shared_preload_libraries (workers can only be registered then).
pub fn register() {
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    for (index, database) in gucs::worker_databases().iter().enumerate() {
        for n in 1..=gucs::workers() {
            BackgroundWorkerBuilder::new(&format!("pg_chunk worker {n} for database {database}"))
                .set_type(WORKER_TYPE)
                .set_library("pg_chunk")
                .set_function("pg_chunk_queue_worker")
                .set_argument(Some(pg_sys::Datum::from(index)))
                .enable_spi_access()
                .set_start_time(BgWorkerStartTime::RecoveryFinished)
                .set_restart_time(Some(RESTART_AFTER))
                .load();
        }
    }
}

/// A worker's life: connect to the `index`th database of pg_chunk.worker_databases, listen,
/// then drain and sleep until told to stop.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pg_chunk_queue_worker(index: pg_sys::Datum) {
    // SIGTERM (shutdown, pg_terminate_backend, DROP DATABASE ... WITH (FORCE)) stops the worker
    // at its next interrupt check, mid-batch too: the batch's transaction rolls back and its
    // documents stay queued. SIGHUP rereads the configuration.
    // SAFETY: PostgreSQL's own handlers, installed before signals are unblocked.
    unsafe {
        pqsignal(pg_sys::SIGTERM as i32, Some(handle_sigterm));
        pqsignal(pg_sys::SIGHUP as i32, Some(handle_sighup));
        pg_sys::BackgroundWorkerUnblockSignals();
    }
    // SAFETY: changes this process's scheduling priority only. Failing (a lower limit set by the
    // administrator) leaves the worker at normal priority, which is harmless.
    unsafe { libc::nice(NICENESS) };
    let Some(database) = gucs::worker_databases().into_iter().nth(index.value()) else {
        // The list changed under a running server; a restart registers the new one.
        return;
    };
    BackgroundWorker::connect_worker_to_spi(Some(&database), None);
    log!("pg_chunk worker started for database \"{database}\"");
    BackgroundWorker::transaction(|| {
        // The worker's queries name pg_chunk's objects by schema; a search_path set on the
        // database must not put other schemas' functions or operators before the built-ins.
        if let Err(e) = Spi::run("SET search_path = pg_catalog, pg_temp") {
            error!("pg_chunk worker: {e}");
        }
        // SAFETY: inside a transaction, as LISTEN runs; takes effect when it commits.
        unsafe { Async_Listen(CHANNEL.as_ptr()) }
    });
    loop {
        reload_configuration_if_asked();
        let next_retry = drain_queue();
        sleep_until_woken(next_retry.map_or(gucs::worker_naptime(), |wait| wait.min(gucs::worker_naptime())));
    }
}

/// Calls `knowledge.process_queue` until it finds nothing ready, one transaction per batch.
/// Returns how long until the next document waiting out a retry backoff is due, if any.
fn drain_queue() -> Option<Duration> {
    loop {
        let processed = BackgroundWorker::transaction(|| {
            report_activity(pg_sys::BackendState::STATE_RUNNING, c"SELECT knowledge.process_queue()");
            let processed = if queue_installed() {
                Spi::get_one_with_args::<i32>("SELECT knowledge.process_queue($1)", &[gucs::worker_batch_size().into()])
            } else {
                Ok(Some(0))
            };
            report_activity(pg_sys::BackendState::STATE_IDLE, c"");
            processed
        });
        match processed {
            Ok(Some(n)) if n > 0 => {
                check_for_interrupts!();
            }
            Ok(_) => return next_retry(),
            // An SPI failure outside process_queue's own error handling: the worker exits and
            // the postmaster starts it again after RESTART_AFTER; queued documents stay queued.
            Err(e) => error!("pg_chunk worker: {e}"),
        }
    }
}

/// Whether this database has pg_chunk with its queue (it may have no pg_chunk yet, or an older
/// version). Inside a transaction.
fn queue_installed() -> bool {
    let query = "SELECT pg_catalog.to_regprocedure('knowledge.process_queue(integer, integer)') IS NOT NULL";
    matches!(Spi::get_one::<bool>(query), Ok(Some(true)))
}

fn next_retry() -> Option<Duration> {
    let seconds = BackgroundWorker::transaction(|| {
        if !queue_installed() {
            return None;
        }
        // Documents due already but not taken are held by another worker, or by a writer whose
        // commit will notify: only retries still to come need a timer.
        let query = "SELECT extract(epoch FROM min(q.not_before) - clock_timestamp())::float8 \
                     FROM knowledge.queue AS q WHERE q.done_at IS NULL AND q.not_before > clock_timestamp()";
        match Spi::get_one::<f64>(query) {
            Ok(seconds) => seconds,
            Err(e) => {
                // No timer then: the worker wakes on the next NOTIFY or after its naptime.
                warning!("pg_chunk worker: cannot read when the next retry is due: {e}");
                None
            }
        }
    });
    seconds.map(|s| Duration::from_secs_f64(s.max(0.01)))
}

/// Waits for a NOTIFY, a signal or `naptime`, whichever comes first; dies with the postmaster.
fn sleep_until_woken(naptime: Duration) {
    let milliseconds = naptime.as_millis().min(i64::MAX as u128) as i64;
    // SAFETY: the standard latch wait of a background worker, outside any transaction.
    unsafe {
        pg_sys::WaitLatch(
            pg_sys::MyLatch,
            (pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH) as i32,
            milliseconds,
            pg_sys::PG_WAIT_EXTENSION,
        );
        pg_sys::ResetLatch(pg_sys::MyLatch);
    }
    check_for_interrupts!();
    // SAFETY: outside a transaction, as the function requires; it starts its own.
    unsafe { ProcessNotifyInterrupt(false) };
}

fn reload_configuration_if_asked() {
    // SAFETY: the flag SignalHandlerForConfigReload sets; read and cleared in this process only.
    unsafe {
        if pg_sys::ConfigReloadPending != 0 {
            pg_sys::ConfigReloadPending = 0;
            pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP);
        }
    }
}

/// What pg_stat_activity shows for this worker.
fn report_activity(state: pg_sys::BackendState::Type, query: &std::ffi::CStr) {
    // SAFETY: a constant string; PostgreSQL copies it into shared memory.
    unsafe { pg_sys::pgstat_report_activity(state, query.as_ptr()) };
}
