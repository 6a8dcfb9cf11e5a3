-- Prints, as CSV, every unit of segment.sql's samples with its sentence embedding by :model, for
-- ideas.py: sample, range, unit index, reference segment, length in characters, embedding.
--   psql -d DB -v model=all-minilm-l6-v2 -f export.sql > units.csv
\set ON_ERROR_STOP on
COPY (SELECT u.sample, d.range, u.n, u.segment, length(u.content), e.embedding::text FROM (SELECT sample, array_agg(content ORDER BY n) AS texts FROM q_units GROUP BY sample) AS s CROSS JOIN LATERAL knowledge.embed_batch(s.texts, :'model') AS e JOIN q_units AS u ON u.sample = s.sample AND u.n = e.ordinality - 1 JOIN q_docs AS d ON d.sample = u.sample ORDER BY u.sample, u.n) TO STDOUT WITH (FORMAT csv);
