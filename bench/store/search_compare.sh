#!/usr/bin/env bash
# knowledge.search against an earlier definition of it, side by side in one database: every
# question asked in several ways (modes, fusions, filters, options) must return identical rows
# (chunk ids, ranks, scores and similarities to the last bit of their float8s, content, flags) from
# both, compared with EXCEPT ALL in both directions; then both are timed on the same searches,
# interleaved (which one runs first alternates), and the medians and 95th percentiles printed.
#
#   bash bench/retrieval/run.sh            # once: the corpus, its chunks and the questions
#   bash bench/store/search_compare.sh
#
# DB (default pg_chunk_bench_retrieval) needs knowledge.chunks filled and the table bench_queries
# (set, query, text) that bench/retrieval/search.sql leaves; CONFIG (default "default") is the
# chunk config searched. OLD (default f0d8af5, the last commit whose knowledge.search took its 17
# values as positional parameters) is the commit whose sql/search.sql is loaded as
# knowledge_old.search. K (default 10) results per search; ROUNDS (default 1) timing passes.
# The embedding cache is on and every question embedded before the clock starts, so the times are
# the searches' own. Fails if any search differs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

DB=${DB:-pg_chunk_bench_retrieval}
CONFIG=${CONFIG:-default}
OLD=${OLD:-f0d8af5}
K=${K:-10}
ROUNDS=${ROUNDS:-1}
sql() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

step "search_compare: knowledge_old.search from $OLD:sql/search.sql"
sql -c 'SET client_min_messages = warning' -c 'DROP SCHEMA IF EXISTS knowledge_old CASCADE' -c 'CREATE SCHEMA knowledge_old'
git show "$OLD:sql/search.sql" |
    sed 's/FUNCTION knowledge\.search(/FUNCTION knowledge_old.search(/; s/knowledge_internal\.number_option/knowledge_old.number_option/g' |
    sql
# As src/sql/search_path.sql pins every function of the extension's.
sql <<'SQL'
DO $$
DECLARE
    vector_schema name := (SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace
                           WHERE e.extname = 'vector');
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_proc AS p WHERE p.pronamespace = 'knowledge_old'::regnamespace LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, vector_schema);
    END LOOP;
END
$$;
SQL
say "$(sql -At -c "SELECT count(*) || ' questions, ' || (SELECT count(*) FROM knowledge.chunks WHERE chunk_config = '$CONFIG') || ' chunks of config $CONFIG' FROM bench_queries")"

step "search_compare: equal rows, then timings (k = $K, $ROUNDS rounds)"
sql -v config="$CONFIG" -v k="$K" -v rounds="$ROUNDS" -f bench/store/search_compare.sql
