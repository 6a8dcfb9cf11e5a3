-- A store spread over Citus workers (docs/scaling.md). Citus cannot distribute the extension's
-- own tables (they have triggers, foreign keys to one another and extension-owned sequences), so
-- each worker keeps a whole pg_chunk store of its own, and the distributed table is a user's:
-- knowledge.attach_distributed attaches each of its shards, on the worker that holds it, to that
-- worker's store, so a row written through the coordinator is chunked and embedded where its
-- shard is. knowledge.distributed_search, on the coordinator, searches every worker's store as
-- knowledge.search searches one. Citus's functions and catalogs are read only when these
-- functions run, so the extension installs without Citus.

-- A candidate of a search as one store gives it (knowledge_internal.search_candidates).
CREATE TYPE knowledge_internal.search_candidate AS (
    id bigint,
    document_id bigint,
    chunk_index int,
    content text,
    vector_rank bigint,
    text_rank bigint,
    -- The BM25 score that ranked it in the text leg (NULL outside it).
    text_score float8,
    similarity float8,
    -- Its BM25 score for score fusion (NULL with fusion "rrf").
    bm25 float8
);

-- This store's candidates of a search: what knowledge.search ranks, before ranking it (its
-- settings and retry too). One array, so that a Citus worker returns them as one value of the
-- query that calls this on it.
CREATE FUNCTION knowledge_internal.search_candidates(settings knowledge_internal.search_settings,
                                                     q knowledge_internal.search_query)
RETURNS knowledge_internal.search_candidate[]
LANGUAGE plpgsql STABLE
SET hnsw.ef_search = 200
SET hnsw.iterative_scan = 'strict_order'
-- The text leg's recursive query has plans whose estimated cost passes jit_above_cost: compiling
-- them took 30 to 110 ms of a 5 ms search on a server built with JIT.
SET jit = off
AS $$
BEGIN
    PERFORM set_config('hnsw.ef_search', knowledge_internal.ef_search(q.candidates), true);
    RETURN (SELECT r.candidates FROM knowledge_internal.run_search_statement(
                'WITH ' || knowledge_internal.search_candidates_sql(settings)
                || ' SELECT coalesce(array_agg(row(id, document_id, chunk_index, content, vector_rank, text_rank,'
                || ' text_score, similarity, bm25)::knowledge_internal.search_candidate), ''{}'') FROM measured',
                settings, q) AS r (candidates knowledge_internal.search_candidate[]));
END
$$;

-- Refuses (0A000) where Citus is not installed: these functions read its catalogs and call its
-- functions only when they run.
CREATE FUNCTION knowledge_internal.require_citus() RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RAISE EXCEPTION 'Citus is not installed in this database' USING ERRCODE = 'feature_not_supported';
    END IF;
END
$$;

-- The result column of Citus's run_command_on_workers(command) for each worker; an error on
-- any worker is raised here, naming it. It opens a connection to every worker for each call:
-- for setting up, not for searching (knowledge_internal.citus_workers).
CREATE FUNCTION knowledge_internal.on_workers(command text) RETURNS SETOF text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    r record;
BEGIN
    PERFORM knowledge_internal.require_citus();
    FOR r IN SELECT * FROM pg_catalog.run_command_on_workers(command) LOOP
        IF NOT r.success THEN
            RAISE EXCEPTION 'on the Citus worker %:%: %', r.nodename, r.nodeport, r.result;
        END IF;
        RETURN NEXT nullif(r.result, '');
    END LOOP;
END
$$;

-- Makes sure that the table knowledge_internal.citus_workers reaches every node whose store can
-- hold documents, and returns its name. Citus runs a function called in a query's select list on
-- the node that holds each row's shard, over the connections it keeps from one statement to
-- the next; so a query over a distributed table of one row on each node calls a function once
-- on each, in parallel, for about half a millisecond (run_command_on_workers opens new
-- connections for every call: about 17 ms). The table is made here, not by the extension's
-- script, which installs without Citus; it is made again when a node that holds shards of a
-- distributed table has none of it (a worker added, shards moved), and once made, it is left
-- as it is, so that a search reads only Citus's catalog.
CREATE FUNCTION knowledge_internal.ensure_citus_workers() RETURNS regclass
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    fanout CONSTANT text := 'knowledge_internal.citus_workers';
    reaches_all CONSTANT text := $q$
        WITH reached AS (
            SELECT p.groupid FROM pg_catalog.pg_dist_shard AS s JOIN pg_catalog.pg_dist_placement AS p USING (shardid)
            WHERE s.logicalrelid = to_regclass($1)
        )
        SELECT count(*) > 0 AND count(*) = count(DISTINCT r.groupid)
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition AS d
                               JOIN pg_catalog.pg_dist_shard AS s USING (logicalrelid)
                               JOIN pg_catalog.pg_dist_placement AS p USING (shardid)
                               WHERE d.partmethod = 'h' AND d.logicalrelid IS DISTINCT FROM to_regclass($1)
                                 AND p.groupid NOT IN (SELECT groupid FROM reached))
        FROM reached AS r $q$;
    ok boolean;
    nodes int;
