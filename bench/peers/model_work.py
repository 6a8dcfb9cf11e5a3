"""How much MiniLM work each side of bench/peers asks for, and what one inference run costs
(the shape of crates/pg_chunk_embed/src/batching.rs's cost model). Run with the peers' Python ($PG_CHUNK_BUILD_DIR/peers-venv/bin/python):

  model_work.py fit                       # a run's cost over a grid of rows × widths
  model_work.py count SENTENCES WORKLOAD  # positions and modelled seconds, pg_chunk vs LangChain

SENTENCES is pg_chunk's sentences of the workload's documents with their token counts, a TSV
from the database that pg_chunk.sh loads:

  psql -d pg_chunk_bench_peers -c "\\copy (SELECT d.name, knowledge.token_count(s.content,
    'all-minilm-l6-v2'), md5(s.content) FROM bench_docs d, knowledge.split_sentences(d.body) s)
    TO 'sentences.tsv'"

WORKLOAD is run.sh's workload folder (its docs/ are split again here by LangChain's rule).
"""

import argparse
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import embedders  # noqa: E402

MODEL_DIR = "/usr/share/postgresql/15/pg_chunk/models/all-minilm-l6-v2"
# LangChain SemanticChunker's defaults: its sentence rule and buffer_size 1.
LANGCHAIN_SENTENCE = re.compile(r"(?<=[.?!])\s+")
# The fit of `fit` on the 2-core machine (2026-11-30), in seconds.
RUN, POSITION, POSITION_SQUARED = 3.6e-3, 297e-6, 1.44e-6


def fit(args):
    session = embedders.MiniLM(args.model_dir, 1).session
    takes_types = any(i.name == "token_type_ids" for i in session.get_inputs())
    observations, seconds = [], []
    for width in (4, 8, 16, 32, 64, 128):
        row = []
        for rows in (1, 2, 4, 8, 16):
            feed = {"input_ids": np.full((rows, width), 1996, dtype=np.int64),
                    "attention_mask": np.ones((rows, width), dtype=np.int64)}
            if takes_types:
                feed["token_type_ids"] = np.zeros((rows, width), dtype=np.int64)
            session.run(None, feed)
            times = []
            for _ in range(max(3, int(0.6 / (POSITION * rows * width + 0.002)))):
                started = time.perf_counter()
                session.run(None, feed)
                times.append(time.perf_counter() - started)
            median = sorted(times)[len(times) // 2]
            observations.append([1, rows * width, rows * width * width])
            seconds.append(median)
            row.append(f"{median * 1000:7.2f}")
        print(f"width {width:3d}: {' '.join(row)} ms for 1, 2, 4, 8, 16 rows")
    # Least squares on relative errors, so that the small runs (which show the per-run cost)
    # weigh as much as the large ones.
    observations, seconds = np.array(observations, float), np.array(seconds)
    (run, position, squared), *_ = np.linalg.lstsq(observations / seconds[:, None], np.ones(len(seconds)), rcond=None)
    print(f"a run costs {run * 1e3:.2f} ms + rows × ({position * 1e6:.1f} µs × width + {squared * 1e6:.3f} µs × width²)")


def batch_seconds(rows, width):
    return RUN + rows * (POSITION * width + POSITION_SQUARED * width * width)


def every_16(widths):
    widths = sorted(widths)
    return sum(batch_seconds(len(widths[k:k + 16]), max(widths[k:k + 16])) for k in range(0, len(widths), 16))


def cheapest_cuts(widths, batch_size=16):
    """What pg_chunk's batching.rs chooses: the cheapest runs of the sorted widths."""
    widths = sorted(widths)
    best = [0.0] + [float("inf")] * len(widths)
    for end in range(1, len(widths) + 1):
        best[end] = min(best[begin] + batch_seconds(end - begin, widths[end - 1])
                        for begin in range(max(0, end - batch_size), end))
    return best[-1]


def count(args):
    import tokenizers

    tokenizer = tokenizers.Tokenizer.from_file(os.path.join(args.model_dir, "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    ours = defaultdict(dict)  # document -> distinct sentence -> width ([CLS] and [SEP] included)
    for line in open(args.sentences):
        name, tokens, digest = line.rstrip("\n").split("\t")
        ours[name][digest] = min(embedders.MAX_TOKENS, int(tokens) + 2)
    theirs = {}
    for name in ours:
        sentences = LANGCHAIN_SENTENCE.split((Path(args.workload) / "docs" / name).read_text())
        windows = [" ".join(sentences[max(0, i - 1):i + 2]) for i in range(len(sentences))]
        theirs[name] = [min(embedders.MAX_TOKENS, len(e.ids)) for e in tokenizer.encode_batch(windows)]
    print(f"{len(ours)} documents")
    print("| | rows | positions | padded, batches of 16 | model s, batches of 16 | model s, cheapest cuts |")
    print("|---|---|---|---|---|---|")
    for label, documents in (("pg_chunk", {n: list(d.values()) for n, d in ours.items()}), ("LangChain", theirs)):
        widths = [w for ws in documents.values() for w in ws]
        padded = sum(max(ws[k:k + 16]) * len(ws[k:k + 16]) for ws in map(sorted, documents.values())
                     for k in range(0, len(ws), 16))
        fixed = sum(every_16(ws) for ws in documents.values())
        cheapest = sum(cheapest_cuts(ws) for ws in documents.values())
        print(f"| {label} | {len(widths):,} | {sum(widths):,} | {padded:,} | {fixed:.0f} | {cheapest:.0f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=MODEL_DIR)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fit")
    counting = commands.add_parser("count")
    counting.add_argument("sentences")
    counting.add_argument("workload")
    args = parser.parse_args()
    {"fit": fit, "count": count}[args.command](args)


if __name__ == "__main__":
    main()
