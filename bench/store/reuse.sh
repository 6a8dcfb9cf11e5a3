#!/usr/bin/env bash
# Reuse benchmark: what knowledge_internal.stored_vectors saves the store's writes. Prints
# markdown tables.
#
#   bash bench/store/reuse.sh
#
# Needs what scripts/install.sh sets up; run as root. Creates (and drops first) the database
# pg_chunk_bench_reuse. Documents: PostgreSQL's SQL reference pages (man section 7) as
# bench/embeddings/man_text.py writes them, cut into paragraphs (the text between blank lines).
# Default config (semantic chunking, all-minilm-l6-v2), default settings but for
# pg_chunk.embedding_cache_mb = 0 in the measured sessions, so only stored vectors are reused.
# Both workloads run with stored vectors on (pg_chunk.stored_vectors_mb at its default) and off
# (0: every text embedded, as before vectors were stored), each from an empty store, the order of the two
# alternating between rounds. Every session warms up first (model loaded, its file hashed, one
# sentence written through the store), see reuse.sql.
#
# A, a one-paragraph edit of a 50 KB document (ROUNDS, default 5): the pages' paragraphs in page
#   order up to the paragraph boundary nearest DOC_CHARS (default 51200) characters; one session
#   inserts it, a second one replaces its paragraph nearest the middle (of those of at least
#   MIN_EDIT, default 150, characters: a prose paragraph, not an option's name) with the paragraph
#   closest in length from a page that is not in the document.
# C, A's edit through the queue (ROUNDS): the default config in async mode, each session's
#   statement queues the document and the clock includes knowledge.process_queue(), the function
#   the background workers run, in the same session (so the same settings apply to it).
# B, a corpus with duplicated paragraphs (CORPUS_ROUNDS, default 2): DOCS (default 30) documents
#   of PARAGRAPHS (default 60) paragraphs each, made of the pages' distinct paragraphs of at least
#   100 characters: each document's own ones, in page order, mixed evenly with some of a pool of
#   POOL (default 40) boilerplate paragraphs, so that DUPLICATE_PERCENT (default 30) percent of
#   the corpus' paragraphs are copies of one occurring elsewhere in it. One document per
#   transaction, a new session for every 5 documents.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

ROUNDS=${ROUNDS:-5}
DOC_CHARS=${DOC_CHARS:-51200}
MIN_EDIT=${MIN_EDIT:-150}
CORPUS_ROUNDS=${CORPUS_ROUNDS:-2}
DOCS=${DOCS:-30}
PARAGRAPHS=${PARAGRAPHS:-60}
POOL=${POOL:-40}
DUPLICATE_PERCENT=${DUPLICATE_PERCENT:-30}
SESSION_DOCS=5
OUT=$BUILD_DIR/bench-reuse
DB=pg_chunk_bench_reuse
HERE=bench/store
results=$OUT/reuse.tsv

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
empty_store() { sql -c 'SET client_min_messages = warning' -c 'TRUNCATE knowledge.documents CASCADE' \
                    -c 'TRUNCATE knowledge_internal.stored_vectors' -c 'TRUNCATE knowledge.embedding_writes'; }
# One reuse.sql session: its "key value" rows as "round workload setting statement key value".
session() {
    local round=$1 workload=$2 setting=$3 statement=$4
    shift 4
    sql -v setting="$setting" -v statement="$statement" "$@" -f $HERE/reuse.sql |
        sed "s/ /\t/; s/^/$round\t$workload\t$setting\t$statement\t/" >>"$results"
}
# The value of one key: summed over the matching rows of $results (a statement of '' matches all).
value() {
    awk -F'\t' -v r="$1" -v w="$2" -v s="$3" -v t="$4" -v k="$5" \
        '$1 == r && $2 == w && $3 == s && (t == "" || $4 == t) && $5 == k { v += $6 } END { print v + 0 }' "$results"
}

