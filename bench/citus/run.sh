#!/usr/bin/env bash
# Citus benchmark (docs/scaling.md): the store spread over two Citus workers against one server,
# on a cluster of its own that scripts/citus.sh starts afresh (PostgreSQL 17; coordinator on port
# 5451, workers on 5452 and 5453; data under $PG_CHUNK_BUILD_DIR/bench-citus). The one server is
# the coordinator's own store: the same PostgreSQL, the same documents inserted into its
# knowledge.documents directly. Prints markdown tables and writes them to RESULTS/citus.md
# (default bench/citus/results; RESULTS= only prints).
#
#   bash bench/citus/run.sh
#
#   1. agreement: bench/retrieval's FAQ and HOWTO question sets (Debian's python3.11-doc, sets.py),
#      written through a distributed table attached with knowledge.attach_distributed and into
#      the one store, default config (all-MiniLM-L6-v2); each question's top 5 by
#      knowledge.distributed_search against knowledge.search on the one store, hybrid with score
#      fusion and with rrf: the share of the one store's chunks (content and chunk index) that
#      the cluster returns too, and of questions whose top 5 is the same list.
#   2. latency: bench/store's corpus (PostgreSQL's SQL reference pages, COPIES copies, default
#      500: about a million chunks and 6 GB of databases; 1500 copies, 3.2 million chunks, took
#      22 GB and their WAL the rest of the 29 GB this machine has free, and failed in step 3) in
#      fixed 400-character chunks of potion-base-8m, in both, written by the bulk load on every
#      node (one coordinator session per worker for the distributed table); QUERIES
#      (default 100) queries, k = 10, hybrid, each through one and then the other, the query
#      embedded every time (cache off), timed on the coordinator's clock: p50 and p95 of each.
#   3. throughput: the first MB (default 5) megabytes of the Python manual's reST sources,
#      all-MiniLM-L6-v2, sync, inserted through the coordinator in one INSERT into a distributed
#      table whose shards are on one worker, then (the workers' stores emptied) into one whose
#      shards are on both: seconds each (after a warm-up row on every shard, deleted), and their
#      ratio. One coordinator connection a worker (citus.max_adaptive_executor_pool_size = 1, as
#      docs/scaling.md says writes need); embedding caches off on every node.
set -euo pipefail
cd "$(dirname "$0")/../.."
pg_config_given=${PG_CONFIG:-}
source scripts/lib.sh
source bench/python_docs.sh
PG_CONFIG=${pg_config_given:-$PG17_CONFIG}

COPIES=${COPIES:-500}
QUERIES=${QUERIES:-100}
MB=${MB:-5}
OUT=$BUILD_DIR/bench-citus
export CITUS_PORTS="5451 5452 5453" CITUS_DATA=$OUT/node CITUS_DATABASE=pg_chunk_bench_citus
read -r coordinator worker_a worker_b <<<"$CITUS_PORTS"
RESULTS=${RESULTS-bench/citus/results}
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$coordinator" -d "$CITUS_DATABASE" "$@"; }
# One statement on every worker, through the coordinator.
on_workers() { sql -c "SELECT string_agg(result, ' ' ORDER BY nodeport) FROM run_command_on_workers(\$cmd\$$1\$cmd\$)"; }
# One command on every node (the coordinator too), each on a connection of its own, in parallel;
# fails, saying each node's answer, unless it succeeded on every one.
on_all_nodes() {
    local failed
    failed=$(sql -c "SELECT string_agg('node ' || nodeid || ': ' || result, '; ') FROM run_command_on_all_nodes(\$cmd\$$1\$cmd\$) WHERE NOT success")
    [ -z "$failed" ] || { echo "$1 failed on: $failed" >&2; return 1; }
}

step "Citus benchmark: a cluster afresh"
mkdir -p "$OUT"
PG_CONFIG=$PG_CONFIG bash scripts/citus.sh fresh
for port in $CITUS_PORTS; do
    psql -X -q -v ON_ERROR_STOP=1 -h /var/run/postgresql -p "$port" -d postgres \
        -c "ALTER SYSTEM SET pg_chunk.embedding_cache_mb = 0" -c "ALTER SYSTEM SET citus.max_adaptive_executor_pool_size = 1" \
        -c "SELECT pg_reload_conf()" >/dev/null
done

