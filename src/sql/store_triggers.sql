-- The triggers that keep the store in step: a document's language and chunks as it is written,
-- and a config's checks, its restore and its rechunking as it changes.

-- A document's language is stored by its name: 'English' and
-- 'pg_catalog.english' as english. A name that is no configuration is refused by the cast
-- to regconfig, with its 42704 (text search configuration "..." does not exist); a name
-- outside pg_catalog needs its schema (the cast resolves it in the pinned search_path).
CREATE FUNCTION knowledge_internal.documents_language() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.language := knowledge_internal.text_search_config_name(NEW.language::regconfig);
    RETURN NEW;
END
$$;

CREATE TRIGGER documents_language BEFORE INSERT OR UPDATE OF language ON knowledge.documents
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.documents_language();

CREATE FUNCTION knowledge_internal.documents_sync() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.documents', 'documents_sync');
    IF knowledge_internal.maintains_chunks() THEN
        PERFORM knowledge_internal.sync_document(NEW.id);
    END IF;
    RETURN NULL;
END
$$;

-- Deleting a document deletes its chunks through the foreign key. An update that leaves the
-- content (by hash), language and config as they were redoes nothing.
CREATE TRIGGER documents_sync_insert AFTER INSERT ON knowledge.documents
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.documents_sync();
CREATE TRIGGER documents_sync_update AFTER UPDATE OF content, language, chunk_config ON knowledge.documents
FOR EACH ROW WHEN (OLD.content_hash IS DISTINCT FROM NEW.content_hash
                   OR OLD.language IS DISTINCT FROM NEW.language
                   OR OLD.chunk_config IS DISTINCT FROM NEW.chunk_config)
EXECUTE FUNCTION knowledge_internal.documents_sync();

-- A config's model must be registered (or lexical).
CREATE FUNCTION knowledge_internal.chunk_configs_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.model <> 'lexical' AND NOT EXISTS (SELECT FROM knowledge.models AS m WHERE m.name = NEW.model) THEN
        RAISE EXCEPTION 'unknown embedding model "%"', NEW.model
            USING ERRCODE = 'undefined_object', HINT = 'See knowledge.models.';
    END IF;
    IF NEW.halfvec AND (SELECT m.dimension FROM knowledge.models AS m WHERE m.name = NEW.model) > 4000 THEN
        RAISE EXCEPTION 'halfvec indexes take at most 4,000 dimensions; model "%" has more', NEW.model
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Leave halfvec NULL to search this config without an index.';
    END IF;
    IF NEW.mode = 'async' AND (TG_OP = 'INSERT' OR OLD.mode <> 'async') AND NOT knowledge_internal.queue_served() THEN
        RAISE WARNING 'no pg_chunk worker serves database "%": documents of chunk config "%" will wait in knowledge.queue',
            current_database(), NEW.name
            USING HINT = 'Add the database to pg_chunk.worker_databases, with pg_chunk in shared_preload_libraries, and restart PostgreSQL.';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER chunk_configs_check BEFORE INSERT OR UPDATE ON knowledge.chunk_configs
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.chunk_configs_changed();

-- A restore brings the dumped default config while the database has the one CREATE EXTENSION
-- made: with pg_chunk.maintain_chunks off (as docs/operations.md, "Backup and restore", restores),
-- the dumped row updates that one, which rechunks nothing then, and is not inserted. Otherwise
-- the insert goes on, and a second default fails on the primary key, as any name taken does.
CREATE FUNCTION knowledge_internal.chunk_configs_at_restore() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF knowledge_internal.maintains_chunks() THEN
        RETURN NEW;
    END IF;
    UPDATE knowledge.chunk_configs AS c
    SET cfg = NEW.cfg, model = NEW.model, active = NEW.active, halfvec = NEW.halfvec, mode = NEW.mode,
        description = NEW.description, created_at = NEW.created_at
    WHERE c.name = NEW.name;
    RETURN CASE WHEN FOUND THEN NULL ELSE NEW END;
END
$$;

-- Named to fire before chunk_configs_check: the row it updates is checked instead.
CREATE TRIGGER chunk_configs_at_restore BEFORE INSERT ON knowledge.chunk_configs
FOR EACH ROW WHEN (NEW.name = 'default') EXECUTE FUNCTION knowledge_internal.chunk_configs_at_restore();

-- A new config, a changed cfg or model, or an activated config rechunks the documents it
-- applies to, in the same statement (with rechunk_all's progress NOTICEs); a deactivated one
-- loses its chunks of documents that do not name it. So the store stays in step after
-- any statement; with pg_chunk.maintain_chunks off, rechunk_all catches up later. A change of
-- cfg or model of a config with many chunks must be confirmed first (confirm_reembed).
CREATE FUNCTION knowledge_internal.chunk_configs_sync() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    reembeds boolean;
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.chunk_configs', 'chunk_configs_sync');
    IF NOT knowledge_internal.maintains_chunks() THEN
        RETURN NULL;
    END IF;
    reembeds := TG_OP = 'UPDATE' AND (OLD.effective_cfg IS DISTINCT FROM NEW.effective_cfg OR OLD.model <> NEW.model);
    IF reembeds THEN
        PERFORM knowledge_internal.confirm_reembed(OLD.name, NEW.name);
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.active AND NOT NEW.active THEN
        DELETE FROM knowledge.chunks AS c USING knowledge.documents AS d
        WHERE c.chunk_config = NEW.name AND d.id = c.document_id AND d.chunk_config IS NULL;
    END IF;
    IF TG_OP = 'INSERT' OR reembeds OR (NEW.active AND NOT OLD.active) THEN
        PERFORM knowledge.rechunk_all(NEW.name);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunk_configs_sync AFTER INSERT OR UPDATE ON knowledge.chunk_configs
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.chunk_configs_sync();
