-- The benchmark corpus, table bench_sentences(i, sentence): 2,000 distinct English sentences.
-- Sources, in this order: the licence texts in /usr/share/common-licenses (on every Debian
-- machine; read as files, by name in C collation), then PostgreSQL's SQL reference pages as
-- man_text.py writes them (page by page, read from psql's standard input as CSV). The licences
-- alone give only 563 sentences that pass the filter below (1,135 distinct units of any kind).
--
-- Each source is split by knowledge.split_sentences; whitespace runs in a sentence (the
-- licences' line breaks) become one space, so that a sentence fits on one line of
-- sentences.txt. Kept: sentences of 30 to 300 characters that start with a capital letter and
-- end in . ! or ? (with closing quotes or brackets), each at its first occurrence. The two
-- conditions leave out headings and list items ("1.", "b)"), which split differently once
-- inside running text: so the document of all 2,000 sentences joined by single spaces splits
-- back into exactly these sentences (run.sh checks it).
--
--   psql -d DB -f corpus.sql < man7.csv
\set ON_ERROR_STOP on

DROP TABLE IF EXISTS bench_sources, bench_sentences;

CREATE TABLE bench_sources (position serial PRIMARY KEY, name text NOT NULL, body text NOT NULL);

INSERT INTO bench_sources (name, body)
SELECT file, pg_read_file('/usr/share/common-licenses/' || file)
FROM pg_ls_dir('/usr/share/common-licenses') AS file
ORDER BY file COLLATE "C";

\copy bench_sources (name, body) FROM pstdin WITH (FORMAT csv)

CREATE TABLE bench_sentences AS
WITH units AS (
    SELECT s.position, u.sentence_index, regexp_replace(btrim(u.content), '\s+', ' ', 'g') AS sentence
    FROM bench_sources s, knowledge.split_sentences(s.body) AS u
),
first_occurrences AS (
    SELECT DISTINCT ON (sentence) position, sentence_index, sentence
    FROM units
    WHERE char_length(sentence) BETWEEN 30 AND 300 AND sentence ~ '[.!?]["''’”)\]]*$'
          AND sentence ~ '^[A-Z]'
    ORDER BY sentence, position, sentence_index
)
SELECT (row_number() OVER (ORDER BY position, sentence_index))::int AS i, sentence
FROM first_occurrences
ORDER BY position, sentence_index
LIMIT 2000;

ALTER TABLE bench_sentences ADD PRIMARY KEY (i);