step "Citus benchmark: 1. agreement over bench/retrieval's FAQ and HOWTO questions"
unpack_python_docs "$OUT"
for set in faq howto; do say "$(python3 bench/retrieval/sets.py "$set" "$sources" "$OUT")"; done
cat "$OUT/documents-faq.csv" "$OUT/documents-howto.csv" >"$OUT/documents.csv"
cat "$OUT/queries-faq.csv" "$OUT/queries-howto.csv" >"$OUT/queries.csv"
sql <<SQL
SET client_min_messages = warning;
CREATE TABLE bench_documents (doc text PRIMARY KEY, set text, title text, content text NOT NULL);
\\copy bench_documents FROM '$OUT/documents.csv' WITH (FORMAT csv)
-- A question with several answer spans has a row for each.
CREATE TABLE bench_answers (set text, id text, question text, doc text, start int, length int);
\\copy bench_answers FROM '$OUT/queries.csv' WITH (FORMAT csv)
CREATE TABLE bench_questions AS SELECT DISTINCT id, question FROM bench_answers;
CREATE TABLE qa_docs (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('qa_docs', 'id');
SQL
sql -c "SELECT knowledge.attach_distributed('qa_docs', 'id', 'body')" >/dev/null
sql <<'SQL'
SET client_min_messages = warning;
INSERT INTO qa_docs SELECT row_number() OVER (ORDER BY doc), content FROM bench_documents;
INSERT INTO knowledge.documents (content) SELECT content FROM bench_documents ORDER BY doc;
SQL
say "$(sql -c "SELECT count(*) || ' documents, ' || pg_size_pretty(sum(octet_length(content))) || ', ' || (SELECT count(*) FROM bench_questions) || ' questions' FROM bench_documents"); chunks: one store $(sql -c 'SELECT count(*) FROM knowledge.chunks'), workers $(on_workers 'SELECT count(*) FROM knowledge.chunks')"
agreement=$(sql <<'SQL'
CREATE TEMP TABLE agreement (fusion text, question text, shared int, one int, same_list boolean);
DO $$
DECLARE
    f text;
    q record;
    one text[];
    many text[];
BEGIN
    FOREACH f IN ARRAY ARRAY['scores', 'rrf'] LOOP
        FOR q IN SELECT question FROM bench_questions ORDER BY id LOOP
            SELECT array_agg(s.chunk_index || ':' || md5(s.content) ORDER BY s.score DESC, s.chunk_index) INTO one
            FROM knowledge.search(q.question, 5, jsonb_build_object('fusion', f)) AS s;
            SELECT array_agg(s.chunk_index || ':' || md5(s.content) ORDER BY s.score DESC, s.chunk_index) INTO many
            FROM knowledge.distributed_search(q.question, 5, jsonb_build_object('fusion', f)) AS s;
            INSERT INTO agreement
            SELECT f, q.question, (SELECT count(*) FROM (SELECT unnest(one) INTERSECT SELECT unnest(many)) AS x),
                   coalesce(cardinality(one), 0), one IS NOT DISTINCT FROM many;
        END LOOP;
    END LOOP;
END
$$;
SELECT fusion || E'\t' || count(*) || E'\t' || round(100.0 * sum(shared) / nullif(sum(one), 0), 1) || E'\t'
       || round(100.0 * count(*) FILTER (WHERE same_list) / count(*), 1)
FROM agreement GROUP BY fusion ORDER BY fusion DESC;
SQL
)
echo "$agreement" | sed 's/^/    /'

step "Citus benchmark: 2. latency, $COPIES copies of PostgreSQL's SQL reference"
python3 bench/embeddings/man_text.py --out "$OUT/man7.csv"
sql <<SQL
SET client_min_messages = warning;
CREATE TABLE bench_pages (page text PRIMARY KEY, body text NOT NULL);
\\copy bench_pages FROM '$OUT/man7.csv' WITH (FORMAT csv)
CREATE TABLE pages_docs (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('pages_docs', 'id');
CREATE TABLE bench_copies AS
SELECT row_number() OVER (ORDER BY page, copy) AS id, 'Copy ' || copy || ' of ' || page || '. ' || body AS body
FROM bench_pages, generate_series(1, $COPIES) AS copy;
SQL
on_all_nodes "INSERT INTO knowledge.chunk_configs (name, cfg, model, active)
    VALUES ('copies', '{\"strategy\": \"fixed\", \"max_size\": 400, \"overlap\": 0}', 'potion-base-8m', false)"
sql -c "SELECT knowledge.attach_distributed('pages_docs', 'id', 'body', 'copies')" >/dev/null
# On every node, the bulk load of docs/store.md ("Loading a large store"): the indexes built and
# the statistics counted once, at the end. The one store is written from two sessions (a core
# each), the distributed table through the coordinator (a connection to each worker).
on_all_nodes "SELECT knowledge.begin_load('copies')"
started=$SECONDS
for m in 0 1; do
    sql -c "SET client_min_messages = warning" \
        -c "INSERT INTO knowledge.documents (content, chunk_config) SELECT body, 'copies' FROM bench_copies WHERE id % 2 = $m ORDER BY id" &
    writers[m]=$!
done
wait "${writers[0]}" && wait "${writers[1]}"
say "the one store written in $((SECONDS - started)) s"
# One coordinator session per worker, each with the rows of that worker's shards: one INSERT of
# all rows feeds the workers one at a time (its COPY to one waits while the other's is busy).
started=$SECONDS
for port in "$worker_a" "$worker_b"; do
    sql -c "SET client_min_messages = warning" -c "INSERT INTO pages_docs SELECT id, body FROM bench_copies
        WHERE get_shard_id_for_distribution_column('pages_docs', id) IN
            (SELECT shardid FROM citus_shards WHERE table_name = 'pages_docs'::regclass AND nodeport = $port)" &
    writers[port]=$!
done
wait "${writers[worker_a]}" && wait "${writers[worker_b]}"
say "the distributed table written in $((SECONDS - started)) s"
# maintenance_work_mem on each node sized to hold its HNSW graph: 2 kB a chunk (the index takes
# about 1 kB a chunk at 256 dimensions, docs/scaling.md's Sizing).
started=$SECONDS
on_all_nodes "SELECT set_config('maintenance_work_mem', (65536 + 2 * count(*)) || 'kB', false)
    FROM knowledge.chunks WHERE chunk_config = 'copies'; SET work_mem = '1GB'; SELECT knowledge.end_load('copies')"
say "indexes built and statistics counted on every node in $((SECONDS - started)) s"
on_all_nodes "VACUUM ANALYZE knowledge.documents, knowledge.chunks"
sql <<SQL
CREATE TABLE bench_queries AS
SELECT row_number() OVER () AS i, regexp_replace(left(content, 80), '\s+\S*$', '') AS query
FROM (SELECT s.content, row_number() OVER (ORDER BY p.page, s.sentence_index) AS n
      FROM bench_pages AS p, knowledge.split_sentences(p.body) AS s WHERE length(s.content) > 40) AS sentences
WHERE n % 40 = 0 LIMIT $QUERIES;
SQL
one_chunks=$(sql -c "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'copies'")
worker_chunks=$(on_workers "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'copies'")
say "chunks: one store $one_chunks, workers $worker_chunks"
sizes="coordinator (the one store and the tables the stores were loaded from) $(sql -c "SELECT pg_size_pretty(pg_database_size(current_database()))"), workers $(on_workers "SELECT replace(pg_size_pretty(pg_database_size(current_database())), ' ', '_')" | sed 's/ / + /; s/_/ /g')"
say "databases: $sizes"
latency=$(sql <<'SQL'
SET pg_chunk.embedding_cache_mb = 0;
CREATE TEMP TABLE timings (search text, ms float8, results int);
DO $$
DECLARE
    q text;
    started timestamptz;
    n int;
    options jsonb := '{"config": "copies"}';
BEGIN
    PERFORM count(*) FROM knowledge.search('warm up the caches', 10, options);
    PERFORM count(*) FROM knowledge.distributed_search('warm up the caches', 10, options);
    FOR q IN SELECT query FROM bench_queries ORDER BY i LOOP
        started := clock_timestamp();
        SELECT count(*) INTO n FROM knowledge.search(q, 10, options);
        INSERT INTO timings VALUES ('one server: knowledge.search', extract(epoch FROM clock_timestamp() - started) * 1000, n);
        started := clock_timestamp();
        SELECT count(*) INTO n FROM knowledge.distributed_search(q, 10, options);
        INSERT INTO timings VALUES ('two workers: knowledge.distributed_search', extract(epoch FROM clock_timestamp() - started) * 1000, n);
    END LOOP;
END
$$;
SELECT search || E'\t' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) || E'\t'
       || round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 2) || E'\t' || count(*) || E'\t' || round(avg(results), 1)
FROM timings GROUP BY search ORDER BY search;
SQL
)
echo "$latency" | sed 's/^/    /'