BEGIN
    PERFORM knowledge_internal.require_citus();
    EXECUTE reaches_all INTO ok USING fanout;
    IF ok THEN
        RETURN fanout::regclass;
    END IF;
    -- One session remakes it; the others wait for it and find it made.
    PERFORM pg_advisory_xact_lock(hashtext(fanout));
    EXECUTE reaches_all INTO ok USING fanout;
    IF ok THEN
        RETURN fanout::regclass;
    END IF;
    SELECT count(*) INTO nodes FROM pg_catalog.pg_dist_node AS n
    WHERE n.isactive AND n.noderole = 'primary' AND n.shouldhaveshards;
    IF nodes = 0 THEN
        RAISE EXCEPTION 'no Citus node takes shards' USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Add a worker with citus_add_node.';
    END IF;
    IF to_regclass(fanout) IS NOT NULL THEN
        DROP TABLE knowledge_internal.citus_workers;
    END IF;
    CREATE TABLE knowledge_internal.citus_workers (shard int PRIMARY KEY);
    -- Citus places the shards of a new table on the nodes that take shards, in turn.
    PERFORM pg_catalog.create_distributed_table(fanout, 'shard', shard_count => nodes, colocate_with => 'none');
    INSERT INTO knowledge_internal.citus_workers
    SELECT min(i) FROM generate_series(1, 100 * nodes) AS i
    GROUP BY pg_catalog.get_shard_id_for_distribution_column(fanout, i);
    GRANT SELECT ON knowledge_internal.citus_workers TO PUBLIC;
    EXECUTE reaches_all INTO ok USING fanout;
    IF NOT ok THEN
        RAISE EXCEPTION 'a Citus node holds shards but takes no new ones, so a search cannot reach its store'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set shouldhaveshards on every node that holds shards (citus_set_node_property).';
    END IF;
    RETURN fanout::regclass;
END
$$;

-- Gives this node's documents and chunks ids of their own: from its Citus group id times 2^48
-- (as Citus numbers a distributed table's bigserial), so that ids from different workers
-- never meet in knowledge.distributed_search's results.
CREATE FUNCTION knowledge_internal.citus_id_range() RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    range_start bigint := (SELECT g.groupid FROM pg_catalog.pg_dist_local_group AS g)::bigint << 48;
    sequence regclass;
BEGIN
    FOREACH sequence IN ARRAY ARRAY['knowledge.documents_id_seq', 'knowledge.chunks_id_seq']::regclass[] LOOP
        IF nextval(sequence) < range_start THEN
            PERFORM setval(sequence, range_start);
        END IF;
    END LOOP;
END
$$;

-- Attaches each shard of source, a hash-distributed Citus table, with knowledge.attach on the
-- worker that holds it (so that worker chunks and embeds the shard's rows), after giving each
-- worker's store its own id range and making knowledge_internal.citus_workers. Run on the
-- coordinator. Not atomic: Citus runs the command on each shard in a transaction of its own.
-- Returns the number of documents mirrored.
CREATE FUNCTION knowledge.attach_distributed(source regclass, id_column name, text_column name,
                                             config text DEFAULT 'default', language regconfig DEFAULT 'english')
RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    mirrored bigint := 0;
    r record;
BEGIN
    PERFORM knowledge_internal.require_citus();
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition AS p WHERE p.logicalrelid = source AND p.partmethod = 'h') THEN
        RAISE EXCEPTION '% is not a hash-distributed Citus table', source USING ERRCODE = 'wrong_object_type',
            HINT = 'create_distributed_table it first, or knowledge.attach a local table.';
    END IF;
    PERFORM knowledge_internal.named_chunk_config(config);
    PERFORM knowledge_internal.on_workers('SELECT knowledge_internal.citus_id_range()');
    PERFORM knowledge_internal.ensure_citus_workers();
    -- run_command_on_shards formats the command with each shard's name (PostgreSQL's format()):
    -- %L there quotes the name as a literal, and every % of ours is doubled to stay one.
    FOR r IN SELECT * FROM pg_catalog.run_command_on_shards(source,
                 'SELECT knowledge.attach(%L, '
                 || replace(format('%L, %L, %L, %L', id_column, text_column, config, language), '%', '%%') || ')') LOOP
        IF NOT r.success THEN
            RAISE EXCEPTION 'attaching shard % of %: %', r.shardid, source, r.result;
        END IF;
        mirrored := mirrored + r.result::bigint;
    END LOOP;
    RETURN mirrored;
