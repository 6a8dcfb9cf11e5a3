-- 0.3.0 → 0.4.0, after the functions: triggers, indexes, data backfills.
-- The index triggers fire for logical replication's writes too (sql/store.sql).
ALTER TABLE knowledge.chunk_configs ENABLE ALWAYS TRIGGER chunk_configs_sync_indexes,
    ENABLE ALWAYS TRIGGER chunk_configs_sync_vector_index, ENABLE ALWAYS TRIGGER chunk_configs_rename;
ALTER TABLE knowledge.models ENABLE ALWAYS TRIGGER models_vector_index;
