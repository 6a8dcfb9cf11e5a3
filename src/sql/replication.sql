-- Logical replication of documents alone (docs/operations.md, "Logical replication"): a
-- subscriber that chunks and embeds the documents it receives itself.

-- The apply worker of a subscription writes with session_replication_role = replica, under
-- which only triggers set ENABLE ALWAYS (or REPLICA) fire. enable true sets ENABLE ALWAYS every
-- trigger that keeps the chunks of knowledge.documents in step: its sync triggers, those of
-- BM25's statistics on knowledge.chunks (the sync trigger writes chunks in that same session)
-- and their commit, and the ON DELETE CASCADE of the foreign keys to knowledge.documents
-- (system triggers, which only a superuser may set). false sets them back to ENABLE, as
-- CREATE EXTENSION leaves them. Returns the number of triggers set.
CREATE FUNCTION knowledge.chunk_replicated_documents(enable boolean DEFAULT true) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    t record;
    n int := 0;
BEGIN
    FOR t IN
        SELECT tg.tgrelid::regclass AS rel, tg.tgname FROM pg_catalog.pg_trigger AS tg
        WHERE (tg.tgrelid::regclass, tg.tgname) IN (
                  ('knowledge.documents'::regclass, 'documents_sync_insert'),
                  ('knowledge.documents'::regclass, 'documents_sync_update'),
                  ('knowledge.chunks'::regclass, 'chunks_text_stats'),
                  ('knowledge.chunks'::regclass, 'chunks_text_stats_truncate'),
                  ('knowledge_internal.text_stats_commits'::regclass, 'text_stats_commits_add'))
           -- tgtype bit 3: a DELETE trigger.
           OR (tg.tgrelid = 'knowledge.documents'::regclass AND tg.tgisinternal AND tg.tgtype & 8 <> 0
               AND tg.tgconstraint IN (SELECT c.oid FROM pg_catalog.pg_constraint AS c
                                       WHERE c.confrelid = 'knowledge.documents'::regclass AND c.contype = 'f'
                                         AND c.confdeltype = 'c'))
        ORDER BY 1, 2
    LOOP
        EXECUTE format('ALTER TABLE %s %s TRIGGER %I', t.rel, CASE WHEN enable THEN 'ENABLE ALWAYS' ELSE 'ENABLE' END, t.tgname);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;
REVOKE EXECUTE ON FUNCTION knowledge.chunk_replicated_documents(boolean) FROM PUBLIC;
