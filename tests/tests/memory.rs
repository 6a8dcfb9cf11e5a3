//! Peak memory of a backend handed the largest document pg_chunk takes: just under the default
//! max_document_size (10 MiB, crates/pg_chunk_core/src/config.rs), chunked by knowledge.chunk
//! with the static model (the default cfg's semantic strategy with each method, and the
//! recursive and fixed strategies), chunked and embedded by knowledge_internal.embed_chunks, and written
//! to the store through its trigger. Each case runs in a fresh connection, whose backend's
//! VmHWM (/proc/<pid>/status: the test runs as root on the server's machine) is read before and
//! after; the figures are printed
//! (`cargo test -p pg_chunk_client_tests --test memory -- --nocapture`) and each peak must stay
//! under its bound (`assert_below`). The default model (all-MiniLM-L6-v2) is left out: it embeds
//! about 100 sentences a second, so this document would take over ten minutes.

use pg_chunk_client_tests::{connect_database, fresh_database, proc_status_kb, prose_paragraphs};
use postgres::Client;
use std::sync::Mutex;
use std::time::Instant;

const DATABASE: &str = "memory";
/// The default max_document_size, in bytes.
const MAX_DOCUMENT_SIZE: usize = 10 * 1024 * 1024;
const MB: u64 = 1024;

/// Held by each case: the database is made once, and the cases run one at a time so their
/// timings mean something on a small machine.
static DATABASE_MADE: Mutex<bool> = Mutex::new(false);

/// English prose just under MAX_DOCUMENT_SIZE bytes: the paragraphs of the sample document,
/// the search corpus and the topic documents in turn, every third one with a numbered note so
/// the text does not repeat exactly.
fn largest_document() -> String {
    let pool = prose_paragraphs();

    let mut doc = String::with_capacity(MAX_DOCUMENT_SIZE);
    for i in 0.. {
        let mut paragraph = pool[(i * 7) % pool.len()].clone();
        if i % 3 == 0 {
            paragraph.push_str(&format!(" Note {i}: this paragraph is number {i} of the largest document."));
        }
        paragraph.push_str("\n\n");
        if doc.len() + paragraph.len() > MAX_DOCUMENT_SIZE {
            break;
        }
        doc.push_str(&paragraph);
    }
    assert!(doc.len() > MAX_DOCUMENT_SIZE - 4096 && doc.len() <= MAX_DOCUMENT_SIZE, "{} bytes", doc.len());
    doc
}

/// Runs `work` in a fresh backend and returns its VmHWM in kB after, having printed it beside
/// the VmHWM before (a backend as forked, nothing loaded) and what `work` reported.
fn peak_of(case: &str, work: impl FnOnce(&mut Client) -> String) -> u64 {
    let mut made = DATABASE_MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !*made {
        fresh_database(DATABASE);
        *made = true;
    }
    let mut client = connect_database(DATABASE);
    let pid: i32 = client.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let before = proc_status_kb(pid, "VmHWM");
    let started = Instant::now();
    let result = work(&mut client);
    let seconds = started.elapsed().as_secs_f64();
    let after = proc_status_kb(pid, "VmHWM");
    let (rss, shared) = (proc_status_kb(pid, "VmRSS"), proc_status_kb(pid, "RssShmem"));
    println!(
        "{case}: VmHWM {:.1} MB before, {:.1} MB after (+{:.1} MB); VmRSS after {:.1} MB ({:.1} MB of it shared memory); {seconds:.1} s; {result}",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after - before) as f64 / 1024.0,
        rss as f64 / 1024.0,
        shared as f64 / 1024.0
    );
    after
}

/// knowledge.chunk of the largest document with `cfg`: its peak VmHWM in kB.
fn chunk_peak(case: &str, cfg: &str) -> u64 {
    let doc = largest_document();
    peak_of(case, |client| {
        let row = client
            .query_one(
                "SELECT count(*), coalesce(sum(char_length), 0)::bigint FROM knowledge.chunk($1, $2::text::jsonb)",
                &[&doc, &cfg],
            )
            .unwrap();
        let (chunks, chars): (i64, i64) = (row.get(0), row.get(1));
        assert!(chunks > 1000 && chars > 9_000_000, "{chunks} chunks, {chars} characters");
        format!("{} bytes in {chunks} chunks", doc.len())
    })
}

/// Fails when a backend's peak is above `bound_mb`. Each bound is about twice the peak of its case
/// in a release build, rounded up to 50 MB (`--nocapture` prints the peaks): room for
/// another machine's allocator and shared buffers, while a change that doubles a case's memory
/// fails.
fn assert_below(case: &str, peak: u64, bound_mb: u64) {
    assert!(peak < bound_mb * MB, "{case}: peak VmHWM {:.1} MB, above {bound_mb} MB", peak as f64 / 1024.0);
}

#[test]
fn chunking_the_largest_document_semantically_stays_under_its_bound() {
    let case = "knowledge.chunk, default cfg (semantic, optimal) with potion-base-8m";
    assert_below(case, chunk_peak(case, r#"{"model": "potion-base-8m"}"#), 800);
    let case = "knowledge.chunk, semantic with method threshold, potion-base-8m";
    assert_below(case, chunk_peak(case, r#"{"model": "potion-base-8m", "method": "threshold"}"#), 600);
}

#[test]
fn chunking_the_largest_document_by_size_stays_under_its_bound() {
    let case = "knowledge.chunk, recursive, potion-base-8m token counts";
    assert_below(case, chunk_peak(case, r#"{"strategy": "recursive", "model": "potion-base-8m"}"#), 250);
    let case = "knowledge.chunk, fixed, potion-base-8m token counts";
    assert_below(case, chunk_peak(case, r#"{"strategy": "fixed", "model": "potion-base-8m"}"#), 250);
}

#[test]
fn embedding_the_chunks_of_the_largest_document_stays_under_its_bound() {
    let doc = largest_document();
    let case = "knowledge_internal.embed_chunks, default cfg with potion-base-8m";
    let peak = peak_of(case, |client| {
        let row = client
            .query_one(
                "SELECT count(*), count(embedding) FROM knowledge_internal.embed_chunks($1, '{\"model\": \"potion-base-8m\"}', 'potion-base-8m')",
                &[&doc],
            )
            .unwrap();
        let (chunks, embedded): (i64, i64) = (row.get(0), row.get(1));
        assert!(chunks > 1000 && embedded == chunks, "{chunks} chunks, {embedded} embedded");
        format!("{chunks} chunks embedded")
    });
    assert_below(case, peak, 850);

    // The store's own path: the trigger chunks, embeds, writes the chunks with their tsvectors
    // and the HNSW index entries, in one statement (rolled back, so nothing stays).
    let case = "INSERT INTO knowledge.documents, a sync config with potion-base-8m";
    let peak = peak_of(case, |client| {
        let mut transaction = client.transaction().unwrap();
        transaction
            .batch_execute("UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default'")
            .unwrap();
        let id: i64 = transaction
            .query_one("INSERT INTO knowledge.documents (content) VALUES ($1) RETURNING id", &[&doc])
            .unwrap()
            .get(0);
        let chunks: i64 = transaction
            .query_one("SELECT count(*) FROM knowledge.chunks WHERE document_id = $1 AND embedding IS NOT NULL", &[&id])
            .unwrap()
            .get(0);
        transaction.rollback().unwrap();
        assert!(chunks > 1000, "{chunks} chunks");
        format!("{chunks} chunks written")
    });
    assert_below(case, peak, 900);
}