step "Citus benchmark: 3. throughput, $MB MB of the Python manual's reST sources"
python3 - "$sources" "$OUT/sources.csv" "$MB" <<'PY'
import csv, sys
from pathlib import Path
root, out, megabytes = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
total = 0
with open(out, "w", newline="") as f:
    writer = csv.writer(f)
    for n, path in enumerate(sorted(root.rglob("*.txt")), 1):
        text = path.read_text(encoding="utf-8")
        writer.writerow([n, text])
        total += len(text.encode())
        if total >= megabytes * 1e6:
            break
PY
sql <<SQL
SET client_min_messages = warning;
CREATE TABLE bench_sources (id bigint PRIMARY KEY, body text NOT NULL);
\\copy bench_sources FROM '$OUT/sources.csv' WITH (FORMAT csv)
SQL
say "$(sql -c "SELECT count(*) || ' files, ' || round(sum(octet_length(body)) / 1e6, 2) || ' MB' FROM bench_sources")"
: >"$OUT/throughput.tsv"
for workers in 1 2; do
    # The workers' stores emptied, so that no run reuses another's vectors.
    on_workers "DELETE FROM knowledge.documents; DELETE FROM knowledge.attachments" >/dev/null
    if ((workers == 1)); then
        sql -c "SELECT citus_set_node_property('/var/run/postgresql', $worker_b, 'shouldhaveshards', false)" >/dev/null
    fi
    sql -c "SET client_min_messages = warning" -c "CREATE TABLE sources_$workers (id bigint PRIMARY KEY, body text NOT NULL)" \
        -c "SELECT create_distributed_table('sources_$workers', 'id', colocate_with => 'none')" >/dev/null
    sql -c "SELECT citus_set_node_property('/var/run/postgresql', $worker_b, 'shouldhaveshards', true)" >/dev/null
    sql -c "SELECT knowledge.attach_distributed('sources_$workers', 'id', 'body')" >/dev/null
    placed=$(sql -c "SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'sources_$workers'::regclass")
    # Rows on every shard first, so that each worker's connection has loaded the model.
    seconds=$(sql <<SQL
SET client_min_messages = warning;
INSERT INTO sources_$workers SELECT -g, 'Warm up the model, document ' || g || '.' FROM generate_series(1, 64) AS g;
DELETE FROM sources_$workers WHERE id < 0;
SELECT clock_timestamp() AS started \\gset
INSERT INTO sources_$workers SELECT id, body FROM bench_sources;
SELECT round(extract(epoch FROM clock_timestamp() - :'started'::timestamptz)::numeric, 1);
SQL
)
    chunks=$(on_workers "SELECT count(*) FROM knowledge.chunks")
    printf '%s\t%s\t%s\t%s\n' "$workers" "$placed" "$seconds" "$chunks" >>"$OUT/throughput.tsv"
    say "shards on $placed worker(s): $seconds s; chunks per worker: $chunks"
