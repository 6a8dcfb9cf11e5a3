#!/usr/bin/env bash
# Retrieval through the product: documents go into knowledge.documents, whose trigger chunks and
# embeds them with each chunk config under test, and every question is asked with
# knowledge.search in each mode (hybrid, vector, text); the chunks returned are scored against
# the characters of the known answers (recall, hit rate, precision, IoU, as Chroma's chunking
# evaluation) with the search latency. Prints markdown tables and writes them to results.md.
#
#   bash bench/retrieval/run.sh
#
# Needs what scripts/install.sh sets up; run as root. Fetches Debian's python3.11-doc (apt-get
# download; the reST sources under html/_sources) and builds the question sets (sets.py), each
# documents and queries with answer spans:
#   sections  bench/quality's segmentation samples (seed 2026, 25 per range: 100 documents of
#             10 sections each); queries the sections' titles, answers their segments;
#   faq       the Python FAQ pages as plain text (rst.py); queries their questions, left out of
#             the text, answers the text under each;
#   howto     the HOWTOs (but the largest, sets.py's LEFT_OUT) the same way; queries their
#             section headings, answers each section's own text.
#   tutorial  the Tutorial the same way; not in the default SETS: held out to check a lever
#             tuned on the other three.
# Creates (and drops first) the database pg_chunk_bench_retrieval, adds the configs of
# configs.tsv (configs.sql), inserts every document once (ingest.sql), asks every query
# (search.sql), counts the chunks (chunks.sql) and scores (score.py). Work files go to
# $PG_CHUNK_BUILD_DIR/retrieval. SETS (default sections,faq,howto) and CONFIGS (default every
# row of configs.tsv) choose, comma-separated; K (default 5) results per search; results.md is
# copied into RESULTS (default bench/retrieval/results, the committed latest run; RESULTS= keeps
# it in the work folder only).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
source bench/python_docs.sh

HERE=bench/retrieval
QUALITY=bench/quality
SETS=${SETS:-sections,faq,howto}
CONFIGS=${CONFIGS:-$(tail -n +2 $HERE/configs.tsv | cut -f1 | paste -sd,)}
K=${K:-5}
RESULTS=${RESULTS-$HERE/results}
OUT=$BUILD_DIR/retrieval
DB=pg_chunk_bench_retrieval
sql() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
command="SETS=$SETS CONFIGS=$CONFIGS K=$K${RESULTS:+ RESULTS=$RESULTS} bash bench/retrieval/run.sh"

step "retrieval: the Python 3.11 documentation"
unpack_python_docs "$OUT"
say "$(basename "$deb")"

step "retrieval: database $DB"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE'
say "$(sql -At -c "SELECT 'pg_chunk ' || extversion FROM pg_extension WHERE extname = 'pg_chunk'"), PostgreSQL $(sql -At -c 'SHOW server_version')"

step "retrieval: question sets ($SETS)"
rm -f "$OUT"/documents*.csv "$OUT"/queries*.csv
for set in ${SETS//,/ }; do
    case $set in
        sections)
            python3 $QUALITY/sections.py "$sources" "$OUT/sections.csv"
            sql -f $QUALITY/prepare.sql <"$OUT/sections.csv" >"$OUT/sentences.csv"
            python3 $QUALITY/samples.py "$OUT/sentences.csv" "$OUT/samples.csv" --per-range 25 --seed 2026 --segments "$OUT/segments.csv"
            sql -c "\\copy (SELECT id, section FROM q_sections) TO '$OUT/titles.csv' WITH (FORMAT csv)"
            say "$(python3 $HERE/sets.py sections "$OUT/samples.csv" "$OUT/segments.csv" "$OUT/titles.csv" "$OUT")" ;;
        faq | howto | tutorial)
            say "$(python3 $HERE/sets.py "$set" "$sources" "$OUT")" ;;
        *)
            echo "unknown set $set (SETS takes sections, faq, howto, tutorial)" >&2
            exit 1 ;;
    esac
    cat "$OUT/documents-$set.csv" >>"$OUT/documents.csv"
    cat "$OUT/queries-$set.csv" >>"$OUT/queries.csv"
done

step "retrieval: chunk configs ($CONFIGS)"
configs=$(sql -v configs="$CONFIGS" -f $HERE/configs.sql <$HERE/configs.tsv)
echo "$configs"

step "retrieval: ingest (each document chunked and embedded with every config by the trigger)"
started=$(date +%s)
per_set=
for set in ${SETS//,/ }; do
    line=$(sql -At -f $HERE/ingest.sql <"$OUT/documents-$set.csv")
    read -r documents kb chunks seconds <<<"$line"
    say "$set: $documents documents, $kb KB, $chunks chunks in $seconds s"
    per_set+="${per_set:+, }$set $seconds s"
done
sql -c 'VACUUM ANALYZE knowledge.documents, knowledge.chunks'
ingest_s=$(($(date +%s) - started))
say "ingest: $ingest_s s"

step "retrieval: searching (k = $K, every query × config × mode)"
started=$(date +%s)
sql -v configs="$CONFIGS" -v k="$K" -f $HERE/search.sql <"$OUT/queries.csv" >"$OUT/results.csv"
search_s=$(($(date +%s) - started))
sql -f $HERE/chunks.sql >"$OUT/chunks.csv"
say "searches: $search_s s, $(wc -l <"$OUT/results.csv") result rows"

step "retrieval: results"
{
    echo "# Retrieval through knowledge.search"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'); \`$command\`; $(basename "$deb" .deb | sed 's/_all$//; s/_/ /');" \
        "$(sql -At -c "SELECT 'pg_chunk ' || extversion || ', PostgreSQL ' || current_setting('server_version') FROM pg_extension WHERE extname = 'pg_chunk'");" \
        "$(nproc) cores; ingest $ingest_s s ($per_set), searches $search_s s; k = $K."
    echo
    echo "$configs"
    python3 $HERE/score.py "$OUT"
} | tee "$OUT/results.md"

if [ -n "$RESULTS" ]; then
    mkdir -p "$RESULTS"
    cp "$OUT/results.md" "$RESULTS/"
    say "copied results.md to $RESULTS (the rows behind it stay in $OUT/results.csv)"
fi
