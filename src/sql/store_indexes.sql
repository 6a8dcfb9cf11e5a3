-- The store's indexes: each chunk config's HNSW and GIN index over its chunks, made, rebuilt
-- and dropped with it.
--
-- Vector indexes: one HNSW index per chunk config, over that config's chunks, on embedding cast
-- to its model's dimension (pgvector indexes only fixed dimensions). The config's halfvec column
-- picks the type: true indexes (and searches) half-precision halfvec, half the index's size, up
-- to 4,000 dimensions; false full-precision vector, up to 2,000 (above that the config's chunks
-- are searched exactly, without an index); NULL (the default) vector up to 2,000 dimensions and
-- halfvec above. lexical configs have no index.

CREATE FUNCTION knowledge_internal.vector_index_name(config text) RETURNS name
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ('chunks_hnsw_' || left(regexp_replace(config, '[^a-z0-9]', '_', 'g'), 40) || '_' || left(md5(config), 8))::name;

-- Whether a config's vectors are indexed and searched as halfvec.
CREATE FUNCTION knowledge_internal.uses_halfvec(halfvec boolean, dimension int) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(halfvec, dimension > 2000);

-- The expression a config's index covers and search orders by; dimension is an int, so the
-- text is safe to splice into SQL.
CREATE FUNCTION knowledge_internal.vector_expression(dimension int, halfvec boolean) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN knowledge_internal.uses_halfvec(halfvec, dimension) THEN format('(embedding::halfvec(%s))', dimension)
            ELSE format('(embedding::vector(%s))', dimension) END;

CREATE FUNCTION knowledge_internal.create_vector_index(c knowledge.chunk_configs) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    dim int := (SELECT m.dimension FROM knowledge.models AS m WHERE m.name = c.model);
    half boolean := knowledge_internal.uses_halfvec(c.halfvec, dim);
    -- pgvector's HNSW limits.
    most int := CASE WHEN half THEN 4000 ELSE 2000 END;
BEGIN
    IF dim IS NULL THEN
        RETURN;
    END IF;
    IF dim > most THEN
        RAISE NOTICE 'chunk config % embeds % dimensions with model %, more than pgvector''s HNSW indexes take as %; its chunks are searched without an index',
            c.name, dim, c.model, CASE WHEN half THEN 'halfvec' ELSE 'vector' END;
        RETURN;
    END IF;
    -- Only the config's chunks of its current model: when the model changes, chunks of the old
    -- one (another dimension) stay out of the new index until they are rewritten.
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON knowledge.chunks USING hnsw (%s %s) WHERE chunk_config = %L AND model = %L',
        knowledge_internal.vector_index_name(c.name), knowledge_internal.vector_expression(dim, half),
        CASE WHEN half THEN 'halfvec_cosine_ops' ELSE 'vector_cosine_ops' END, c.name, c.model);
END
$$;

CREATE FUNCTION knowledge_internal.drop_vector_index(config text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP INDEX IF EXISTS knowledge.%I', knowledge_internal.vector_index_name(config));
END
$$;

-- Full text: one GIN index on tsv per chunk config, over that config's chunks, so the text leg
-- reads only its own config's matches (an index over every config's chunks returned the other
-- configs' as well, for the search to throw away: bench/README.md, "Decisions").
-- Named as the config's vector index, with tsv for hnsw.
CREATE FUNCTION knowledge_internal.text_index_name(config text) RETURNS name
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ('chunks_tsv_' || substr(knowledge_internal.vector_index_name(config), length('chunks_hnsw_') + 1))::name;

CREATE FUNCTION knowledge_internal.create_text_index(config text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON knowledge.chunks USING gin (tsv) WHERE chunk_config = %L',
        knowledge_internal.text_index_name(config), config);
END
$$;

CREATE FUNCTION knowledge_internal.drop_text_index(config text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP INDEX IF EXISTS knowledge.%I', knowledge_internal.text_index_name(config));
END
$$;

-- A config's indexes are created, rebuilt and dropped with it: both when it is added, removed or
-- renamed, its vector index when its model or halfvec changes. A rename is handled before the
-- row changes: it cascades to the config's chunks, whose foreign-key checks stay pending until
-- the statement ends, and PostgreSQL creates no index on a table with pending trigger events.
-- The new indexes, empty then, take the chunks as the cascade rewrites them.
CREATE FUNCTION knowledge_internal.chunk_configs_indexes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.chunk_configs', 'chunk_configs_indexes');
    IF TG_OP <> 'INSERT' THEN
        PERFORM knowledge_internal.drop_vector_index(OLD.name);
        IF TG_OP = 'DELETE' OR OLD.name <> NEW.name THEN
            PERFORM knowledge_internal.drop_text_index(OLD.name);
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM knowledge_internal.create_vector_index(NEW);
        IF TG_OP = 'INSERT' OR OLD.name <> NEW.name THEN
            PERFORM knowledge_internal.create_text_index(NEW.name);
        END IF;
    END IF;
    RETURN NEW;
END
$$;

-- A model whose dimension changes (or that is added or removed) rebuilds its configs' indexes.
CREATE FUNCTION knowledge_internal.models_vector_index() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM knowledge_internal.drop_vector_index(c.name), knowledge_internal.create_vector_index(c)
    FROM knowledge.chunk_configs AS c
    WHERE c.model IN (CASE WHEN TG_OP <> 'INSERT' THEN OLD.name END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.name END);
    RETURN NULL;
END
$$;

SELECT knowledge_internal.create_vector_index(c), knowledge_internal.create_text_index(c.name) FROM knowledge.chunk_configs AS c;

-- Named to fire after chunk_configs_sync: a new config's or model's index is built once over
-- the chunks that trigger wrote.
CREATE TRIGGER chunk_configs_sync_indexes AFTER INSERT OR DELETE ON knowledge.chunk_configs
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.chunk_configs_indexes();

CREATE TRIGGER chunk_configs_sync_vector_index AFTER UPDATE OF model, halfvec ON knowledge.chunk_configs
FOR EACH ROW WHEN (OLD.name = NEW.name AND (OLD.model, OLD.halfvec) IS DISTINCT FROM (NEW.model, NEW.halfvec))
EXECUTE FUNCTION knowledge_internal.chunk_configs_indexes();

CREATE TRIGGER chunk_configs_rename BEFORE UPDATE OF name ON knowledge.chunk_configs
FOR EACH ROW WHEN (OLD.name <> NEW.name) EXECUTE FUNCTION knowledge_internal.chunk_configs_indexes();

CREATE TRIGGER models_vector_index AFTER INSERT OR DELETE OR UPDATE OF name, dimension ON knowledge.models
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.models_vector_index();

-- They fire for logical replication's writes too (whose session_replication_role = replica
-- silences ordinary triggers): a subscriber of the whole store gets its configs and models
-- replicated but not the indexes the publisher built (docs/operations.md, "Logical replication").
ALTER TABLE knowledge.chunk_configs ENABLE ALWAYS TRIGGER chunk_configs_sync_indexes,
    ENABLE ALWAYS TRIGGER chunk_configs_sync_vector_index, ENABLE ALWAYS TRIGGER chunk_configs_rename;
ALTER TABLE knowledge.models ENABLE ALWAYS TRIGGER models_vector_index;
