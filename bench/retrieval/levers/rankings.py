"""Three ranking levers measured offline on bench/retrieval's chunks, queries and scoring, with
levers.py's data, model and caches (run levers.py first):
  sentences  the vector leg scoring each chunk by its best-matching sentence as well as by its
             own vector: max-sim over the chunk's sentences (knowledge.split_sentences of the
             document; a sentence belongs to the chunk it starts in), an even mix of the chunk's
             cosine and that max-sim, and the chunk vector replaced by the mean of its sentences'
             (what storing sentence vectors would buy, and what pooling them instead of
             embedding chunks would cost);
  fusion     ways to fuse the vector top 20 with the text top 20 besides knowledge.search's
             reciprocal rank Σ 1/(60 + rank): other constants, a vector weight, and the cosine
             similarity plus a text-rank bonus;
  bm25       knowledge.search's text leg with other k1 and b (its options), alone and fused.
Prints markdown tables (recall % / IoU % at k = 5, as score.py computes them) and writes them to
OUT/rankings.md.

    source scripts/lib.sh && source bench/python_env.sh && ensure_reference_venv
    $REFERENCE_VENV/bin/python bench/retrieval/levers/levers.py       # first: data checks and caches
    $REFERENCE_VENV/bin/python bench/retrieval/levers/rankings.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS, THREADS).
"""

import csv
from collections import defaultdict

import numpy as np

import levers
from levers import CACHE, CANDIDATES, CONFIGS, K, cached, load, psql, report, text_hits
from score import score


def sentence_rows(documents, model):
    """The sentences of every document as (doc, start, end), and their vectors (cached)."""
    path = CACHE / "sentences.csv"
    if not path.exists():
        path.write_text(psql(
            "COPY (SELECT d.metadata ->> 'doc', s.char_offset, s.char_length FROM knowledge.documents AS d, "
            "knowledge.split_sentences(d.content) AS s ORDER BY 1, s.sentence_index) TO STDOUT WITH (FORMAT csv);"),
            encoding="utf-8")
    with open(path, newline="", encoding="utf-8") as f:
        rows = [(doc, int(o), int(o) + int(n)) for doc, o, n in csv.reader(f) if doc in documents]
    vectors = cached(CACHE / "sentences.npz",
                     lambda: {"vectors": model.embed([documents[d][2][s:e] for d, s, e in rows], 32)[0]})["vectors"]
    return rows, vectors


def rrf(vector_top, text_top, constant=60, vector_weight=1.0):
    scores = defaultdict(float)
    for rank, cid in enumerate(vector_top, 1):
        scores[cid] += vector_weight / (constant + rank)
    for rank, cid in enumerate(text_top, 1):
        scores[cid] += 1.0 / (constant + rank)
    return sorted(scores, key=lambda cid: (-scores[cid], cid))


