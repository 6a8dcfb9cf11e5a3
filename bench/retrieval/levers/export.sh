#!/usr/bin/env bash
# The data the offline lever scripts (levers.py, rankings.py, neighbours.py) read, from the last
# bench/retrieval/run.sh: its documents, queries and searches, and every chunk of its database.
#
#   bash bench/retrieval/levers/export.sh [DIR]
#
# DIR (default $PG_CHUNK_BUILD_DIR/experiments) gets documents.csv, queries.csv and results.csv
# as run.sh wrote them, and chunks.csv: rows (chunk id, config, set, doc, chunk_index,
# char_offset, char_length, token_count, content). Run the scripts with DATA=DIR and
# DB=pg_chunk_bench_retrieval while that database is as run.sh left it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/lib.sh
DIR=${1:-$BUILD_DIR/experiments}
mkdir -p "$DIR"
cp "$BUILD_DIR"/retrieval/{documents,queries,results}.csv "$DIR"/
psql -X -q -v ON_ERROR_STOP=1 -d pg_chunk_bench_retrieval -c "\\copy (SELECT c.id, c.chunk_config, d.metadata ->> 'set', d.metadata ->> 'doc', c.chunk_index, c.char_offset, c.char_length, c.token_count, c.content FROM knowledge.chunks AS c JOIN knowledge.documents AS d ON d.id = c.document_id ORDER BY c.id) TO '$DIR/chunks.csv' WITH (FORMAT csv)"
echo "$DIR: $(psql -X -At -d pg_chunk_bench_retrieval -c 'SELECT count(*) FROM knowledge.chunks') chunks"
