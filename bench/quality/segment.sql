-- Segments every sample with every method and prints, as CSV, one row per (method, sample):
-- method, sample, range, units, reference starts, hypothesis starts (a start is the index
-- of a segment's first unit; the lists are space-separated).
--   psql -d DB -f segment.sql < samples.csv > boundaries.csv
-- The document of a sample is its sentences joined by single spaces; the units scored are its
-- sentences as knowledge.split_sentences finds them. Methods:
--   none                         no boundaries (checks the harness: Pk near 47)
--   fixed                        knowledge.chunk, strategy fixed, 350 characters, no overlap
--   langchain (<model>)          LangChain SemanticChunker's rule: each sentence embedded with its
--                                neighbours (buffer 1), cut after the gaps whose cosine distance
--                                is above the document's 95th percentile; no size limits
--   seed design                  knowledge.chunk with method threshold: ±1 smoothing, cut above the
--                                92nd percentile, size guards (the default before optimal segmentation)
--   pg_chunk <cfg>               knowledge.chunk with cfg; the default semantic strategy is optimal
--                                segmentation (penalty 1.3) with the size guards; the other
--                                strategies (docs/strategies.md) with their defaults, every one reported
--                                (markdown and code on prose are there for completeness: the
--                                samples have no headings or code)
-- A chunk that starts inside a sentence (a forced cut) counts as starting that sentence.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
DROP TABLE IF EXISTS q_samples, q_docs, q_sentences, q_units, q_methods, q_hypotheses;
CREATE TABLE q_samples (sample int, range text, segment int, sentence text, i serial);
\copy q_samples (sample, range, segment, sentence) FROM pstdin WITH (FORMAT csv)

-- Each sample's document, and its sentences' character offsets in it.
CREATE TABLE q_docs AS
SELECT sample, min(range) AS range, string_agg(sentence, ' ' ORDER BY i) AS doc FROM q_samples GROUP BY sample;
CREATE TABLE q_sentences AS
SELECT sample, segment, i,
       coalesce(sum(length(sentence) + 1) OVER (PARTITION BY sample ORDER BY i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS char_offset
FROM q_samples;

-- The units scored are the document's own sentences as knowledge.split_sentences finds them
-- (almost always the sample's sentences; a few join two, e.g. after an abbreviation). A unit
-- belongs to the segment of the sentence it starts in.
CREATE TABLE q_units AS
SELECT d.sample, u.sentence_index AS n, u.char_offset, u.content,
       (SELECT s.segment FROM q_sentences AS s WHERE s.sample = d.sample AND s.char_offset <= u.char_offset
        ORDER BY s.char_offset DESC LIMIT 1) AS segment
FROM q_docs AS d, knowledge.split_sentences(d.doc) AS u;
CREATE INDEX ON q_units (sample, char_offset);
SELECT (SELECT count(*) FROM q_samples) - (SELECT count(*) FROM q_units) AS joined \gset
\warn :joined sentence(s) of the samples joined to a neighbour by the splitter

CREATE TABLE q_methods (position serial, method text, cfg jsonb);
INSERT INTO q_methods (method, cfg) VALUES
    ('none', NULL),
    ('fixed (350 characters)', '{"strategy": "fixed", "max_size": 350, "overlap": 0}'),
    ('langchain (MiniLM, buffer 1, p95)', NULL),
    ('langchain (potion-base-8m, buffer 1, p95)', NULL),
    ('seed design (MiniLM, ±1 smoothing, p92)', '{"model": "all-minilm-l6-v2", "method": "threshold"}'),
    ('seed design (potion-base-8m)', '{"model": "potion-base-8m", "method": "threshold"}'),
    ('pg_chunk default (MiniLM)', '{"model": "all-minilm-l6-v2"}'),
    ('pg_chunk default (MiniLM float32)', '{"model": "all-minilm-l6-v2-float"}'),
    ('pg_chunk default, max_size 2000 characters (MiniLM)', '{"model": "all-minilm-l6-v2", "max_size": 2000}'),
    ('pg_chunk default (potion-base-8m)', '{"model": "potion-base-8m"}'),
    ('pg_chunk default (lexical)', '{"model": "lexical"}'),
    ('pg_chunk recursive', '{"strategy": "recursive", "overlap": 0}'),
    ('pg_chunk topic_coherence', '{"strategy": "topic_coherence"}'),
    ('pg_chunk information_density', '{"strategy": "information_density"}'),
    ('pg_chunk hierarchical (potion-base-8m)', '{"strategy": "hierarchical", "model": "potion-base-8m"}'),
    ('pg_chunk adaptive (potion-base-8m)', '{"strategy": "adaptive", "model": "potion-base-8m"}'),
    ('pg_chunk markdown', '{"strategy": "markdown"}'),
    ('pg_chunk code', '{"strategy": "code"}');

CREATE TABLE q_hypotheses (method text, sample int, start int);

-- knowledge.chunk methods: the sentence each chunk after the first starts in.
INSERT INTO q_hypotheses
SELECT m.method, d.sample, (SELECT max(u.n) FROM q_units AS u WHERE u.sample = d.sample AND u.char_offset <= c.char_offset)
FROM q_methods AS m
CROSS JOIN q_docs AS d
CROSS JOIN LATERAL knowledge.chunk(d.doc, m.cfg) AS c
WHERE m.cfg IS NOT NULL AND c.chunk_index > 0 AND c.char_offset > 0; -- a hierarchical child can start at 0

-- LangChain's rule, with each model.
INSERT INTO q_hypotheses
WITH models (method, model) AS (
    VALUES ('langchain (MiniLM, buffer 1, p95)', 'all-minilm-l6-v2'), ('langchain (potion-base-8m, buffer 1, p95)', 'potion-base-8m')
), combined AS (
    SELECT sample, n, concat_ws(' ', lag(content) OVER w, content, lead(content) OVER w) AS text
    FROM q_units WINDOW w AS (PARTITION BY sample ORDER BY n)
), embedded AS (
    SELECT m.method, c.sample, e.ordinality - 1 AS n, e.embedding
    FROM models AS m,
         (SELECT sample, array_agg(text ORDER BY n) AS texts FROM combined GROUP BY sample) AS c,
         knowledge.embed_batch(c.texts, m.model) AS e
), gaps AS (
    SELECT method, sample, n, embedding <=> lead(embedding) OVER (PARTITION BY method, sample ORDER BY n) AS distance FROM embedded
), thresholds AS (
    SELECT method, sample, percentile_cont(0.95) WITHIN GROUP (ORDER BY distance) AS threshold
    FROM gaps WHERE distance IS NOT NULL GROUP BY method, sample
)
SELECT g.method, g.sample, g.n + 1
FROM gaps AS g JOIN thresholds AS t USING (method, sample) WHERE g.distance > t.threshold;

\copy (SELECT m.method, d.sample, d.range, d.units, d.reference, coalesce((SELECT string_agg(DISTINCT h.start::text, ' ') FROM q_hypotheses AS h WHERE h.method = m.method AND h.sample = d.sample AND h.start > 0), '') FROM q_methods AS m CROSS JOIN (SELECT u.sample, min(q.range) AS range, count(*) AS units, coalesce(string_agg(u.n::text, ' ' ORDER BY u.n) FILTER (WHERE u.starts_segment), '') AS reference FROM (SELECT sample, n, n > 0 AND segment IS DISTINCT FROM lag(segment) OVER (PARTITION BY sample ORDER BY n) AS starts_segment FROM q_units) AS u JOIN q_docs AS q USING (sample) GROUP BY u.sample) AS d ORDER BY m.position, d.sample) TO pstdout WITH (FORMAT csv)
