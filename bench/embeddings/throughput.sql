-- One timed run of one workload, in the fresh backend of a new connection:
--   psql -d DB -v workload=W -f throughput.sql
-- W is embed_batch (all 2,000 sentences in one knowledge.embed_batch call, all-minilm-l6-v2),
-- semantic_chunk (one document of the 2,000 sentences joined by single spaces) or
-- potion_batch (embed_batch with potion-base-8m, 10 calls in a row: one call takes only tens
-- of milliseconds) or e5_batch (one embed_batch call with multilingual-e5-small); float_batch
-- and e5_float_batch are embed_batch and e5_batch with the float32 copies of the models.
--
-- The embedding cache is off, so that every call embeds every sentence. The model is loaded and
-- run once on a short text before the clock starts. The clock (clock_timestamp) covers the SQL
-- calls only: the sentences are already in a text[] and the document already built.
-- embedding_stats() before and after checks that every sentence was embedded and gives the
-- time spent inside the model's embed (embed_ms; the rest is the SQL call around it).
--
-- Prints "key<TAB>value" rows: seconds, sentences (embedded), embed_ms, chunks.
\set ON_ERROR_STOP on
SET pg_chunk.embedding_cache_mb = 0;
SELECT set_config('bench.workload', :'workload', false) AS ignored \gset
CREATE TEMP TABLE result (key text, value float8);

DO $$
DECLARE
    workload text := current_setting('bench.workload');
    model_name text := CASE workload WHEN 'potion_batch' THEN 'potion-base-8m'
                                     WHEN 'e5_batch' THEN 'multilingual-e5-small'
                                     WHEN 'e5_float_batch' THEN 'multilingual-e5-small-float'
                                     WHEN 'float_batch' THEN 'all-minilm-l6-v2-float' ELSE 'all-minilm-l6-v2' END;
    calls int := CASE workload WHEN 'potion_batch' THEN 10 ELSE 1 END;
    cfg jsonb := jsonb_build_object('model', 'all-minilm-l6-v2', 'inline_threshold', 0);
    sentences text[];
    doc text;
    expected bigint;
    rows_out bigint;
    embedded_before bigint;
    embedded_after bigint;
    embed_ms_before float8;
    embed_ms_after float8;
    started timestamptz;
    seconds float8;
BEGIN
    IF workload NOT IN ('embed_batch', 'semantic_chunk', 'potion_batch', 'e5_batch', 'float_batch', 'e5_float_batch') THEN
        RAISE EXCEPTION 'unknown workload "%"', workload;
    END IF;
    SELECT array_agg(sentence ORDER BY i) INTO sentences FROM bench_sentences;
    doc := array_to_string(sentences, ' ');
    IF workload = 'semantic_chunk' THEN
        SELECT count(DISTINCT content) INTO expected FROM knowledge.split_sentences(doc);
    ELSE
        expected := calls * (SELECT count(DISTINCT s) FROM unnest(sentences) AS s);
    END IF;

    PERFORM knowledge.embed('warm up', model_name);
    SELECT s.sentences_embedded, s.embed_ms INTO embedded_before, embed_ms_before
    FROM knowledge.embedding_stats() AS s WHERE s.model = model_name;

    started := clock_timestamp();
    FOR run IN 1..calls LOOP
        IF workload = 'semantic_chunk' THEN
            SELECT count(*) INTO rows_out FROM knowledge.semantic_chunk(doc, cfg);
        ELSE
            SELECT count(*) INTO rows_out FROM knowledge.embed_batch(sentences, model_name);
        END IF;
    END LOOP;
    seconds := extract(epoch FROM clock_timestamp() - started);

    SELECT s.sentences_embedded, s.embed_ms INTO embedded_after, embed_ms_after
    FROM knowledge.embedding_stats() AS s WHERE s.model = model_name;
    IF embedded_after - embedded_before <> expected THEN
        RAISE EXCEPTION '% embedded % sentences, expected %', workload, embedded_after - embedded_before, expected;
    END IF;
    INSERT INTO result VALUES
        ('seconds', seconds),
        ('sentences', embedded_after - embedded_before),
        ('embed_ms', embed_ms_after - embed_ms_before),
        ('rows', rows_out);
END
$$;

SELECT key || E'\t' || value FROM result;
