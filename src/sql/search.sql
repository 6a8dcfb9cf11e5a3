-- knowledge.search: hybrid search over the store's chunks, vector (the config's HNSW index) and
-- text (BM25 over the GIN-indexed tsvectors) fused by their scores. Runs as its caller, so
-- row-level security applies (BM25's statistics are the config's, over all its chunks).
--
-- Its options are parsed and checked once, by knowledge_internal.search_options, into a
-- knowledge_internal.search_settings: the type's fields are the options, the one list of them.
--
-- Candidates: 4·k from the model's HNSW index by cosine distance, 4·k by BM25 with OR
-- semantics over the query's lexemes (crates/pg_chunk_text_search/src/bm25.rs). Hybrid mode fuses
-- them by score: each candidate's cosine similarity and BM25 score as z-scores over the
-- candidates, score = their mean, plus `neighbours` times the better of its neighbours' scores
-- (the chunks just before and after it in its document, when they are candidates too) where that
-- is above the candidates' mean, 0: an answer longer than a chunk spans neighbours (why both:
-- docs/design.md, "The search path"). With fusion "rrf", and in the other modes, by reciprocal
-- rank, score = Σ 1 / (60 + rank).

-- The options, in the order docs/store.md lists them, each as the search uses it. The unknown-option
-- hint names these fields; search_options_are_one_list (tests/tests/bad_input/search.rs) fails
-- until a field added here has its row in docs/store.md's table and a bad-input case refusing it.
CREATE TYPE knowledge_internal.search_settings AS (
    mode text,                      -- "hybrid", "vector" or "text"
    config knowledge.chunk_configs, -- the config named (default "default")
    min_score float8,               -- least cosine similarity; NULL: none
    document_ids bigint[],          -- NULL: every document
    metadata jsonb,                 -- documents whose metadata @> it; NULL: every document
    language regconfig,             -- the query's; NULL: each language in knowledge.languages
    k1 float8,                      -- BM25's constants
    b float8,
    fusion text,                    -- the fusion in effect: "rrf" outside hybrid mode
    neighbours float8,              -- the neighbours' share in effect: 0 unless fusion is "scores"
    filter jsonpath                 -- chunks whose metadata merged with their document's @@ it
                                    -- (knowledge_internal.filter_jsonpath); NULL: every chunk
);

-- The names of the search options, in order: the fields of knowledge_internal.search_settings.
CREATE FUNCTION knowledge_internal.search_option_names() RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ARRAY(SELECT a.attname::text FROM pg_attribute AS a
             WHERE a.attrelid = 'knowledge_internal.search_settings'::regclass AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY a.attnum);

-- options ->> key as a number from low to high (fallback when the key is absent); anything else
-- is 22023 naming the key.
CREATE FUNCTION knowledge_internal.number_option(options jsonb, key text, low float8, high float8, fallback float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    value float8;
BEGIN
    IF NOT options ? key THEN
        RETURN fallback;
    END IF;
    BEGIN
        value := CASE WHEN jsonb_typeof(options -> key) = 'number' THEN (options ->> key)::float8 END;
    EXCEPTION WHEN numeric_value_out_of_range THEN
        -- JSON's numbers go past float8's (1e400, 1e-400).
        value := NULL;
    END;
    IF value IS NULL OR value < low OR value > high THEN
        RAISE EXCEPTION 'search option % must be a number from % to %, not %', key, low, high, options -> key
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN value;
END
$$;

-- knowledge.search's options parsed: each absent one its default, a bad one 22023 naming it (an
-- unknown config or language: 42704).
CREATE FUNCTION knowledge_internal.search_options(options jsonb) RETURNS knowledge_internal.search_settings
LANGUAGE plpgsql STABLE AS $$
DECLARE
    names text[] := knowledge_internal.search_option_names();
    s knowledge_internal.search_settings;
    unknown text;
