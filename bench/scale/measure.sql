-- The scale benchmark's measures of the store as it is (bench/scale/run.sh), printed as
-- "key<TAB>value" rows: disk bytes per chunk of each relation, the vector leg's recall@10 against
-- exact cosine over bench_queries, and this backend's memory after searching them all.
--   psql -d DB -f measure.sql
\set ON_ERROR_STOP on
SET jit = off;
WITH n AS (SELECT count(*)::float8 AS chunks FROM knowledge.chunks WHERE chunk_config = 'scale'),
relations (key, bytes) AS (
    SELECT 'chunks_heap', pg_relation_size('knowledge.chunks')
    UNION ALL SELECT 'chunks_toast', pg_total_relation_size(reltoastrelid) FROM pg_class WHERE oid = 'knowledge.chunks'::regclass
    UNION ALL SELECT CASE WHEN c.relname LIKE 'chunks_hnsw_%' THEN 'hnsw' WHEN c.relname LIKE 'chunks_tsv_%' THEN 'gin' ELSE 'chunks_other_indexes' END,
                     pg_relation_size(i.indexrelid)
              FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid WHERE i.indrelid = 'knowledge.chunks'::regclass
    UNION ALL SELECT 'text_stats', pg_total_relation_size('knowledge_internal.text_stats')
    UNION ALL SELECT 'stored_vectors', pg_total_relation_size('knowledge_internal.stored_vectors')
    UNION ALL SELECT 'documents', pg_total_relation_size('knowledge.documents')
)
SELECT 'disk_' || key || E'\t' || round(sum(bytes) / n.chunks) FROM relations, n GROUP BY key, n.chunks
UNION ALL
SELECT E'disk_total\t' || round(sum(bytes) / n.chunks) FROM relations, n GROUP BY n.chunks;

-- Recall@10 of the vector leg: knowledge.search's vector mode against the exact 10 nearest by
-- cosine (every chunk of the config read, no index), by chunk id, and by distance: a chunk found
-- counts if it is no farther than the exact 10th (chunks with the same text tie).
CREATE TEMP TABLE recall (i bigint, found bigint[], exact bigint[], tenth float8, near bigint);
DO $$
DECLARE
    q record;
    v vector;
BEGIN
    FOR q IN SELECT b.i, b.query FROM bench_queries AS b ORDER BY b.i LOOP
        v := knowledge.embed(q.query, 'potion-base-8m', 'query');
        INSERT INTO recall
        SELECT q.i, ARRAY(SELECT s.chunk_id FROM knowledge.search(q.query, 10, '{"mode": "vector", "config": "scale"}') AS s),
               NULL;
        SET LOCAL enable_indexscan = off;
        SET LOCAL enable_bitmapscan = off;
        UPDATE recall SET exact = e.ids, tenth = e.distances[10]
        FROM (SELECT array_agg(n.id ORDER BY n.distance) AS ids, array_agg(n.distance ORDER BY n.distance) AS distances
              FROM (SELECT c.id, c.embedding::vector(256) <=> v AS distance FROM knowledge.chunks AS c
                    WHERE c.chunk_config = 'scale' AND c.model = 'potion-base-8m'
                    ORDER BY 2 LIMIT 10) AS n) AS e
        WHERE i = q.i;
        RESET enable_indexscan;
        RESET enable_bitmapscan;
        UPDATE recall AS r SET near = (SELECT count(*) FROM knowledge.chunks AS c
                                       WHERE c.id = ANY (r.found) AND (c.embedding::vector(256) <=> v) <= r.tenth + 1e-6)
        WHERE r.i = q.i;
    END LOOP;
END
$$;
SELECT E'vector_recall10\t' || round(100.0 * sum((SELECT count(*) FROM unnest(found) AS f WHERE f = ANY (exact))) / sum(cardinality(exact)), 1)
FROM recall;
SELECT E'vector_recall10_distance\t' || round(100.0 * sum(near) / sum(cardinality(exact)), 1) FROM recall;

-- A backend's memory after 100 hybrid and 100 text searches: private (RssAnon) and peak resident
-- (VmHWM, shared buffers it touched included), in MiB.
DO $$
DECLARE
    q text;
BEGIN
    FOR q IN SELECT b.query FROM bench_queries AS b ORDER BY b.i LOOP
        PERFORM count(*) FROM knowledge.search(q, 10, '{"config": "scale"}');
        PERFORM count(*) FROM knowledge.search(q, 10, '{"mode": "text", "config": "scale"}');
    END LOOP;
END
$$;
SELECT 'memory_' || lower(m[1]) || E'_mib\t' || round(m[2]::numeric / 1024, 1)
FROM regexp_matches(pg_read_file('/proc/self/status'), '(RssAnon|VmHWM):\s+(\d+) kB', 'g') AS m;
