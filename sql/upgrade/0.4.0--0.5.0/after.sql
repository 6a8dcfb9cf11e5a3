-- 0.4.0 → 0.5.0, after the functions: triggers, indexes, data backfills.

-- Dropping never deletes documents unasked (sql/drop_guard.sql).
CREATE EVENT TRIGGER pg_chunk_drop_guard ON ddl_command_start
WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED')
EXECUTE FUNCTION knowledge_internal.guard_drop();

-- The stored vectors' keys now hold their chunk config: those stored before match nothing.
TRUNCATE knowledge_internal.stored_vectors;
