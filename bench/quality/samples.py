"""Builds segmentation samples by Choi's protocol from sentences CSV rows (section, page, sentence),
in section order, as run.sh writes them.

    python3 samples.py SENTENCES.csv OUT.csv [--per-range N] [--seed S] [--segments SEGMENTS.csv]

A sample is 10 segments; each is the first n sentences of a section, n drawn uniformly from the
range, the 10 sections from 10 different pages. Ranges 3-5, 6-8, 9-11 and 3-11, N samples each
(default 25). Writes rows (sample, range, segment, sentence) in document order. Fixed seed (default
2026): the same samples every run. With --segments, also writes rows (sample, segment, section),
section being the id in SENTENCES.csv's first column (q_sections.id), for retrieval.sql.
"""

import argparse
import csv
import random
from collections import defaultdict

RANGES = [(3, 5), (6, 8), (9, 11), (3, 11)]
SEGMENTS = 10


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sentences")
    parser.add_argument("out")
    parser.add_argument("--per-range", type=int, default=25)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--segments", help="also write (sample, segment, section) rows here")
    args = parser.parse_args()

    by_section = defaultdict(list)
    page_of = {}
    with open(args.sentences, newline="", encoding="utf-8") as f:
        for section, page, sentence in csv.reader(f):
            by_section[section].append(sentence)
            page_of[section] = page
    sections = sorted(by_section, key=int)
    rng = random.Random(args.seed)
    origins = []
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        sample = 0
        for low, high in RANGES:
            for _ in range(args.per_range):
                sample += 1
                lengths = [rng.randint(low, high) for _ in range(SEGMENTS)]
                pages_used = set()
                for segment, n in enumerate(lengths):
                    candidates = [s for s in sections if len(by_section[s]) >= n and page_of[s] not in pages_used]
                    section = rng.choice(candidates)
                    pages_used.add(page_of[section])
                    origins.append((sample, segment, section))
                    for sentence in by_section[section][:n]:
                        writer.writerow([sample, f"{low}-{high}", segment, sentence])
    if args.segments:
        with open(args.segments, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(origins)


if __name__ == "__main__":
    main()
