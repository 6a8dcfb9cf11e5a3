-- One question set's documents into the store, timed, for bench/retrieval/run.sh:
--   psql -d DB -f ingest.sql < documents-SET.csv
-- The rows (doc, set, title, content) of sets.py go into knowledge.documents (title, content,
-- metadata {"set": set, "doc": doc}) with chunk_config NULL, in one INSERT: its trigger chunks,
-- embeds and stores each document with every active config (sync mode, inside the statement).
-- The model is loaded before the clock starts. Prints "documents KB chunks seconds".
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE TEMP TABLE bench_documents (doc text PRIMARY KEY, set text NOT NULL, title text, content text NOT NULL);
\copy bench_documents FROM pstdin WITH (FORMAT csv)
SELECT knowledge.embed('warm up', 'all-minilm-l6-v2') IS NOT NULL AS loaded \gset
SELECT count(*) AS chunks_before FROM knowledge.chunks \gset
SELECT clock_timestamp() AS started \gset
INSERT INTO knowledge.documents (title, content, metadata)
SELECT title, content, jsonb_build_object('set', set, 'doc', doc) FROM bench_documents ORDER BY doc;
SELECT round(extract(epoch FROM clock_timestamp() - :'started'::timestamptz)::numeric, 1) AS seconds \gset
SELECT count(*) - :chunks_before AS chunks FROM knowledge.chunks \gset
SELECT count(*) AS documents, round(sum(length(content)) / 1000.0) AS kb FROM bench_documents \gset
\echo :documents :kb :chunks :seconds
