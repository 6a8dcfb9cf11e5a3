"""Pseudo-relevance feedback on the text leg (query expansion, RM3-like), measured offline on
bench/retrieval's chunks, queries and scoring: the question plus the T lexemes that weigh most in
the first m chunks of a first search (the text leg's, or the hybrid search's), each lexeme
weighted by Σ over those chunks of its share of the chunk's lexemes times its IDF among the set's
chunks of the config, the question's own lexemes left out. The expanded text goes through
knowledge.search's text leg (BM25, OR over lexemes) and is fused by reciprocal rank with the
unchanged vector leg (exact cosine over the stored vectors, top 20), as knowledge.search fuses.
Prints, per set and config, text and hybrid recall % at k = 5 without expansion and with each
(first search, m, T), with the mean paired difference ± the half width of its 95% interval;
also to OUT/expansion.md.

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/expansion.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS). Not built into knowledge.search:
bench/README.md ("Decisions").
"""

import csv
import math
import re
from collections import Counter

from levers import CACHE, CONFIGS, K, against_first, csv_lines, nearest, offline, psql, report, set_vectors, \
    table, text_hits
from rankings import rrf
from score import score

EXPANSIONS = [("text", 3, 5), ("text", 3, 10), ("hybrid", 3, 5), ("hybrid", 1, 5)]  # (first search, m, T)
LEXEME = re.compile(r"'((?:[^']|'')*)'(?::([\d,A-D]+))?")


def lexemes(tsvector):
    """tsvector text → {lexeme: occurrences} (a lexeme without positions counts once)."""
    return {m.group(1).replace("''", "'"): len(m.group(2).split(",")) if m.group(2) else 1
            for m in LEXEME.finditer(tsvector)}


def chunk_lexemes(config):
    path = CACHE / f"tsv-{config}.csv"
    if not path.exists():
        path.write_text(psql(f"COPY (SELECT id, tsv::text FROM knowledge.chunks WHERE chunk_config = '{config}' "
                             "ORDER BY id) TO STDOUT WITH (FORMAT csv);"), encoding="utf-8")
    with open(path, newline="", encoding="utf-8") as f:
        return {int(cid): lexemes(tsv) for cid, tsv in csv.reader(f)}


def query_lexemes(queries):
    path = CACHE / "tsv-queries.csv"
    if not path.exists():
        path.write_text(psql(
            "CREATE TEMP TABLE expansion_queries (n int, text text);\n"
            "COPY expansion_queries FROM STDIN WITH (FORMAT csv);\n"
            + csv_lines((n, text) for n, (_, _, text) in enumerate(queries))
            + "COPY (SELECT n, to_tsvector('english', text)::text FROM expansion_queries ORDER BY n) "
            "TO STDOUT WITH (FORMAT csv);\n"), encoding="utf-8")
    with open(path, newline="", encoding="utf-8") as f:
        return [set(lexemes(tsv)) for _, tsv in csv.reader(f)]


def main():
    sets, answers, chunks, queries, query_vectors, row_of, where = offline()
    own = query_lexemes(queries)
    rows = []
    for config in CONFIGS:
        hits = text_hits(config, queries)
        by_set = set_vectors(config, chunks)
        bags = chunk_lexemes(config)
        vector_top = {(s, q): nearest(*by_set[s], query_vectors[row_of[s, q]]) for s, q, _ in queries}
        first = {"text": hits, "hybrid": {key: rrf(vector_top[key], hits[key]) for key in vector_top}}
        weights = {}
        for set_ in sets:
            in_set = [c[0] for c in chunks[config] if c[1] == set_]
            df = Counter(lexeme for cid in in_set for lexeme in bags[cid])
            weights[set_] = {lexeme: math.log(len(in_set) / n) for lexeme, n in df.items()}
        variants = {"none": hits}
        for search, m, t in EXPANSIONS:
            expanded = {}
            for s, q, text in queries:
                mass = Counter()
                for cid in first[search][s, q][:m]:
                    length = sum(bags[cid].values())
                    for lexeme, count in bags[cid].items():
                        mass[lexeme] += count / length * weights[s][lexeme]
                extra = [lx for lx, _ in sorted(mass.items(), key=lambda item: (-item[1], item[0]))
                         if lx not in own[row_of[s, q]]][:t]
                expanded[s, q] = text + " " + " ".join(extra)
            variants[f"{search}, m {m}, T {t}"] = text_hits(
                config, [(s, q, expanded[s, q]) for s, q, _ in queries], label=f"{search}-{m}-{t}")
        for set_ in sets:
            keys = [(s, q) for s, q, _ in queries if s == set_]

            def recalls(ranked):
                return [score(answers[key], [where[c] for c in ranked[key][:K]])[0] for key in keys]

            for leg in ("text", "hybrid"):
                cells = against_first([recalls(text_top if leg == "text" else {
                    key: rrf(vector_top[key], text_top[key]) for key in keys}) for text_top in variants.values()])
                rows.append(f"| {set_} | {config} | {leg} | " + " | ".join(cells) + " |")
    labels = ["none"] + [f"{search}, m {m}, T {t}" for search, m, t in EXPANSIONS]
    report("expansion.md", [
        "# Expansion of the text leg's query, offline (bench/retrieval/levers/expansion.py)\n",
        f"Recall % at k = {K}; in brackets the mean paired difference from no expansion ± the half width of "
        "its 95% interval; T lexemes from the first m chunks of the first search.\n",
        *table(["set", "config", "leg", *labels], rows)])


if __name__ == "__main__":
    main()
