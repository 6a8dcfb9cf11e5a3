//! Embedding models inside a backend: found by name in `knowledge.models`, loaded on first use
//! and kept for the life of the backend, reloaded when their row or settings change.

use crate::catalog;
use crate::errors::Error;
use crate::gucs;
use crate::vector_cache;
use pg_chunk_embed::files::{self, FileHashes, FileStamp};
use pg_chunk_embed::{load_model, EmbedError, ModelFile, ModelKind, ModelSpec, Pooling, RuntimeOptions, SentenceModel};
use pgrx::prelude::*;
use serde::Deserialize;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

/// The model-free embedder's reserved name.
pub const LEXICAL: &str = "lexical";

/// A row of `knowledge.models`.
#[derive(Deserialize)]
struct ModelRow {
    name: String,
    kind: String,
    model_file: String,
    tokenizer_file: String,
    dimension: i32,
    pooling: String,
    normalize: bool,
    max_tokens: i32,
    query_prefix: Option<String>,
    passage_prefix: Option<String>,
    output_name: Option<String>,
    optimize_graph: bool,
}

struct Loaded {
    /// The row and settings the model was loaded with; a change means reload.
    fingerprint: String,
    model: Box<dyn SentenceModel>,
}

/// What `knowledge.embedding_stats()` reports for one model in this backend.
#[derive(Clone, Default)]
pub struct ModelStats {
    pub loads: i64,
    pub load_ms: f64,
    pub sentences_embedded: i64,
    pub cache_hits: i64,
    pub embed_ms: f64,
    /// Vectors taken from knowledge_internal.stored_vectors instead of being embedded.
    pub stored_hits: i64,
    /// Chunk rows knowledge_internal.write_chunks inserted with vectors of this model.
    pub chunks_written: i64,
}

thread_local! {
    // A backend is a single-threaded process: per-backend state is thread_local + RefCell.
    static LOADED: RefCell<HashMap<String, Loaded>> = RefCell::new(HashMap::new());
    static STATS: RefCell<BTreeMap<String, ModelStats>> = const { RefCell::new(BTreeMap::new()) };
    /// sha256 of model files this backend has hashed, by each file's path, size and mtime.
    static FILE_HASHES: RefCell<FileHashes> = RefCell::new(FileHashes::default());
}

/// The stamps of `files` that exist, in order.
fn file_stamps(files: &[PathBuf]) -> Result<Vec<FileStamp>, Error> {
    files::file_stamps(files).map_err(|e| Error::Registry(e.to_string()))
}

/// The stamps of the files holding a model's weights (files::weights_files); its model file
/// must exist.
fn weights_files(spec: &ModelSpec) -> Result<Vec<FileStamp>, Error> {
    let stamps = file_stamps(&files::weights_files(&spec.model_file))?;
    if stamps.first().map(|s| &s.0) != Some(&spec.model_file) {
        return Err(Error::embed(
            EmbedError::MissingFile { path: spec.model_file.clone(), what: ModelFile::Model },
            spec,
        ));
    }
    Ok(stamps)
}

/// The sha256 (lowercase hex) of the weights model `name` is registered with (its model file,
/// then its `.data` file if any). knowledge.embedding_runs records it, so a run says exactly
/// which weights made its vectors.
pub fn model_file_sha256(name: &str) -> Result<String, Error> {
    let (spec, _) = model_spec(name)?;
    files_sha256(&weights_files(&spec)?)
}

/// The sha256 of the files' bytes one after the other, hashed once per backend while their
/// sizes and modification times stay the same.
fn files_sha256(stamps: &[FileStamp]) -> Result<String, Error> {
    FILE_HASHES
        .with_borrow_mut(|hashes| {
            hashes.sha256(stamps, &mut || {
                check_for_interrupts!();
            })
        })
        .map_err(|e| Error::Registry(e.to_string()))
}

