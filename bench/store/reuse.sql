-- One timed write in the fresh backend of a new connection (bench/store/reuse.sh):
--   psql -d DB -v setting=S -v statement=W [-v first=F -v last=L] [-v drain=1] -f reuse.sql
-- S is on (stored vectors, pg_chunk.stored_vectors_mb at its default) or off
-- (pg_chunk.stored_vectors_mb = 0: every text is embedded, as before vectors were stored). W is insert
-- (bench_docs' original document into knowledge.documents), edit (the one document there
-- updated to bench_docs' edited version) or corpus (bench_corpus' documents F to L, one
-- statement, so one transaction, each). With drain (the default config in async mode), the
-- statement only queues, and the clock also takes knowledge.process_queue(), which is what a
-- background worker runs (same function, same session settings). The embedding cache is off; the model is loaded, its
-- file hashed and one sentence written through the store before the clock starts (that write's
-- rows in knowledge.embedding_writes and knowledge_internal.stored_vectors are deleted again).
-- Prints "key value" rows: seconds, warm_write_seconds (the warm-up write: what a session's
-- first write would pay besides), writes, documents, vectors_embedded, vectors_reused,
-- chunks_written, chunks_kept (summed over the knowledge.embedding_writes rows of the timed
-- statements), chunks (now in the store) and, for edit, new_chunk_texts (chunks whose text no
-- chunk had before).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET pg_chunk.embedding_cache_mb = 0;
SELECT :'setting' = 'off' AS off, :'statement' = 'insert' AS is_insert, :'statement' = 'edit' AS is_edit \gset
\if :off
SET pg_chunk.stored_vectors_mb = 0;
\endif
SELECT knowledge.embed('warm up') IS NOT NULL AS loaded \gset
SELECT knowledge_internal.model_file_sha256('all-minilm-l6-v2') IS NOT NULL AS hashed \gset
SELECT coalesce(max(id), 0) AS stored_before, clock_timestamp() AS warm_started FROM knowledge_internal.stored_vectors \gset
INSERT INTO knowledge.documents (content) VALUES ('Nothing in the benchmark documents reads like this warm-up line.') RETURNING id AS warm_id \gset
SELECT extract(epoch FROM clock_timestamp() - :'warm_started'::timestamptz) AS warm_write_seconds \gset
DELETE FROM knowledge.documents WHERE id = :warm_id;
DELETE FROM knowledge_internal.stored_vectors WHERE id > :stored_before;
DELETE FROM knowledge.embedding_writes WHERE written_at >= :'warm_started';
\if :is_edit
CREATE TEMP TABLE chunks_before AS SELECT content FROM knowledge.chunks;
\endif
SELECT clock_timestamp() AS started \gset
\if :is_insert
INSERT INTO knowledge.documents (content) SELECT content FROM bench_docs WHERE name = 'original';
\elif :is_edit
UPDATE knowledge.documents SET content = (SELECT content FROM bench_docs WHERE name = 'edited');
\else
SELECT format('INSERT INTO knowledge.documents (content) SELECT content FROM bench_corpus WHERE doc = %s', doc)
FROM generate_series(:first, :last) AS doc ORDER BY doc \gexec
\endif
\if :{?drain}
SELECT knowledge.process_queue(16) AS drained \gset
\endif
SELECT extract(epoch FROM clock_timestamp() - :'started'::timestamptz) AS seconds \gset
SELECT count(*) AS writes, coalesce(sum(documents), 0) AS documents,
       coalesce(sum(vectors_embedded), 0) AS vectors_embedded, coalesce(sum(vectors_reused), 0) AS vectors_reused,
       coalesce(sum(chunks_written), 0) AS chunks_written, coalesce(sum(chunks_kept), 0) AS chunks_kept
FROM knowledge.embedding_writes WHERE written_at >= :'started' \gset
SELECT count(*) AS chunks FROM knowledge.chunks \gset
\echo seconds :seconds
\echo warm_write_seconds :warm_write_seconds
\echo writes :writes
\echo documents :documents
\echo vectors_embedded :vectors_embedded
\echo vectors_reused :vectors_reused
\echo chunks_written :chunks_written
\echo chunks_kept :chunks_kept
\echo chunks :chunks
\if :is_edit
SELECT count(*) AS new_chunk_texts FROM knowledge.chunks AS c WHERE NOT EXISTS (SELECT FROM chunks_before AS b WHERE b.content = c.content) \gset
\echo new_chunk_texts :new_chunk_texts
\endif
