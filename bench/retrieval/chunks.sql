-- The chunks in the store, per question set and config, for bench/retrieval/run.sh:
--   psql -d DB -f chunks.sql > chunks.csv
-- Prints CSV rows (set, config, chunks, mean characters, chunks over the limit, the limit). The
-- limit is what the config's model reads: knowledge.models.max_tokens less 2, because a BERT-style
-- model such as all-MiniLM-L6-v2 spends two of them on its [CLS] and [SEP] tokens, and token_count
-- counts the tokenizer's tokens without them; the text of a chunk above it is cut off before
-- embedding (its end is not in its vector).
\set ON_ERROR_STOP on
\copy (SELECT d.metadata ->> 'set', c.chunk_config, count(*), round(avg(c.char_length), 1), count(*) FILTER (WHERE c.token_count > m.max_tokens - 2), min(m.max_tokens - 2) FROM knowledge.chunks AS c JOIN knowledge.documents AS d ON d.id = c.document_id JOIN knowledge.chunk_configs AS k ON k.name = c.chunk_config JOIN knowledge.models AS m ON m.name = k.model GROUP BY 1, 2 ORDER BY 1, 2) TO pstdout WITH (FORMAT csv)