/// What decides the vectors model `name` gives a text (files::vector_identity), as 32 bytes.
/// knowledge_internal.stored_vectors keys vectors by it, so a changed row or file never reuses a vector
/// made before the change.
pub fn vector_identity(name: &str) -> Result<[u8; 32], Error> {
    let (spec, _) = model_spec(name)?;
    let weights = files_sha256(&weights_files(&spec)?)?;
    let tokenizer = files_sha256(&file_stamps(std::slice::from_ref(&spec.tokenizer_file))?)?;
    Ok(files::vector_identity(&spec, &weights, &tokenizer))
}

/// Runs `f` with the model named `name`, loading it first if this backend has not yet (or if
/// its registration or the settings it was loaded with changed).
pub fn with_model<R>(name: &str, f: impl FnOnce(&mut dyn SentenceModel) -> R) -> Result<R, Error> {
    let wanted = wanted(name)?;
    LOADED.with_borrow_mut(|loaded| {
        ensure_loaded(loaded, name, wanted)?;
        let model =
            loaded.get_mut(name).map(|l| l.model.as_mut()).ok_or_else(|| Error::UnknownModel(name.to_string()))?;
        Ok(f(model))
    })
}

/// Runs `f` with two different models at once (`with_model` for each; the names must differ).
pub fn with_models<R>(
    [first, second]: [&str; 2],
    f: impl FnOnce(&mut dyn SentenceModel, &mut dyn SentenceModel) -> R,
) -> Result<R, Error> {
    let (wanted_first, wanted_second) = (wanted(first)?, wanted(second)?);
    LOADED.with_borrow_mut(|loaded| {
        ensure_loaded(loaded, first, wanted_first)?;
        ensure_loaded(loaded, second, wanted_second)?;
        match loaded.get_disjoint_mut([first, second]) {
            [Some(a), Some(b)] => Ok(f(a.model.as_mut(), b.model.as_mut())),
            _ => Err(Error::UnknownModel(format!("{first}, {second}"))),
        }
    })
}

/// Model `name` as this backend should have it loaded: its registration, the runtime settings,
/// and the fingerprint of both and of its files that a loaded copy must match.
struct Wanted {
    spec: ModelSpec,
    runtime: RuntimeOptions,
    /// pg_chunk.threads as set (`runtime.threads` is it capped by pg_chunk.max_threads).
    threads_asked: usize,
    fingerprint: String,
}

fn wanted(name: &str) -> Result<Wanted, Error> {
    let (spec, row_json) = model_spec(name)?;
    let (threads, threads_asked) = gucs::threads();
    let runtime = RuntimeOptions { library_path: gucs::onnxruntime_library(), threads };
    // A model file or tokenizer replaced under the same name is a change too.
    let files = file_stamps(&[spec.model_file.clone(), spec.tokenizer_file.clone()])?;
    let fingerprint = format!("{row_json}|{files:?}|{}|{}", runtime.library_path.display(), runtime.threads);
    Ok(Wanted { spec, runtime, threads_asked, fingerprint })
}

/// Loads model `name` into this backend unless it is loaded as it should be (`with_model`'s
/// rule); the milliseconds loading took, 0 where it was already loaded.
pub fn prewarm(name: &str) -> Result<f64, Error> {
    let wanted = wanted(name)?;
    LOADED.with_borrow_mut(|loaded| ensure_loaded(loaded, name, wanted))
}

