//! The store under load: 16 clients, each on a connection of its own, for 60 seconds
//! (PG_CHUNK_LOAD_SECONDS overrides it for quick runs) insert documents of 1 to 20 KB, update
//! and delete some of their own, roll some inserts back and search, against two sync configs
//! embedding with the static model. Afterwards no client saw an error, a VACUUM and vector
//! searches still work, the documents are exactly what the clients last wrote, every chunk is
//! exactly what knowledge.chunk gives (no chunk lost or duplicated, indexes 0..n-1, each with its
//! embedding), nothing is left of deleted or rolled-back documents, and no backend's memory grew
//! like a leak. Figures are printed
//! (`PG_CHUNK_LOAD_SECONDS=10 cargo test -p pg_chunk_client_tests --test load -- --nocapture`).
//!
//! Meanwhile a seventeenth connection VACUUMs the chunks every two seconds, so that HNSW's
//! VACUUM races the inserts as autovacuum makes it do in a busy store (pgvector before 0.8.4 could
//! corrupt an index that way, and 0.8.6 can still fail a resumed scan: docs/errors.md).

use pg_chunk_client_tests::{
    assert_store_exact, connect_database, describe_error, fresh_database, proc_status_kb, prose_paragraphs,
};
use postgres::Client;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const DATABASE: &str = "load";
const CLIENTS: usize = 16;
/// Errors a client records before it gives up (its connection is probably gone by then).
const MAX_ERRORS: usize = 20;

/// xorshift64*: a reproducible stream per client, no crate needed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn corpus() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/search_corpus.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A document of 1 to about 20 KB, unique by its heading and marked notes.
fn document(rng: &mut Rng, pool: &[String], client: usize, serial: usize, revision: usize) -> String {
    let target = 1000 + rng.below(18_500);
    let mut doc = format!("# Load test document {client}-{serial}, revision {revision}\n\n");
    let mut note = 0;
    while doc.len() < target {
        doc.push_str(&pool[rng.below(pool.len())]);
        if rng.below(3) == 0 {
            note += 1;
            doc.push_str(&format!(" Note {client}.{serial}.{revision}.{note}: client {client} wrote this paragraph in revision {revision}."));
        }
        doc.push_str("\n\n");
    }
    doc
}

/// A document as its client last wrote it.
#[derive(Clone, Debug, PartialEq)]
struct Doc {
    title: String,
    content: String,
    language: String,
    chunk_config: Option<String>,
}

#[derive(Default)]
struct Report {
    client: usize,
    pid: i32,
    /// Memory after the warm-up, halfway through the rest and at the end.
    start: Memory,
    middle: Memory,
    end: Memory,
    inserts: usize,
    rollbacks: usize,
    updates: usize,
    deletes: usize,
    searches: usize,
    /// Errors and broken promises (a search returning too many rows or another client's
    /// document, a rolled-back insert without chunks inside its transaction, ...).
    errors: Vec<String>,
    live: BTreeMap<i64, Doc>,
    /// Documents deleted or whose insert was rolled back: none of them may remain.
    gone: Vec<i64>,
}

/// A backend's resident memory in kB: all of it (VmRSS) and the shared memory in it (RssShmem:
/// the shared buffers and other shared memory it has touched, not its own).
#[derive(Clone, Copy, Default)]
struct Memory {
    rss: u64,
    shared: u64,
}

impl Memory {
    fn of(pid: i32) -> Self {
        Memory { rss: proc_status_kb(pid, "VmRSS"), shared: proc_status_kb(pid, "RssShmem") }
    }

    /// What the backend holds itself: anonymous memory and mapped files (libraries, models).
    fn own(&self) -> u64 {
        self.rss - self.shared
    }
}

