#!/usr/bin/env bash
# pg_chunk's side of bench/peers, one round, through SQL on the running cluster:
#
#   bash bench/peers/pg_chunk.sh WORKLOAD OUT ROUND
#
# run.sh calls it. Appends rows in the schema of bench/peers/README.md to OUT/pg_chunk.jsonl:
# per model in MODELS (default: potion-base-8m all-minilm-l6-v2) semantic_chunk over every
# document, inserting every document through the trigger (a sync config of that model: chunks,
# embeddings, tsvectors and indexes stored), embed_batch of sentences.txt, and the first
# semantic_chunk in a fresh backend; then the recursive strategy. Each measurement is a new
# connection with pg_chunk.threads = THREADS (default 1) and the embedding cache off (the peers
# have none); the model (and for recursive the default model's tokenizer, which counts each
# chunk's tokens) is loaded and warmed before the clock starts. The database
# pg_chunk_bench_peers holds the documents (made afresh when the workload changed).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

WORKLOAD=$(realpath "$1")
OUT=$2
ROUND=$3
THREADS=${THREADS:-1}
MODELS=${MODELS:-potion-base-8m all-minilm-l6-v2}
DB=pg_chunk_bench_peers
ROWS=$OUT/pg_chunk.jsonl

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

# The documents, loaded once per workload (its manifest's sha256 is the key).
workload_key=$(sha256sum "$WORKLOAD/manifest.tsv" | cut -c1-16)
if [ "$(psql -X -q -At -d "$DB" -c "SELECT obj_description('bench_docs'::regclass)" 2>/dev/null || true)" != "$workload_key" ]; then
    say "pg_chunk: loading the workload into $DB"
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
    sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE'
    sql -v workload="$WORKLOAD" -v key="$workload_key" <<'SQL'
CREATE TABLE bench_docs (name text PRIMARY KEY, body text NOT NULL);
CREATE TEMP TABLE manifest (name text, bytes bigint, chars bigint, source text);
SELECT format('COPY manifest FROM %L', :'workload' || '/manifest.tsv') AS copy_manifest \gset
:copy_manifest;
INSERT INTO bench_docs SELECT name, pg_read_file(:'workload' || '/docs/' || name) FROM manifest;
CREATE TABLE bench_sentences AS
SELECT i, s FROM unnest(string_to_array(rtrim(pg_read_file(:'workload' || '/sentences.txt'), E'\n'), E'\n')) WITH ORDINALITY AS t(s, i);
SELECT format('COMMENT ON TABLE bench_docs IS %L', :'key') AS comment_docs \gset
:comment_docs;
UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
INSERT INTO knowledge.chunk_configs (name, model, active)
SELECT 'peers-' || m, m, false FROM unnest(ARRAY['potion-base-8m', 'all-minilm-l6-v2']) AS m;
SQL
fi
first_doc=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["first_call_document"])' "$WORKLOAD/manifest.json")