done

if [ -n "$RESULTS" ]; then mkdir -p "$RESULTS" && exec > >(tee "$RESULTS/citus.md"); fi
step "Citus benchmark: results"
say "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(cpu_description)), $(sql -c "SELECT 'PostgreSQL ' || current_setting('server_version') || ', Citus ' || extversion FROM pg_extension WHERE extname = 'citus'"), COPIES=$COPIES QUERIES=$QUERIES MB=$MB"
echo
echo "| search (top 5, default config) | questions | chunks of the one store's top 5 the cluster returns | questions with the same top 5 |"
echo "|---|---|---|---|"
awk -F'\t' '{ printf "| hybrid, fusion %s | %s | %s%% | %s%% |\n", $1, $2, $3, $4 }' <<<"$agreement"
echo
echo "| search (k = 10, hybrid, config copies, query embedded) | chunks | p50 ms | p95 ms | queries | mean results |"
echo "|---|---|---|---|---|---|"
awk -F'\t' -v one="$one_chunks" -v many="${worker_chunks// / + }" \
    '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, ($1 ~ /^one/ ? one : many), $2, $3, $4, $5 }' <<<"$latency"
awk -F'\t' '/^one/ { one = $3 } /^two/ { two = $3 } END { printf "\np95 through the coordinator ÷ one server: %.2f (target ≤ 2)\n", two / one }' <<<"$latency"
echo "databases: $sizes"
echo
echo "| ingestion ($(sql -c "SELECT round(sum(octet_length(body)) / 1e6, 2) FROM bench_sources") MB, all-minilm-l6-v2, sync) | seconds | chunks per worker |"
echo "|---|---|---|"
awk -F'\t' '{ printf "| shards on %s worker(s) | %s | %s |\n", $2, $3, $4 }' "$OUT/throughput.tsv"
awk -F'\t' '$1 == 1 { one = $3 } $1 == 2 { two = $3 } END { printf "\ntwo workers ÷ one, throughput: %.2f (target ≥ 1.5)\n", one / two }' "$OUT/throughput.tsv"
PG_CONFIG=$PG_CONFIG bash scripts/citus.sh stop >/dev/null
