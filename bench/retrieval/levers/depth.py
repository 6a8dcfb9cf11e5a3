"""How many candidates each leg gives the fusion, measured offline on bench/retrieval's chunks,
queries and scoring: knowledge.search fuses each leg's top 4k = 20 by reciprocal rank; a chunk
ranked a little below that in both legs gets nothing from either. Here each leg gives its top
20, 50 or 100 (the vector leg exact over the stored vectors, the text leg knowledge.search's text
mode with that k) to the same fusion, Σ 1/(60 + rank), top 5 scored. Prints hybrid recall % per
set and config, with the mean paired difference from 20 ± the half width of its 95% interval;
also to OUT/depth.md.

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/depth.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS). Not built into knowledge.search:
bench/README.md ("Decisions").
"""

from levers import CANDIDATES, CONFIGS, K, against_first, nearest, offline, report, set_vectors, table, text_hits
from rankings import rrf
from score import score

DEPTHS = [CANDIDATES, 50, 100]


def main():
    sets, answers, chunks, queries, query_vectors, row_of, where = offline()
    rows = []
    for config in CONFIGS:
        by_set = set_vectors(config, chunks)
        deep = text_hits(config, queries, depth=DEPTHS[-1])
        for set_ in sets:
            keys = [(s, q) for s, q, _ in queries if s == set_]
            vector_top = {key: nearest(*by_set[set_], query_vectors[row_of[key]], DEPTHS[-1]) for key in keys}
            cells = against_first([
                [score(answers[key], [where[c] for c in rrf(vector_top[key][:d], deep[key][:d])[:K]])[0] for key in keys]
                for d in DEPTHS])
            rows.append(f"| {set_} | {config} | " + " | ".join(cells) + " |")
    report("depth.md", ["# Candidates per leg for the fusion, offline (bench/retrieval/levers/depth.py)\n",
                        f"Hybrid recall % at k = {K}; in brackets the mean paired difference from {CANDIDATES} "
                        "candidates ± the half width of its 95% interval.\n",
                        *table(["set", "config", *(f"{d} per leg" for d in DEPTHS)], rows)])


if __name__ == "__main__":
    main()
