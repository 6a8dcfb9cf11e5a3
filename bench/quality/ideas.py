"""The ideas tried for a better semantic strategy (docs/design.md, "Optimal segmentation"), each scored by Pk on the
harness's samples from the same sentence embeddings, so that they differ only in how cuts are
chosen. No size guards here except the 2,000-character cap where a method takes sizes into
account; segment.sql scores what knowledge.chunk really does.

    python ideas.py UNITS-minilm.csv UNITS-potion.csv ...   (export.sql's output, one per model)

Prints a markdown table: idea, model, Pk per range and the mean of the four ranges.
"""

import csv
import os
import sys
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from score import labels, pk  # noqa: E402

RANGES = ("3-5", "6-8", "9-11", "3-11")
MAX_CHARS = 2000


def load(path):
    """Samples: {sample: (range, unit vectors, unit lengths, reference starts)}."""
    rows = defaultdict(list)
    with open(path, newline="", encoding="utf-8") as f:
        for sample, range_name, n, segment, chars, embedding in csv.reader(f):
            rows[int(sample)].append((int(n), range_name, int(segment), int(chars), [float(x) for x in embedding[1:-1].split(",")]))
    samples = {}
    for sample, units in rows.items():
        units.sort()
        segments = [u[2] for u in units]
        starts = [i for i in range(1, len(units)) if segments[i] != segments[i - 1]]
        samples[sample] = (units[0][1], unit_rows(np.array([u[4] for u in units])), np.array([u[3] for u in units]), starts)
    if not samples:
        sys.exit(f"{path}: no units")
    return samples


def unit_rows(m):
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1, norms)


def neighbour_distances(vectors):
    return 1 - (vectors[:-1] * vectors[1:]).sum(1)


def starts_above(scores, threshold):
    return [g + 1 for g in range(len(scores)) if scores[g] > threshold]


def seed_rule(vectors, _lengths):
    """The percentile rule (method threshold) without its size guards: each vector averaged with its neighbours (±1),
    cut above the 92nd percentile of neighbour distances."""
    smoothed = unit_rows(np.array([vectors[max(0, i - 1) : i + 2].sum(0) for i in range(len(vectors))]))
    d = neighbour_distances(smoothed)
    return starts_above(d, np.percentile(d, 92))


def texttiling(window):
    """Windows of `window` sentences on each side of a gap compared, depth scores on that curve
    (how far each peak rises above the lowest points before the next higher peak on each side),
    cut at local maxima deeper than mean + σ/2 (Hearst 1997)."""

    def method(vectors, _lengths):
        n = len(vectors)
        gaps = []
        for g in range(n - 1):
            left, right = vectors[max(0, g - window + 1) : g + 1].sum(0), vectors[g + 1 : g + 1 + window].sum(0)
            gaps.append(1 - left @ right / (np.linalg.norm(left) * np.linalg.norm(right)))
        d = np.array(gaps)
        depth = np.array([(d[g] - low(d, g, -1)) + (d[g] - low(d, g, 1)) for g in range(len(d))])
        cutoff = depth.mean() + depth.std() / 2
        peaks = [g for g in range(len(d)) if (g == 0 or d[g] >= d[g - 1]) and (g == len(d) - 1 or d[g] > d[g + 1])]
        return [g + 1 for g in peaks if depth[g] > cutoff]

    return method


def low(d, g, step):
    lowest, i = d[g], g + step
    while 0 <= i < len(d) and d[i] <= d[g]:
        lowest, i = min(lowest, d[i]), i + step
    return lowest


def prefix_sums(vectors, centre):
    if centre:
        vectors = unit_rows(vectors - vectors.mean(0))
    return np.vstack([np.zeros(vectors.shape[1]), np.cumsum(vectors, 0)])


