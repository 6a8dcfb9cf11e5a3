-- The queue benchmarks' documents: consecutive 20,000-character pieces of PostgreSQL's SQL
-- reference pages (man section 7, as bench/embeddings/man_text.py writes them to CSV), in page
-- order, in numbered copies ("Copy 1. ", "Copy 2. ", ...), at most :documents of them:
--   psql -d DB -v copies=N -v documents=N -f documents.sql < man7.csv
\set ON_ERROR_STOP on
CREATE TABLE bench_pages (page text PRIMARY KEY, body text NOT NULL);
\copy bench_pages FROM pstdin WITH (FORMAT csv)
CREATE TABLE bench_docs AS
WITH corpus AS (SELECT string_agg(body, E'\n\n' ORDER BY page) AS text FROM bench_pages),
     pieces AS (SELECT piece, substr(text, (piece - 1) * 20000 + 1, 20000) AS body
                FROM corpus, generate_series(1, length(text) / 20000) AS piece)
SELECT row_number() OVER (ORDER BY copy, piece) AS n, 'Copy ' || copy || '. ' || body AS body
FROM pieces, generate_series(1, :copies) AS copy;
DELETE FROM bench_docs WHERE n > :documents;
ALTER TABLE bench_docs ADD PRIMARY KEY (n);
