"""Word parts for the text leg, measured offline on bench/retrieval's chunks, queries and scoring.

PostgreSQL's parser reads a dotted or slashed run as one token (`host` or `file`): os.path.join,
str.split, try/except, curses/termcap, api-ms-win-crt-runtime-l1-1-0.dll each become a single
lexeme, so a question about splitting strings does not reach a chunk that says str.split, and a
question that says curses/termcap loses both words. The variant writes each such run's parts
after it ("str.split" → "str.split str split"), in the chunks and in the queries alike, as the
parser already does for hyphenated words; runs without a letter (numbers, versions) stay as
they are. Both variants' BM25 scores are computed here the way knowledge.search computes them
(knowledge_internal.bm25, k1 1.2, b 0.75, per-config statistics over every set's chunks,
english), the text leg is their top 20 and hybrid fuses it with the vector leg as the product
does (z-scores, equal weights). Prints per set and config the text and hybrid recall % / IoU %
of both variants, each difference paired over queries with its 95% interval; also to
OUT/wordparts.md. Check: the plain variant's text leg against knowledge.search's (share of equal
lists).

    (run.sh and export.sh as in neighbours.py's header, then)
    DB=pg_chunk_bench_retrieval $REFERENCE_VENV/bin/python bench/retrieval/levers/wordparts.py

Knobs as levers.py's (DATA, OUT, DB, CONFIGS, SETS).
"""

import re
from collections import defaultdict

import numpy as np

from convex import cached_scores, convex
from levers import (CACHE, CANDIDATES, CONFIGS, K, against_first, csv_lines, nearest, offline, report,
                    set_vectors, table, text_hits)
from score import score

K1, B = 1.2, 0.75  # knowledge.search's defaults
RUN = re.compile(r"[\w-]+(?:[./][\w-]+)+")


def with_parts(text):
    """text with each dotted or slashed run that holds a letter followed by its parts."""
    def parts(match):
        run = match.group(0)
        if not any(ch.isalpha() for ch in run):
            return run
        return run + " " + " ".join(p for p in re.split(r"[./]", run) if p)
    return RUN.sub(parts, text)


def bm25_scores(config, chunks, queries, variant):
    """(set, query) → {chunk id: BM25 score > 0}, the chunks' and queries' text as `variant` writes it."""
    write = with_parts if variant == "parts" else (lambda text: text)
    return cached_scores(CACHE / f"wordparts-{variant}-{config}.csv", (
        "SET client_min_messages = warning;\n"
        "CREATE TEMP TABLE w_chunks (id bigint, set text, content text);\n"
        "COPY w_chunks FROM STDIN WITH (FORMAT csv);\n"
        + csv_lines((c[0], c[1], write(c[5])) for c in chunks[config])
        + "CREATE TEMP TABLE w_queries (set text, query text, text text);\n"
        "COPY w_queries FROM STDIN WITH (FORMAT csv);\n"
        + csv_lines((s, q, write(t)) for s, q, t in queries)
        + "CREATE TEMP TABLE w_tsv AS\n"
        "    SELECT id, set, knowledge.text_vector('english', content) AS tsv FROM w_chunks;\n"
        "CREATE TEMP TABLE w_df AS\n"
        "    SELECT t.lexeme, count(*)::float8 AS df, sum(coalesce(array_length(t.positions, 1), 1)) AS n\n"
        "    FROM w_tsv AS c, unnest(c.tsv) AS t GROUP BY t.lexeme;\n"
        "CREATE TEMP TABLE w_totals AS\n"
        "    SELECT count(*)::float8 AS chunks, (SELECT sum(n) FROM w_df)::float8 / count(*) AS average_length\n"
        "    FROM w_tsv;\n"
        "CREATE TEMP TABLE w_lexemes AS\n"
        "    SELECT q.set, q.query, array_agg(d.lexeme ORDER BY d.df, d.lexeme) AS lexemes,\n"
        "           array_agg(d.df ORDER BY d.df, d.lexeme) AS df\n"
        "    FROM w_queries AS q,\n"
        "         LATERAL (SELECT DISTINCT t.lexeme\n"
        "                  FROM unnest(knowledge.text_vector('english', q.text)) AS t) AS l\n"
        "    JOIN w_df AS d ON d.lexeme = l.lexeme GROUP BY q.set, q.query;\n"
        "COPY (SELECT q.set, q.query, c.id, s.score\n"
        "      FROM w_lexemes AS q JOIN w_tsv AS c ON c.set = q.set, w_totals AS t,\n"
        f"      LATERAL (SELECT knowledge_internal.bm25(c.tsv, q.lexemes, q.df, t.chunks, {K1}, {B},\n"
        "                                              t.average_length) AS score) AS s\n"
        "      WHERE s.score > 0) TO STDOUT WITH (FORMAT csv);\n"))


def top(scores, depth=CANDIDATES):
    return sorted(scores, key=lambda c: (-scores[c], c))[:depth]


def main():
    sets, answers, chunks, queries, query_vectors, row_of, where = offline()
    rows, checks = [], []
    for config in CONFIGS:
        by_set = set_vectors(config, chunks)
        product_text = text_hits(config, queries)
        bm25 = {v: bm25_scores(config, chunks, queries, v) for v in ("plain", "parts")}
        equal = sum(top(bm25["plain"][key]) == product_text[key] for key in product_text)
        checks.append(f"- {config}: the plain variant's text leg equals knowledge.search's for {equal} of "
                      f"{len(product_text)} queries with text hits")
        for set_ in sets:
            ids, vectors = by_set[set_]
            position = {int(c): i for i, c in enumerate(ids)}
            recalls, ious = defaultdict(list), defaultdict(list)
            for key in [(s, q) for s, q, _ in queries if s == set_]:
                query_vector = np.asarray(query_vectors[row_of[key]], np.float64)
                vector_top = nearest(ids, vectors, query_vector)
                for variant, scores in bm25.items():
                    text_top = top(scores.get(key, {}))
                    candidates = dict.fromkeys(vector_top + text_top)
                    cosines = {c: float(vectors[position[c]] @ query_vector) for c in candidates}
                    hybrid = convex(cosines, scores.get(key, {}), 0.5, "z-scores")
                    for mode, ranking in (("text", text_top), ("hybrid", hybrid)):
                        recall, _hit, _precision, iou, _size = score(answers[key], [where[c] for c in ranking[:K]])
                        recalls[variant, mode].append(recall)
                        ious[variant, mode].append(iou)
            cells = []
            for mode in ("text", "hybrid"):
                pair = [recalls["plain", mode], recalls["parts", mode]]
                cells += [f"{r} / {100 * np.mean(ious[v, mode]):.1f}"
                          for r, v in zip(against_first(pair), ("plain", "parts"))]
            rows.append(f"| {set_} | {config} | " + " | ".join(cells) + " |")
    report("wordparts.md", ["# Word parts for the text leg, offline (bench/retrieval/levers/wordparts.py)\n",
                            f"Recall % / IoU % at k = {K}; in brackets the recall's mean paired difference from the "
                            "plain variant ± the half width of its 95% interval.\n",
                            *table(["set", "config", "text, plain", "text, parts", "hybrid, plain", "hybrid, parts"],
                                   rows),
                            *checks])


if __name__ == "__main__":
    main()
