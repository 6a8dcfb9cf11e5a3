"""Scores retrieval.sql's output per method and model, in %: recall@k (the share of queries with a
hit among their k nearest chunks) and precision@k (the share of the k chunks' characters that lie
in an answer, averaged over queries), for k = 5, and precision at equal recall: at the level of
the reference method's recall@5 with the same model, on the method's precision-recall curve over
k = 1..10, interpolated linearly between the two k around that level (more, smaller chunks need
a larger k for the same recall, so this compares methods fairly; the k shown is the one where
recall first reaches the level). Also the method's chunk count
and mean chunk length in characters. Reads CSV rows (method, model, query, rank, hit, chunk
characters, of them inside an answer, chunks, chunk characters) and prints a markdown table.

    python3 retrieval.py RETRIEVAL.csv --reference 'fixed (350 characters)'
"""

import argparse
import csv
from collections import defaultdict


def at(ranked, k):
    """(hit, precision) of one query's first k chunks; ranked is [(hit, chars, inside), ...]."""
    first = ranked[:k]
    return any(hit for hit, _, _ in first), sum(inside for _, _, inside in first) / sum(chars for _, chars, _ in first)


def scores(queries, k):
    """recall@k and precision@k in % over the queries."""
    results = [at(ranked, k) for ranked in queries.values()]
    return 100 * sum(hit for hit, _ in results) / len(results), 100 * sum(p for _, p in results) / len(results)


def precision_at(curve, k, target):
    """Precision at recall `target`, which curve[k - 1] (recall, precision) is the first to reach."""
    recall, precision = curve[k - 1]
    if k == 1 or recall == target:
        return precision
    before_recall, before_precision = curve[k - 2]
    share = (target - before_recall) / (recall - before_recall)
    return before_precision + share * (precision - before_precision)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("retrieval")
    parser.add_argument("--reference", help="the method whose recall@5 sets the level for precision at equal recall")
    args = parser.parse_args()
    ranked = defaultdict(lambda: defaultdict(list))  # (method, model) -> query -> [(hit, chars, inside)]
    sizes = {}  # method -> (chunks, chunk characters)
    with open(args.retrieval, newline="", encoding="utf-8") as f:
        for method, model, query, _rank, hit, chars, inside, chunks, chunk_chars in csv.reader(f):
            ranked[method, model][query].append((hit == "t", int(chars), int(inside)))  # rows come in rank order
            sizes[method] = int(chunks), int(chunk_chars)
    deepest = min(len(r) for queries in ranked.values() for r in queries.values())
    print("| method | model | recall@5 | precision@5 | precision at the reference's recall@5 (k) | chunks | mean chunk chars |")
    print("|---|---|---|---|---|---|---|")
    for (method, model), queries in ranked.items():  # in retrieval.sql's order
        recall, precision = scores(queries, 5)
        equal = "—"
        if args.reference and (args.reference, model) in ranked:
            target, _ = scores(ranked[args.reference, model], 5)
            curve = [scores(queries, k) for k in range(1, deepest + 1)]
            k = next((k for k, (r, _) in enumerate(curve, 1) if r >= target), None)
            if k is not None:
                equal = f"{precision_at(curve, k, target):.1f} (k = {k})"
        chunks, chunk_chars = sizes[method]
        print(f"| {method} | {model} | {recall:.1f} | {precision:.1f} | {equal} | {chunks} | {chunk_chars / chunks:.0f} |")


if __name__ == "__main__":
    main()