started=$SECONDS
step "reuse benchmark: database $DB and documents"
mkdir -p "$OUT"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
sql -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION pg_chunk CASCADE'
python3 bench/embeddings/man_text.py --out "$OUT/man7.csv"
sql -v doc_chars="$DOC_CHARS" -v min_edit="$MIN_EDIT" <<SQL
CREATE TABLE bench_pages (page text PRIMARY KEY, body text NOT NULL);
\\copy bench_pages FROM '$OUT/man7.csv' WITH (FORMAT csv)
-- Every paragraph, numbered in page order.
CREATE TABLE bench_paragraphs AS
SELECT row_number() OVER (ORDER BY p.page, x.n) AS i, p.page, x.paragraph, length(x.paragraph) AS len
FROM bench_pages AS p, regexp_split_to_table(p.body, E'\n\n') WITH ORDINALITY AS x(paragraph, n);

-- A: the document's paragraphs, where each starts in it, the edited one and its replacement.
CREATE TABLE bench_doc_paragraphs AS
WITH placed AS (SELECT *, sum(len + 2) OVER (ORDER BY i) - 2 AS ends FROM bench_paragraphs)
SELECT i, page, paragraph, len, ends - len AS starts FROM placed
WHERE i <= (SELECT i FROM placed ORDER BY abs(ends - :doc_chars), i LIMIT 1);
CREATE TABLE bench_edit AS
SELECT e.i AS edited, r.i AS replacement
FROM (SELECT i, len FROM bench_doc_paragraphs WHERE len >= :min_edit
      ORDER BY abs(starts + len / 2.0 - (SELECT max(starts + len) FROM bench_doc_paragraphs) / 2.0), i LIMIT 1) AS e
CROSS JOIN LATERAL (SELECT i FROM bench_paragraphs AS p
                    WHERE p.page NOT IN (SELECT page FROM bench_doc_paragraphs)
                      AND p.paragraph NOT IN (SELECT paragraph FROM bench_doc_paragraphs)
                    ORDER BY abs(p.len - e.len), p.i LIMIT 1) AS r;
CREATE TABLE bench_docs (name text PRIMARY KEY, content text NOT NULL);
INSERT INTO bench_docs
SELECT 'original', string_agg(paragraph, E'\n\n' ORDER BY i) FROM bench_doc_paragraphs
UNION ALL
SELECT 'edited', string_agg(CASE WHEN d.i = e.edited THEN r.paragraph ELSE d.paragraph END, E'\n\n' ORDER BY d.i)
FROM bench_doc_paragraphs AS d, bench_edit AS e, bench_paragraphs AS r WHERE r.i = e.replacement;
SQL
say "$(sql -c "SELECT count(*) || ' pages, ' || pg_size_pretty(sum(octet_length(body))) || ', ' || (SELECT count(*) FROM bench_paragraphs) || ' paragraphs' FROM bench_pages")"
sql -F ' ' >"$OUT/document.txt" <<'SQL'
SELECT 'document', length(content), octet_length(content), (SELECT count(*) FROM bench_doc_paragraphs),
       (SELECT count(DISTINCT page) FROM bench_doc_paragraphs), (SELECT count(*) FROM knowledge.split_sentences(content))
FROM bench_docs WHERE name = 'original';
SELECT 'edit', e.page, e.len, r.page, r.len,
       (SELECT count(*) FROM knowledge.split_sentences(e.paragraph)), (SELECT count(*) FROM knowledge.split_sentences(r.paragraph)),
       (SELECT count(*) FROM knowledge.split_sentences((SELECT content FROM bench_docs WHERE name = 'edited')) AS s
        WHERE s.content NOT IN (SELECT content FROM knowledge.split_sentences((SELECT content FROM bench_docs WHERE name = 'original'))))
