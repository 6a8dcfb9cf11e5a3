"""Scores segmentations against the reference: Pk (Beeferman et al. 1999) and WindowDiff
(Pevzner and Hearst 2002) at sentence level, k = half the mean reference segment length of each
sample (rounded, at least 1). Reads run.sh's boundaries CSV rows (method, sample, range,
sentences, reference starts, hypothesis starts), a start being the index of a segment's first
sentence, and prints a markdown table: mean Pk and WindowDiff per method and range, and overall.

    python3 score.py BOUNDARIES.csv
"""

import csv
import sys
from collections import defaultdict


def labels(n, starts):
    """Segment number of each of n sentences, given the segments' first sentences."""
    starts = set(starts) | {0}
    out, segment = [], -1
    for i in range(n):
        if i in starts:
            segment += 1
        out.append(segment)
    return out


def pk(reference, hypothesis, k):
    n = len(reference)
    errors = sum((reference[i] == reference[i + k]) != (hypothesis[i] == hypothesis[i + k]) for i in range(n - k))
    return errors / max(1, n - k)


def window_diff(reference, hypothesis, k):
    n = len(reference)
    errors = sum((reference[i + k] - reference[i]) != (hypothesis[i + k] - hypothesis[i]) for i in range(n - k))
    return errors / max(1, n - k)


def parse(field):
    return [int(x) for x in field.split()] if field.strip() else []


def main():
    scores = defaultdict(lambda: defaultdict(list))
    methods = []
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        for method, _sample, range_name, n, ref, hyp in csv.reader(f):
            n = int(n)
            reference, hypothesis = labels(n, parse(ref)), labels(n, parse(hyp))
            segments = reference[-1] + 1
            k = max(1, round(n / segments / 2))
            for key in (range_name, "all"):
                scores[method][key].append((pk(reference, hypothesis, k), window_diff(reference, hypothesis, k)))
            if method not in methods:
                methods.append(method)
    ranges = [r for r in ("3-5", "6-8", "9-11", "3-11") if any(r in scores[m] for m in methods)]
    print("| method | " + " | ".join(f"Pk {r}" for r in ranges) + " | Pk all | WindowDiff all | samples |")
    print("|---|" + "---|" * (len(ranges) + 3))
    for method in methods:
        cells = [f"{100 * sum(p for p, _ in scores[method][r]) / len(scores[method][r]):.1f}" for r in ranges]
        everything = scores[method]["all"]
        pk_all = 100 * sum(p for p, _ in everything) / len(everything)
        wd_all = 100 * sum(w for _, w in everything) / len(everything)
        print(f"| {method} | " + " | ".join(cells) + f" | {pk_all:.1f} | {wd_all:.1f} | {len(everything)} |")


if __name__ == "__main__":
    main()
