#!/usr/bin/env bash
# Scale benchmark: one store grown through SIZES (default "10000 100000 1000000" chunks, stopping
# where the corpus ends) and measured at each size:
#   - ingestion in MB/s: the bulk load that grows it (docs/store.md, "Loading a large store": the
#     config's indexes dropped and BM25's statistics not counted, two sessions inserting, the
#     indexes built once and the statistics counted once; the build times are the HNSW and GIN
#     build times at that size), SLICE_MB of new documents through the sync
#     trigger in one session, and SLICE_MB through the async queue with two workers; and first,
#     SAME_MB of documents through the sync trigger into an empty store, then by the bulk load;
#   - disk bytes per chunk of each relation;
#   - hybrid, text and vector latency (p50, p95, p99) and queries per second with 1 and 8 pgbench
#     clients, DURATION seconds each, 100 questions, k = 10;
#   - the vector leg's recall@10 against exact cosine, the text leg against exhaustive BM25
#     (bench/store/text_exact.sql), a backend's peak memory while searching;
#   - 10% of the documents edited, then VACUUM's time.
# The corpus: the HTML pages of the Debian documentation packages pinned in packages.tsv (versions
# and sha256), as text by corpus.py, one page a document in a shuffled order; the config is the
# default's cfg (semantic) with potion-base-8m. Writes $BUILD_DIR/bench-scale/scale.tsv and, with
# report.py, results/scale.md and results/scale.svg beside this script (RESULTS= only prints).
#
#   bash bench/scale/run.sh                       # SIZES="10000 100000" DURATION=10 for a quick run
#
# Needs what scripts/install.sh sets up; run as root. Creates (and drops first) the database
# pg_chunk_bench_scale, adds it to pg_chunk.worker_databases, and runs PostgreSQL (15 main) with
# pg_chunk.workers = 2 and shared_buffers = SHARED_BUFFERS (default 4GB) while it measures
# (restarting it, and again at the end to put the settings back).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