def main():
    documents, sets, answers, texts, chunks, _, _ = load()
    queries = sorted((s, q, texts[s, q]) for s, q in texts if s in sets)
    model = levers.Model()
    query_vectors = cached(CACHE / "queries.npz", lambda: {"vectors": model.embed([t for _, _, t in queries])[0]})["vectors"]
    row_of = {(s, q): i for i, (s, q, _) in enumerate(queries)}
    sentences, sentence_vectors = sentence_rows(documents, model)
    starts = defaultdict(list)
    for i, (doc, start, _) in enumerate(sentences):
        starts[doc].append((start, i))
    where = {c[0]: (c[2], c[3], c[4]) for config in CONFIGS for c in chunks[config]}
    lines = ["# Ranking levers, offline (bench/retrieval/levers/rankings.py)\n",
             f"k = {K}; {CANDIDATES} candidates per leg; each cell recall % / IoU %.\n"]

    def figures(set_queries, ranked):
        totals = [0.0, 0.0]
        for key in set_queries:
            got = score(answers[key], [where[c] for c in ranked(key)[:K]])
            totals[0] += got[0]
            totals[1] += got[3]
        return f"{100 * totals[0] / len(set_queries):.1f} / {100 * totals[1] / len(set_queries):.1f}"

    tables = defaultdict(list)  # section → rows
    for config in CONFIGS:
        hits = text_hits(config, queries)
        plain = cached(CACHE / f"{config}-plain.npz", lambda: None)
        position = {int(c): i for i, c in enumerate(plain["ids"])}
        for set_ in sets:
            members = [c for c in chunks[config] if c[1] == set_]
            ids = np.array([c[0] for c in members])
            chunk_vectors = plain["vectors"][[position[c] for c in ids]].astype(np.float64)
            # Each chunk's sentences: those starting inside it (a chunk inside one sentence, the
            # sentence it starts in).
            held = [[i for s, i in starts[doc] if start <= s < end] or
                    [max((p for p in starts[doc] if p[0] <= start), default=starts[doc][0])[1]]
                    for _, _, doc, start, end, _ in members]
            mean = np.stack([sentence_vectors[h].mean(0) for h in held]).astype(np.float64)
            mean /= np.linalg.norm(mean, axis=1, keepdims=True)
            set_queries = [(s, q) for s, q, _ in queries if s == set_]
            q = query_vectors[[row_of[k] for k in set_queries]].astype(np.float64)
            cosine = q @ chunk_vectors.T
            by_sentence = q @ sentence_vectors.astype(np.float64).T
            best = np.stack([by_sentence[:, h].max(1) for h in held], 1)
            row = {k: r for r, k in enumerate(set_queries)}

            def top(similarity):
                return lambda key: [int(ids[i]) for i in np.lexsort((ids, -similarity[row[key]]))[:CANDIDATES]]

            vector_legs = {"chunk (stored)": top(cosine), "max-sim": top(best), "chunk + max-sim": top(0.5 * cosine + 0.5 * best),
                           "mean of sentences": top(q @ mean.T)}
            cells = []
            for name, leg in vector_legs.items():
                cells.append(f"{figures(set_queries, leg)} | {figures(set_queries, lambda key, leg=leg: rrf(leg(key), hits[key]))}")
            tables["sentences"].append(f"| {set_} | {config} | " + " | ".join(cells) + " |")

            vector = vector_legs["chunk (stored)"]
            similarity_of = {k: dict(zip(ids.tolist(), cosine[row[k]])) for k in set_queries}

            def bonus(weight, constant):
                def ranked(key):
                    union = list(dict.fromkeys(vector(key) + hits[key]))
                    text_rank = {c: r for r, c in enumerate(hits[key], 1)}
                    value = {c: similarity_of[key][c] + (weight / (constant + text_rank[c]) if c in text_rank else 0) for c in union}
                    return sorted(union, key=lambda c: (-value[c], c))
                return ranked

            fusions = {"RRF 60 (product)": lambda key: rrf(vector(key), hits[key]),
                       "RRF 10": lambda key: rrf(vector(key), hits[key], 10),
                       "RRF 5": lambda key: rrf(vector(key), hits[key], 5),
                       "RRF 60, vector ×1.5": lambda key: rrf(vector(key), hits[key], 60, 1.5),
                       "RRF 60, vector ×0.7": lambda key: rrf(vector(key), hits[key], 60, 0.7),
                       "cosine + 1/(10 + text rank)": bonus(1.0, 10)}
            tables["fusion"].append(f"| {set_} | {config} | " + " | ".join(figures(set_queries, f) for f in fusions.values()) + " |")

            for k1, b in [(1.2, 0.75), (0.9, 0.5), (0.9, 0.9), (1.6, 0.5), (1.6, 0.9), (2.0, 0.75)]:
                tuned = text_hits(config, queries, {"k1": k1, "b": b}) if (k1, b) != (1.2, 0.75) else hits
                tables["bm25"].append(f"| {set_} | {config} | {k1} | {b} | {figures(set_queries, lambda key: tuned[key])} | "
                                      f"{figures(set_queries, lambda key: rrf(vector(key), tuned[key]))} |")
    lines += ["## The vector leg from sentences (vector, then hybrid)\n",
              "| set | config | chunk (stored) | hybrid | max-sim | hybrid | chunk + max-sim | hybrid | mean of sentences | hybrid |",
              "|---|---|---|---|---|---|---|---|---|---|", *tables["sentences"], "",
              "## Fusion of the two legs\n",
              "| set | config | RRF 60 (product) | RRF 10 | RRF 5 | RRF 60, vector ×1.5 | RRF 60, vector ×0.7 | cosine + 1/(10 + text rank) |",
              "|---|---|---|---|---|---|---|---|", *tables["fusion"], "",
              "## BM25's k1 and b (text, then hybrid)\n",
              "| set | config | k1 | b | text | hybrid |", "|---|---|---|---|---|---|", *tables["bm25"], ""]
    report("rankings.md", lines)


if __name__ == "__main__":
    main()