# One measurement in a fresh backend: prints its JSON row. $1 id, $2 label, $3 task, $4 model
# ('' for none), $5 mode; the workload is chosen by task and mode.
measure() {
    sql -v id="$1" -v label="$2" -v task="$3" -v model="$4" -v mode="$5" -v round="$ROUND" -v threads="$THREADS" <<'SQL'
SET client_min_messages = warning;
SET pg_chunk.embedding_cache_mb = 0;
-- No vectors reused from knowledge_internal.stored_vectors (an earlier round's inserts would fill it).
SET pg_chunk.stored_vectors_mb = 0;
SELECT set_config('pg_chunk.threads', :'threads', false) AS ignored \gset
SELECT set_config('bench.task', :'task', false) AS ignored, set_config('bench.model', :'model', false) AS ignored2,
       set_config('bench.mode', :'mode', false) AS ignored3 \gset
CREATE TEMP TABLE result (seconds float8, chunks bigint, units bigint, started timestamptz);
DO $$
DECLARE
    task text := current_setting('bench.task');
    model text := nullif(current_setting('bench.model'), '');
    mode text := current_setting('bench.mode');
    cfg jsonb := CASE WHEN task = 'recursive' THEN '{"strategy": "recursive"}' ELSE jsonb_build_object('model', model) END;
    began timestamptz := now();
    started timestamptz;
    produced bigint;
    units bigint;
BEGIN
    -- Loads what the workload uses before the clock: the model, and the tokenizer that counts
    -- every chunk's tokens (the default model's, for recursive).
    PERFORM count(*) FROM knowledge.chunk('Warm up. A second sentence.', cfg);
    IF model IS NOT NULL THEN
        PERFORM knowledge.embed('warm up', model);
    END IF;
    started := clock_timestamp();
    IF mode = 'chunk' THEN
        SELECT count(*) INTO produced FROM bench_docs AS d, knowledge.chunk(d.body, cfg) AS c;
        units := (SELECT count(*) FROM bench_docs);
    ELSIF mode = 'chunk+embed' THEN
        INSERT INTO knowledge.documents (content, chunk_config) SELECT body, 'peers-' || model FROM bench_docs;
        SELECT count(*) INTO produced FROM knowledge.chunks;
        units := (SELECT count(*) FROM bench_docs);
    ELSE
        SELECT count(*) INTO produced FROM knowledge.embed_batch(ARRAY(SELECT s FROM bench_sentences ORDER BY i), model);
        units := produced;
    END IF;
    INSERT INTO result VALUES (extract(epoch FROM clock_timestamp() - started), produced, units, began);
END
$$;
SELECT json_build_object(
    'system', 'pg_chunk', 'id', :'id', 'label', :'label', 'task', :'task', 'model', nullif(:'model', ''),
    'mode', :'mode', 'round', :'round'::int, 'seconds', r.seconds,
    'documents', CASE WHEN :'mode' <> 'sentences' THEN (SELECT count(*) FROM bench_docs) END,
    'bytes', CASE WHEN :'mode' <> 'sentences' THEN (SELECT sum(octet_length(body)) FROM bench_docs) END,
    'sentences', CASE WHEN :'mode' = 'sentences' THEN r.units END,
    'chunks', CASE WHEN :'mode' <> 'sentences' THEN r.chunks END,
    'peak_rss_kib', substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\s+(\d+) kB')::bigint,
    'threads', :'threads'::int, 'at', to_char(r.started AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
FROM result AS r;
TRUNCATE knowledge.documents CASCADE;
SQL
}

# The first semantic_chunk in a new backend, from its start (library and model not loaded yet).
first_call() { # model
    sql -v model="$1" -v doc="$first_doc" <<'SQL'
SELECT count(*) AS ignored FROM knowledge.semantic_chunk((SELECT body FROM bench_docs WHERE name = :'doc'),
                                                   jsonb_build_object('model', :'model')) \gset
SELECT extract(epoch FROM clock_timestamp() - backend_start) FROM pg_stat_activity WHERE pid = pg_backend_pid();
SQL
}

for model in $MODELS; do
    short=${model%%-*}
    [ "$model" = all-minilm-l6-v2 ] && short=minilm
    first=$(first_call "$model")
    measure "pg_chunk-semantic-$short" semantic_chunk semantic "$model" chunk |
        python3 -c 'import json, sys; row = json.loads(sys.stdin.read()); row["first_call_seconds"] = float(sys.argv[1]); print(json.dumps(row))' "$first" >>"$ROWS"
    measure "pg_chunk-trigger-$short" "insert (trigger)" semantic "$model" chunk+embed >>"$ROWS"
    measure "pg_chunk-embed-$short" embed_batch embed "$model" sentences >>"$ROWS"
    say "round $ROUND: pg_chunk with $model done"
done
measure pg_chunk-recursive "chunk (recursive)" recursive "" chunk >>"$ROWS"
say "round $ROUND: pg_chunk recursive done"
