-- 0.3.0 → 0.4.0, after the functions: triggers, indexes, data backfills.
-- The index triggers fire for logical replication's writes too (sql/store.sql).
ALTER TABLE knowledge.chunk_configs ENABLE ALWAYS TRIGGER chunk_configs_sync_indexes,
    ENABLE ALWAYS TRIGGER chunk_configs_sync_vector_index, ENABLE ALWAYS TRIGGER chunk_configs_rename;
ALTER TABLE knowledge.models ENABLE ALWAYS TRIGGER models_vector_index;

-- A document's language is stored by its name (sql/store.sql).
CREATE TRIGGER documents_language BEFORE INSERT OR UPDATE OF language ON knowledge.documents
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.documents_language();

-- The default config is dumped too, and a restore puts it in place of the installed one.
SELECT pg_catalog.pg_extension_config_dump('knowledge.chunk_configs', '');
CREATE TRIGGER chunk_configs_at_restore BEFORE INSERT ON knowledge.chunk_configs
FOR EACH ROW WHEN (NEW.name = 'default') EXECUTE FUNCTION knowledge_internal.chunk_configs_at_restore();
