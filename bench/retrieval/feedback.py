"""Pseudo-relevance feedback on the query vector (Rocchio), measured offline on bench/retrieval's
chunks, queries and scoring: the query vector plus beta times the mean of the vectors of the
hybrid search's first m chunks, normalised, searched again (exact cosine over the config's stored
vectors, top 20) and fused with the same text leg by reciprocal rank, as knowledge.search fuses.
Prints, per set and config, hybrid recall % at k = 5 without feedback and with each (m, beta),
with the mean paired difference ± the half width of its 95% interval; also to OUT/feedback.md.

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/feedback.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS). Not built into knowledge.search:
bench/README.md ("The levers").
"""

import numpy as np
from levers import CACHE, CANDIDATES, CONFIGS, K, OUT, load, product_query_vectors, stored_embeddings, text_hits, interval
from rankings import rrf
from score import score

CACHE.mkdir(parents=True, exist_ok=True)
documents, sets, answers, texts, chunks, bench, _ = load()
queries = sorted((s, q, texts[s, q]) for s, q in texts if s in sets)
qv = product_query_vectors(queries)
row_of = {(s, q): i for i, (s, q, _) in enumerate(queries)}
where = {c[0]: (c[2], c[3], c[4]) for config in CONFIGS for c in chunks[config]}
lines = ["# Feedback on the query vector, offline (bench/retrieval/feedback.py)\n",
         "Hybrid recall % at k = 5; (Δ ± 95% half width) against no feedback.\n"]
for config in CONFIGS:
    hits = text_hits(config, queries)
    stored = stored_embeddings(config)
    pos = {int(c): i for i, c in enumerate(stored["ids"])}
    for set_ in sets:
        members = [c for c in chunks[config] if c[1] == set_]
        ids = np.array([c[0] for c in members])
        V = stored["vectors"][[pos[c] for c in ids]].astype(np.float64)
        sq = [(s, q) for s, q, _ in queries if s == set_]
        Q = qv[[row_of[k] for k in sq]].astype(np.float64)
        idx = {int(c): i for i, c in enumerate(ids)}
        def top(sim):
            return [int(ids[i]) for i in np.lexsort((ids, -sim))[:CANDIDATES]]
        base = {}
        for r, key in enumerate(sq):
            vt = top(Q[r] @ V.T)
            base[key] = (vt, rrf(vt, hits[key]))
        def rec(f):
            return [score(answers[key], [where[c] for c in f(key)[:K]])[0] for key in sq]
        b0 = rec(lambda key: base[key][1])
        out = [f"{set_} {config} base {100*np.mean(b0):.1f}"]
        for m in (1, 3):
            for beta in (0.3, 0.7):
                def f(key, m=m, beta=beta):
                    q2 = Q[sq.index(key)] + beta * V[[idx[c] for c in base[key][1][:m]]].mean(0)
                    q2 /= np.linalg.norm(q2)
                    return rrf(top(q2 @ V.T), hits[key])
                got = rec(f)
                d, h = interval([a - b for a, b in zip(got, b0)])
                out.append(f"m{m} b{beta}: {100*np.mean(got):.1f} ({d:+.1f}±{h:.1f})")
        lines.append("- " + " | ".join(out))
        print(lines[-1], flush=True)
(OUT / "feedback.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
