"""Scores the searches of bench/retrieval/run.sh and prints markdown tables.

    python3 score.py WORK_DIR

Reads WORK_DIR's documents.csv and queries.csv (sets.py's rows), results.csv (search.sql) and
chunks.csv (chunks.sql). Per set, config and mode, over every query of the set (a query with no
results scores 0), each a mean over queries in %, as Chroma's chunking evaluation computes them:
  recall     answer characters covered by the union of the returned chunks' ranges (same
             document), over the characters of the query's answer spans;
  hit rate   share of queries where a returned chunk overlaps an answer span;
  precision  covered answer characters over the sum of the returned chunks' lengths (every
             returned chunk counts, overlapping ones twice, as Chroma's precision_denominator);
  IoU        covered answer characters over (that sum + answer characters not covered);
then the mean characters returned per query and the p50 and p95 search latency (ms, interpolated
as percentile_cont). Then per set and config: chunks, mean chunk length and the chunks longer
than the model reads.
"""

import csv
import sys
from collections import defaultdict
from pathlib import Path


def merge(ranges):
    """Sorted, disjoint (start, end) ranges covering the same characters."""
    out = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def covered(answers, chunks):
    """Characters of the answer ranges inside the union of the chunk ranges (one document)."""
    return sum(max(0, min(e, f) - max(s, t)) for s, e in merge(answers) for t, f in merge(chunks))


def percentile(values, p):
    values = sorted(values)
    x = (len(values) - 1) * p
    low = int(x)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (x - low)


def score(answers, returned):
    """answers: {doc: [(start, end)]}; returned: [(doc, start, end)] → recall, hit, precision, IoU, chars."""
    total = sum(e - s for ranges in answers.values() for s, e in merge(ranges))
    by_doc = defaultdict(list)
    for doc, s, e in returned:
        by_doc[doc].append((s, e))
    inside = sum(covered(answers[doc], chunks) for doc, chunks in by_doc.items() if doc in answers)
    hit = any(min(e, f) > max(s, t) for doc, t, f in returned for s, e in answers.get(doc, []))
    size = sum(e - s for _, s, e in returned)
    return (inside / total, float(hit), inside / size if size else 0.0,
            inside / (size + total - inside), size)


def main():
    work = Path(sys.argv[1])
    rows = lambda name: list(csv.reader(open(work / name, newline="", encoding="utf-8")))
    answers = defaultdict(lambda: defaultdict(list))  # (set, query) → doc → [(start, end)]
    for set_, query, _text, doc, offset, length in rows("queries.csv"):
        answers[set_, query][doc].append((int(offset), int(length) + int(offset)))
    documents = defaultdict(list)
    for _doc, set_, _title, content in rows("documents.csv"):
        documents[set_].append(len(content))

    searches = {}  # (set, config, mode, query) → (ms, [(doc, start, end)]), in results.csv's order
    for set_, config, mode, query, ms, rank, _chunk, _document, doc, offset, length in rows("results.csv"):
        ms_, returned = searches.setdefault((set_, config, mode, query), (float(ms), []))
        if rank:
            returned.append((doc, int(offset), int(offset) + int(length)))
    groups = defaultdict(dict)  # (set, config, mode) → query → (ms, returned)
    for (set_, config, mode, query), found in searches.items():
        groups[set_, config, mode][query] = found

    configs = list(dict.fromkeys(c for _, c, _ in groups))  # the order of CONFIGS
    for set_ in documents:  # the order of SETS
        queries = [q for s, q in answers if s == set_]
        print(f"\n### {set_}: {len(queries)} queries, {len(documents[set_])} documents, "
              f"{sum(documents[set_]) / 1000:.0f} KB\n")
        print("| config | mode | recall % | hit rate % | precision % | IoU % | chars returned | p50 ms | p95 ms |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (s, config, mode), found in groups.items():
            if s != set_:
                continue
            if len(found) != len(queries):
                sys.exit(f"{set_} {config} {mode}: {len(found)} searches for {len(queries)} queries")
            scores = [score(answers[set_, q], found[q][1]) for q in queries]
            mean = [sum(column) / len(scores) for column in zip(*scores)]
            ms = [found[q][0] for q in queries]
            print(f"| {config} | {mode} | {100 * mean[0]:.1f} | {100 * mean[1]:.1f} | {100 * mean[2]:.1f} | "
                  f"{100 * mean[3]:.1f} | {mean[4]:.0f} | {percentile(ms, 0.5):.1f} | {percentile(ms, 0.95):.1f} |")

    print("\n### chunks\n")
    print("| set | config | chunks | mean chars | over the model's limit | limit (tokens) |")
    print("|---|---|---|---|---|---|")
    order = lambda row: (list(documents).index(row[0]), configs.index(row[1]))
    for set_, config, chunks, mean, over, limit in sorted(rows("chunks.csv"), key=order):
        print(f"| {set_} | {config} | {chunks} | {float(mean):.0f} | {over} ({100 * int(over) / int(chunks):.1f}%) | {limit} |")


if __name__ == "__main__":
    main()
