"""Pseudo-relevance feedback on the query vector (Rocchio), measured offline on bench/retrieval's
chunks, queries and scoring: the query vector plus beta times the mean of the vectors of the
hybrid search's first m chunks, normalised, searched again (exact cosine over the config's stored
vectors, top 20) and fused with the same text leg by reciprocal rank, as knowledge.search fuses.
Prints, per set and config, hybrid recall % at k = 5 without feedback and with each (m, beta),
with the mean paired difference ± the half width of its 95% interval; also to OUT/feedback.md.

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/feedback.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS). Not built into knowledge.search:
bench/README.md ("Decisions").
"""

import numpy as np

from levers import CONFIGS, K, against_first, nearest, offline, report, set_vectors, table, text_hits
from rankings import rrf
from score import score

FEEDBACK = [(m, beta) for m in (1, 3) for beta in (0.3, 0.7)]  # (chunks fed back, their weight)


def main():
    sets, answers, chunks, queries, query_vectors, row_of, where = offline()
    rows = []
    for config in CONFIGS:
        hits = text_hits(config, queries)
        by_set = set_vectors(config, chunks)
        for set_ in sets:
            ids, vectors = by_set[set_]
            row_in_set = {int(c): i for i, c in enumerate(ids)}
            set_queries = [(s, q) for s, q, _ in queries if s == set_]

            vector_of = {key: query_vectors[row_of[key]].astype(np.float64) for key in set_queries}
            hybrid = {key: rrf(nearest(ids, vectors, vector_of[key]), hits[key]) for key in set_queries}

            def recalls(ranked):
                return [score(answers[key], [where[c] for c in ranked(key)[:K]])[0] for key in set_queries]

            def again(key, m, beta):
                fed = vector_of[key] + beta * vectors[[row_in_set[c] for c in hybrid[key][:m]]].mean(0)
                return rrf(nearest(ids, vectors, fed / np.linalg.norm(fed)), hits[key])

            cells = against_first([recalls(hybrid.get)] + [
                recalls(lambda key, m=m, beta=beta: again(key, m, beta)) for m, beta in FEEDBACK])
            rows.append(f"| {set_} | {config} | " + " | ".join(cells) + " |")
    report("feedback.md", [
        "# Feedback on the query vector, offline (bench/retrieval/levers/feedback.py)\n",
        f"Hybrid recall % at k = {K}; in brackets the mean paired difference from no feedback ± the half "
        "width of its 95% interval; m chunks fed back with weight beta.\n",
        *table(["set", "config", "none", *(f"m {m}, beta {beta}" for m, beta in FEEDBACK)], rows)])


if __name__ == "__main__":
    main()
