"""The neighbours' share under score fusion, measured offline on bench/retrieval's chunks, queries
and scoring: each candidate's fused score (the mean of its cosine's and BM25's z-scores over the
two legs' top 20s, as knowledge.search fuses them) plus g times the better of its neighbours'
fused scores (the chunks just before and after it in its document, when they are candidates too)
where that is above 0, the candidates' mean. g = 0 is the fusion without the share; knowledge.search
adds it with g = 0.3 (its option "neighbours"). neighbours.py measured the same idea on reciprocal
ranks, where it did not help. Prints per set and config the hybrid recall % / IoU % for each g, the
recall's mean paired difference from g = 0 ± the half width of its 95% interval; also to
OUT/neighbours_fused.md. Check: for each g, how many top-5 lists equal the benchmark's own hybrid
rows (results.csv): all of them at the g the benchmark's knowledge.search ran with.

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/neighbours_fused.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS).
"""

from collections import defaultdict

import numpy as np

from convex import bm25_scores, z_fused
from levers import CONFIGS, K, against_first, load, nearest, offline, report, set_vectors, table, text_hits
from neighbours import neighbours_of
from score import score

GAINS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]


def with_share(score_of, around, gain):
    """Candidate ids best first by score plus gain × the better neighbour's score above 0, ties by id."""
    def total(c):
        return score_of[c] + gain * max([0.0, *(score_of[n] for n in around[c] if n in score_of)])
    return sorted(score_of, key=lambda c: (-total(c), c))


def main():
    loaded = load()
    bench = loaded[5]
    sets, answers, chunks, queries, query_vectors, row_of, where = offline(loaded)
    rows, checks = [], []
    for config in CONFIGS:
        by_set = set_vectors(config, chunks)
        text_top = text_hits(config, queries)
        bm25 = bm25_scores(config, queries)
        around = neighbours_of(chunks[config])
        for set_ in sets:
            ids, vectors = by_set[set_]
            position = {int(c): i for i, c in enumerate(ids)}
            recalls, ious, equal = defaultdict(list), defaultdict(list), defaultdict(int)
            keys = [(s, q) for s, q, _ in queries if s == set_]
            for key in keys:
                query_vector = np.asarray(query_vectors[row_of[key]], np.float64)
                candidates = dict.fromkeys(nearest(ids, vectors, query_vector) + text_top[key])
                cosines = {c: float(vectors[position[c]] @ query_vector) for c in candidates}
                score_of = z_fused(list(candidates), [cosines, bm25[key]], [0.5, 0.5])
                for gain in GAINS:
                    top = with_share(score_of, around, gain)[:K]
                    recall, _hit, _precision, iou, _size = score(answers[key], [where[c] for c in top])
                    recalls[gain].append(recall)
                    ious[gain].append(iou)
                    equal[gain] += top == bench[set_, config, "hybrid", key[1]]
            recall_cells = against_first([recalls[g] for g in GAINS])
            cells = [f"{r} / {100 * np.mean(ious[g]):.1f}" for r, g in zip(recall_cells, GAINS)]
            rows.append(f"| {set_} | {config} | " + " | ".join(cells) + " |")
            checks.append(f"- {set_}, {config}: top 5 equal to the benchmark's hybrid rows for "
                          + ", ".join(f"g {g}: {equal[g]}" for g in GAINS) + f" of {len(keys)} queries")
    report("neighbours_fused.md",
           ["# The neighbours' share under score fusion, offline (bench/retrieval/levers/neighbours_fused.py)\n",
            f"Hybrid recall % / IoU % at k = {K}; in brackets the recall's mean paired difference from g = 0 ± "
            "the half width of its 95% interval.\n",
            *table(["set", "config", *(f"g {g}" for g in GAINS)], rows), *checks])


if __name__ == "__main__":
    main()
