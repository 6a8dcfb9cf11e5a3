-- The text leg of knowledge.search: what a chunk's tsvector holds, and the statistics BM25
-- ranks with (search.sql reads them).

-- The tsvector of a chunk (and of a query): PostgreSQL's parser over the text, CJK runs written
-- as overlapping bigrams first so that Chinese and Japanese get words (knowledge.cjk_bigrams).
CREATE FUNCTION knowledge.text_vector(language regconfig, content text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.to_tsvector(language, knowledge.cjk_bigrams(content));

-- Per chunk config: in how many chunks each lexeme occurs and how often in all (lexeme '',
-- which no tsvector holds: how many chunks there are and how many lexeme occurrences they hold
-- together). A lexeme's figures are the SUM of its rows: each transaction that writes chunks
-- adds, as it commits, one row of differences per lexeme it changed, so writers never wait on
-- each other's rows, and folds a lexeme's rows into one once it has many. Exact after any
-- sequence of writes, rollbacks and truncations; knowledge.rebuild_text_stats recomputes it
-- from the chunks (after a data-only restore with triggers disabled, say).
CREATE TABLE knowledge_internal.text_stats (
    chunk_config text NOT NULL,
    lexeme text NOT NULL,
    chunks bigint NOT NULL,
    occurrences bigint NOT NULL,
    -- The replica identity (rows are only inserted and deleted): a table in a FOR ALL TABLES
    -- publication cannot delete rows without one (docs/operations.md, "Logical replication").
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
CREATE INDEX text_stats_lexeme ON knowledge_internal.text_stats (chunk_config, lexeme);
-- Not dumped: restoring knowledge.chunks writes it again through the triggers below.
-- Granted to nobody: lexemes are the documents' vocabulary.
REVOKE ALL ON knowledge_internal.text_stats FROM PUBLIC;
-- knowledge_internal.text_stats as knowledge.search reads it: every row for a role that may read
-- knowledge.chunks, none for another (current_user in a view is the querying role; the
-- barrier keeps the role's own conditions from seeing rows before that check does).
CREATE VIEW knowledge_internal.text_stats_visible WITH (security_barrier) AS
SELECT s.chunk_config, s.lexeme, s.chunks, s.occurrences FROM knowledge_internal.text_stats AS s
WHERE pg_catalog.has_table_privilege('knowledge.chunks', 'SELECT');
GRANT SELECT ON knowledge_internal.text_stats_visible TO PUBLIC;

-- A config's chunks as of the last commit, from its lexeme '' rows (a few, indexed): cheaper
-- than counting knowledge.chunks, which no index of its own leads by config. Through the view, so
-- for a role that may read the chunks.
CREATE FUNCTION knowledge_internal.config_chunk_count(config text) RETURNS bigint
LANGUAGE sql STABLE
RETURN (SELECT coalesce(sum(s.chunks), 0)::bigint FROM knowledge_internal.text_stats_visible AS s
        WHERE s.chunk_config = config AND s.lexeme = '');

-- The differences of transactions in progress, per chunk row written, until their commit adds
-- them up into knowledge_internal.text_stats (a rolled-back statement's go with it).
-- Unlogged: nothing in it outlives its transaction.
CREATE UNLOGGED TABLE knowledge_internal.text_stats_pending (
    xid xid8 NOT NULL,
    chunk_config text NOT NULL,
    lexeme text NOT NULL,
    chunks bigint NOT NULL,
    occurrences bigint NOT NULL
);
CREATE INDEX text_stats_pending_xid ON knowledge_internal.text_stats_pending (xid);
-- One row per transaction with pending differences; its deferred trigger adds them up at commit.
CREATE UNLOGGED TABLE knowledge_internal.text_stats_commits (
    xid xid8 PRIMARY KEY
);
REVOKE ALL ON knowledge_internal.text_stats_pending, knowledge_internal.text_stats_commits FROM PUBLIC;
-- knowledge.search reads the caller's own pending rows; those are the only ones a transaction
-- sees (others' are uncommitted until they commit, and committing deletes them).
GRANT SELECT ON knowledge_internal.text_stats_pending TO PUBLIC;

-- The advisory lock class (with the config's hash) under which one transaction at a time folds
-- a config's rows: 'pgts' in ASCII.
CREATE FUNCTION knowledge_internal.text_stats_lock_class() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1885828211 $$;

-- Fold a lexeme's rows into one when it has this many.
CREATE FUNCTION knowledge_internal.text_stats_fold_rows() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 8 $$;

-- The configs in a bulk load (knowledge.begin_load): their chunks are written without counting
-- them here, and knowledge.end_load counts all of the config's chunks once. A writer that skips
-- the count holds its config's row (FOR KEY SHARE) until it ends, so that end_load, deleting the
-- row, waits for it. The key keeps a config in a load from being renamed or removed (23503; a
-- RESTRICT key says 23001 from PostgreSQL 18 on).
CREATE TABLE knowledge_internal.text_stats_paused (
    chunk_config text PRIMARY KEY REFERENCES knowledge.chunk_configs (name)
);
REVOKE ALL ON knowledge_internal.text_stats_paused FROM PUBLIC;

-- Before each row written to knowledge.chunks (inserted, deleted or updated): counts its lexemes
-- into knowledge_internal.text_stats_pending, positive for the new row, negative for the old, and marks
-- the transaction for knowledge_internal.add_text_stats at commit; a config in a bulk load is not
-- counted (knowledge_internal.text_stats_paused). A row trigger that fires before the
-- write, not an AFTER statement trigger with transition tables: those would leave events
-- pending on knowledge.chunks while a config's rename or removal cascades to its chunks, and
-- the vector index that the same statement rebuilds could not be created.
CREATE FUNCTION knowledge_internal.count_text_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    xid xid8;
    paused text[];
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.chunks', 'count_text_stats');
    IF TG_OP = 'UPDATE' AND OLD.chunk_config = NEW.chunk_config AND OLD.tsv = NEW.tsv THEN
        RETURN NEW;
    END IF;
    -- OLD is NULL for an INSERT, NEW for a DELETE.
    paused := ARRAY(SELECT p.chunk_config FROM knowledge_internal.text_stats_paused AS p
                    WHERE p.chunk_config IN (OLD.chunk_config, NEW.chunk_config) FOR KEY SHARE);
    IF (TG_OP = 'DELETE' OR NEW.chunk_config = ANY (paused)) AND (TG_OP = 'INSERT' OR OLD.chunk_config = ANY (paused)) THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    xid := pg_current_xact_id();
    INSERT INTO knowledge_internal.text_stats_pending (xid, chunk_config, lexeme, chunks, occurrences)
    WITH counted AS (
        -- A chunk of no lexeme (only stop words) is one row of lexeme NULL, of no occurrence.
        SELECT r.chunk_config, r.sign, t.lexeme,
               CASE WHEN t.lexeme IS NOT NULL THEN coalesce(array_length(t.positions, 1), 1) ELSE 0 END AS n
        FROM (SELECT OLD.chunk_config, OLD.tsv, -1 WHERE TG_OP <> 'INSERT' AND OLD.chunk_config <> ALL (paused)
              UNION ALL SELECT NEW.chunk_config, NEW.tsv, 1 WHERE TG_OP <> 'DELETE' AND NEW.chunk_config <> ALL (paused))
             AS r (chunk_config, tsv, sign)
        LEFT JOIN LATERAL unnest(r.tsv) AS t ON true
    )
    SELECT xid, chunk_config, lexeme, sign, sign * n FROM counted WHERE lexeme IS NOT NULL
    UNION ALL
    SELECT xid, chunk_config, '', sign, sign * coalesce(sum(n), 0) FROM counted GROUP BY chunk_config, sign;
    INSERT INTO knowledge_internal.text_stats_commits VALUES (xid) ON CONFLICT DO NOTHING;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

CREATE TRIGGER chunks_text_stats BEFORE INSERT OR UPDATE OR DELETE ON knowledge.chunks
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.count_text_stats();

-- At commit (deferred), once per transaction that wrote chunks: adds up its pending differences
-- into one row per (config, lexeme) of knowledge_internal.text_stats, then folds the rows of the lexemes
-- it touched that have many. Folding needs READ COMMITTED (a REPEATABLE READ transaction would
-- fail on rows folded since its snapshot) and the config's advisory lock (one folder at a time);
-- a transaction without either leaves its rows for the next. The queries use the indexes: PL/pgSQL
-- keeps a query's plan for the session, and one made while a table was small would scan all of
-- it at every commit ever after.
CREATE FUNCTION knowledge_internal.add_text_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET enable_seqscan = off AS $$
DECLARE
    config text;
    configs text[];
    lexemes text[];
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge_internal.text_stats_commits', 'add_text_stats');
    WITH mine AS (
        DELETE FROM knowledge_internal.text_stats_pending AS p WHERE p.xid = NEW.xid RETURNING p.chunk_config, p.lexeme, p.chunks, p.occurrences
    ), added AS (
        INSERT INTO knowledge_internal.text_stats (chunk_config, lexeme, chunks, occurrences)
        SELECT m.chunk_config, m.lexeme, sum(m.chunks), sum(m.occurrences) FROM mine AS m
        GROUP BY m.chunk_config, m.lexeme HAVING sum(m.chunks) <> 0 OR sum(m.occurrences) <> 0
        RETURNING chunk_config, lexeme
    )
    SELECT array_agg(a.chunk_config), array_agg(a.lexeme) INTO configs, lexemes FROM added AS a;
    DELETE FROM knowledge_internal.text_stats_commits AS c WHERE c.xid = NEW.xid;
    IF current_setting('transaction_isolation') <> 'read committed' OR configs IS NULL THEN
        RETURN NULL;
    END IF;
    FOR config IN SELECT DISTINCT unnest(configs) LOOP
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(knowledge_internal.text_stats_lock_class(), hashtext(config));
        WITH crowded AS (
            SELECT s.lexeme FROM knowledge_internal.text_stats AS s
            WHERE s.chunk_config = config
              AND s.lexeme = ANY (ARRAY(SELECT t.l FROM unnest(configs, lexemes) AS t (c, l) WHERE t.c = config))
            GROUP BY s.lexeme HAVING count(*) >= knowledge_internal.text_stats_fold_rows()
        ), folded AS (
            DELETE FROM knowledge_internal.text_stats AS s USING crowded
            WHERE s.chunk_config = config AND s.lexeme = crowded.lexeme
            RETURNING s.lexeme, s.chunks, s.occurrences
        )
        INSERT INTO knowledge_internal.text_stats (chunk_config, lexeme, chunks, occurrences)
        SELECT config, f.lexeme, sum(f.chunks), sum(f.occurrences) FROM folded AS f
        GROUP BY f.lexeme HAVING sum(f.chunks) <> 0 OR sum(f.occurrences) <> 0;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER text_stats_commits_add AFTER INSERT ON knowledge_internal.text_stats_commits
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION knowledge_internal.add_text_stats();

-- TRUNCATE (also knowledge.documents' TRUNCATE ... CASCADE) runs no row triggers.
-- The transaction's own pending differences go too: they counted chunks that are gone (the
-- truncation waited for every other writer to finish).
CREATE FUNCTION knowledge_internal.clear_text_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    PERFORM knowledge_internal.fires_on(TG_RELID, 'knowledge.chunks', 'clear_text_stats');
    DELETE FROM knowledge_internal.text_stats;
    DELETE FROM knowledge_internal.text_stats_pending AS p WHERE p.xid = pg_current_xact_id();
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_text_stats_truncate AFTER TRUNCATE ON knowledge.chunks
FOR EACH STATEMENT EXECUTE FUNCTION knowledge_internal.clear_text_stats();

-- Recomputes knowledge_internal.text_stats from knowledge.chunks, one row per (config, lexeme), for
-- one config (NULL: all); returns the rows written. Other transactions that wrote chunks wait at
-- their commit until it commits (the table lock), so nothing is counted twice or missed.
CREATE FUNCTION knowledge_internal.recount_text_stats(config text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    written bigint;
BEGIN
    LOCK TABLE knowledge_internal.text_stats IN SHARE ROW EXCLUSIVE MODE;
    DELETE FROM knowledge_internal.text_stats AS s WHERE config IS NULL OR s.chunk_config = config;
    -- The count below includes this transaction's own chunks.
    DELETE FROM knowledge_internal.text_stats_pending AS p
    WHERE p.xid = pg_current_xact_id_if_assigned() AND (config IS NULL OR p.chunk_config = config);
    -- Lexeme '': the chunks, and the occurrences of every lexeme together.
    INSERT INTO knowledge_internal.text_stats (chunk_config, lexeme, chunks, occurrences)
    WITH counted AS (
        SELECT c.chunk_config, t.lexeme, count(*) AS chunks, sum(coalesce(array_length(t.positions, 1), 1)) AS occurrences
        FROM knowledge.chunks AS c, unnest(c.tsv) AS t
        WHERE config IS NULL OR c.chunk_config = config
        GROUP BY c.chunk_config, t.lexeme
    )
    SELECT k.chunk_config, k.lexeme, k.chunks, k.occurrences FROM counted AS k
    UNION ALL
    SELECT c.chunk_config, '', count(*),
           coalesce((SELECT sum(k.occurrences) FROM counted AS k WHERE k.chunk_config = c.chunk_config), 0)
    FROM knowledge.chunks AS c
    WHERE config IS NULL OR c.chunk_config = config
    GROUP BY c.chunk_config;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
END
$$;

-- Every config's statistics recomputed: for a data-only restore with triggers disabled, say.
CREATE FUNCTION knowledge.rebuild_text_stats() RETURNS bigint
LANGUAGE sql
RETURN knowledge_internal.recount_text_stats(NULL);
REVOKE EXECUTE ON FUNCTION knowledge.rebuild_text_stats() FROM PUBLIC;

-- The calling transaction's own pending differences of config's statistics for these lexemes.
-- None without an xid (a transaction that has written nothing, or any on a standby, where the
-- unlogged table cannot even be opened: plpgsql plans the query only when it runs).
CREATE FUNCTION knowledge_internal.pending_text_stats(config text, words text[])
RETURNS TABLE (lexeme text, chunks bigint, occurrences bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF pg_current_xact_id_if_assigned() IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT p.lexeme, p.chunks, p.occurrences FROM knowledge_internal.text_stats_pending AS p
        WHERE p.xid = pg_current_xact_id_if_assigned() AND p.chunk_config = config AND p.lexeme = ANY (words);
END
$$;

-- A query's lexemes as the text leg ranks them: each with the number of chunks holding it (df;
-- a lexeme given more than once, by several Citus workers say, has its counts summed), rarest
-- first, which is the order of the most each can add to a score (knowledge_internal.bm25_cover).
-- Both NULL for no lexemes.
CREATE FUNCTION knowledge_internal.text_terms(lexeme text[], df float8[], OUT lexemes text[], OUT dfs float8[])
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT array_agg(s.lexeme ORDER BY s.df, s.lexeme), array_agg(s.df ORDER BY s.df, s.lexeme)
    FROM (SELECT t.lexeme, sum(t.df) AS df FROM unnest(text_terms.lexeme, text_terms.df) AS t (lexeme, df)
          GROUP BY t.lexeme) AS s
$$;

-- The tsquery that finds the chunks holding any ('|') or all ('&') of these lexemes (quoted as
-- tsquery input wants them: backslashes and quotes doubled). NULL for none.
CREATE FUNCTION knowledge_internal.lexeme_query(lexemes text[], operator text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT string_agg('''' || replace(replace(l.lexeme, '\', '\\'), '''', '''''') || '''', ' ' || operator || ' ')::tsquery
        FROM unnest(lexemes) AS l (lexeme));

-- A query as the text leg of knowledge.search sees it for a config: its lexemes (in `language`,
-- or NULL: in each language documents are written in, but one that no longer exists, with a
-- WARNING) that the config's chunks hold, each
-- with the number of chunks holding it (df), rarest first; and the config's chunk count and
-- mean chunk length. All NULL when nothing of the query is there.
-- The statistics are knowledge_internal.text_stats with the calling transaction's own pending
-- differences, so a transaction sees the figures of the chunks it sees. Its plans use the
-- indexes (as knowledge_internal.add_text_stats's do).
CREATE FUNCTION knowledge_internal.text_query(config text, query text, language regconfig,
    OUT lexemes text[], OUT df float8[], OUT chunks float8, OUT average_length float8)
LANGUAGE plpgsql STABLE SET enable_seqscan = off AS $$
DECLARE
    -- '' asks for the config's totals.
    words text[];
    languages regconfig[] := ARRAY[text_query.language];
    missing text[];
BEGIN
    IF text_query.language IS NULL THEN
        SELECT array_agg(l.config) FILTER (WHERE l.config IS NOT NULL), array_agg(l.language) FILTER (WHERE l.config IS NULL)
        INTO languages, missing
        FROM (SELECT k.language, knowledge_internal.existing_language(k.language) AS config FROM knowledge.languages AS k) AS l;
        IF missing IS NOT NULL THEN
            RAISE WARNING 'search skips the documents'' language %: no text search configuration has that name now',
                array_to_string(missing, ', ')
                USING HINT = 'Create the configuration again, or UPDATE those documents to another language.';
        END IF;
    END IF;
    SELECT array_agg(DISTINCT t.lexeme) || '{""}' INTO words
    FROM unnest(languages) AS l (language), unnest(knowledge.text_vector(l.language, query)) AS t;
    WITH counted AS (
        SELECT s.lexeme, s.chunks, s.occurrences FROM knowledge_internal.text_stats_visible AS s
        WHERE s.chunk_config = config AND s.lexeme = ANY (words)
        UNION ALL
        SELECT p.lexeme, p.chunks, p.occurrences FROM knowledge_internal.pending_text_stats(config, words) AS p
    ), found AS (
        SELECT c.lexeme, sum(c.chunks)::float8 AS df, sum(c.occurrences)::float8 AS occurrences
        FROM counted AS c GROUP BY c.lexeme HAVING sum(c.chunks) > 0
    )
    SELECT (SELECT f.df FROM found AS f WHERE f.lexeme = ''),
           (SELECT f.occurrences / f.df FROM found AS f WHERE f.lexeme = ''),
           t.lexemes, t.dfs
    INTO chunks, average_length, lexemes, df
    FROM (SELECT array_agg(f.lexeme) AS lexeme, array_agg(f.df) AS df FROM found AS f WHERE f.lexeme <> '') AS given,
         knowledge_internal.text_terms(given.lexeme, given.df) AS t;
END
$$;