BEGIN
    IF jsonb_typeof(options) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'search options must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT key INTO unknown FROM jsonb_object_keys(options - names) AS key LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'unknown search option "%"', unknown USING ERRCODE = 'invalid_parameter_value',
            HINT = format('Options are %s and %s.', array_to_string(names[:cardinality(names) - 1], ', '), names[cardinality(names)]);
    END IF;
    s.mode := coalesce(options ->> 'mode', 'hybrid');
    IF s.mode NOT IN ('hybrid', 'vector', 'text') THEN
        RAISE EXCEPTION 'search option mode must be "hybrid", "vector" or "text", not "%"', s.mode
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    s.fusion := coalesce(options ->> 'fusion', 'scores');
    IF jsonb_typeof(options -> 'fusion') NOT IN ('string', 'null') OR s.fusion NOT IN ('scores', 'rrf') THEN
        RAISE EXCEPTION 'search option fusion must be "scores" or "rrf", not %', options -> 'fusion'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- One list (vector or text mode) is ordered by reciprocal rank.
    IF s.mode <> 'hybrid' THEN
        s.fusion := 'rrf';
    END IF;
    s.neighbours := knowledge_internal.number_option(options, 'neighbours', 0, 1, CASE WHEN s.fusion = 'scores' THEN 0.3 ELSE 0 END);
    IF s.neighbours > 0 AND s.fusion <> 'scores' THEN
        RAISE EXCEPTION 'search option neighbours (%) needs mode "hybrid" with fusion "scores"', s.neighbours
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    BEGIN
        s.min_score := (options ->> 'min_score')::float8;
        s.document_ids := CASE WHEN options ? 'document_ids'
                               THEN ARRAY(SELECT jsonb_array_elements_text(options -> 'document_ids')::bigint) END;
    EXCEPTION WHEN invalid_text_representation OR numeric_value_out_of_range OR invalid_parameter_value THEN
        RAISE EXCEPTION 'search options min_score must be a number and document_ids an array of ids: %', options
            USING ERRCODE = 'invalid_parameter_value';
    END;
    IF s.min_score::text IN ('NaN', 'Infinity', '-Infinity') THEN
        RAISE EXCEPTION 'search option min_score must be a finite number, not %', s.min_score
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- BM25's constants: k1 from 0 (term frequency ignored) to 10, b from 0 (length ignored) to 1.
    s.k1 := knowledge_internal.number_option(options, 'k1', 0, 10, 1.2);
    s.b := knowledge_internal.number_option(options, 'b', 0, 1, 0.75);
    s.metadata := options -> 'metadata';
    IF s.metadata IS NOT NULL AND jsonb_typeof(s.metadata) <> 'object' THEN
        RAISE EXCEPTION 'search option metadata must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF options ? 'filter' THEN
        s.filter := knowledge_internal.filter_jsonpath(options -> 'filter')::jsonpath;
    END IF;
    s.config := knowledge_internal.named_chunk_config(coalesce(options ->> 'config', 'default'));
    IF s.mode = 'text' AND s.min_score IS NOT NULL THEN
        RAISE EXCEPTION 'search option min_score is a cosine similarity and needs mode "hybrid" or "vector"'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF options ? 'language' THEN
        s.language := (options ->> 'language')::regconfig;
        -- regconfig also reads a number as an oid, of a configuration that may not exist.
        IF NOT EXISTS (SELECT FROM pg_ts_config AS t WHERE t.oid = s.language) THEN
            RAISE EXCEPTION 'text search configuration "%" does not exist', options ->> 'language'
                USING ERRCODE = 'undefined_object';
        END IF;
    END IF;
    RETURN s;
END
$$;

-- What the search statement reads of the query besides the options: how many results and
-- candidates, the query's vector (NULL in text mode, and for a query that embeds to zeros) and
-- its text leg's terms (knowledge_internal.text_query; NULL in vector mode).
CREATE TYPE knowledge_internal.search_query AS (
    k int,
    candidates int,
    vector vector,
    lexemes text[],
    df float8[],
    chunks float8,
    average_length float8
);

