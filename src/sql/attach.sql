-- Mirroring a user's table into knowledge.documents (knowledge.attach, knowledge.detach). Only
-- the id and text columns of a row are read, by name (%I), and only where their types are
-- PostgreSQL's own (knowledge_internal.attachable_type): mirror_document runs with the store's
-- rights, and a cast or output function of a type the table's owner made would run with them.

-- Whether a column of type `column_type` may be attached: a type of pg_catalog, or a domain over one
-- (a domain's value turns into its base type without a function, and no one but a superuser
-- makes a cast or an output function for a type of pg_catalog).
CREATE FUNCTION knowledge_internal.attachable_type(column_type regtype) RETURNS boolean
LANGUAGE sql STABLE
RETURN (WITH RECURSIVE base AS (
            SELECT t.oid, t.typtype, t.typbasetype, t.typnamespace FROM pg_catalog.pg_type AS t WHERE t.oid = attachable_type.column_type
            UNION ALL
            SELECT t.oid, t.typtype, t.typbasetype, t.typnamespace
            FROM pg_catalog.pg_type AS t JOIN base AS b ON t.oid = b.typbasetype WHERE b.typtype = 'd')
        SELECT b.typnamespace = 'pg_catalog'::regnamespace FROM base AS b WHERE b.typtype <> 'd');

-- Checks the id and text columns of table `source`: 42703 where one is missing, 42804 where its
-- type is not attachable.
CREATE FUNCTION knowledge_internal.check_attached_columns(source regclass, id_column name, text_column name) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    column_name name;
    column_type regtype;
BEGIN
    FOREACH column_name IN ARRAY ARRAY[id_column, text_column] LOOP
        SELECT a.atttypid INTO column_type FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid = source AND a.attname = column_name AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'table % has no column %', source, quote_ident(column_name) USING ERRCODE = 'undefined_column';
        END IF;
        IF NOT knowledge_internal.attachable_type(column_type) THEN
            RAISE EXCEPTION 'column % of table % is of type %, which is not PostgreSQL''s own', quote_ident(column_name), source, column_type
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'knowledge.attach reads only columns of PostgreSQL''s own types (text, varchar, integers, uuid, ...) or domains over them: attach a view or a generated column of such a type.';
        END IF;
    END LOOP;
END
$$;

-- Keeps the documents of an attachment (TG_ARGV[0]) in step with its table: the row's id and text
-- columns, read by name as text. Fires only on the attachment's table (or a partition of it).
CREATE FUNCTION knowledge_internal.mirror_document() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    a knowledge.attachments;
    read_row CONSTANT text := 'SELECT ($1).%I::text, ($1).%I::text';
    old_key text;
    new_key text;
    new_text text;
    ignored text;
BEGIN
    SELECT * INTO a FROM knowledge.attachments AS x WHERE x.id::text = TG_ARGV[0];
    IF NOT FOUND OR NOT (a.source = TG_RELID OR a.source IN (SELECT pg_catalog.pg_partition_ancestors(TG_RELID))) THEN
        RAISE EXCEPTION 'trigger function knowledge_internal.mirror_document fires only on an attached table, not on %', TG_RELID::regclass
            USING ERRCODE = 'trigger_protocol_violated';
    END IF;
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM knowledge.documents WHERE attachment_id = a.id;
        RETURN NULL;
    END IF;
    -- Its types may have changed since knowledge.attach checked them (ALTER TABLE).
    PERFORM knowledge_internal.check_attached_columns(TG_RELID, a.id_column, a.text_column);
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        EXECUTE format(read_row, a.id_column, a.text_column) INTO old_key, ignored USING OLD;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        EXECUTE format(read_row, a.id_column, a.text_column) INTO new_key, new_text USING NEW;
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
    key text;
    content text;
    trigger_name name := 'pg_chunk_mirror_' || source::oid::text;
BEGIN
    IF (SELECT relkind FROM pg_catalog.pg_class WHERE oid = source) NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '% is not a table', source USING ERRCODE = 'wrong_object_type';
    END IF;
    PERFORM knowledge_internal.check_attached_columns(source, id_column, text_column);
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
    FOR key, content IN EXECUTE format('SELECT * FROM (SELECT t.%I::text, t.%I::text FROM %s AS t) AS r (key, content)
                                        WHERE r.key IS NOT NULL AND r.content IS NOT NULL', id_column, text_column, source) LOOP
        PERFORM knowledge_internal.mirror_row(a, key, content);
        mirrored := mirrored + 1;
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
