"""Score-based fusion measured offline on bench/retrieval's chunks, queries and scoring, against
knowledge.search's reciprocal ranks: each candidate of the two legs (each leg's top 4k = 20, the
ones knowledge.search fuses) gets alpha × its cosine + (1 − alpha) × its BM25 score, each
normalised over the candidates one of two ways: min-max (cosine (x − min) / (max − min), BM25
x / max) or z-scores ((x − mean) / standard deviation); a chunk with none of the query's lexemes
has BM25 0. The convex combination of Bruch, Gai and Ingber, "An Analysis of Fusion Functions for
Hybrid Retrieval" (2023). Both scores are known for every candidate, as
they would be in the product: the cosine from the stored vectors, BM25 from
knowledge_internal.bm25 with the statistics and constants knowledge.search uses (k1 1.2, b 0.75).
alpha is read off sections, faq and howto; the held-out tutorial set checks it. Prints, per
normalisation, hybrid recall % and IoU % per set and config, with the mean paired difference from RRF ± the half width
of its 95% interval; also to OUT/convex.md. Check: the text leg rebuilt from the BM25 scores
(top 20 by score, ties by id) against knowledge.search's text mode, as the share of equal lists.

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/convex.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS). z-scores with alpha 0.5 became
knowledge.search's hybrid fusion (src/sql/search.sql; "fusion": "rrf" is the reciprocal ranks
this script compares with): bench/README.md ("Decisions").
"""

import csv
from collections import defaultdict

import numpy as np

from levers import (CACHE, CANDIDATES, CONFIGS, K, against_first, csv_lines, nearest, offline, psql, report,
                    set_vectors, table, text_hits)
from rankings import rrf
from score import score

ALPHAS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
NORMALISATIONS = ["min-max", "z-scores"]
K1, B = 1.2, 0.75  # knowledge.search's defaults


def bm25_scores(config, queries):
    """(set, query) → {chunk id: BM25 score > 0} over every chunk of the config in the query's set."""
    return cached_scores(CACHE / f"bm25-{config}.csv", (
        "SET client_min_messages = warning;\n"
        "CREATE TEMP TABLE convex_queries (set text, query text, text text);\n"
        "COPY convex_queries FROM STDIN WITH (FORMAT csv);\n"
        + csv_lines(queries)
        + "COPY (SELECT q.set, q.query, c.id, s.score FROM convex_queries AS q "
        f"CROSS JOIN LATERAL knowledge_internal.text_query('{config}', q.text, NULL) AS t "
        "JOIN knowledge.documents AS d ON d.metadata @> jsonb_build_object('set', q.set) "
        f"JOIN knowledge.chunks AS c ON c.document_id = d.id AND c.chunk_config = '{config}' "
        "CROSS JOIN LATERAL (SELECT knowledge_internal.bm25(c.tsv, t.lexemes, t.df, t.chunks, "
        f"{K1}, {B}, t.average_length) AS score) AS s WHERE s.score > 0) TO STDOUT WITH (FORMAT csv);\n"))


def cached_scores(path, script):
    """(set, query) → {chunk id: score} from the CSV at path (rows set, query, chunk id, score),
    which the psql script writes first when it is missing."""
    if not path.exists():
        path.write_text(psql(script), encoding="utf-8")
    scores = defaultdict(dict)
    with open(path, newline="", encoding="utf-8") as f:
        for set_, query, cid, value in csv.reader(f):
            scores[set_, query][int(cid)] = float(value)
    return scores


def normalised(values, normalisation, floor):
    """values over the candidates as min-max (from floor, when given, instead of the least) or as
    z-scores; 0 where all are equal."""
    if normalisation == "z-scores":
        spread = values.std()
        return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)
    low = values.min() if floor is None else floor
    return (values - low) / (values.max() - low) if values.max() > low else np.zeros_like(values)


def z_fused(candidates, columns, weights):
    """Candidate id → Σ weight × the z-score over the candidates of each column (id → value, absent: 0)."""
    total = sum(w * normalised(np.array([column.get(c, 0.0) for c in candidates]), "z-scores", None)
                for column, w in zip(columns, weights))
    return dict(zip(candidates, total))


def convex(cosines, bm25, alpha, normalisation):
    """Candidate ids by alpha × normalised cosine + (1 − alpha) × normalised BM25, best first, ties by id."""
    ids = list(cosines)
    cos = normalised(np.array([cosines[c] for c in ids]), normalisation, None)
    text = normalised(np.array([bm25.get(c, 0.0) for c in ids]), normalisation, 0.0)
    fused = alpha * cos + (1 - alpha) * text
    return [ids[i] for i in sorted(range(len(ids)), key=lambda i: (-fused[i], ids[i]))]


def main():
    sets, answers, chunks, queries, query_vectors, row_of, where = offline()
    rows, checks = {n: [] for n in NORMALISATIONS}, []
    for config in CONFIGS:
        by_set = set_vectors(config, chunks)
        text_top = text_hits(config, queries)
        bm25 = bm25_scores(config, queries)
        equal = sum(sorted(bm25[key], key=lambda c: (-bm25[key][c], c))[:CANDIDATES] == text_top[key]
                    for key in text_top)
        checks.append(f"- {config}: the text leg from the BM25 scores equals knowledge.search's for {equal} of "
                      f"{len(text_top)} queries with text hits")
        for set_ in sets:
            ids, vectors = by_set[set_]
            position = {int(c): i for i, c in enumerate(ids)}
            variants = [(n, a) for n in NORMALISATIONS for a in ALPHAS]
            recalls, ious = [[] for _ in range(len(variants) + 1)], [[] for _ in range(len(variants) + 1)]
            for key in [(s, q) for s, q, _ in queries if s == set_]:
                query_vector = np.asarray(query_vectors[row_of[key]], np.float64)
                vector_top = nearest(ids, vectors, query_vector)
                candidates = dict.fromkeys(vector_top + text_top[key])
                cosines = {c: float(vectors[position[c]] @ query_vector) for c in candidates}
                rankings = [rrf(vector_top, text_top[key])] + [convex(cosines, bm25[key], a, n) for n, a in variants]
                for n, ranking in enumerate(rankings):
                    recall, _hit, _precision, iou, _size = score(answers[key], [where[c] for c in ranking[:K]])
                    recalls[n].append(recall)
                    ious[n].append(iou)
            cells = [f"{r} / {100 * np.mean(i):.1f}" for r, i in zip(against_first(recalls), ious)]
            for n, normalisation in enumerate(NORMALISATIONS):
                picked = [cells[0], *cells[1 + n * len(ALPHAS):1 + (n + 1) * len(ALPHAS)]]
                rows[normalisation].append(f"| {set_} | {config} | " + " | ".join(picked) + " |")
    tables = [line for n in NORMALISATIONS
              for line in [f"## {n}\n", *table(["set", "config", "RRF", *(f"alpha {a}" for a in ALPHAS)], rows[n])]]
    report("convex.md", ["# Score-based fusion (convex combination), offline (bench/retrieval/levers/convex.py)\n",
                         f"Hybrid recall % / IoU % at k = {K}; in brackets the recall's mean paired difference from "
                         "RRF (knowledge.search's fusion) ± the half width of its 95% interval.\n",
                         *tables, *checks])


if __name__ == "__main__":
    main()