/// Loads model `name` into `loaded` unless it is there as `wanted`; the milliseconds loading
/// took, 0 where it was there.
fn ensure_loaded(loaded: &mut HashMap<String, Loaded>, name: &str, wanted: Wanted) -> Result<f64, Error> {
    let Wanted { spec, runtime, threads_asked, fingerprint } = wanted;
    if loaded.get(name).is_some_and(|l| l.fingerprint == fingerprint) {
        return Ok(0.0);
    }
    if loaded.remove(name).is_some() {
        // Vectors this backend cached from the model as it was must not be reused.
        vector_cache::forget_cached_vectors();
    }
    if threads_asked > runtime.threads {
        ereport!(
            NOTICE,
            PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
            format!(
                "pg_chunk.threads is {threads_asked}, above pg_chunk.max_threads: model \"{name}\" runs with {}",
                runtime.threads
            )
        );
    }
    let started = Instant::now();
    let model = load_model(&spec, &runtime).map_err(|e| Error::embed(e, &spec))?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    record(name, |s| {
        s.loads += 1;
        s.load_ms += load_ms;
    });
    loaded.insert(name.to_string(), Loaded { fingerprint, model });
    Ok(load_ms)
}

/// Updates this backend's statistics for `model`.
pub fn record(model: &str, update: impl FnOnce(&mut ModelStats)) {
    STATS.with_borrow_mut(|stats| update(stats.entry(model.to_string()).or_default()));
}

pub fn stats() -> Vec<(String, ModelStats)> {
    STATS.with_borrow(|stats| stats.iter().map(|(name, s)| (name.clone(), s.clone())).collect())
}

/// The model's specification with absolute paths, and its row as JSON (for the fingerprint).
fn model_spec(name: &str) -> Result<(ModelSpec, String), Error> {
    // Every use of a model starts here: knowledge.embed, chunk, token_count, prewarm, the store.
    catalog::check_library_serves_sql()?;
    // A read-only SPI select: Spi::get_one runs its query read-write, which a parallel worker
    // refuses ("cannot assign XIDs during a parallel operation"), and these functions are
    // PARALLEL SAFE.
    // Every name qualified: under a caller's search_path that lists another schema before
    // pg_catalog, an unqualified row_to_json or = could be the caller's own, and decide which
    // files this backend reads.
    let query = "SELECT (SELECT pg_catalog.row_to_json(m)::pg_catalog.text FROM knowledge.models AS m \
                 WHERE m.name OPERATOR(pg_catalog.=) $1)";
    let row_json = Spi::connect(|client| client.select(query, Some(1), &[name.into()])?.first().get_one::<String>())
        .map_err(|e| Error::Registry(e.to_string()))?
        .ok_or_else(|| Error::UnknownModel(name.to_string()))?;
    let row: ModelRow = serde_json::from_str(&row_json)
        .map_err(|e| Error::Registry(format!("knowledge.models row for \"{name}\": {e}")))?;
    let dir = gucs::model_dir();
    // The table's CHECKs allow these values only; a row that got past them is an error, not a
    // transformer or mean pooling by default.
    let unknown = |column: &str, value: &str| {
        Error::Registry(format!("knowledge.models row for \"{name}\": unknown {column} \"{value}\""))
    };
    let kind: ModelKind = row.kind.parse().map_err(|_| unknown("kind", &row.kind))?;
    let pooling: Pooling = row.pooling.parse().map_err(|_| unknown("pooling", &row.pooling))?;
    let spec = ModelSpec {
        kind,
        model_file: dir.join(relative_file(&row.model_file)?),
        tokenizer_file: dir.join(relative_file(&row.tokenizer_file)?),
        dimension: row.dimension.max(1) as usize,
        pooling,
        normalize: row.normalize,
        max_tokens: row.max_tokens.max(1) as usize,
        query_prefix: row.query_prefix,
        passage_prefix: row.passage_prefix,
        output_name: row.output_name,
        optimize_graph: row.optimize_graph,
        name: row.name,
    };
    Ok((spec, row_json))
}

/// A file name from `knowledge.models`, which must stay inside the model directory (the
/// table's CHECK says the same; this guards rows written before it or by a bypass).
fn relative_file(file: &str) -> Result<&Path, Error> {
    let path = Path::new(file);
    if path.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(path)
    } else {
        Err(Error::Registry(format!("model file \"{file}\" must be a relative path inside pg_chunk.model_dir")))
    }
}