FROM bench_edit AS x JOIN bench_paragraphs AS e ON e.i = x.edited JOIN bench_paragraphs AS r ON r.i = x.replacement;
SQL
read -r _ doc_chars doc_bytes doc_paragraphs doc_pages doc_sentences < <(grep '^document ' "$OUT/document.txt")
read -r _ edit_page edit_len repl_page repl_len edit_sentences repl_sentences new_sentences < <(grep '^edit ' "$OUT/document.txt")
say "A: $doc_chars characters ($doc_bytes bytes), $doc_paragraphs paragraphs of $doc_pages pages, $doc_sentences sentences"
say "A: the edit replaces a $edit_len-character paragraph of $edit_page ($edit_sentences sentences) with a $repl_len-character one of $repl_page ($repl_sentences sentences, $new_sentences sentences new to the document)"

# B: DOCS documents of PARAGRAPHS paragraphs; duplicates = DUPLICATE_PERCENT % of them, made by
# boilerplate slots = duplicates + POOL, the slot s (numbered across the documents) holding pool
# paragraph s mod POOL, so each pool paragraph occurs at least once and the distinct paragraphs
# are the own ones and the pool: exactly the duplicates fewer than all.
total=$((DOCS * PARAGRAPHS))
duplicates=$(((total * DUPLICATE_PERCENT + 50) / 100))
slots=$((duplicates + POOL))
most_slots=$(((slots + DOCS - 1) / DOCS))
if ((most_slots > POOL || most_slots > PARAGRAPHS)); then
    echo "B: $most_slots boilerplate paragraphs in a document, more than POOL ($POOL) or PARAGRAPHS ($PARAGRAPHS): raise POOL" >&2
    exit 1
fi
sql -v docs="$DOCS" -v paragraphs="$PARAGRAPHS" -v pool="$POOL" -v slots="$slots" <<'SQL'
-- The distinct paragraphs of at least 100 characters, by first occurrence; the pool is spread
-- evenly over them, the other ones are the documents' own.
CREATE TABLE bench_distinct AS
SELECT row_number() OVER (ORDER BY min(i)) AS j, paragraph FROM bench_paragraphs WHERE len >= 100 GROUP BY paragraph;
SELECT count(*) AS distinct_paragraphs FROM bench_distinct \gset
CREATE TABLE bench_pool AS
SELECT row_number() OVER (ORDER BY j) - 1 AS member, paragraph FROM bench_distinct
WHERE j IN (SELECT ceil(k * :distinct_paragraphs / (:pool + 1.0)) FROM generate_series(1, :pool) AS k);
CREATE TABLE bench_own AS
SELECT row_number() OVER (ORDER BY j) AS k, paragraph FROM bench_distinct WHERE paragraph NOT IN (SELECT paragraph FROM bench_pool);
-- Per document: its boilerplate paragraphs (b) and the slots and own paragraphs before it.
CREATE TABLE bench_layout AS
SELECT doc, b, :paragraphs - b AS own, sum(b) OVER (ORDER BY doc) - b AS slots_before,
       sum(:paragraphs - b) OVER (ORDER BY doc) - (:paragraphs - b) AS own_before
FROM (SELECT doc, :slots / :docs + (doc <= :slots % :docs)::int AS b FROM generate_series(1, :docs) AS doc) AS x;
SELECT sum(own) > (SELECT count(*) FROM bench_own) AS too_few FROM bench_layout \gset
\if :too_few
DO $$ BEGIN RAISE EXCEPTION 'B: too few distinct paragraphs of 100 characters or more for DOCS x PARAGRAPHS'; END $$;
\endif
-- Own paragraph k of a document at (k - 0.5) / own, boilerplate one k at (k - 0.5) / b.
CREATE TABLE bench_corpus AS
SELECT l.doc, string_agg(x.paragraph, E'\n\n' ORDER BY x.place, x.kind) AS content
FROM bench_layout AS l
CROSS JOIN LATERAL (
    SELECT (g.n - 0.5) / l.own AS place, 0 AS kind, o.paragraph
    FROM generate_series(1, l.own) AS g(n) JOIN bench_own AS o ON o.k = l.own_before + g.n
    UNION ALL
    SELECT (g.n - 0.5) / l.b, 1, p.paragraph
    FROM generate_series(1, l.b) AS g(n) JOIN bench_pool AS p ON p.member = (l.slots_before + g.n - 1) % :pool
) AS x
GROUP BY l.doc;
SQL
# What the corpus holds, counted from its documents: paragraphs and distinct paragraphs (and their
# characters), sentences and distinct sentences.
sql -F ' ' >"$OUT/corpus.txt" <<'SQL'
WITH p AS (SELECT x.paragraph, count(*) AS n FROM bench_corpus, regexp_split_to_table(content, E'\n\n') AS x(paragraph) GROUP BY x.paragraph),
     s AS (SELECT x.content, count(*) AS n FROM bench_corpus, knowledge.split_sentences(bench_corpus.content) AS x GROUP BY x.content)
