-- Loading one model in the fresh backend of a new connection, and what it costs in memory:
--   psql -d DB -v model=M -f backend.sql
-- 1. resident memory (VmRSS of /proc/self/status, i.e. of this backend) once pg_chunk's library
--    is loaded (embedding_stats() loads it) but no model is;
-- 2. the first knowledge.embed('x', M): load_ms is the model load as embedding_stats() reports it
--    (for a transformer it includes loading ONNX Runtime's library), first_call_ms the whole
--    first call (load, registry lookup, first inference);
-- 3. resident memory after embedding the 2,000 corpus sentences in one embed_batch call with the
--    embedding cache off (the cache, 64 MB by default, would add up to its size on top).
-- 4. resident memory once that transaction has ended: what the backend then holds, idle in a pool
--    (after a large call pg_chunk returns the freed heap at the transaction's end: src/heap.rs).
-- RssAnon (VmRSS less RssFile and RssShmem) is the backend's private memory: what every backend
-- that embeds adds again. RssFile (the mapped weights and libraries) is the page cache's, shared.
-- Prints "key<TAB>value" rows; memory in kB.
\set ON_ERROR_STOP on
SET pg_chunk.embedding_cache_mb = 0;
SELECT set_config('bench.model', :'model', false) AS ignored \gset
CREATE TEMP TABLE result (key text, value float8);

CREATE FUNCTION pg_temp.status_kb(field text) RETURNS float8 LANGUAGE sql AS $$
    SELECT substring(pg_read_file('/proc/self/status') FROM field || ':\s+(\d+) kB')::float8
$$;

DO $$
DECLARE
    model_name text := current_setting('bench.model');
    sentences text[];
    started timestamptz;
    first_call_ms float8;
    loaded int;
BEGIN
    SELECT array_agg(sentence ORDER BY i) INTO sentences FROM bench_sentences;
    SELECT count(*) INTO loaded FROM knowledge.embedding_stats();
    IF loaded > 0 THEN
        RAISE EXCEPTION 'this backend has already loaded a model';
    END IF;
    INSERT INTO result VALUES ('rss_before_kb', pg_temp.status_kb('VmRSS')), ('rss_anon_before_kb', pg_temp.status_kb('RssAnon'));

    started := clock_timestamp();
    PERFORM knowledge.embed('x', model_name);
    first_call_ms := extract(epoch FROM clock_timestamp() - started) * 1000;
    INSERT INTO result SELECT 'load_ms', s.load_ms FROM knowledge.embedding_stats() AS s WHERE s.model = model_name AND s.loads = 1;
    INSERT INTO result VALUES ('first_call_ms', first_call_ms), ('rss_loaded_kb', pg_temp.status_kb('VmRSS'));

    PERFORM count(*) FROM knowledge.embed_batch(sentences, model_name);
    INSERT INTO result VALUES
        ('rss_after_kb', pg_temp.status_kb('VmRSS')),
        ('rss_anon_after_kb', pg_temp.status_kb('RssAnon')),
        ('rss_file_after_kb', pg_temp.status_kb('RssFile'));
END
$$;

INSERT INTO result VALUES ('rss_anon_idle_kb', pg_temp.status_kb('RssAnon'));

SELECT key || E'\t' || value FROM result;