def optimal(penalty, centre=True):
    """knowledge.chunk's default (crates/pg_chunk_core/src/segmentation.rs): the cuts that
    maximise Σ |sum of a chunk's centred vectors| − penalty, chunks within the cap."""

    def method(vectors, lengths):
        sums, ends = prefix_sums(vectors, centre), np.concatenate([[0], np.cumsum(lengths + 1)])
        n = len(vectors)
        best, back = np.full(n + 1, -np.inf), np.zeros(n + 1, int)
        best[0] = 0
        for j in range(1, n + 1):
            i = np.arange(j)
            i = i[(ends[j] - ends[i] - 1 <= MAX_CHARS) | (i == j - 1)]
            scores = best[i] + np.linalg.norm(sums[j] - sums[i], axis=1) - penalty
            best[j], back[j] = scores.max(), i[scores.argmax()]
        return backtrack(back, n)

    return method


def cuts_from_length(target):
    """The number of chunks fixed by the document's length (chars / target), placed by dynamic
    programming on the same coherence."""

    def method(vectors, lengths):
        sums, ends = prefix_sums(vectors, True), np.concatenate([[0], np.cumsum(lengths + 1)])
        n = len(vectors)
        chunks = max(1, int(np.ceil(ends[n] / target)))
        best, back = np.full((chunks + 1, n + 1), -np.inf), np.zeros((chunks + 1, n + 1), int)
        best[0, 0] = 0
        for k in range(1, chunks + 1):
            for j in range(1, n + 1):
                i = np.arange(j)
                i = i[(ends[j] - ends[i] - 1 <= MAX_CHARS) | (i == j - 1)]
                scores = best[k - 1, i] + np.linalg.norm(sums[j] - sums[i], axis=1)
                best[k, j], back[k, j] = scores.max(), i[scores.argmax()]
        k, starts, j = int(best[:, n].argmax()), [], n
        while j > 0 and k > 0:
            j, k = back[k, j], k - 1
            starts.append(j)
        return sorted(s for s in starts if s > 0)

    return method


def backtrack(back, n):
    starts, j = [], n
    while j > 0:
        j = back[j]
        starts.append(j)
    return sorted(s for s in starts if s > 0)


IDEAS = [
    ("seed rule (±1 smoothing, p92), no guards", seed_rule),
    ("TextTiling: windows of 2, depth scores", texttiling(2)),
    ("TextTiling: windows of 3, depth scores", texttiling(3)),
    ("TextTiling: windows of 4, depth scores", texttiling(4)),
    ("cuts from length (target 1000 chars)", cuts_from_length(1000)),
    ("cuts from length (target 500 chars)", cuts_from_length(500)),
    ("optimal, penalty 1.3, not centred", optimal(1.3, centre=False)),
    ("optimal, penalty 1.0", optimal(1.0)),
    ("optimal, penalty 1.25", optimal(1.25)),
    ("optimal, penalty 1.3 (the default)", optimal(1.3)),
    ("optimal, penalty 1.5", optimal(1.5)),
    ("optimal, penalty 1.75", optimal(1.75)),
]


def main():
    models = [(os.path.basename(path).removesuffix(".csv").removeprefix("units-"), load(path)) for path in sys.argv[1:]]
    print("| idea | model | " + " | ".join(f"Pk {r}" for r in RANGES) + " | mean |")
    print("|---|---|" + "---|" * (len(RANGES) + 1))
    for name, method in IDEAS:
        for model, samples in models:
            by_range = defaultdict(list)
            for range_name, vectors, lengths, reference in samples.values():
                n = len(lengths)
                ref, hyp = labels(n, reference), labels(n, method(vectors, lengths))
                by_range[range_name].append(pk(ref, hyp, max(1, round(n / (ref[-1] + 1) / 2))))
            cells = [100 * np.mean(by_range[r]) for r in RANGES]
            print(f"| {name} | {model} | " + " | ".join(f"{c:.1f}" for c in cells) + f" | {np.mean(cells):.1f} |")


if __name__ == "__main__":
    main()