-- A search's candidates, as one store's chunks give them (the CTEs up to "measured"), and how
-- knowledge.search ranks them (from "measured" on): two parts, so that
-- knowledge.distributed_search ranks the candidates it gathers from Citus workers as
-- knowledge.search ranks one store's. $1 is the settings (knowledge_internal.search_settings), $2
-- the query (knowledge_internal.search_query). EXECUTE's parameters are constants to the planner,
-- and so is a field of one, ($1).mode say: each leg is planned for these values. The config,
-- model and dimension are spliced as literals too, so the planner matches the config's partial
-- HNSW and GIN indexes.
CREATE FUNCTION knowledge_internal.search_candidates_sql(settings knowledge_internal.search_settings) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    config knowledge.chunk_configs := settings.config;
    dim int := coalesce((SELECT m.dimension FROM knowledge.models AS m WHERE m.name = config.model), 256);
    -- What every leg keeps of a chunk c (of document d): the search's document_ids, metadata
    -- and filter (over the chunk's metadata and its document's, the document's keys winning).
    filters text := '(($1).document_ids IS NULL OR c.document_id = ANY (($1).document_ids))
                    AND (($1).metadata IS NULL OR d.metadata @> ($1).metadata)
                    AND (($1).filter IS NULL OR (c.metadata || d.metadata) @@ ($1).filter)';
    -- A chunk c's BM25 score for the query.
    bm25 text := 'knowledge_internal.bm25(c.tsv, ($2).lexemes, ($2).df, ($2).chunks, ($1).k1, ($1).b, ($2).average_length)';
BEGIN
    RETURN format($q$
        vector_hits AS (
            SELECT c.id, row_number() OVER (ORDER BY c.embedding_cast <=> ($2).vector) AS rank
            FROM (SELECT c.id, %1$s AS embedding_cast
                  FROM knowledge.chunks AS c %4$s
                  WHERE ($1).mode <> 'text' AND ($2).vector IS NOT NULL AND c.model = %2$L AND c.chunk_config = %3$L
                    AND %5$s
                  ORDER BY %1$s <=> ($2).vector LIMIT ($2).candidates) AS c
        ), text_hits AS (
            -- BM25's exact best ($2).candidates (ties by id), found without scoring every chunk
            -- that holds a lexeme of the query (WAND's bound, asked of the GIN index). First a
            -- floor: the chunks holding every lexeme of the query are scored (at most ten times
            -- ($2).candidates of them), else those holding every lexeme but the commonest, and
            -- so on down to the rarest, then those holding any of the two rarest, the three, ...,
            -- until ($2).candidates are found: the least of their best ($2).candidates scores is
            -- at most the ($2).candidates-th of all (0 if they never are). Then every chunk that
            -- can score the floor is scored: it holds every lexeme of one of
            -- knowledge_internal.bm25_cover's sets, each one scan of the GIN index.
            SELECT t.id, t.score, row_number() OVER (ORDER BY t.score DESC, t.id) AS rank
            FROM (WITH RECURSIVE floors (step, found, floor) AS (
                      -- Step -n + 1 to 0: every lexeme to the rarest; 1 to n - 1: any of the two
                      -- rarest to any of all (n lexemes).
                      SELECT -cardinality(($2).lexemes), 0::bigint, 0::float8
                      WHERE ($1).mode <> 'vector' AND cardinality(($2).lexemes) > 0
                      UNION ALL
                      SELECT f.step + 1, b.found, b.floor
                      FROM floors AS f,
                           LATERAL (SELECT count(*) AS found, coalesce(min(s.score), 0) AS floor
                                    FROM (SELECT h.score FROM (
                                              SELECT %6$s AS score
                                              FROM knowledge.chunks AS c %4$s
                                              WHERE c.chunk_config = %3$L
                                                AND c.tsv @@ knowledge_internal.lexeme_query((($2).lexemes)[:abs(f.step + 1) + 1],
                                                                                             CASE WHEN f.step < 0 THEN '&' ELSE '|' END)
                                                AND %5$s
                                              LIMIT 10 * ($2).candidates) AS h
                                          ORDER BY h.score DESC LIMIT ($2).candidates) AS s) AS b
                      WHERE f.found < ($2).candidates AND f.step < cardinality(($2).lexemes) - 1
                  )
                  SELECT c.id, %6$s AS score
                  FROM knowledge.chunks AS c %4$s
                  WHERE ($1).mode <> 'vector' AND c.chunk_config = %3$L
                    AND c.tsv @@ ANY (ARRAY(
                        SELECT knowledge_internal.lexeme_query(ARRAY(SELECT (($2).lexemes)[i] FROM unnest(s.lexemes) AS i), '&')
                        FROM knowledge_internal.bm25_cover(($2).df, ($2).chunks, ($1).k1,
                                 (SELECT CASE WHEN f.found >= ($2).candidates THEN f.floor ELSE 0 END
                                  FROM floors AS f ORDER BY f.step DESC LIMIT 1)) AS s (lexemes)))
                    AND %5$s
                  ORDER BY score DESC, c.id LIMIT ($2).candidates) AS t
        ), fused AS (
            SELECT coalesce(v.id, t.id) AS id, v.rank AS vector_rank, t.rank AS text_rank, t.score AS bm25,
                   coalesce(1.0 / (60 + v.rank), 0) + coalesce(1.0 / (60 + t.rank), 0) AS rrf
            FROM vector_hits AS v FULL JOIN text_hits AS t ON t.id = v.id
        ), measured AS (
            -- NULL, not NaN, for a chunk whose embedding is all zeros. Score fusion needs every
            -- candidate's BM25, the vector leg's too (0 without a lexeme of the query).
            SELECT f.id, f.vector_rank, f.text_rank, f.rrf,
                   CASE WHEN c.model = %2$L THEN nullif(1 - (%1$s <=> ($2).vector), 'NaN') END AS similarity,
                   CASE WHEN ($1).fusion = 'scores'
                        THEN coalesce(f.bm25, %6$s, 0) END AS bm25,
                   c.document_id, c.chunk_index, c.content, f.bm25 AS text_score
            FROM fused AS f JOIN knowledge.chunks AS c ON c.id = f.id
        )
        $q$, knowledge_internal.vector_expression(dim, config.halfvec), config.model, config.name,
        -- The chunks' documents are joined only to filter: by metadata, or by their row-level
        -- security (a chunk's document always exists: the foreign key).
        CASE WHEN settings.metadata IS NOT NULL OR settings.filter IS NOT NULL OR (SELECT c.relrowsecurity FROM pg_class AS c WHERE c.oid = 'knowledge.documents'::regclass)
             THEN 'JOIN knowledge.documents AS d ON d.id = c.document_id' ELSE 'CROSS JOIN (SELECT NULL::jsonb AS metadata) AS d' END,
        filters, bm25);
END
$$;

CREATE FUNCTION knowledge_internal.search_ranking_sql() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN $q$
        standardised AS (
            -- z-scores over the candidates; 0 where a leg's scores are all equal (or it has none).
            SELECT m.*,
                   (m.similarity - avg(m.similarity) OVER ()) / nullif(stddev_pop(m.similarity) OVER (), 0) AS z_similarity,
                   coalesce((m.bm25 - avg(m.bm25) OVER ()) / nullif(stddev_pop(m.bm25) OVER (), 0), 0) AS z_bm25
            FROM measured AS m
        ), scored AS (
            -- A candidate without a similarity counts as the least similar.
            SELECT s.id, s.vector_rank, s.text_rank, s.similarity, s.document_id, s.chunk_index, s.content,
                   CASE WHEN ($1).fusion = 'scores' THEN (coalesce(s.z_similarity, min(s.z_similarity) OVER (), 0) + s.z_bm25) / 2
                        ELSE s.rrf::float8 END AS score
            FROM standardised AS s
        ), neighboured AS (
            -- Plus the neighbours' share of the better neighbour's score where it is above 0
            -- (greatest skips the NULL of a neighbour that is not a candidate).
            SELECT s.id, s.vector_rank, s.text_rank, s.similarity, s.document_id, s.chunk_index, s.content,
                   s.score + ($1).neighbours * greatest(0,
                       CASE WHEN lag(s.chunk_index) OVER w = s.chunk_index - 1 THEN lag(s.score) OVER w END,
                       CASE WHEN lead(s.chunk_index) OVER w = s.chunk_index + 1 THEN lead(s.score) OVER w END) AS score
            FROM scored AS s
            WINDOW w AS (PARTITION BY s.document_id ORDER BY s.chunk_index)
        ), passing AS (
            SELECT s.*, false AS below FROM neighboured AS s
            WHERE ($1).min_score IS NULL OR s.similarity >= ($1).min_score
        )
        SELECT id, document_id, chunk_index, content, score::float8, vector_rank::int, text_rank::int, similarity::float8, below
        FROM (SELECT * FROM passing
              UNION ALL
              SELECT s.*, true FROM neighboured AS s WHERE NOT EXISTS (SELECT FROM passing)) AS results
        ORDER BY score DESC, id LIMIT ($2).k
$q$;

-- This store's BM25 statistics of a query's lexemes (knowledge_internal.text_query) as the text
-- fields of a search query: knowledge.search's, and each Citus worker's, which
-- knowledge.distributed_search sums.
CREATE FUNCTION knowledge_internal.text_statistics(config text, query text, language regconfig)
RETURNS knowledge_internal.search_query
LANGUAGE sql STABLE
RETURN (SELECT row(NULL, NULL, NULL, t.*)::knowledge_internal.search_query
        FROM knowledge_internal.text_query(config, query, language) AS t);

-- knowledge.search's checks of k and the query, and the query as its statement reads it besides
-- the options: NULL for an empty query (no results). Without this store's text statistics for
-- knowledge.distributed_search, which sums the workers' instead.
CREATE FUNCTION knowledge_internal.search_query_of(query text, k int, settings knowledge_internal.search_settings,
                                                   with_text_statistics boolean DEFAULT true)
RETURNS knowledge_internal.search_query
LANGUAGE plpgsql STABLE AS $$
DECLARE
    config knowledge.chunk_configs := settings.config;
    q knowledge_internal.search_query;
BEGIN
    IF k IS NULL OR k < 1 OR k > 1000 THEN
        RAISE EXCEPTION 'k must be between 1 and 1000, not %', k USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF query IS NULL OR btrim(query) = '' THEN
        RETURN NULL;
    END IF;
    -- A query is a question, not a document.
    IF length(query) > 10000 THEN
        RAISE EXCEPTION 'search query is % characters long; the limit is 10,000', length(query)
            USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF settings.mode <> 'vector' AND with_text_statistics THEN
        q := knowledge_internal.text_statistics(config.name, query, settings.language);
    END IF;
    q.k := k;
    q.candidates := 4 * k;
    IF settings.mode <> 'text' THEN
        q.vector := knowledge.embed(query, config.model, 'query');
        -- A query with nothing the model knows (only punctuation, say) embeds to zeros, which
        -- are no direction: no vector candidates, and no similarity.
        IF vector_norm(q.vector) = 0 THEN
            q.vector := NULL;
        END IF;
    END IF;
    RETURN q;
END
$$;

-- hnsw.ef_search for a search of `candidates` vector candidates: at least 200 (at 237,728 chunks
-- recall@10 was 93.6% with 100, 96.8% with 200, for 0.8 ms more: bench/README.md, "Decisions"),
-- at most pgvector's 1,000; the iterative scan goes on for more candidates.
CREATE FUNCTION knowledge_internal.ef_search(candidates int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN least(1000, greatest(200, candidates))::text;

-- Runs a search's statement, with its settings and query as $1 and $2, and returns its rows,
-- named by the caller's column definition list: knowledge.search's results, and one store's
-- candidates (knowledge_internal.search_candidates). pgvector's HNSW scan (0.8.6 included) can
-- fail with XX000 "cannot load deleted element" when a VACUUM of the chunks marks elements
-- deleted while an iterative scan resumes from candidates it read before. The statement has
-- returned no row by then (its last step sorts or aggregates them all) and writes nothing (the
-- function is STABLE), so it runs again, up to three times: docs/errors.md. It runs as its
-- caller, as both searches do, so it gives no right the caller lacks.
CREATE FUNCTION knowledge_internal.run_search_statement(statement text, settings knowledge_internal.search_settings,
                                                        q knowledge_internal.search_query)
RETURNS SETOF record
LANGUAGE plpgsql STABLE AS $$
BEGIN
    FOR attempt IN 1..3 LOOP
        BEGIN
            RETURN QUERY EXECUTE statement USING settings, q;
            RETURN;
        EXCEPTION WHEN internal_error THEN
            IF SQLERRM <> 'cannot load deleted element' OR attempt = 3 THEN
                RAISE;
            END IF;
        END;
    END LOOP;
END
$$;

CREATE FUNCTION knowledge.search(query text, k int DEFAULT 5, options jsonb DEFAULT '{}')
RETURNS TABLE (chunk_id bigint, document_id bigint, chunk_index int, content text, score float8,
               vector_rank int, text_rank int, similarity float8, below_min_score boolean)
LANGUAGE plpgsql STABLE
SET hnsw.ef_search = 200
-- Filters (config, ids, metadata) drop some of the index's first candidates: keep scanning.
SET hnsw.iterative_scan = 'strict_order'
-- The text leg's recursive query has plans whose estimated cost passes jit_above_cost: compiling
-- them took 30 to 110 ms of a 5 ms search on a server built with JIT.
SET jit = off
AS $$
DECLARE
    settings knowledge_internal.search_settings := knowledge_internal.search_options(options);
    q knowledge_internal.search_query := knowledge_internal.search_query_of(query, k, settings);
    statement text;
BEGIN
    IF q IS NULL THEN
        RETURN;
    END IF;
    PERFORM set_config('hnsw.ef_search', knowledge_internal.ef_search(q.candidates), true);
    statement := 'WITH ' || knowledge_internal.search_candidates_sql(settings) || ', ' || knowledge_internal.search_ranking_sql();
    RETURN QUERY SELECT * FROM knowledge_internal.run_search_statement(statement, settings, q)
        AS r (chunk_id bigint, document_id bigint, chunk_index int, content text, score float8,
              vector_rank int, text_rank int, similarity float8, below_min_score boolean);
END
$$;
