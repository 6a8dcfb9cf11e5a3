-- Sentences of the documentation's sections, for samples.py:
--   psql -d DB -f prepare.sql < sections.csv > sentences.csv
-- Each section is split by knowledge.split_sentences; whitespace runs become one space. Kept,
-- in order: sentences of 30 to 300 characters that start with a capital letter and end in
-- . ! or ? (closing quotes or brackets allowed), the same rule as bench/embeddings/corpus.sql,
-- so that sentences joined by single spaces split back into themselves (segment.sql checks).
-- Prints CSV rows (section, page, sentence).
\set ON_ERROR_STOP on
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
DROP TABLE IF EXISTS q_sections;
CREATE TABLE q_sections (id serial PRIMARY KEY, page text NOT NULL, section text NOT NULL, body text NOT NULL);
\copy q_sections (page, section, body) FROM pstdin WITH (FORMAT csv)
\copy (SELECT s.id, s.page, u.sentence FROM q_sections AS s, LATERAL (SELECT regexp_replace(x.content, '\s+', ' ', 'g') AS sentence, x.sentence_index FROM knowledge.split_sentences(s.body) AS x) AS u WHERE length(u.sentence) BETWEEN 30 AND 300 AND u.sentence ~ '^[A-Z]' AND u.sentence ~ '[.!?]["'')\]]*$' ORDER BY s.id, u.sentence_index) TO pstdout WITH (FORMAT csv)
