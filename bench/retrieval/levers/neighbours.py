"""A chunk's neighbours as evidence, measured offline on bench/retrieval's chunks, queries and
scoring: an answer longer than one chunk spans neighbours, and the chunk after a good hit is more
likely part of the answer than the fifth-best chunk elsewhere. Each chunk's score gets a share of
its best neighbour's (the chunks just before and after it in its document), two ways:
  ranks   every mode as knowledge.search would do it: the mode's reciprocal-rank score (hybrid:
          the fused Σ 1 / (60 + rank) over the legs' top 20s) plus g times the best neighbour's;
          hybrid also with only the legs' candidates ranked (no neighbour brought in);
  cosine  the vector leg by cosine'(c) = cosine(c) + g · max(cosine(previous), cosine(next)),
          exact over the config's stored vectors and the product's query vectors
          (knowledge.embed(..., 'query')), its top 20 fused with the text leg's (ranks, own g).
g = 0 is knowledge.search as it is; its figures are checked against the benchmark's own rows
(results.csv). Prints markdown tables (recall % / IoU % at k = 5, score.py's) and writes them to
OUT/neighbours.md.

    SETS=sections,faq,howto,tutorial CONFIGS=default,recursive-200 bash bench/retrieval/run.sh
    bash bench/retrieval/levers/export.sh
    source scripts/lib.sh && source bench/python_env.sh && ensure_reference_venv
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/neighbours.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS); the database must hold the chunks of DATA.
Not built into knowledge.search: bench/README.md ("Decisions") has the figures and why.
"""

from collections import defaultdict

import numpy as np

from levers import CANDIDATES, CONFIGS, K, interval, load, offline, report, set_vectors, text_hits
from rankings import rrf
from score import score

GAINS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3]
LEG_GAINS = [(0.1, 0.0), (0.1, 0.1), (0.2, 0.1), (0.3, 0.0), (0.3, 0.1)]


def neighbours_of(members):
    """chunk id → ids of the chunks just before and after it in its document."""
    by_doc = defaultdict(list)
    for cid, _, doc, start, _, _ in members:
        by_doc[doc].append((start, cid))
    around = {}
    for spans in by_doc.values():
        spans.sort()
        ids = [cid for _, cid in spans]
        for i, cid in enumerate(ids):
            around[cid] = ids[max(0, i - 1):i] + ids[i + 1:i + 2]
    return around


def smoothed(score_of, around, gain, within=False):
    """score_of: chunk id → score (absent: 0); every chunk scored or next to one (within: every
    chunk scored, none added), with its best neighbour's score times gain added; those left at 0
    (or below) are not candidates."""
    pool = set(score_of) | (set() if within else {n for c in score_of for n in around[c]})
    new = {c: score_of.get(c, 0.0) + gain * max((score_of.get(n, 0.0) for n in around[c]), default=0.0)
           for c in pool}
    return {c: value for c, value in new.items() if value > 0}


def ranked(score_of):
    return sorted(score_of, key=lambda c: (-score_of[c], c))


def reciprocal(ids):
    return {c: 1.0 / (60 + rank) for rank, c in enumerate(ids, 1)}