END
$$;

-- knowledge.search over every Citus worker's store, run on the coordinator: same arguments,
-- options and results. The query is embedded here once; BM25's statistics are summed over the
-- workers' (each worker's text_query for the query), so every chunk is scored as one store
-- holding all of them would score it; each worker returns its candidates (the config's 4·k
-- nearest and 4·k best by BM25, each with both scores) and they are ranked here as
-- knowledge.search ranks one store's, over the 4·k best of each leg of all of them.
CREATE FUNCTION knowledge.distributed_search(query text, k int DEFAULT 5, options jsonb DEFAULT '{}')
RETURNS TABLE (chunk_id bigint, document_id bigint, chunk_index int, content text, score float8,
               vector_rank int, text_rank int, similarity float8, below_min_score boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    settings knowledge_internal.search_settings := knowledge_internal.search_options(options);
    q knowledge_internal.search_query := knowledge_internal.search_query_of(query, k, settings, false);
    parts knowledge_internal.search_query[];
    part knowledge_internal.search_candidate[];
    found knowledge_internal.search_candidate[] := '{}';
BEGIN
    IF q IS NULL THEN
        RETURN;
    END IF;
    PERFORM knowledge_internal.ensure_citus_workers();
    IF settings.mode <> 'vector' THEN
        SELECT array_agg(w.part) INTO parts
        FROM (SELECT knowledge_internal.text_statistics((settings.config).name, query, settings.language) AS part
              FROM knowledge_internal.citus_workers) AS w;
        -- Every worker's lexemes, their counts summed, ranked as one store's are.
        SELECT t.lexemes, t.dfs INTO q.lexemes, q.df
        FROM (SELECT array_agg(l.lexeme) AS lexeme, array_agg(l.df) AS df
              FROM unnest(parts) AS p, unnest(p.lexemes, p.df) AS l (lexeme, df)) AS given,
             knowledge_internal.text_terms(given.lexeme, given.df) AS t;
        SELECT sum(p.chunks), sum(p.chunks * p.average_length) / nullif(sum(p.chunks), 0)
        INTO q.chunks, q.average_length
        FROM unnest(parts) AS p;
    END IF;
    -- Each worker's array as the query returns it: a query that unnests them on the workers
    -- takes Citus three times as long to plan.
    FOR part IN SELECT knowledge_internal.search_candidates(settings, q) FROM knowledge_internal.citus_workers LOOP
        found := found || part;
    END LOOP;
    -- $3: the candidates of every worker, each ranked again among all of them.
    RETURN QUERY EXECUTE format($q$
        WITH gathered AS (
            SELECT * FROM unnest($3)
        ), vector_ranked AS (
            SELECT g.id, row_number() OVER (ORDER BY g.similarity DESC NULLS LAST, g.id) AS rank
            FROM gathered AS g WHERE g.vector_rank IS NOT NULL
        ), text_ranked AS (
            SELECT g.id, row_number() OVER (ORDER BY g.text_score DESC, g.id) AS rank
            FROM gathered AS g WHERE g.text_rank IS NOT NULL
        ), measured AS (
            SELECT g.id, v.rank AS vector_rank, t.rank AS text_rank,
                   coalesce(1.0 / (60 + v.rank), 0) + coalesce(1.0 / (60 + t.rank), 0) AS rrf,
                   g.similarity, g.bm25, g.document_id, g.chunk_index, g.content
            FROM gathered AS g
            LEFT JOIN vector_ranked AS v ON v.id = g.id AND v.rank <= ($2).candidates
            LEFT JOIN text_ranked AS t ON t.id = g.id AND t.rank <= ($2).candidates
            WHERE v.rank IS NOT NULL OR t.rank IS NOT NULL
        ), %s $q$, knowledge_internal.search_ranking_sql())
        USING settings, q, found;
END
$$;
