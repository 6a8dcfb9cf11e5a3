-- knowledge.search: hybrid search over the store's chunks, vector (the config's HNSW index) and
-- text (BM25 over the GIN-indexed tsvectors) fused by their scores. Runs as its caller, so
-- row-level security applies (BM25's statistics are the config's, over all its chunks).
--
-- options: mode ("hybrid" | "vector" | "text"), config (default "default"), min_score (the
-- least cosine similarity to the query a result needs; if none has it, the best k come back
-- anyway with below_min_score), document_ids (array of ids), metadata (documents whose
-- metadata @> it), language (regconfig for the query; default: each language in use), k1 and b
-- (BM25's constants, default 1.2 and 0.75), fusion ("scores" | "rrf"), neighbours (0 to 1,
-- default 0.3: see below).
-- Candidates: 4·k from the model's HNSW index by cosine distance, 4·k by BM25 with OR
-- semantics over the query's lexemes (crates/pg_chunk_core/src/bm25.rs). Hybrid mode fuses
-- them by score: each candidate's cosine similarity and BM25 score as z-scores over the
-- candidates, score = their mean (bench/README.md, "score-based fusion"), plus `neighbours` times
-- the better of its neighbours' scores (the chunks just before and after it in its document,
-- when they are candidates too) where that is above the candidates' mean, 0: an answer longer
-- than a chunk spans neighbours (bench/README.md, "The levers"). With fusion "rrf", and in the
-- other modes, by reciprocal rank, score = Σ 1 / (60 + rank).
-- options ->> key as a number from low to high (fallback when the key is absent); anything else
-- is 22023 naming the key.
CREATE FUNCTION knowledge_internal.number_option(options jsonb, key text, low float8, high float8, fallback float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    value float8 := CASE WHEN jsonb_typeof(options -> key) = 'number' THEN (options ->> key)::float8 END;
BEGIN
    IF NOT options ? key THEN
        RETURN fallback;
    END IF;
    IF value IS NULL OR value < low OR value > high THEN
        RAISE EXCEPTION 'search option % must be a number from % to %, not %', key, low, high, options -> key
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN value;
END
$$;

CREATE FUNCTION knowledge.search(query text, k int DEFAULT 5, options jsonb DEFAULT '{}')
RETURNS TABLE (chunk_id bigint, document_id bigint, chunk_index int, content text, score float8,
               vector_rank int, text_rank int, similarity float8, below_min_score boolean)
LANGUAGE plpgsql STABLE
SET hnsw.ef_search = 100
-- Filters (config, ids, metadata) drop some of the index's first candidates: keep scanning.
SET hnsw.iterative_scan = 'strict_order'
AS $$
DECLARE
    mode text := coalesce(options ->> 'mode', 'hybrid');
    config_name text := coalesce(options ->> 'config', 'default');
    config knowledge.chunk_configs;
    dim int;
    min_score float8;
    doc_ids bigint[];
    doc_metadata jsonb := options -> 'metadata';
    query_vector text;
    -- The text leg's query (knowledge_internal.text_query).
    lexemes text[];
    df float8[];
    text_candidates tsquery;
    chunks float8;
    average_length float8;
    k1 float8 := 1.2;
    b float8 := 0.75;
    fusion text := coalesce(options ->> 'fusion', 'scores');
    fuse_scores boolean;
    neighbours float8;
    candidates int;
    unknown text;
    language regconfig;
    statement text;
BEGIN
    IF jsonb_typeof(options) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'search options must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT key INTO unknown FROM jsonb_object_keys(options) AS key
    WHERE key NOT IN ('mode', 'config', 'min_score', 'document_ids', 'metadata', 'language', 'k1', 'b', 'fusion',
                      'neighbours') LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'unknown search option "%"', unknown USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Options are mode, config, min_score, document_ids, metadata, language, k1, b, fusion and neighbours.';
    END IF;
    IF mode NOT IN ('hybrid', 'vector', 'text') THEN
        RAISE EXCEPTION 'search option mode must be "hybrid", "vector" or "text", not "%"', mode
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF jsonb_typeof(options -> 'fusion') NOT IN ('string', 'null') OR fusion NOT IN ('scores', 'rrf') THEN
        RAISE EXCEPTION 'search option fusion must be "scores" or "rrf", not %', options -> 'fusion'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    fuse_scores := mode = 'hybrid' AND fusion = 'scores';
    neighbours := knowledge_internal.number_option(options, 'neighbours', 0, 1, CASE WHEN fuse_scores THEN 0.3 ELSE 0 END);
    IF neighbours > 0 AND NOT fuse_scores THEN
        RAISE EXCEPTION 'search option neighbours (%) needs mode "hybrid" with fusion "scores"', neighbours
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF k IS NULL OR k < 1 OR k > 1000 THEN
        RAISE EXCEPTION 'k must be between 1 and 1000, not %', k USING ERRCODE = 'invalid_parameter_value';
    END IF;
    BEGIN
        min_score := (options ->> 'min_score')::float8;
        doc_ids := CASE WHEN options ? 'document_ids'
                        THEN ARRAY(SELECT jsonb_array_elements_text(options -> 'document_ids')::bigint) END;
    EXCEPTION WHEN invalid_text_representation OR numeric_value_out_of_range OR invalid_parameter_value THEN
        RAISE EXCEPTION 'search options min_score must be a number and document_ids an array of ids: %', options
            USING ERRCODE = 'invalid_parameter_value';
    END;
    IF min_score::text IN ('NaN', 'Infinity', '-Infinity') THEN
        RAISE EXCEPTION 'search option min_score must be a finite number, not %', min_score
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- BM25's constants: k1 from 0 (term frequency ignored) to 10, b from 0 (length ignored) to 1.
    k1 := knowledge_internal.number_option(options, 'k1', 0, 10, k1);
    b := knowledge_internal.number_option(options, 'b', 0, 1, b);
    IF doc_metadata IS NOT NULL AND jsonb_typeof(doc_metadata) <> 'object' THEN
        RAISE EXCEPTION 'search option metadata must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    config := knowledge_internal.named_chunk_config(config_name);
    IF mode = 'text' AND min_score IS NOT NULL THEN
        RAISE EXCEPTION 'search option min_score is a cosine similarity and needs mode "hybrid" or "vector"'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF query IS NULL OR btrim(query) = '' THEN
        RETURN;
    END IF;
    -- A query is a question, not a document.
    IF length(query) > 10000 THEN
        RAISE EXCEPTION 'search query is % characters long; the limit is 10,000', length(query)
            USING ERRCODE = 'program_limit_exceeded';
    END IF;
    candidates := 4 * k;
    -- pgvector takes ef_search up to 1,000; the iterative scan goes on for more candidates.
    PERFORM set_config('hnsw.ef_search', least(1000, greatest(100, candidates))::text, true);

    SELECT coalesce(m.dimension, 256) INTO dim FROM (SELECT) AS one
    LEFT JOIN knowledge.models AS m ON m.name = config.model;
    IF mode <> 'text' THEN
        query_vector := knowledge.embed(query, config.model, 'query')::text;
        -- A query with nothing the model knows (only punctuation, say) embeds to zeros, which
        -- are no direction: no vector candidates, and no similarity.
        IF vector_norm(query_vector::vector) = 0 THEN
            query_vector := NULL;
        END IF;
    END IF;
    IF options ? 'language' THEN
        language := (options ->> 'language')::regconfig;
        -- regconfig also reads a number as an oid, of a configuration that may not exist.
        IF NOT EXISTS (SELECT FROM pg_ts_config AS t WHERE t.oid = language) THEN
            RAISE EXCEPTION 'text search configuration "%" does not exist', options ->> 'language'
                USING ERRCODE = 'undefined_object';
        END IF;
    END IF;
    IF mode <> 'vector' THEN
        SELECT * INTO lexemes, df, text_candidates, chunks, average_length FROM knowledge_internal.text_query(config.name, query, language);
    END IF;

    -- The config, model and dimension are spliced as literals so the planner matches the
    -- config's partial HNSW index; the query text and vector always travel as parameters.
    statement := format($q$
        WITH vector_hits AS (
            SELECT c.id, row_number() OVER (ORDER BY c.embedding_cast <=> $1) AS rank
            FROM (SELECT c.id, %1$s AS embedding_cast
                  FROM knowledge.chunks AS c %4$s
                  WHERE $6 <> 'text' AND $1 IS NOT NULL AND c.model = %2$L AND c.chunk_config = %3$L
                    AND ($3::bigint[] IS NULL OR c.document_id = ANY ($3))
                    AND ($4::jsonb IS NULL OR d.metadata @> $4)
                  ORDER BY %1$s <=> $1 LIMIT $5) AS c
        ), text_hits AS (
            SELECT t.id, t.score, row_number() OVER (ORDER BY t.score DESC, t.id) AS rank
            FROM (SELECT c.id, knowledge_internal.bm25(c.tsv, $7, $10, $11, $12, $13, $14) AS score
                  FROM (SELECT c.id, c.tsv FROM knowledge.chunks AS c %4$s
                        WHERE $6 <> 'vector' AND c.chunk_config = $2 AND c.tsv @@ $15
                          AND ($3::bigint[] IS NULL OR c.document_id = ANY ($3))
                          AND ($4::jsonb IS NULL OR d.metadata @> $4)
                        LIMIT knowledge_internal.text_candidate_limit()) AS c
                  ORDER BY score DESC, c.id LIMIT $5) AS t
        ), fused AS (
            SELECT coalesce(v.id, t.id) AS id, v.rank AS vector_rank, t.rank AS text_rank, t.score AS bm25,
                   coalesce(1.0 / (60 + v.rank), 0) + coalesce(1.0 / (60 + t.rank), 0) AS rrf
            FROM vector_hits AS v FULL JOIN text_hits AS t ON t.id = v.id
        ), measured AS (
            -- NULL, not NaN, for a chunk whose embedding is all zeros. Score fusion needs every
            -- candidate's BM25, the vector leg's too (0 without a lexeme of the query).
            SELECT f.id, f.vector_rank, f.text_rank, f.rrf,
                   CASE WHEN c.model = %2$L THEN nullif(1 - (%1$s <=> $1), 'NaN') END AS similarity,
                   CASE WHEN $16 THEN coalesce(f.bm25, knowledge_internal.bm25(c.tsv, $7, $10, $11, $12, $13, $14), 0) END AS bm25,
                   c.document_id, c.chunk_index, c.content
            FROM fused AS f JOIN knowledge.chunks AS c ON c.id = f.id
        ), standardised AS (
            -- z-scores over the candidates; 0 where a leg's scores are all equal (or it has none).
            SELECT m.*,
                   (m.similarity - avg(m.similarity) OVER ()) / nullif(stddev_pop(m.similarity) OVER (), 0) AS z_similarity,
                   coalesce((m.bm25 - avg(m.bm25) OVER ()) / nullif(stddev_pop(m.bm25) OVER (), 0), 0) AS z_bm25
            FROM measured AS m
        ), scored AS (
            -- A candidate without a similarity counts as the least similar.
            SELECT s.id, s.vector_rank, s.text_rank, s.similarity, s.document_id, s.chunk_index, s.content,
                   CASE WHEN $16 THEN (coalesce(s.z_similarity, min(s.z_similarity) OVER (), 0) + s.z_bm25) / 2
                        ELSE s.rrf::float8 END AS score
            FROM standardised AS s
        ), neighboured AS (
            -- Plus a share ($17) of the better neighbour's score where it is above 0 (greatest
            -- skips the NULL of a neighbour that is not a candidate).
            SELECT s.id, s.vector_rank, s.text_rank, s.similarity, s.document_id, s.chunk_index, s.content,
                   s.score + $17 * greatest(0,
                       CASE WHEN lag(s.chunk_index) OVER w = s.chunk_index - 1 THEN lag(s.score) OVER w END,
                       CASE WHEN lead(s.chunk_index) OVER w = s.chunk_index + 1 THEN lead(s.score) OVER w END) AS score
            FROM scored AS s
            WINDOW w AS (PARTITION BY s.document_id ORDER BY s.chunk_index)
        ), passing AS (
            SELECT s.*, false AS below FROM neighboured AS s WHERE $8::float8 IS NULL OR s.similarity >= $8
        )
        SELECT id, document_id, chunk_index, content, score::float8, vector_rank::int, text_rank::int, similarity::float8, below
        FROM (SELECT * FROM passing
              UNION ALL
              SELECT s.*, true FROM neighboured AS s WHERE NOT EXISTS (SELECT FROM passing)) AS results
        ORDER BY score DESC, id LIMIT $9
        $q$, knowledge_internal.vector_expression(dim, config.halfvec), config.model, config.name,
        -- The chunks' documents are joined only to filter: by metadata, or by their row-level
        -- security (a chunk's document always exists: the foreign key).
        CASE WHEN doc_metadata IS NOT NULL OR (SELECT c.relrowsecurity FROM pg_class AS c WHERE c.oid = 'knowledge.documents'::regclass)
             THEN 'JOIN knowledge.documents AS d ON d.id = c.document_id' ELSE 'CROSS JOIN (SELECT NULL::jsonb AS metadata) AS d' END);
    -- pgvector's HNSW scan (0.8.6 included) can fail with XX000 "cannot load deleted element"
    -- when a VACUUM of the chunks marks elements deleted while an iterative scan resumes from
    -- candidates it read before. The statement has returned no row by then (its last step sorts
    -- them all) and writes nothing, so it runs again: docs/errors.md.
    FOR attempt IN 1..3 LOOP
        BEGIN
            RETURN QUERY EXECUTE statement
            USING query_vector::vector, config.name, doc_ids, doc_metadata, candidates, mode, lexemes, min_score, k,
                  df, chunks, k1, b, average_length, text_candidates, fuse_scores, neighbours;
            RETURN;
        EXCEPTION WHEN internal_error THEN
            IF SQLERRM <> 'cannot load deleted element' OR attempt = 3 THEN
                RAISE;
            END IF;
        END;
    END LOOP;
END
$$;
