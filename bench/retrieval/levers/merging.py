"""Merging adjacent hits (as LlamaIndex's auto-merging retriever does), measured offline on
bench/retrieval's chunks, queries and scoring: the ranked list (vector: exact cosine top 20 over
the stored vectors; hybrid: that fused with the text leg's top 20 by reciprocal rank) is walked
best first and a chunk next to one already taken (the chunk just before or after it in its
document) joins that result instead of taking one of the k = 5 places, so a result can be several
chunks long. Two ways to stop: at the first chunk that would need a sixth place ("until full"),
or only at the end of the list, adding every later neighbour of a taken chunk ("whole list").
Beside them, the plain top 5 and top 6 (one chunk more, for the same extra text). Prints recall %,
IoU % and characters returned per set, config and leg (score.py's); also to OUT/merging.md.

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/merging.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS). Not built into knowledge.search:
bench/README.md ("Decisions").
"""

import numpy as np

from levers import CONFIGS, K, nearest, offline, report, set_vectors, table, text_hits
from neighbours import neighbours_of
from rankings import rrf
from score import score


def merged(ranked, around, whole_list):
    """The chunks of the first K results, adjacent hits joined to the result they touch."""
    result_of, taken = {}, 0
    for cid in ranked:
        joins = [result_of[n] for n in around[cid] if n in result_of]
        if joins:
            result_of[cid] = joins[0]
        elif taken < K:
            result_of[cid], taken = taken, taken + 1
        elif not whole_list:
            break
    return list(result_of)


def main():
    sets, answers, chunks, queries, query_vectors, row_of, where = offline()
    ways = {"top 5": lambda r, a: r[:K], "top 6": lambda r, a: r[:K + 1],
            "merged until full": lambda r, a: merged(r, a, False), "merged, whole list": lambda r, a: merged(r, a, True)}
    rows = []
    for config in CONFIGS:
        hits = text_hits(config, queries)
        by_set = set_vectors(config, chunks)
        around = neighbours_of(chunks[config])
        for set_ in sets:
            keys = [(s, q) for s, q, _ in queries if s == set_]
            vector_top = {key: nearest(*by_set[set_], query_vectors[row_of[key]]) for key in keys}
            for leg in ("vector", "hybrid"):
                ranked = vector_top if leg == "vector" else {key: rrf(vector_top[key], hits[key]) for key in keys}
                cells = []
                for way in ways.values():
                    scores = np.array([score(answers[key], [where[c] for c in way(ranked[key], around)]) for key in keys])
                    cells.append(f"{100 * scores[:, 0].mean():.1f} / {100 * scores[:, 3].mean():.1f} / "
                                 f"{scores[:, 4].mean():,.0f}")
                rows.append(f"| {set_} | {config} | {leg} | " + " | ".join(cells) + " |")
    report("merging.md", ["# Merging adjacent hits, offline (bench/retrieval/levers/merging.py)\n",
                          f"Recall % / IoU % / characters returned, k = {K} results.\n",
                          *table(["set", "config", "leg", *ways], rows)])


if __name__ == "__main__":
    main()
