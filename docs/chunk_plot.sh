#!/usr/bin/env bash
# Renders the figure of docs/sql.md, docs/chunk_plot.svg (beside this script): knowledge.chunk_plot of a short document on
# four topics, with the default model (all-MiniLM-L6-v2) and method. Needs the extension and its
# models installed (scripts/install.sh) and the 15 main cluster running; works in a scratch
# database that it creates and drops.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

db=pg_chunk_plot_example
out=docs/chunk_plot.svg
# Quiet the NOTICEs of DROP ... IF EXISTS and CREATE EXTENSION ... CASCADE.
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"

# Four paragraphs of five sentences, joined by single spaces so that only the meaning (not a
# blank line) tells where one topic ends.
doc="Honeybees live in colonies of tens of thousands of workers. \
A single queen lays all of the colony's eggs during the warm months. \
Worker bees gather nectar and pollen from flowers within a few kilometres of the hive. \
Back in the hive, nectar is fanned and evaporated until it becomes honey. \
In winter the bees cluster together and shiver their flight muscles to keep warm. \
PostgreSQL is an open source relational database system. \
It stores rows in tables and answers queries written in SQL. \
Indexes such as B-trees and GIN let the planner avoid scanning whole tables. \
Every change is written to the write-ahead log before it reaches the data files. \
Extensions add new data types, functions and index methods to the server. \
Volcanoes form where molten rock rises through cracks in the Earth's crust. \
Magma that reaches the surface is called lava. \
Explosive eruptions throw ash and pumice high into the atmosphere. \
Shield volcanoes like those in Hawaii grow slowly from runny basalt flows. \
Volcanic soils are rich in minerals and make fertile farmland. \
A good sourdough starts with a lively starter of flour and water. \
The dough is mixed, folded several times and left to rise overnight. \
Shaping the loaf builds tension in its surface. \
It bakes in a very hot covered pot so that steam keeps the crust soft at first. \
Once out of the oven the bread should cool for an hour before it is sliced."

step "chunk_plot in scratch database $db"
psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'rm -f "$out.partial"; psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db"' EXIT
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS pg_chunk CASCADE"

mkdir -p "$(dirname "$out")"
# inline_threshold 0: the document is under the 3,000 characters kept whole by default.
# psql expands :'doc' (quoted as a literal) in what it reads, not in -c, hence the here-strings.
psql -X -At -d "$db" -v ON_ERROR_STOP=1 -v doc="$doc" \
    <<<"SELECT knowledge.chunk_plot(:'doc', '{\"inline_threshold\": 0}')" >"$out.partial"
mv "$out.partial" "$out"
say "wrote $out ($(wc -c <"$out") bytes)"
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -v doc="$doc" <<<"SELECT sentence_index, round(score::numeric, 2) AS score, reason
    FROM knowledge.chunk_explain(:'doc', '{\"inline_threshold\": 0}') WHERE is_cut"