SELECT (SELECT count(*) FROM bench_corpus), (SELECT sum(octet_length(content)) FROM bench_corpus),
       (SELECT sum(n) FROM p), (SELECT count(*) FROM p),
       (SELECT sum(n * length(paragraph)) FROM p), (SELECT sum(length(paragraph)) FROM p),
       (SELECT sum(n) FROM s), (SELECT count(*) FROM s);
SQL
read -r corpus_docs corpus_bytes corpus_paragraphs corpus_distinct corpus_chars corpus_distinct_chars corpus_sentences corpus_distinct_sentences <"$OUT/corpus.txt"
say "$(awk -v d="$corpus_docs" -v b="$corpus_bytes" -v p="$corpus_paragraphs" -v u="$corpus_distinct" -v c="$corpus_chars" -v uc="$corpus_distinct_chars" -v s="$corpus_sentences" -v us="$corpus_distinct_sentences" -v pool="$POOL" 'BEGIN {
    printf "B: %d documents, %.2f MB; %d paragraphs, %d distinct (pool of %d): %.1f%% are copies (%.1f%% of the characters); %d sentences, %d distinct: %.1f%% are copies",
        d, b / 1e6, p, u, pool, 100 * (p - u) / p, 100 * (c - uc) / c, s, us, 100 * (s - us) / s }')"

: >"$results"
step "reuse benchmark: A, one-paragraph edit of a $((doc_chars / 1000)) KB document, $ROUNDS rounds"
for ((round = 1; round <= ROUNDS; round++)); do
    order=(on off)
    ((round % 2)) || order=(off on)
    for setting in "${order[@]}"; do
        empty_store
        session "$round" A "$setting" insert
        session "$round" A "$setting" edit
        say "round $round: stored vectors $setting: insert $(awk -F'\t' -v r="$round" -v s="$setting" '$1 == r && $2 == "A" && $3 == s && $4 == "insert" && $5 == "seconds" { printf "%.2f s", $6 }' "$results"), edit $(awk -F'\t' -v r="$round" -v s="$setting" '$1 == r && $2 == "A" && $3 == s && $4 == "edit" && $5 == "seconds" { printf "%.2f s", $6 }' "$results") ($(value "$round" A "$setting" edit vectors_embedded) vectors embedded, $(value "$round" A "$setting" edit vectors_reused) reused)"
    done
done

step "reuse benchmark: C, the same edit through the queue (async config), $ROUNDS rounds"
sql -c "SET client_min_messages = error" -c "UPDATE knowledge.chunk_configs SET mode = 'async' WHERE name = 'default'"
for ((round = 1; round <= ROUNDS; round++)); do
    order=(on off)
    ((round % 2)) || order=(off on)
    for setting in "${order[@]}"; do
        empty_store
        session "$round" C "$setting" insert -v drain=1
        session "$round" C "$setting" edit -v drain=1
        say "round $round: stored vectors $setting: queued insert drained in $(value "$round" C "$setting" insert seconds) s, edit in $(value "$round" C "$setting" edit seconds) s ($(value "$round" C "$setting" edit vectors_embedded) vectors embedded)"
    done
done
sql -c "UPDATE knowledge.chunk_configs SET mode = 'sync' WHERE name = 'default'"

