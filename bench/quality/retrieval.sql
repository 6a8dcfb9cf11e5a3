-- Retrieval on the segmentation samples: each section title is a query and its segments are the
-- answer; the corpus is every method's chunks of all 100 documents, embedded with each installed
-- model (knowledge.models) and searched by exact cosine distance. Run after segment.sql, in its
-- database:
--   psql -d DB -f retrieval.sql < segments.csv > retrieval.csv
-- segments.csv is samples.py's --segments output, rows (sample, segment, section), section being
-- q_sections.id. Prints CSV, one row per (method, model, query, rank) for the 10 nearest chunks:
-- method, model, query, rank, hit, the chunk's characters, of them inside an answer, then the
-- method's chunk count and chunk characters (the same on every row of a method);
-- retrieval.py scores it.
--
-- Queries: one per distinct title among the samples' sections. A section is often drawn into
-- several samples, and different sections share a title (the same PEP in two What's New pages),
-- so a query's answer is every segment in the corpus whose section has that title. One-word
-- titles are not asked ("Introduction", "Examples", "Details", a bare module name such as "ssl"):
-- they take their meaning from the page above them; their segments stay in the corpus.
-- A hit is a retrieved chunk that overlaps an answer span by at least half of the chunk or half of
-- the span. Chunks are embedded as passages, titles as queries (the models' prefixes, if any).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
DROP TABLE IF EXISTS q_origins, q_answers, q_queries, q_chunks, q_chunk_vectors, q_query_vectors, q_retrieved;
CREATE TABLE q_origins (sample int, segment int, section int);
\copy q_origins FROM pstdin WITH (FORMAT csv)

-- Each segment's span in its document: from its first sentence to the end of its last.
CREATE TABLE q_answers AS
SELECT t.section AS title, o.sample, min(s.char_offset)::int AS char_offset,
       (max(s.char_offset + length(x.sentence)) - min(s.char_offset))::int AS char_length
FROM q_origins AS o
JOIN q_sections AS t ON t.id = o.section
JOIN q_sentences AS s ON s.sample = o.sample AND s.segment = o.segment
JOIN q_samples AS x ON x.i = s.i
GROUP BY o.sample, o.segment, t.section;
DO $$
BEGIN
    -- segments.csv must come from the same samples.py run as the samples segment.sql loaded.
    -- Each sentence must be in its section (prepare.sql made whitespace runs single spaces).
    IF (SELECT count(*) FROM q_origins) <> (SELECT count(DISTINCT (sample, segment)) FROM q_samples)
       OR (SELECT count(*) FROM q_answers) <> (SELECT count(*) FROM q_origins)
       OR EXISTS (SELECT FROM q_origins AS o JOIN q_sections AS t ON t.id = o.section JOIN q_samples AS x USING (sample, segment)
                  WHERE position(x.sentence IN regexp_replace(t.body, '\s+', ' ', 'g')) = 0) THEN
        RAISE EXCEPTION 'segments.csv does not match the samples in q_samples';
    END IF;
END $$;

CREATE TABLE q_queries AS
SELECT row_number() OVER (ORDER BY title)::int AS query, title
FROM (SELECT DISTINCT title FROM q_answers WHERE title ~ ' ') AS t;
SELECT count(*) AS queries, (SELECT count(DISTINCT title) FROM q_answers) - count(*) AS skipped FROM q_queries \gset
\warn :queries queries; :skipped one-word title(s) not asked

-- Chunks of every method. With a cfg: knowledge.chunk's own spans.
CREATE TABLE q_chunks AS
SELECT m.method, d.sample, c.chunk_index, c.content, c.char_offset, c.char_length
FROM q_methods AS m CROSS JOIN q_docs AS d CROSS JOIN LATERAL knowledge.chunk(d.doc, m.cfg) AS c
WHERE m.cfg IS NOT NULL;

-- Without one ('none', the LangChain rule): a chunk runs from one start in q_hypotheses (a unit
-- index; the first unit always starts one) to the next start, less the space between them.
INSERT INTO q_chunks
WITH starts AS (
    SELECT m.method, d.sample, d.doc, u.char_offset,
           lead(u.char_offset, 1, length(d.doc)) OVER (PARTITION BY m.method, d.sample ORDER BY u.n) AS next_offset,
           row_number() OVER (PARTITION BY m.method, d.sample ORDER BY u.n) - 1 AS chunk_index
    FROM q_methods AS m CROSS JOIN q_docs AS d JOIN q_units AS u ON u.sample = d.sample
    WHERE m.cfg IS NULL
      AND (u.n = 0 OR EXISTS (SELECT FROM q_hypotheses AS h WHERE h.method = m.method AND h.sample = d.sample AND h.start = u.n))
)
SELECT method, sample, chunk_index, c.content, char_offset, length(c.content)
FROM starts, LATERAL (SELECT rtrim(substr(doc, char_offset + 1, next_offset - char_offset)) AS content) AS c;

-- Every chunk with every installed model, one batch per document; titles with the query role.
CREATE TABLE q_chunk_vectors AS
SELECT c.method, mo.name AS model, c.sample, c.indexes[e.ordinality] AS chunk_index, e.embedding
FROM (SELECT method, sample, array_agg(content ORDER BY chunk_index) AS texts, array_agg(chunk_index ORDER BY chunk_index) AS indexes
      FROM q_chunks GROUP BY method, sample) AS c
CROSS JOIN knowledge.models AS mo
CROSS JOIN LATERAL knowledge.embed_batch(c.texts, mo.name) AS e;
CREATE INDEX ON q_chunk_vectors (method, model);
CREATE TABLE q_query_vectors AS
SELECT q.query, mo.name AS model, knowledge.embed(q.title, mo.name, 'query') AS embedding
FROM q_queries AS q CROSS JOIN knowledge.models AS mo;

-- The 10 nearest chunks of the method's whole corpus (ties broken by position, for repeatability).
CREATE TABLE q_retrieved AS
SELECT m.method, qv.model, qv.query, r.rank, r.sample, r.chunk_index
FROM q_methods AS m CROSS JOIN q_query_vectors AS qv
CROSS JOIN LATERAL (
    SELECT row_number() OVER (ORDER BY v.embedding <=> qv.embedding, v.sample, v.chunk_index) AS rank, v.sample, v.chunk_index
    FROM q_chunk_vectors AS v
    WHERE v.method = m.method AND v.model = qv.model
    ORDER BY v.embedding <=> qv.embedding, v.sample, v.chunk_index LIMIT 10
) AS r;

-- Per retrieved chunk: whether it is a hit, its characters and of them inside an answer.
CREATE TEMP VIEW scored AS
SELECT r.method, r.model, q.title, r.rank, a.hit IS TRUE AS hit, c.char_length AS retrieved, coalesce(a.inside, 0) AS inside
FROM q_retrieved AS r
JOIN q_queries AS q USING (query)
JOIN q_chunks AS c USING (method, sample, chunk_index)
LEFT JOIN LATERAL (
    SELECT sum(o.overlap) AS inside, bool_or(2 * o.overlap >= c.char_length OR 2 * o.overlap >= a.char_length) AS hit
    FROM q_answers AS a,
         LATERAL (SELECT greatest(0, least(c.char_offset + c.char_length, a.char_offset + a.char_length) - greatest(c.char_offset, a.char_offset)) AS overlap) AS o
    WHERE a.title = q.title AND a.sample = r.sample AND o.overlap > 0
) AS a ON true;
CREATE TEMP VIEW sizes AS SELECT method, count(*) AS chunks, sum(char_length) AS chunk_chars FROM q_chunks GROUP BY method;

\copy (SELECT s.method, s.model, s.title, s.rank, s.hit, s.retrieved, s.inside, z.chunks, z.chunk_chars FROM scored AS s JOIN sizes AS z USING (method) JOIN q_methods AS m USING (method) ORDER BY m.position, s.model, s.title, s.rank) TO pstdout WITH (FORMAT csv)