def main():
    loaded = load()
    bench = loaded[5]
    sets, answers, chunks, queries, query_vectors, row_of, where = offline(loaded)
    lines = ["# A chunk's neighbours as evidence, offline (bench/retrieval/levers/neighbours.py)\n",
             f"k = {K}; {CANDIDATES} candidates per leg; each cell recall % / IoU %; g the share of the "
             "best neighbour's score added.\n"]

    def figures(set_queries, rank_of):
        recall = iou = 0.0
        for key in set_queries:
            got = score(answers[key], [where[c] for c in rank_of(key)[:K]])
            recall += got[0]
            iou += got[3]
        return f"{100 * recall / len(set_queries):.1f} / {100 * iou / len(set_queries):.1f}"

    rows, grid, checks = [], [], []
    for config in CONFIGS:
        hits = text_hits(config, queries)
        by_set = set_vectors(config, chunks)
        for set_ in sets:
            around = neighbours_of([c for c in chunks[config] if c[1] == set_])
            ids, vectors = by_set[set_]
            set_queries = [(s, q) for s, q, _ in queries if s == set_]
            cosine = query_vectors[[row_of[k] for k in set_queries]].astype(np.float64) @ vectors.T
            cosine_of = {key: dict(zip(ids.tolist(), cosine[r])) for r, key in enumerate(set_queries)}

            def vector_top(key, gain):
                return ranked(smoothed(cosine_of[key], around, gain))[:CANDIDATES]

            def text_top(key, gain):
                return ranked(smoothed(reciprocal(hits[key]), around, gain))[:CANDIDATES]

            def fused(key, gain, within=False):
                return ranked(smoothed(reciprocal_sum(vector_top(key, 0), text_top(key, 0)), around, gain, within))

            for mode in ("hybrid", "vector"):
                agree = sum(bench[set_, config, mode, key[1]] == (rrf(vector_top(key, 0), hits[key]) if mode == "hybrid"
                                                               else vector_top(key, 0))[:K] for key in set_queries)
                checks.append(f"| {set_} | {config} | {mode} | {agree} of {len(set_queries)} | "
                              f"{figures(set_queries, lambda key, m=mode: bench[set_, config, m, key[1]])} |")
            def per_query(rank_of):
                return [score(answers[key], [where[c] for c in rank_of(key)[:K]])[0] for key in set_queries]

            plain_hybrid = per_query(lambda key: fused(key, 0))
            for gain in GAINS:
                # The formula for every mode: the mode's reciprocal-rank score, smoothed.
                hybrid = per_query(lambda key: fused(key, gain))
                delta, half = interval([a - b for a, b in zip(hybrid, plain_hybrid)])
                cells = [
                    figures(set_queries, lambda key: ranked(smoothed(reciprocal(vector_top(key, 0)), around, gain))),
                    figures(set_queries, lambda key: text_top(key, gain)),
                    figures(set_queries, lambda key: fused(key, gain)),
                    f"{delta:+.1f} ± {half:.1f}",
                    figures(set_queries, lambda key: fused(key, gain, True)),
                ]
                rows.append(f"| {set_} | {config} | {gain} | " + " | ".join(cells) + " |")
            for vector_gain, text_gain in LEG_GAINS:
                grid.append(f"| {set_} | {config} | {vector_gain} | {text_gain} | "
                            + figures(set_queries, lambda key: vector_top(key, vector_gain)) + " | "
                            + figures(set_queries, lambda key: rrf(vector_top(key, vector_gain), text_top(key, text_gain))) + " |")
    lines += ["## Checks: g = 0 against the benchmark's own searches\n",
              "| set | config | mode | top-5 lists equal | the benchmark's recall / IoU |", "|---|---|---|---|---|", *checks, "",
              "## Scores with the best neighbour's share\n",
              "Every mode the same way: its reciprocal-rank score (hybrid: the fused one) plus g times the "
              "best neighbour's; Δ hybrid against g = 0, paired over queries, ± the half width of its 95% interval; "
              "no chunk added: only the legs' candidates are ranked (a neighbour outside them is not brought in).\n",
              "| set | config | g | vector | text | hybrid | Δ hybrid recall | hybrid, no chunk added |",
              "|---|---|---|---|---|---|---|---|", *rows, "",
              "## Cosine with the best neighbour's share in the vector leg, before fusion\n",
              "| set | config | g, vector | g, text | vector | hybrid |", "|---|---|---|---|---|---|", *grid, ""]
    report("neighbours.md", lines)


def reciprocal_sum(vector_ids, text_ids):
    total = defaultdict(float)
    for ids in (vector_ids, text_ids):
        for c, value in reciprocal(ids).items():
            total[c] += value
    return dict(total)


if __name__ == "__main__":
    main()
