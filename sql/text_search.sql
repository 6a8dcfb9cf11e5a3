-- The text leg of knowledge.search: what a chunk's tsvector holds, and the statistics BM25
-- ranks with (sql/search.sql reads them).

-- The tsvector of a chunk (and of a query): PostgreSQL's parser over the text, CJK runs written
-- as overlapping bigrams first so that Chinese and Japanese get words (knowledge.cjk_bigrams).
CREATE FUNCTION knowledge.text_vector(language regconfig, content text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.to_tsvector(language, knowledge.cjk_bigrams(content));

-- Per chunk config: in how many chunks each lexeme occurs and how often in all (lexeme '',
-- which no tsvector holds: how many chunks there are and how many lexeme occurrences they hold
-- together). A lexeme's figures are the SUM of its rows: every statement that writes chunks
-- adds one row of differences per lexeme it changes (knowledge.count_text_stats), so writers
-- never wait on each other's rows, and folds a lexeme's rows into one once it has many. Exact
-- after any sequence of writes, rollbacks and truncations; knowledge.rebuild_text_stats
-- recomputes it from the chunks (after a data-only restore with triggers disabled, say).
CREATE TABLE knowledge.text_stats (
    chunk_config text NOT NULL,
    lexeme text NOT NULL,
    chunks bigint NOT NULL,
    occurrences bigint NOT NULL
);
CREATE INDEX text_stats_lexeme ON knowledge.text_stats (chunk_config, lexeme);
-- Not dumped: restoring knowledge.chunks writes it again through the triggers below.
-- Like the chunks, it is granted to nobody: lexemes are the documents' vocabulary.
REVOKE ALL ON knowledge.text_stats FROM PUBLIC;

-- The advisory lock class (with the config's hash) under which one writer at a time folds a
-- config's rows: 'pgts' in ASCII.
CREATE FUNCTION knowledge.text_stats_lock_class() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1885828211 $$;

-- Fold a lexeme's rows into one when it has this many.
CREATE FUNCTION knowledge.text_stats_fold_rows() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 8 $$;

-- Statement-level, on the rows a statement inserted into (new_rows), deleted from (old_rows) or
-- updated in knowledge.chunks (both): adds their differences, then folds the lexemes it touched
-- that have many rows. Folding needs READ COMMITTED (each statement sees what others committed
-- before it; a REPEATABLE READ writer would fail on rows folded since its snapshot) and the
-- config's advisory lock (one folder at a time); a writer without either leaves its rows for
-- the next.
CREATE FUNCTION knowledge.count_text_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    changed record;
    configs text[] := '{}';
    lexemes text[] := '{}';
    config text;
BEGIN
    -- One query for both transition tables, which exist only for the events that have them.
    FOR changed IN SELECT * FROM (VALUES ('new_rows', 1), ('old_rows', -1)) AS t (relation, sign)
                   WHERE (t.relation = 'new_rows' AND TG_OP <> 'DELETE') OR (t.relation = 'old_rows' AND TG_OP <> 'INSERT') LOOP
        EXECUTE format($q$
            WITH occurrences AS (
                SELECT c.chunk_config, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS n
                FROM %1$I AS c, unnest(c.tsv) AS t
            ), differences AS (
                SELECT chunk_config, lexeme, count(*) AS chunks, sum(n) AS occurrences
                FROM occurrences GROUP BY chunk_config, lexeme
                UNION ALL
                SELECT c.chunk_config, '', count(*), coalesce(sum(o.n), 0)
                FROM %1$I AS c
                LEFT JOIN LATERAL (SELECT sum(coalesce(array_length(t.positions, 1), 1)) AS n FROM unnest(c.tsv) AS t) AS o ON true
                GROUP BY c.chunk_config
            ), added AS (
                INSERT INTO knowledge.text_stats (chunk_config, lexeme, chunks, occurrences)
                SELECT chunk_config, lexeme, $1 * chunks, $1 * occurrences FROM differences
                RETURNING chunk_config, lexeme
            )
            SELECT array_agg(chunk_config), array_agg(lexeme) FROM added
            $q$, changed.relation) INTO configs, lexemes USING changed.sign;
        IF current_setting('transaction_isolation') <> 'read committed' OR configs IS NULL THEN
            CONTINUE;
        END IF;
        FOR config IN SELECT DISTINCT unnest(configs) LOOP
            CONTINUE WHEN NOT pg_try_advisory_xact_lock(knowledge.text_stats_lock_class(), hashtext(config));
            WITH crowded AS (
                SELECT s.lexeme FROM knowledge.text_stats AS s
                WHERE s.chunk_config = config
                  AND s.lexeme = ANY (ARRAY(SELECT l FROM unnest(configs, lexemes) AS t (c, l) WHERE t.c = config))
                GROUP BY s.lexeme HAVING count(*) >= knowledge.text_stats_fold_rows()
            ), folded AS (
                DELETE FROM knowledge.text_stats AS s USING crowded
                WHERE s.chunk_config = config AND s.lexeme = crowded.lexeme
                RETURNING s.lexeme, s.chunks, s.occurrences
            )
            INSERT INTO knowledge.text_stats (chunk_config, lexeme, chunks, occurrences)
            SELECT config, f.lexeme, sum(f.chunks), sum(f.occurrences) FROM folded AS f
            GROUP BY f.lexeme HAVING sum(f.chunks) <> 0 OR sum(f.occurrences) <> 0;
        END LOOP;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_text_stats_insert AFTER INSERT ON knowledge.chunks
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION knowledge.count_text_stats();
CREATE TRIGGER chunks_text_stats_update AFTER UPDATE ON knowledge.chunks
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION knowledge.count_text_stats();
CREATE TRIGGER chunks_text_stats_delete AFTER DELETE ON knowledge.chunks
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION knowledge.count_text_stats();

-- TRUNCATE (also knowledge.documents' TRUNCATE ... CASCADE) runs no row triggers.
CREATE FUNCTION knowledge.clear_text_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    DELETE FROM knowledge.text_stats;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_text_stats_truncate AFTER TRUNCATE ON knowledge.chunks
FOR EACH STATEMENT EXECUTE FUNCTION knowledge.clear_text_stats();

-- Recomputes knowledge.text_stats from knowledge.chunks, one row per (config, lexeme); returns
-- the rows written. Writers of chunks wait until it commits (the table lock), so nothing is
-- counted twice or missed.
CREATE FUNCTION knowledge.rebuild_text_stats() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    written bigint;
BEGIN
    LOCK TABLE knowledge.text_stats IN SHARE ROW EXCLUSIVE MODE;
    DELETE FROM knowledge.text_stats;
    INSERT INTO knowledge.text_stats (chunk_config, lexeme, chunks, occurrences)
    WITH occurrences AS (
        SELECT c.id, c.chunk_config, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS n
        FROM knowledge.chunks AS c, unnest(c.tsv) AS t
    )
    SELECT chunk_config, lexeme, count(*), sum(n) FROM occurrences GROUP BY chunk_config, lexeme
    UNION ALL
    SELECT c.chunk_config, '', count(*), coalesce(sum(o.n), 0)
    FROM knowledge.chunks AS c
    LEFT JOIN (SELECT id, sum(n) AS n FROM occurrences GROUP BY id) AS o ON o.id = c.id
    GROUP BY c.chunk_config;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
END
$$;
REVOKE EXECUTE ON FUNCTION knowledge.rebuild_text_stats() FROM PUBLIC;

-- How many chunk entries of the GIN index the text leg reads at most, roughly: a query's rarest
-- lexemes pick the candidates until their chunk counts add up to this; the commoner ones only
-- add to the candidates' scores. A query of common words thus stays cheap, at the cost of
-- chunks that hold none of its rarer words.
CREATE FUNCTION knowledge.text_candidate_limit() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 10000::bigint $$;

-- A query as the text leg of knowledge.search sees it for a config: its lexemes (in `language`,
-- or NULL: in each language documents are written in) that the config's chunks hold, each
-- with the number of chunks holding it (df), rarest first; the tsquery that finds the
-- candidates (an OR of the rarest lexemes, see knowledge.text_candidate_limit); and the
-- config's chunk count and mean chunk length. All NULL when nothing of the query is there.
CREATE FUNCTION knowledge.text_query(config text, query text, language regconfig,
    OUT lexemes text[], OUT df float8[], OUT candidates tsquery, OUT chunks float8, OUT average_length float8)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT sum(s.chunks), sum(s.occurrences)::float8 / nullif(sum(s.chunks), 0) INTO chunks, average_length
    FROM knowledge.text_stats AS s WHERE s.chunk_config = config AND s.lexeme = '';
    IF coalesce(chunks, 0) = 0 THEN
        chunks := NULL;
        RETURN;
    END IF;
    WITH words AS (
        SELECT DISTINCT t.lexeme
        FROM (SELECT text_query.language WHERE text_query.language IS NOT NULL
              UNION SELECT l.language FROM knowledge.languages AS l WHERE text_query.language IS NULL) AS l (language),
             unnest(knowledge.text_vector(l.language, query)) AS t
    ), found AS (
        SELECT s.lexeme, sum(s.chunks)::float8 AS df
        FROM knowledge.text_stats AS s
        WHERE s.chunk_config = config AND s.lexeme = ANY (ARRAY(SELECT lexeme FROM words))
        GROUP BY s.lexeme HAVING sum(s.chunks) > 0
    ), ordered AS (
        SELECT f.lexeme, f.df, sum(f.df) OVER (ORDER BY f.df, f.lexeme) - f.df AS before FROM found AS f
    )
    SELECT array_agg(o.lexeme ORDER BY o.df, o.lexeme), array_agg(o.df ORDER BY o.df, o.lexeme),
           -- Quoted as tsquery input wants: backslashes and quotes doubled.
           string_agg('''' || replace(replace(o.lexeme, '\', '\\'), '''', '''''') || '''', ' | ' ORDER BY o.df, o.lexeme)
               FILTER (WHERE o.before < knowledge.text_candidate_limit())::tsquery
    INTO lexemes, df, candidates
    FROM ordered AS o;
END
$$;