step "reuse benchmark: B, $DOCS documents with $DUPLICATE_PERCENT% duplicated paragraphs, $CORPUS_ROUNDS rounds"
for ((round = 1; round <= CORPUS_ROUNDS; round++)); do
    order=(on off)
    ((round % 2)) || order=(off on)
    for setting in "${order[@]}"; do
        empty_store
        wall=$(date +%s.%N)
        for ((first = 1; first <= DOCS; first += SESSION_DOCS)); do
            session "$round" B "$setting" corpus -v first="$first" -v last=$((first + SESSION_DOCS - 1 < DOCS ? first + SESSION_DOCS - 1 : DOCS))
        done
        printf '%s\tB\t%s\ttotal\twall_seconds\t%s\n' "$round" "$setting" "$(awk -v a="$wall" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')" >>"$results"
        # The whole table's figures, and what it takes on disk.
        sql -F ' ' -c "SELECT (SELECT coalesce(sum(vectors_embedded), 0) FROM knowledge.embedding_writes), (SELECT count(*) FROM knowledge.documents),
                              (SELECT coalesce(sum(octet_length(content)), 0) FROM knowledge.documents), (SELECT count(*) FROM knowledge.chunks),
                              (SELECT count(DISTINCT content) FROM knowledge.chunks), (SELECT count(*) FROM knowledge_internal.stored_vectors),
                              pg_total_relation_size('knowledge_internal.stored_vectors')" |
            awk -v r="$round" -v s="$setting" '{ split("table_vectors_embedded stored_documents document_bytes chunks distinct_chunks stored_rows stored_bytes", k, " ")
                                                 for (i = 1; i <= 7; i++) printf "%s\tB\t%s\ttotal\t%s\t%s\n", r, s, k[i], $i }' >>"$results"
        say "round $round: stored vectors $setting: $(value "$round" B "$setting" corpus seconds | awk '{ printf "%.2f s", $1 }') in inserts, $(value "$round" B "$setting" total wall_seconds) s wall, $(value "$round" B "$setting" corpus vectors_embedded) vectors embedded, $(value "$round" B "$setting" corpus vectors_reused) reused"
    done
done

