-- Dropping never deletes documents unasked: the library's hook refuses any command that would
-- drop knowledge.documents while it holds rows (src/drop_guard.rs). This event trigger loads the
-- library before each command that can reach the table (DROP EXTENSION pg_chunk or vector, DROP
-- SCHEMA ... CASCADE of pgvector's schema, DROP OWNED), so the hook is there in a backend that
-- has not used pg_chunk yet. Where the library cannot be loaded (its package removed, say), no
-- hook can check the command: it is refused while knowledge.documents holds rows.
CREATE FUNCTION knowledge_internal.guard_drop() RETURNS event_trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM knowledge_internal.drop_guard_loaded();
EXCEPTION WHEN undefined_file THEN
    IF has_table_privilege('knowledge.documents', 'SELECT') AND EXISTS (SELECT FROM knowledge.documents) THEN
        RAISE EXCEPTION 'pg_chunk''s library cannot be loaded to check whether this command drops knowledge.documents, which holds documents'
            USING ERRCODE = 'dependent_objects_still_exist',
                  HINT = 'Install pg_chunk''s library again; or, to drop the documents, TRUNCATE knowledge.documents CASCADE first.';
    END IF;
END
$$;

CREATE EVENT TRIGGER pg_chunk_drop_guard ON ddl_command_start
WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED')
EXECUTE FUNCTION knowledge_internal.guard_drop();