SIZES=${SIZES:-10000 100000 1000000}
SLICE_MB=${SLICE_MB:-2}
SAME_MB=${SAME_MB:-6}
DURATION=${DURATION:-15}
# As a server sized for its store is set (docs/scaling.md, "Sizing"): the chunks, their TOAST and
# indexes in shared buffers.
SHARED_BUFFERS=${SHARED_BUFFERS:-4GB}
OUT=$BUILD_DIR/bench-scale
DB=pg_chunk_bench_scale
HERE=bench/scale
PGBENCH=/usr/lib/postgresql/15/bin/pgbench
results=$OUT/scale.tsv
# Notices (inputs truncated to potion's window as cuts are placed, say) would flood the log.
sql() { PGOPTIONS='-c client_min_messages=warning' psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
record() { printf '%s\t%s\t%s\n' "$size" "$1" "$2" >>"$results"; }

step "scale benchmark: the corpus (packages.tsv)"
mkdir -p "$OUT/debs"
fetched=0
while IFS=$'\t' read -r package version sha; do
    [[ $package = \#* ]] && continue
    deb=$(compgen -G "$OUT/debs/${package}_*.deb" | head -n1 || true)
    if [ -z "$deb" ] || [ "$(sha256sum "$deb" | cut -d' ' -f1)" != "$sha" ]; then
        rm -f "$OUT/debs/${package}"_*.deb
        (cd "$OUT/debs" && apt-get download "$package=$version") ||
            { echo "$package $version cannot be downloaded: pin an available version and its sha256 in $HERE/packages.tsv" >&2; exit 1; }
        deb=$(compgen -G "$OUT/debs/${package}_*.deb" | head -n1)
        [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sha" ] || { echo "$deb: sha256 is not $sha ($HERE/packages.tsv)" >&2; exit 1; }
        fetched=1
    fi
done <$HERE/packages.tsv
if ((fetched)) || [ ! -s "$OUT/docs.csv" ] || [ $HERE/corpus.py -nt "$OUT/docs.csv" ] || [ $HERE/packages.tsv -nt "$OUT/docs.csv" ]; then
    rm -rf "$OUT/unpacked" && mkdir "$OUT/unpacked"
    for deb in "$OUT"/debs/*.deb; do dpkg-deb -x "$deb" "$OUT/unpacked"; done
    say "$(python3 $HERE/corpus.py "$OUT/unpacked" "$OUT/docs.tmp")" && mv "$OUT/docs.tmp" "$OUT/docs.csv"
    rm -rf "$OUT/unpacked"
fi
chmod 644 "$OUT/docs.csv"

step "scale benchmark: database $DB, pg_chunk.workers = 2, shared_buffers = $SHARED_BUFFERS"
configure_workers "$DB"
original_workers=$(psql -X -qAt -d postgres -c "SHOW pg_chunk.workers")
original_buffers=$(psql -X -qAt -d postgres -c "SHOW shared_buffers")
put_back() {
    psql -X -q -d postgres -c "ALTER SYSTEM SET pg_chunk.workers = $original_workers" -c "ALTER SYSTEM SET shared_buffers = '$original_buffers'" &&
        restart_cluster
}
trap put_back EXIT
psql -X -q -d postgres -c "ALTER SYSTEM SET pg_chunk.workers = 2" -c "ALTER SYSTEM SET shared_buffers = '$SHARED_BUFFERS'"
restart_cluster
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
sql <<SQL
SET client_min_messages = warning;
CREATE EXTENSION pg_chunk CASCADE;
CREATE TABLE bench_pages (source text PRIMARY KEY, body text NOT NULL);
\copy bench_pages FROM '$OUT/docs.csv' WITH (FORMAT csv)
-- The documents in a fixed shuffled order: each size holds some of every package.
CREATE TABLE bench_docs AS
SELECT row_number() OVER (ORDER BY md5(source)) AS n, body, octet_length(body) AS bytes FROM bench_pages;
ALTER TABLE bench_docs ADD PRIMARY KEY (n);
DROP TABLE bench_pages;
UPDATE knowledge.chunk_configs SET active = false WHERE name = 'default';
INSERT INTO knowledge.chunk_configs (name, model, description)
VALUES ('scale', 'potion-base-8m', 'the default cfg with potion-base-8m');
-- A bulk load's batches: documents n in (first, last], m of k sessions.
CREATE PROCEDURE bench_insert(first bigint, last bigint, m int, k int) LANGUAGE plpgsql AS \$\$
BEGIN
    FOR batch IN first .. last - 1 BY 100 LOOP
        INSERT INTO knowledge.documents (content, chunk_config)
        SELECT body, 'scale' FROM bench_docs WHERE n > batch AND n <= least(batch + 100, last) AND n % k = m;
        COMMIT;
    END LOOP;
END
\$\$;
SQL
for _ in $(seq 150); do [ "$(sql -c 'SELECT workers FROM knowledge.queue_status')" = 2 ] && break; sleep 0.2; done
[ "$(sql -c 'SELECT workers FROM knowledge.queue_status')" = 2 ] || { echo "$DB has not 2 workers" >&2; exit 1; }
total=$(sql -c 'SELECT count(*) FROM bench_docs')
say "$total documents, $(sql -c "SELECT round(sum(bytes) / 1e6, 1) FROM bench_docs") MB"

: >"$results"
loaded=0 # documents n <= loaded are in the store
# The last of the documents after `loaded` that hold $1 MB (the last one crossing it).
docs_for_mb() { sql -c "SELECT coalesce(max(n), $loaded) FROM (SELECT n, sum(bytes) OVER (ORDER BY n) - bytes AS before FROM bench_docs WHERE n > $loaded) AS d WHERE before < $1 * 1e6"; }
mb_between() { sql -c "SELECT round(coalesce(sum(bytes), 0) / 1e6, 3) FROM bench_docs WHERE n > $1 AND n <= $2"; }
chunks() { sql -c "SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'scale'"; }

# Documents (loaded, $1] through the sync trigger in one session; prints the seconds.
sync_insert() {
    local started
    started=$(now)
    sql -c "CALL bench_insert($loaded, $1, 0, 1)"
    since "$started"
}
# Documents (loaded, $1] by the bulk load: knowledge.begin_load, two sessions, knowledge.end_load.
# Records the seconds of each part under key prefix $2.
bulk_insert() {
    local started inserted
    started=$(now)
    sql -c "SELECT knowledge.begin_load('scale')" >/dev/null
    sql -c "CALL bench_insert($loaded, $1, 0, 2)" & local a=$!
    sql -c "CALL bench_insert($loaded, $1, 1, 2)" & local b=$!
    wait $a && wait $b
    record "${2}insert_s" "$(since "$started")"
    # Each index alone first, for its build time; knowledge.end_load then counts the statistics
    # (and finds the indexes built).
    inserted=$(now)
    sql -c "SET maintenance_work_mem = '4GB'" -c "SELECT knowledge_internal.create_vector_index(c) FROM knowledge.chunk_configs AS c WHERE c.name = 'scale'" >/dev/null
    record "${2}hnsw_build_s" "$(since "$inserted")"
    inserted=$(now)
    sql -c "SET maintenance_work_mem = '4GB'" -c "SELECT knowledge_internal.create_text_index('scale')" >/dev/null
    record "${2}gin_build_s" "$(since "$inserted")"
    inserted=$(now)
    sql -c "SET work_mem = '1GB'" -c "SELECT knowledge.end_load('scale')" >/dev/null
    record "${2}stats_s" "$(since "$inserted")"
    record "${2}s" "$(since "$started")"
}

# The same SAME_MB of documents through the sync trigger, then by the bulk load, each into an
# empty store (recorded under size 0).
size=0
upto=$(docs_for_mb "$SAME_MB")
record same_docs_mb "$(mb_between 0 "$upto")"
step "scale benchmark: the first $SAME_MB MB through the sync trigger, then by bulk load, each into an empty store"
empty_store() { sql -c "TRUNCATE knowledge.documents CASCADE" -c "TRUNCATE knowledge_internal.stored_vectors"; }
record same_docs_sync_s "$(sync_insert "$upto")"
empty_store
bulk_insert "$upto" same_docs_bulk_
empty_store
say "$(awk -F'\t' '$1 == 0 { v[$2] = $3 } END { printf "sync trigger %.1f s, bulk load %.1f s: %.2f ×", v["same_docs_sync_s"], v["same_docs_bulk_s"], v["same_docs_sync_s"] / v["same_docs_bulk_s"] }' "$results")"

first=1
slice_chunks=$(awk -v m="$SLICE_MB" 'BEGIN { printf "%d", 1520 * m }') # chunks a MB of this corpus makes (measured), for the slices
for size in $SIZES; do
    current=$(chunks)
    # Grow to about size − the two slices, at the chunks per byte seen so far.
    per_mb=$(sql -c "SELECT coalesce((SELECT count(*) FROM knowledge.chunks WHERE chunk_config = 'scale') / nullif(sum(bytes) / 1e6, 0), 1520) FROM bench_docs WHERE n <= $loaded")
    grow_mb=$(awk -v s="$size" -v c="$current" -v sl="$slice_chunks" -v p="$per_mb" 'BEGIN { g = (s - c - 2 * sl) / p; printf "%.3f", (g > 0 ? g : 0) }')
    upto=$(docs_for_mb "$grow_mb")
    last=0
    if ((upto + 1 >= total)); then
        # The corpus ends first: grow by all of it but the two slices' documents, and stop there.
        upto=$(sql -c "SELECT max(n) FROM (SELECT n, sum(bytes) OVER (ORDER BY n DESC) AS after FROM bench_docs) AS d WHERE after > 2.2 * $SLICE_MB * 1e6")
        last=1
        say "the corpus ends before $size chunks: its largest store instead"
    fi
    mb=$(mb_between "$loaded" "$upto")
    step "scale benchmark: $size chunks: $((upto - loaded)) documents, $mb MB, by bulk load"
    bulk_insert "$upto" bulk_
    record bulk_mb "$mb"
    loaded=$upto
    upto=$(docs_for_mb "$SLICE_MB")
    record sync_mb "$(mb_between "$loaded" "$upto")"
    record sync_s "$(sync_insert "$upto")"
    loaded=$upto
    upto=$(docs_for_mb "$SLICE_MB")
    record async_mb "$(mb_between "$loaded" "$upto")"
    sql -c "UPDATE knowledge.chunk_configs SET mode = 'async' WHERE name = 'scale'"
    started=$(now)
    sql -c "CALL bench_insert($loaded, $upto, 0, 1)"
    [ "$(sql -c "SELECT knowledge.wait_for_queue('60 min')")" = t ] || { echo "the queue did not drain" >&2; exit 1; }
    record async_s "$(since "$started")"
    sql -c "UPDATE knowledge.chunk_configs SET mode = 'sync' WHERE name = 'scale'"
    loaded=$upto
    # Chunks per MB vary through the corpus, so the growth can fall short of the size: the rest
    # through the sync trigger, untimed.
    while short=$((size - $(chunks))) && ((short > 0)); do
        upto=$(docs_for_mb "$(awk -v n="$short" -v p="$per_mb" 'BEGIN { printf "%.3f", 1.05 * n / p }')")
        ((upto > loaded)) || break
        sql -c "CALL bench_insert($loaded, $upto, 0, 1)"
        loaded=$upto
    done
    sql -c "VACUUM ANALYZE knowledge.documents, knowledge.chunks"
    record chunks "$(chunks)"
    record documents "$loaded"
    record mb "$(mb_between 0 "$loaded")"
    say "$(chunks) chunks; ingestion MB/s: $(awk -F'\t' -v s="$size" '$1 == s { v[$2] = $3 } END { printf "sync %.2f, async %.2f", v["sync_mb"] / v["sync_s"], v["async_mb"] / v["async_s"] }' "$results")"

    if ((first)); then
        # 100 questions: the first 80 characters of sentences of the first documents, cut at a word.
        sql <<'SQL'
CREATE TABLE bench_queries AS
SELECT row_number() OVER () AS i, regexp_replace(left(content, 80), '\s+\S*$', '') AS query
FROM (SELECT s.content, row_number() OVER (ORDER BY d.id, s.sentence_index) AS n
      FROM (SELECT id, content FROM knowledge.documents ORDER BY id LIMIT 400) AS d, knowledge.split_sentences(d.content) AS s
      WHERE length(s.content) > 60 AND s.content ~ '[a-z]{4,} [a-z]{4,}') AS sentences
WHERE n % 37 = 0 LIMIT 100;
SQL
        first=0
    fi

    step "scale benchmark: $size chunks: disk, recall, memory"
    sql -f $HERE/measure.sql | sed "s/^/$size\t/" >>"$results"
    step "scale benchmark: $size chunks: latency"
    for mode in hybrid text vector; do
        echo "\\set i random(1, 100)
SELECT count(*) FROM knowledge.search((SELECT query FROM bench_queries WHERE i = :i), 10, '{\"mode\": \"$mode\", \"config\": \"scale\"}');" >"$OUT/$mode.sql"
        for clients in 1 8; do
            rm -f "$OUT"/pgbench_log.*
            (cd "$OUT" && "$PGBENCH" -n -c "$clients" -j 2 -T "$DURATION" -f "$mode.sql" --log --log-prefix=pgbench_log "$DB" >/dev/null)
            cat "$OUT"/pgbench_log.* | sort -n -k3 | awk -v m="$mode" -v c="$clients" -v d="$DURATION" -v s="$size" '
                { l[NR] = $3 / 1000 }
                END { printf "%s\t%s_%s_p50\t%.2f\n%s\t%s_%s_p95\t%.2f\n%s\t%s_%s_p99\t%.2f\n%s\t%s_%s_qps\t%.1f\n",
                      s, m, c, l[int(NR * 0.5) + 1], s, m, c, l[int(NR * 0.95) + 1], s, m, c, l[int(NR * 0.99) + 1], s, m, c, NR / d }' >>"$results"
            say "$mode, $clients client(s): $(awk -F'\t' -v s="$size" -v k="${mode}_${clients}_" '$1 == s && index($2, k) == 1 { printf "%s %s  ", substr($2, length(k) + 1), $3 }' "$results")"
        done
    done
    step "scale benchmark: $size chunks: the text leg against exhaustive BM25"
    sql -v config=scale -f bench/store/text_exact.sql | awk -F'\t' -v s="$size" '
        { w = $1; gsub(/ /, "_", w); printf "%s\ttext_%s_p50\t%s\n%s\ttext_%s_p95\t%s\n%s\ttext_%s_share\t%s\n%s\ttext_%s_exact\t%s\n", s, w, $2, s, w, $3, s, w, $5, s, w, $6 }' >>"$results"
    step "scale benchmark: $size chunks: 10% of the documents edited, then VACUUM"
    started=$(now)
    sql -c "SET client_min_messages = warning" -c "UPDATE knowledge.documents SET content = content || E'\n\nEdited for the scale benchmark.' WHERE id % 10 = 0"
    record edit_s "$(since "$started")"
    started=$(now)
    sql -c "VACUUM knowledge.documents, knowledge.chunks"
    record vacuum_s "$(since "$started")"
    say "edit $(awk -F'\t' -v s="$size" '$1 == s && $2 == "edit_s" { print $3 }' "$results") s, VACUUM $(awk -F'\t' -v s="$size" '$1 == s && $2 == "vacuum_s" { print $3 }' "$results") s"
    ((last)) && break
done

RESULTS=${RESULTS-bench/scale/results}
step "scale benchmark: results"
args=("$results" "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(cpu_description)), $(psql -X -At -d "$DB" -c "SELECT 'PostgreSQL ' || current_setting('server_version')")")
if [ -n "$RESULTS" ]; then
    mkdir -p "$RESULTS"
    cp "$results" "$RESULTS/scale.tsv"
    python3 $HERE/report.py "${args[@]}" "$RESULTS/scale.svg" | tee "$RESULTS/scale.md"
else
    python3 $HERE/report.py "${args[@]}"
fi
