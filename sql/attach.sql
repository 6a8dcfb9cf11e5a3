-- Mirroring a user's table into knowledge.documents (knowledge.attach, knowledge.detach). The row is read as jsonb (to_jsonb(NEW) ->> column), so column and
-- table names never go into dynamic SQL except through %I / regclass quoting.

CREATE FUNCTION knowledge_internal.mirror_document() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    a knowledge.attachments;
    old_key text;
    new_key text;
    new_text text;
BEGIN
    SELECT * INTO a FROM knowledge.attachments WHERE id = TG_ARGV[0]::int;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM knowledge.documents WHERE attachment_id = a.id;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        old_key := to_jsonb(OLD) ->> a.id_column;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        new_key := to_jsonb(NEW) ->> a.id_column;
        new_text := to_jsonb(NEW) ->> a.text_column;
    END IF;
    IF old_key IS NOT NULL AND (new_key IS DISTINCT FROM old_key OR new_text IS NULL) THEN
        DELETE FROM knowledge.documents WHERE attachment_id = a.id AND source_key = old_key;
    END IF;
    IF new_key IS NOT NULL AND new_text IS NOT NULL THEN
        PERFORM knowledge_internal.mirror_row(a, new_key, new_text);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION knowledge_internal.mirror_row(a knowledge.attachments, key text, content text) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO knowledge.documents AS d (source, content, language, chunk_config, attachment_id, source_key)
    VALUES (a.source::text, content, a.language, a.chunk_config, a.id, key)
    ON CONFLICT (attachment_id, source_key) DO UPDATE
    SET content = excluded.content, language = excluded.language, chunk_config = excluded.chunk_config
$$;

-- Mirrors source (a table) into knowledge.documents: each row with a non-NULL text becomes a
-- document (source = the table's name, source_key = the id column's value), kept in step by
-- triggers on source (TRUNCATE included). Existing rows are mirrored now. Returns the number of documents.
CREATE FUNCTION knowledge.attach(source regclass, id_column name, text_column name,
                                 config text DEFAULT 'default', language regconfig DEFAULT 'english')
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    a knowledge.attachments;
    mirrored bigint := 0;
    row_json jsonb;
    trigger_name name := 'pg_chunk_mirror_' || source::oid::text;
BEGIN
    IF (SELECT relkind FROM pg_catalog.pg_class WHERE oid = source) NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '% is not a table', source USING ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute WHERE attrelid = source AND attname = id_column AND attnum > 0 AND NOT attisdropped) THEN
        RAISE EXCEPTION 'table % has no column %', source, quote_ident(id_column) USING ERRCODE = 'undefined_column';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute WHERE attrelid = source AND attname = text_column AND attnum > 0 AND NOT attisdropped) THEN
        RAISE EXCEPTION 'table % has no column %', source, quote_ident(text_column) USING ERRCODE = 'undefined_column';
    END IF;
    PERFORM knowledge_internal.named_chunk_config(config);
    IF EXISTS (SELECT FROM knowledge.attachments AS x WHERE x.source = attach.source) THEN
        RAISE EXCEPTION '% is already attached', source USING ERRCODE = 'duplicate_object',
            HINT = 'knowledge.detach it first.';
    END IF;
    INSERT INTO knowledge.attachments (source, id_column, text_column, chunk_config, language, trigger_name)
    VALUES (source, id_column, text_column, config, knowledge_internal.text_search_config_name(language), trigger_name)
    RETURNING * INTO a;
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION knowledge_internal.mirror_document(%L)',
        trigger_name, source, a.id);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION knowledge_internal.mirror_document(%L)',
        trigger_name || '_truncate', source, a.id);
    FOR row_json IN EXECUTE format('SELECT to_jsonb(t) FROM %s AS t', source) LOOP
        IF row_json ->> id_column IS NOT NULL AND row_json ->> text_column IS NOT NULL THEN
            PERFORM knowledge_internal.mirror_row(a, row_json ->> id_column, row_json ->> text_column);
            mirrored := mirrored + 1;
        END IF;
    END LOOP;
    RETURN mirrored;
END
$$;

-- Stops mirroring source; its documents (and their chunks) are deleted unless keep_documents.
-- Returns the number of documents deleted.
CREATE FUNCTION knowledge.detach(source regclass, keep_documents boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    a knowledge.attachments;
    deleted bigint := 0;
BEGIN
    SELECT * INTO a FROM knowledge.attachments AS x WHERE x.source = detach.source;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% is not attached', source USING ERRCODE = 'undefined_object';
    END IF;
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', a.trigger_name, source);
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', a.trigger_name || '_truncate', source);
    IF keep_documents THEN
        UPDATE knowledge.documents SET attachment_id = NULL WHERE attachment_id = a.id;
    ELSE
        DELETE FROM knowledge.documents WHERE attachment_id = a.id;
        GET DIAGNOSTICS deleted = ROW_COUNT;
    END IF;
    DELETE FROM knowledge.attachments WHERE id = a.id;
    RETURN deleted;
END
$$;