# What follows is also written to RESULTS/reuse.md (default bench/store/results, the latest run
# kept beside this script; RESULTS= only prints it).
RESULTS=${RESULTS-bench/store/results}
if [ -n "$RESULTS" ]; then mkdir -p "$RESULTS" && exec > >(tee "$RESULTS/reuse.md"); fi
step "reuse benchmark: results"
say "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(cpu_description)), $(psql -X -At -d "$DB" -c "SELECT 'PostgreSQL ' || current_setting('server_version')")"
say "A: $doc_chars characters, $doc_sentences sentences; the edit: a $edit_len-character paragraph ($edit_sentences sentences) of $edit_page replaced with $repl_len characters ($repl_sentences sentences) of $repl_page"
echo
# Medians over rounds; for figures that should not vary, the median with the range when they do.
awk_lib='
function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                   return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function lo(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
function hi(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
function fig(a, n,   m) { m = median(a, n); return lo(a, n) == hi(a, n) ? sprintf("%.10g", m) : sprintf("%.10g (%.10g–%.10g)", m, lo(a, n), hi(a, n)) }
function pick(a, w, s, t, k,   r, n) { n = 0; delete a; for (r = 1; r <= rounds; r++) if ((r, w, s, t, k) in v) a[++n] = v[r, w, s, t, k]; return n }
{ v[$1, $2, $3, $4, $5] += $6; if ($1 > rounds) rounds = $1 }'
echo "| workload | stored vectors | insert s (median) | edit s (median) | edit / insert (per round: median, range) | vectors embedded by the edit | vectors reused | chunks written / kept | document: chunks, vectors embedded by the insert |"
echo "|---|---|---|---|---|---|---|---|---|"
awk -F'\t' "$awk_lib"'
END {
    for (x = 1; x <= 2; x++) for (o = 1; o <= 2; o++) {
        w = x == 1 ? "A" : "C"; label = x == 1 ? "A, sync" : "C, through the queue"
        s = o == 1 ? "on" : "off"
        n = pick(ins, w, s, "insert", "seconds"); pick(ed, w, s, "edit", "seconds")
        if (n == 0) continue
        for (i = 1; i <= n; i++) ratio[i] = ed[i] / ins[i]
        pick(emb, w, s, "edit", "vectors_embedded"); pick(reu, w, s, "edit", "vectors_reused")
        pick(wr, w, s, "edit", "chunks_written"); pick(kept, w, s, "edit", "chunks_kept")
        pick(ch, w, s, "insert", "chunks"); pick(iemb, w, s, "insert", "vectors_embedded")
        printf "| %s | %s | %.2f | %.2f | %.3f (%.3f–%.3f, %d rounds) | %s | %s | %s / %s | %s, %s |\n", label, s, median(ins, n), median(ed, n),
            median(ratio, n), lo(ratio, n), hi(ratio, n), n, fig(emb, n), fig(reu, n), fig(wr, n), fig(kept, n), fig(ch, n), fig(iemb, n)
    }
}' "$results"
echo
awk -F'\t' "$awk_lib"'
END {
    n = pick(nc, "A", "on", "edit", "new_chunk_texts"); if (n == 0) exit
    printf "A, the edit with stored vectors on: %s chunks with a text no chunk had before the edit.\n", fig(nc, n)
    printf "The warm-up write of a one-sentence document, each session'"'"'s first write (median s):"
    for (o = 1; o <= 2; o++) for (t = 1; t <= 2; t++) {
        s = o == 1 ? "on" : "off"; st = t == 1 ? "insert" : "edit"
        m = pick(w, "A", s, st, "warm_write_seconds"); if (m) printf " %s, %s session %.3f;", s, st, median(w, m)
    }
    print ""
}' "$results"
echo
echo "| stored vectors | documents | MB | vectors embedded | on / off (vectors) | seconds in inserts (median) | on / off (seconds) | wall s with sessions (median) |"
echo "|---|---|---|---|---|---|---|---|"
awk -F'\t' "$awk_lib"'
function total(a, s, k,   r, n) { n = 0; delete a; for (r = 1; r <= rounds; r++) if ((r, "B", s, "corpus", k) in v) a[++n] = v[r, "B", s, "corpus", k]; return n }
END {
    if (total(on_v, "on", "vectors_embedded") == 0 || total(off_v, "off", "vectors_embedded") == 0) exit
    n = total(on_s, "on", "seconds"); total(off_s, "off", "seconds")
    docs = v[1, "B", "on", "total", "stored_documents"]; mb = v[1, "B", "on", "total", "document_bytes"] / 1e6
    for (o = 1; o <= 2; o++) {
        s = o == 1 ? "on" : "off"
        total(vec, s, "vectors_embedded"); total(sec, s, "seconds"); pick(wall, "B", s, "total", "wall_seconds")
        printf "| %s | %d | %.2f | %s | %s | %.2f | %s | %.2f |\n", s, docs, mb, fig(vec, n),
            s == "on" ? sprintf("%.3f", median(on_v, n) / median(off_v, n)) : "1", median(sec, n),
            s == "on" ? sprintf("%.3f", median(on_s, n) / median(off_s, n)) : "1", median(wall, n)
    }
}' "$results"
echo
awk -F'\t' "$awk_lib"'
END {
    n = pick(rows, "B", "on", "total", "stored_rows"); if (n == 0) exit
    pick(bytes, "B", "on", "total", "stored_bytes"); pick(docb, "B", "on", "total", "document_bytes")
    pick(ch, "B", "on", "total", "chunks"); pick(dch, "B", "on", "total", "distinct_chunks")
    printf "B, stored vectors on: knowledge_internal.stored_vectors %s rows, %s bytes (pg_total_relation_size): %.0f bytes a row, %.2f MB per MB of documents; %s chunks, %s distinct texts\n",
        fig(rows, n), fig(bytes, n), median(bytes, n) / median(rows, n), median(bytes, n) / median(docb, n), fig(ch, n), fig(dch, n)
}' "$results"
say "wall time $((SECONDS - started)) s; rows in $results"
