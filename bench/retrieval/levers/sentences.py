"""Sentence vectors as a third score in knowledge.search's score fusion, measured offline on
bench/retrieval's chunks, queries and scoring. rankings.py measured a chunk's best-matching
sentence under reciprocal-rank fusion (vector leg +3 to +5 points, hybrid −0.8 to +2.3); this
asks the same of the z-score fusion the product now uses (convex.py, src/sql/search.sql).

Each chunk's sentences are knowledge.split_sentences of its document clipped to the chunk (a
sentence crossing a cut gives each side its own piece), embedded by the product
(knowledge.embed_batch, all-minilm-l6-v2, role passage; cached). max-sim is the best cosine of the
query with a chunk's pieces. Candidates are the two legs' top 20s, as in the product; each
candidate's chunk cosine, max-sim and BM25 (convex.py's, the product's statistics) become
z-scores over the candidates. Rankings compared with the product's fusion, (z(cos) + z(bm25)) / 2:
  max-sim for cos      (z(max-sim) + z(bm25)) / 2
  thirds               (z(cos) + z(max-sim) + z(bm25)) / 3
  quarters             z(cos) / 4 + z(max-sim) / 4 + z(bm25) / 2
  thirds, sentence leg thirds over a third leg's candidates as well: the top 20 by max-sim (what
                       a search of stored sentence vectors would add)
and the vector legs alone (chunk cosine, max-sim, their mean). Prints recall % / IoU % at k = 5
per set and config, each recall with its mean paired difference from the product's ± the half
width of its 95% interval; also to OUT/sentences.md.

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/sentences.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS).
"""

import numpy as np

from convex import bm25_scores, z_fused
from levers import (CACHE, CANDIDATES, CONFIGS, K, against_first, cached, ids_and_vectors, nearest, offline, psql,
                    report, set_vectors, table, text_hits)
from score import score

VARIANTS = ["product", "max-sim for cos", "thirds", "quarters", "thirds, sentence leg"]
VECTOR_LEGS = ["chunk cosine", "max-sim", "mean of the two"]


def pieces(config):
    """Each chunk's sentence pieces: (chunk ids, one row per piece; vectors, one per piece)."""
    def compute():
        out = psql(
            "WITH s AS (SELECT d.id AS document_id, s.char_offset AS s, s.char_offset + s.char_length AS e "
            "FROM knowledge.documents AS d, knowledge.split_sentences(d.content) AS s), "
            "p AS (SELECT c.id, row_number() OVER (ORDER BY c.id, s.s) AS n, "
            "substr(d.content, greatest(s.s, c.char_offset) + 1, "
            "least(s.e, c.char_offset + c.char_length) - greatest(s.s, c.char_offset)) AS piece "
            "FROM knowledge.chunks AS c JOIN knowledge.documents AS d ON d.id = c.document_id "
            "JOIN s ON s.document_id = c.document_id AND s.s < c.char_offset + c.char_length "
            "AND s.e > c.char_offset "
            f"WHERE c.chunk_config = '{config}'), "
            "b AS (SELECT n / 64 AS batch, array_agg(id ORDER BY n) AS ids, array_agg(piece ORDER BY n) AS texts "
            "FROM p GROUP BY 1) "
            "SELECT b.ids[e.ordinality], e.embedding::text FROM b, "
            "knowledge.embed_batch(b.texts, 'all-minilm-l6-v2', 'passage') AS e ORDER BY b.batch, e.ordinality")
        return ids_and_vectors(out)

    return cached(CACHE / f"pieces-{config}.npz", compute)


def fuse(candidates, columns, weights):
    """Candidate ids by Σ weight × z-score of each column over the candidates, best first, ties by id."""
    total = z_fused(candidates, columns, weights)
    return sorted(candidates, key=lambda c: (-total[c], c))


def main():
    sets, answers, chunks, queries, query_vectors, row_of, where = offline()
    hybrid_rows, vector_rows = [], []
    for config in CONFIGS:
        by_set = set_vectors(config, chunks)
        text_top = text_hits(config, queries)
        bm25 = bm25_scores(config, queries)
        held = pieces(config)
        piece_ids, piece_vectors = held["ids"], held["vectors"].astype(np.float64)
        for set_ in sets:
            ids, vectors = by_set[set_]
            mine = np.isin(piece_ids, ids)
            owners, owned = piece_ids[mine], piece_vectors[mine]
            order = np.argsort(owners, kind="stable")
            owners, owned = owners[order], owned[order]
            starts = np.searchsorted(owners, ids)  # every chunk has at least one piece
            recalls = [[] for _ in VARIANTS + VECTOR_LEGS]
            ious = [[] for _ in VARIANTS + VECTOR_LEGS]
            for key in [(s, q) for s, q, _ in queries if s == set_]:
                query_vector = np.asarray(query_vectors[row_of[key]], np.float64)
                cos = vectors @ query_vector
                best = np.maximum.reduceat(owned @ query_vector, starts)
                cos_of = {int(c): float(cos[i]) for i, c in enumerate(ids)}
                best_of = {int(c): float(best[i]) for i, c in enumerate(ids)}
                vector_top = nearest(ids, vectors, query_vector)
                sentence_top = [int(ids[i]) for i in np.lexsort((ids, -best))[:CANDIDATES]]
                legs = list(dict.fromkeys(vector_top + text_top[key]))
                three = list(dict.fromkeys(vector_top + text_top[key] + sentence_top))
                columns = [cos_of, best_of, bm25[key]]
                rankings = [fuse(legs, columns, [0.5, 0, 0.5]), fuse(legs, columns, [0, 0.5, 0.5]),
                            fuse(legs, columns, [1 / 3] * 3), fuse(legs, columns, [0.25, 0.25, 0.5]),
                            fuse(three, columns, [1 / 3] * 3),
                            vector_top, sentence_top,
                            [int(ids[i]) for i in np.lexsort((ids, -(cos + best)))[:CANDIDATES]]]
                for n, ranking in enumerate(rankings):
                    recall, _hit, _precision, iou, _size = score(answers[key], [where[c] for c in ranking[:K]])
                    recalls[n].append(recall)
                    ious[n].append(iou)
            cells = [f"{r} / {100 * np.mean(i):.1f}" for r, i in
                     zip(against_first(recalls[:len(VARIANTS)]), ious[:len(VARIANTS)])]
            hybrid_rows.append(f"| {set_} | {config} | " + " | ".join(cells) + " |")
            cells = [f"{r} / {100 * np.mean(i):.1f}" for r, i in
                     zip(against_first(recalls[len(VARIANTS):]), ious[len(VARIANTS):])]
            vector_rows.append(f"| {set_} | {config} | " + " | ".join(cells) + " |")
    report("sentences.md", [
        "# Sentence vectors in the score fusion, offline (bench/retrieval/levers/sentences.py)\n",
        f"Recall % / IoU % at k = {K}; in brackets the recall's mean paired difference from the first "
        "column ± the half width of its 95% interval.\n",
        "## Hybrid\n", *table(["set", "config", *VARIANTS], hybrid_rows),
        "## The vector leg alone\n", *table(["set", "config", *VECTOR_LEGS], vector_rows)])


if __name__ == "__main__":
    main()