/// One client's session until `deadline`; its backend's memory is first read once `warm_up` has
/// passed and the client has done a few iterations (its models are loaded and its caches have
/// started to fill), again at `middle` and at the end.
fn run_client(
    client: usize,
    pool: Arc<Vec<String>>,
    questions: Arc<Vec<String>>,
    warm_up: Instant,
    middle: Instant,
    deadline: Instant,
) -> Report {
    let mut db = connect_database(DATABASE);
    let pid: i32 = db.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let mut report = Report { client, pid, ..Default::default() };
    let mut rng = Rng::new(client as u64 + 1);
    let mut serial = 0;
    let mut iterations = 0;
    let mut warmed = false;
    let mut halfway = false;
    while Instant::now() < deadline && report.errors.len() < MAX_ERRORS {
        if !warmed && iterations >= 3 && Instant::now() >= warm_up {
            report.start = Memory::of(pid);
            warmed = true;
        }
        if warmed && !halfway && Instant::now() >= middle {
            report.middle = Memory::of(pid);
            halfway = true;
        }
        iterations += 1;
        let ids: Vec<i64> = report.live.keys().copied().collect();
        let roll = rng.below(100);
        let mut broken: Vec<String> = Vec::new();
        let result = if roll < 40 || ids.is_empty() {
            serial += 1;
            let doc = Doc {
                title: format!("c{client} s{serial}"),
                content: document(&mut rng, &pool, client, serial, 0),
                language: "english".into(),
                chunk_config: None,
            };
            if rng.below(12) == 0 {
                // An insert rolled back leaves neither document nor chunks.
                (|| -> Result<(), postgres::Error> {
                    let mut transaction = db.transaction()?;
                    let id: i64 = transaction
                        .query_one(
                            "INSERT INTO knowledge.documents (title, content) VALUES ($1, $2) RETURNING id",
                            &[&doc.title, &doc.content],
                        )?
                        .get(0);
                    let chunks: i64 = transaction
                        .query_one("SELECT count(*) FROM knowledge.chunks WHERE document_id = $1", &[&id])?
                        .get(0);
                    transaction.rollback()?;
                    if chunks == 0 {
                        broken.push(format!("document {id} had no chunks inside its transaction"));
                    }
                    report.gone.push(id);
                    report.rollbacks += 1;
                    Ok(())
                })()
            } else {
                db.query_one(
                    "INSERT INTO knowledge.documents (title, content, metadata) VALUES ($1, $2, jsonb_build_object('client', $3::int, 'serial', $4::int)) RETURNING id",
                    &[&doc.title, &doc.content, &(client as i32), &(serial as i32)],
                )
                .map(|row| {
                    report.live.insert(row.get(0), doc);
                    report.inserts += 1;
                })
            }
        } else if roll < 60 {
            let id = ids[rng.below(ids.len())];
            let mut doc = report.live[&id].clone();
            let kind = rng.below(20);
            let statement = match kind {
                // Mostly new content (a rechunk); sometimes only the title (no rechunk), the
                // language or the configs the document is chunked with.
                0..=13 => {
                    serial += 1;
                    doc.content = document(&mut rng, &pool, client, serial, 1);
                    db.execute("UPDATE knowledge.documents SET content = $2 WHERE id = $1", &[&id, &doc.content])
                }
                14..=15 => {
                    doc.title = format!("{} (renamed)", doc.title);
                    db.execute(
                        "UPDATE knowledge.documents SET title = $2, content = content WHERE id = $1",
                        &[&id, &doc.title],
                    )
                }
                16..=17 => {
                    doc.language = if doc.language == "english" { "simple" } else { "english" }.into();
                    db.execute(
                        "UPDATE knowledge.documents SET language = $2::text::regconfig WHERE id = $1",
                        &[&id, &doc.language],
                    )
                }
                _ => {
                    doc.chunk_config =
                        [None, Some("default".to_string()), Some("small".to_string())][rng.below(3)].clone();
                    db.execute(
                        "UPDATE knowledge.documents SET chunk_config = $2 WHERE id = $1",
                        &[&id, &doc.chunk_config],
                    )
                }
            };
            statement.map(|n| {
                if n != 1 {
                    broken.push(format!("update of document {id} changed {n} rows"));
                }
                report.live.insert(id, doc);
                report.updates += 1;
            })
        } else if roll < 70 {
            let id = ids[rng.below(ids.len())];
            db.execute("DELETE FROM knowledge.documents WHERE id = $1", &[&id]).map(|n| {
                if n != 1 {
                    broken.push(format!("delete of document {id} removed {n} rows"));
                }
                report.live.remove(&id);
                report.gone.push(id);
                report.deletes += 1;
            })
        } else {
            let question = &questions[rng.below(questions.len())];
            let k = 1 + rng.below(10) as i32;
            let mode = ["hybrid", "vector", "text"][rng.below(3)];
            let config = ["default", "small"][rng.below(2)];
            // Half the searches only look at this client's documents, which only it writes:
            // what they return must be among the ones it knows are there.
            let own = rng.below(2) == 0;
            let options = if own {
                format!(r#"{{"mode": "{mode}", "config": "{config}", "metadata": {{"client": {client}}}}}"#)
            } else {
                format!(r#"{{"mode": "{mode}", "config": "{config}"}}"#)
            };
            db.query("SELECT document_id FROM knowledge.search($1, $2, $3::text::jsonb)", &[question, &k, &options])
                .map(|rows| {
                    if rows.len() > k as usize {
                        broken.push(format!("search {options} gave {} rows for k = {k}", rows.len()));
                    }
                    if own {
                        for row in &rows {
                            let id: i64 = row.get(0);
                            if !report.live.contains_key(&id) {
                                broken.push(format!("search {options} returned document {id}, not one of its own"));
                            }
                        }
                    }
                    report.searches += 1;
                })
        };
        if let Err(e) = result {
            report.errors.push(format!("client {client}, iteration {iterations}: {}", describe_error(&e)));
        }
        report.errors.extend(broken.into_iter().map(|b| format!("client {client}, iteration {iterations}: {b}")));
    }
    report.end = Memory::of(pid);
    if !warmed {
        report.start = report.end;
    }
    if !halfway {
        report.middle = report.end;
    }
    report
}

/// VACUUMs the chunks every two seconds until `deadline`: how many ran, and their errors.
fn vacuum_until(deadline: Instant) -> (usize, Vec<String>) {
    let mut client = connect_database(DATABASE);
    let (mut count, mut errors) = (0, Vec::new());
    while Instant::now() < deadline {
        thread::sleep(Duration::from_secs(2).min(deadline.saturating_duration_since(Instant::now())));
        match client.batch_execute("VACUUM knowledge.chunks") {
            Ok(()) => count += 1,
            Err(e) => errors.push(format!("VACUUM during the load: {}", describe_error(&e))),
        }
    }
    (count, errors)
}

#[test]
fn sixteen_clients_for_a_minute_leave_exact_chunks_and_stable_memory() {
    let seconds: u64 = std::env::var("PG_CHUNK_LOAD_SECONDS")
        .ok()
        .map_or(60, |s| s.parse().expect("PG_CHUNK_LOAD_SECONDS: a number of seconds"));
    let mut client = fresh_database(DATABASE);
    // Two sync configs with the static model: the default one (semantic) and a recursive one.
    client
        .batch_execute(
            "UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default';
             INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('small', '{\"strategy\": \"recursive\", \"max_size\": 800}', 'potion-base-8m');",
        )
        .unwrap();
    let pool = Arc::new(prose_paragraphs());
    let questions: Arc<Vec<String>> = Arc::new(
        corpus()["questions"].as_array().unwrap().iter().map(|q| q["question"].as_str().unwrap().to_string()).collect(),
    );

    let started = Instant::now();
    let warm_up = started + Duration::from_secs(seconds.min(15) / 3).max(Duration::from_secs(1));
    let deadline = started + Duration::from_secs(seconds);
    let middle = warm_up + (deadline - warm_up) / 2;
    let threads: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (pool, questions) = (Arc::clone(&pool), Arc::clone(&questions));
            thread::spawn(move || run_client(c, pool, questions, warm_up, middle, deadline))
        })
        .collect();
    let vacuums = thread::spawn(move || vacuum_until(deadline));
    let reports: Vec<Report> = threads.into_iter().map(|t| t.join().expect("a client panicked")).collect();
    let (vacuum_count, vacuum_errors) = vacuums.join().expect("the vacuuming connection panicked");
    let elapsed = started.elapsed().as_secs_f64();

    // Figures first, so a failure below still shows them.
    let mb = |kb: u64| kb as f64 / 1024.0;
    println!("{seconds} s requested, {elapsed:.1} s taken, {CLIENTS} clients. Backend memory in MB after the warm-up, halfway and at");
    println!("the end: RSS (VmRSS) and own (VmRSS less RssShmem, the shared buffers it has touched):");
    println!("client    pid  start RSS  mid RSS  end RSS  start own  mid own  end own  inserts  rollbacks  updates  deletes  searches  errors");
    for r in &reports {
        println!(
            "{:>6} {:>6} {:>10.1} {:>8.1} {:>8.1} {:>10.1} {:>8.1} {:>8.1} {:>8} {:>10} {:>8} {:>8} {:>9} {:>7}",
            r.client,
            r.pid,
            mb(r.start.rss),
            mb(r.middle.rss),
            mb(r.end.rss),
            mb(r.start.own()),
            mb(r.middle.own()),
            mb(r.end.own()),
            r.inserts,
            r.rollbacks,
            r.updates,
            r.deletes,
            r.searches,
            r.errors.len()
        );
    }
    let total = |f: fn(&Report) -> usize| reports.iter().map(f).sum::<usize>();
    let (inserts, rollbacks, updates, deletes, searches) = (
        total(|r| r.inserts),
        total(|r| r.rollbacks),
        total(|r| r.updates),
        total(|r| r.deletes),
        total(|r| r.searches),
    );
    println!(
        "totals: {inserts} inserts ({:.1}/s), {rollbacks} rolled-back inserts ({:.1}/s), {updates} updates ({:.1}/s), {deletes} deletes ({:.1}/s), {searches} searches ({:.1}/s)",
        inserts as f64 / elapsed,
        rollbacks as f64 / elapsed,
        updates as f64 / elapsed,
        deletes as f64 / elapsed,
        searches as f64 / elapsed
    );

    println!("{vacuum_count} VACUUMs of knowledge.chunks meanwhile");

    let errors: Vec<&String> = reports.iter().flat_map(|r| &r.errors).chain(&vacuum_errors).collect();
    assert!(errors.is_empty(), "{} errors, first {:?}", errors.len(), &errors[..errors.len().min(10)]);
    assert!(
        inserts >= CLIENTS && searches > 0 && updates > 0 && deletes > 0 && vacuum_count > 0,
        "too little work to judge"
    );
    // The HNSW indexes survive the VACUUM of all those deleted and replaced chunks, and
    // searches walk them afterwards.
    client
        .batch_execute("VACUUM knowledge.chunks")
        .unwrap_or_else(|e| panic!("the last VACUUM: {}", describe_error(&e)));
    for question in questions.iter() {
        for config in ["default", "small"] {
            let options = format!(r#"{{"mode": "vector", "config": "{config}"}}"#);
            let rows = client
                .query("SELECT document_id FROM knowledge.search($1, 20, $2::text::jsonb)", &[question, &options])
                .unwrap_or_else(|e| {
                    panic!("vector search {options} for {question:?} after the load: {}", describe_error(&e))
                });
            assert!(!rows.is_empty(), "vector search {options} for {question:?} found nothing after the load");
        }
    }

    // The documents are exactly what the clients last wrote; nothing of the others remains.
    let mut expected: HashMap<i64, Doc> = HashMap::new();
    for r in &reports {
        expected.extend(r.live.iter().map(|(id, doc)| (*id, doc.clone())));
    }
    let stored: HashMap<i64, Doc> = client
        .query("SELECT id, title, content, language::text, chunk_config FROM knowledge.documents", &[])
        .unwrap()
        .iter()
        .map(|row| {
            (row.get(0), Doc { title: row.get(1), content: row.get(2), language: row.get(3), chunk_config: row.get(4) })
        })
        .collect();
    let mut differing: Vec<i64> =
        expected.keys().chain(stored.keys()).filter(|id| expected.get(id) != stored.get(id)).copied().collect();
    differing.sort_unstable();
    differing.dedup();
    assert!(
        differing.is_empty(),
        "{} documents differ from what their clients wrote (missing, extra or changed), first {:?}",
        differing.len(),
        &differing[..differing.len().min(10)]
    );
    let gone: Vec<i64> = reports.iter().flat_map(|r| r.gone.iter().copied()).collect();
    let left: i64 = client
        .query_one("SELECT count(*) FROM knowledge.chunks WHERE document_id = ANY ($1)", &[&gone])
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "chunks of deleted or rolled-back documents");

    // Every chunk row belongs to a document, with an embedding; per document and config the
    // indexes run 0..n-1 without a gap or a repeat.
    let count = |client: &mut Client, query: &str| -> i64 { client.query_one(query, &[]).unwrap().get(0) };
    assert_eq!(count(&mut client, "SELECT count(*) FROM knowledge.chunks AS c WHERE NOT EXISTS (SELECT FROM knowledge.documents AS d WHERE d.id = c.document_id)"), 0, "orphan chunks");
    assert_eq!(
        count(&mut client, "SELECT count(*) FROM knowledge.chunks WHERE embedding IS NULL"),
        0,
        "chunks without an embedding"
    );
    let gaps: Vec<String> = client
        .query(
            "SELECT document_id || '/' || chunk_config || ': ' || count(*) || ' rows, ' || count(DISTINCT chunk_index) || ' indexes, '
                    || min(chunk_index) || '..' || max(chunk_index)
             FROM knowledge.chunks GROUP BY document_id, chunk_config
             HAVING min(chunk_index) <> 0 OR max(chunk_index) <> count(*) - 1 OR count(DISTINCT chunk_index) <> count(*)",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(gaps.is_empty(), "chunk indexes not 0..n-1: {:?}", &gaps[..gaps.len().min(10)]);
    // Each document is chunked with the configs it names (NULL: both active ones).
    let expected_pairs: usize = expected.values().map(|d| if d.chunk_config.is_some() { 1 } else { 2 }).sum();
    assert_eq!(
        count(
            &mut client,
            "SELECT count(*) FROM (SELECT DISTINCT document_id, chunk_config FROM knowledge.chunks) AS p"
        ) as usize,
        expected_pairs
    );
    // And each config's rows are exactly knowledge.chunk(content, effective_cfg), embedded.
    let chunks = count(&mut client, "SELECT count(*) FROM knowledge.chunks");
    assert_store_exact(&mut client, "after the load");
    println!("end state: {} documents, {chunks} chunks, all exact", expected.len());

    // Memory per backend. VmRSS is no measure of a leak here: it counts the shared buffers a
    // backend has touched (RssShmem), which grow towards shared_buffers (128 MB on the test
    // cluster) as the store grows and the clients read it: in a 60 s run VmRSS grows from about
    // 80 to 200 MB in every backend while its own memory (VmRSS less RssShmem: heap, libraries,
    // the model) grows from 60 to 65 MB, most of it after the warm-up in the first half. That
    // legitimate growth is the embedding cache (pg_chunk.embedding_cache_mb, 64 MB at most; the
    // documents here share their paragraphs, so a client adds well under a few MB of new
    // sentence vectors a minute) and allocator slack. A leak grows with the work instead: each
    // client writes about a hundred documents of 1-20 KB a minute, each with hundreds of KB of
    // sentences, vectors and chunks in flight, so leaking a few hundred KB of each crosses the
    // bound within the minute, while the noise measured (5 MB) is a fifth of the slack:
    // own memory at the end <= 1.25 × own memory after the warm-up + 10 MB.
    let over: Vec<String> = reports
        .iter()
        .filter(|r| r.end.own() as f64 > r.start.own() as f64 * 1.25 + 10.0 * 1024.0)
        .map(|r| {
            format!("client {} (pid {}): {:.1} MB -> {:.1} MB", r.client, r.pid, mb(r.start.own()), mb(r.end.own()))
        })
        .collect();
    assert!(
        over.is_empty(),
        "a backend's own memory (VmRSS less RssShmem) grew beyond 1.25 × after the warm-up + 10 MB: {over:?}"
    );
}
