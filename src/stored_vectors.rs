//! knowledge_internal.stored_vectors: the vectors the store embedded, by what made them, so that
//! knowledge_internal.write_chunks embeds a text only when no vector of it is stored. A vector's key is
//! the sha256 of its model's vector identity (`models::vector_identity`: the row's fields and
//! the files' sha256), the chunk config it was embedded for, the role and the text; nothing made
//! under another identity, or for another config, matches (a config is the unit of tenancy:
//! docs/security.md). The table's rows are ordered by id, and past pg_chunk.stored_vectors_mb the
//! lowest ids go.

use crate::errors::Error;
use crate::gucs;
use crate::models::vector_identity;
use pg_chunk_embed::reuse::{stored_vector_key, VectorStore};
use pg_chunk_embed::{ModelKind, ModelSpec, Role};
use pgrx::prelude::*;
use std::cell::RefCell;

thread_local! {
    /// The chunk config whose chunks the store is embedding now (knowledge_internal.embed_config_chunks),
    /// None outside the store's embedding.
    static STORING_FOR: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` with stored vectors looked up and saved, for `config`, for every passage it embeds.
pub fn while_storing<R>(config: &str, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<String>);
    impl Drop for Reset {
        fn drop(&mut self) {
            STORING_FOR.set(self.0.take());
        }
    }
    let _reset = Reset(STORING_FOR.replace(Some(config.to_string())));
    f()
}

/// Whose vectors an embedding in progress makes, for this backend's cache and the stored
/// vectors' keys: the chunk config the store embeds for, or else the role calling (a pooled
/// backend serves several roles, and none should learn from a cache hit what another embedded).
pub fn embedding_scope() -> String {
    STORING_FOR.with_borrow(|config| match config {
        Some(config) => format!("config {config}"),
        // SAFETY: reads the backend's current user id, a plain global.
        None => format!("role {}", unsafe { pg_sys::GetUserId() }.to_u32()),
    })
}

/// Stored vectors of one model, for the texts of one embedding call.
pub struct StoredVectors {
    model: String,
    identity: [u8; 32],
    /// `embedding_scope()`: the config the vectors are stored for.
    scope: String,
    role: Role,
    /// At most this many rows stay (pg_chunk.stored_vectors_mb over a row's size).
    most_rows: i64,
    /// The model's dimension: a stored vector of another is not used.
    dimension: usize,
}

/// Bytes a stored vector of `dimension` takes on disk, indexes included: its floats and a row's
/// fixed cost (key, id, heap and hash-index overhead); pg_chunk.stored_vectors_mb counts these.
pub fn row_bytes(dimension: usize) -> u64 {
    4 * dimension as u64 + 190
}

impl StoredVectors {
    /// The stored vectors for embedding `role` texts with `model` now: None outside the store's
    /// embedding, with pg_chunk.stored_vectors_mb 0, for a static model (whose embedding costs
    /// less than a row of the table: bench/README.md, "Reuse"), or for a role that may not read
    /// and write knowledge_internal.stored_vectors (the triggers and the workers run as its owner; someone
    /// calling knowledge.rechunk runs as themself).
    pub fn open(model: &str, spec: &ModelSpec, role: Role) -> Result<Option<StoredVectors>, Error> {
        let room = gucs::stored_vectors_bytes();
        if STORING_FOR.with_borrow(Option::is_none) || room == 0 || spec.kind == ModelKind::Static {
            return Ok(None);
        }
        // (has_table_privilege with several privileges asks whether any of them is held.)
        let query = "SELECT pg_catalog.has_table_privilege('knowledge_internal.stored_vectors', 'SELECT') \
                     AND pg_catalog.has_table_privilege('knowledge_internal.stored_vectors', 'INSERT') \
                     AND pg_catalog.has_table_privilege('knowledge_internal.stored_vectors', 'DELETE')";
        let allowed =
            Spi::connect(|client| client.select(query, Some(1), &[])?.first().get_one::<bool>()).map_err(spi_error)?;
        if allowed != Some(true) {
            return Ok(None);
        }
        let most_rows = i64::try_from(room / row_bytes(spec.dimension)).unwrap_or(i64::MAX);
        let identity = vector_identity(model)?;
        Ok(Some(StoredVectors {
            model: model.to_string(),
            identity,
            scope: embedding_scope(),
            role,
            most_rows,
            dimension: spec.dimension,
        }))
    }

    /// The key of `text`'s vector (`reuse::stored_vector_key`), as bytea.
    fn key(&self, text: &str) -> Vec<u8> {
        stored_vector_key(&self.identity, &self.scope, self.role, text).to_vec()
    }

    /// The stored vector of each text, if there is one of the model's dimension.
    fn look_up(&self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>, Error> {
        let keys: Vec<Vec<u8>> = texts.iter().map(|t| self.key(t)).collect();
        let query = "SELECT (SELECT s.embedding::pg_catalog.float4[] FROM knowledge_internal.stored_vectors AS s \
                             WHERE s.key OPERATOR(pg_catalog.=) k.key LIMIT 1) \
                     FROM pg_catalog.unnest($1::pg_catalog.bytea[]) WITH ORDINALITY AS k(key, i) ORDER BY k.i";
        let found = Spi::connect(|client| {
            client.select(query, None, &[keys.into()])?.map(|row| row.get::<Vec<f32>>(1)).collect::<Result<Vec<_>, _>>()
        })
        .map_err(spi_error)?;
        Ok(found.into_iter().map(|v| v.filter(|v| v.len() == self.dimension)).collect())
    }

    /// Stores the vectors of `texts` (`vectors` holds them one after the other, the model's
    /// floats each), then drops the oldest rows past the cap. Rows are never locked or waited
    /// for: two writers storing the same text at once leave two equal rows, both valid.
    fn store(&self, texts: &[&str], vectors: &[f32]) -> Result<(), Error> {
        if texts.is_empty() {
            return Ok(());
        }
        let keys: Vec<Vec<u8>> = texts.iter().map(|t| self.key(t)).collect();
        let insert = "INSERT INTO knowledge_internal.stored_vectors (key, model, embedding) \
                      SELECT k.key, $2, ($3::pg_catalog.float4[])[(k.i::pg_catalog.int4 - 1) * $4 + 1 : k.i::pg_catalog.int4 * $4] \
                      FROM pg_catalog.unnest($1::pg_catalog.bytea[]) WITH ORDINALITY AS k(key, i)";
        let evict = "DELETE FROM knowledge_internal.stored_vectors AS s WHERE s.id OPERATOR(pg_catalog.=) ANY (ARRAY( \
                         SELECT v.id FROM knowledge_internal.stored_vectors AS v \
                         WHERE v.id OPERATOR(pg_catalog.<=) ((SELECT pg_catalog.max(m.id) FROM knowledge_internal.stored_vectors AS m) OPERATOR(pg_catalog.-) $1) \
                         ORDER BY v.id FOR UPDATE SKIP LOCKED))";
        let dimension = i32::try_from(self.dimension).unwrap_or(i32::MAX);
        Spi::connect_mut(|client| {
            client.update(
                insert,
                None,
                &[keys.into(), self.model.as_str().into(), vectors.to_vec().into(), dimension.into()],
            )?;
            client.update(evict, None, &[self.most_rows.into()]).map(|_| ())
        })
        .map_err(spi_error)
    }
}

/// The store's errors are raised where they happen (the embedder's caller expects model errors
/// only; these are rare).
impl VectorStore for StoredVectors {
    fn find(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        self.look_up(texts).unwrap_or_else(|e| raise(e))
    }

    fn save(&self, texts: &[&str], vectors: &[f32]) {
        self.store(texts, vectors).unwrap_or_else(|e| raise(e))
    }
}

fn spi_error(error: pgrx::spi::SpiError) -> Error {
    Error::Registry(format!("knowledge_internal.stored_vectors: {error}"))
}

/// Raises `error` (an embedder's caller expects model errors only; the store's are rare).
pub(crate) fn raise(error: Error) -> ! {
    error.report("embed_texts").report(PgLogLevel::ERROR);
    unreachable!("an ERROR does not return")
}
