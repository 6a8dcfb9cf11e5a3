"""Prints the markdown table of bench/embeddings/run.sh from its results.tsv.

results.tsv has one measurement a line: round, workload, key, value. Workloads raw,
embed_batch, float_batch, semantic_chunk, potion_batch, e5_batch and e5_float_batch have seconds
and sentences (and stage times); backend:<model> and concurrent:<model> (one line per backend of
the concurrent step in place of the round) have load_ms, first_call_ms and memory in kB. Throughput is sentences /
seconds of each run; a ratio is taken within a round (SQL run / raw run of the same round) and
its median reported, so that rounds run while the machine was busier compare like with like.
"""

import sys
from collections import defaultdict
from statistics import median

MINILM = "all-minilm-l6-v2"
POTION = "potion-base-8m"
E5 = "multilingual-e5-small"
MINILM_FLOAT = "all-minilm-l6-v2-float"
E5_FLOAT = "multilingual-e5-small-float"
MODELS = (MINILM, MINILM_FLOAT, POTION, E5, E5_FLOAT)
# Private memory after embedding the 2,000 sentences (docs/design.md, "Integer kernels"), MiB.
PRIVATE_TARGET = {MINILM: 60, E5: 120, POTION: 8}


def read(path):
    runs = defaultdict(dict)  # (workload, round) -> {key: value}
    with open(path, encoding="utf-8") as file:
        for line in file:
            round_, workload, key, value = line.rstrip("\n").split("\t")
            runs[(workload, int(round_))][key] = float(value)
    return runs


def series(runs, workload, value):
    """value(run) for each round of `workload`, by round."""
    return {round_: value(run) for (name, round_), run in sorted(runs.items()) if name == workload}


# Each measure's format: how to write its number, and the unit after the median.
PER_SECOND = ("{:,.0f}", " sentences/s")
RATIO = ("{:.2f}", "")
SECONDS = ("{:.3f}", " s")
MIB = ("{:,.0f}", " MiB")


def main():
    runs = read(sys.argv[1])
    rows = []

    def row(measure, values, fmt, target="", met=None):
        number, unit = fmt
        values = sorted(values)
        middle = median(values)
        verdict = "" if met is None else ("met" if met(middle) else "**not met**")
        spread = f"{number.format(values[0])}–{number.format(values[-1])} ({len(values)})"
        rows.append((measure, number.format(middle) + unit, spread, target, verdict))

    throughput = {
        workload: series(runs, workload, lambda run: run["sentences"] / run["seconds"])
        for workload in ("raw", "embed_batch", "float_batch", "semantic_chunk", "potion_batch", "e5_batch", "e5_float_batch")
    }

    def ratio_row(measure, numerator, denominator, target="", met=None):
        ratios = [throughput[numerator][r] / throughput[denominator][r] for r in throughput[numerator] if r in throughput[denominator]]
        row(measure, ratios, RATIO, target, met)

    row("raw ONNX Runtime, MiniLM int8, the default's file (Python, outside PostgreSQL)", throughput["raw"].values(), PER_SECOND)
    row("`knowledge.embed_batch`, MiniLM int8 (`all-minilm-l6-v2`)", throughput["embed_batch"].values(), PER_SECOND)
    row("`knowledge.embed_batch`, MiniLM float32 (`all-minilm-l6-v2-float`, the default before)", throughput["float_batch"].values(), PER_SECOND)
    ratio_row("int8 / float32 `embed_batch` (same round)", "embed_batch", "float_batch", "≥ 1.8", lambda v: v >= 1.8)
    ratio_row("`embed_batch` / raw (same round)", "embed_batch", "raw", "≥ 0.9", lambda v: v >= 0.9)
    row("`knowledge.semantic_chunk`, MiniLM int8", throughput["semantic_chunk"].values(), PER_SECOND)
    ratio_row("`semantic_chunk` / raw (same round)", "semantic_chunk", "raw", "≥ 0.9", lambda v: v >= 0.9)
    row("`knowledge.embed_batch`, potion-base-8m, one backend (one core)", throughput["potion_batch"].values(), PER_SECOND,
        "≥ 5,000/s", lambda v: v >= 5000)
    row("`knowledge.embed_batch`, multilingual-e5-small int8, English sentences", throughput["e5_batch"].values(), PER_SECOND)
    row("`knowledge.embed_batch`, multilingual-e5-small-float (4-bit weights, float32)", throughput["e5_float_batch"].values(), PER_SECOND)
    ratio_row("e5 int8 / float `embed_batch` (same round)", "e5_batch", "e5_float_batch")

    for model in MODELS:
        backends = series(runs, f"backend:{model}", lambda run: run).values()
        target = "≤ 0.3 s" if model == MINILM else ""
        met = (lambda v: v <= 0.3) if target else None
        row(f"model load in a fresh backend, {model} (`load_ms`)", [b["load_ms"] / 1000 for b in backends], SECONDS, target, met)
    for model in MODELS:
        backends = series(runs, f"backend:{model}", lambda run: run).values()
        row(f"backend VmRSS growth, {model}: loaded + 2,000 sentences embedded",
            [(b["rss_after_kb"] - b["rss_before_kb"]) / 1024 for b in backends], MIB)
        limit = PRIVATE_TARGET.get(model)
        row(f"backend private memory (RssAnon) right after embedding, in its transaction, {model}",
            [b["rss_anon_after_kb"] / 1024 for b in backends], MIB)
        row(f"backend private memory (RssAnon) it holds once the transaction has ended, {model}",
            [b["rss_anon_idle_kb"] / 1024 for b in backends], MIB,
            f"≤ {limit} MiB" if limit else "", (lambda v, limit=limit: v <= limit) if limit else None)
        row(f"… of which growth since the fresh backend, {model}",
            [(b["rss_anon_idle_kb"] - b["rss_anon_before_kb"]) / 1024 for b in backends], MIB)
    concurrent = list(series(runs, f"concurrent:{MINILM}", lambda run: run).values())
    if concurrent:
        growth = sum(b["rss_anon_idle_kb"] - b["rss_anon_before_kb"] for b in concurrent) / 1024
        rows.append((f"{len(concurrent)} backends at once, {MINILM}: private memory growth, all together",
                     f"{growth:,.0f} MiB", "1 run", "≤ 1,229 MiB (1.2 GiB)", "met" if growth <= 1229 else "**not met**"))

    print("| measure | median | range (runs) | target | |")
    print("|---|---|---|---|---|")
    for measure, value, values, target, verdict in rows:
        print(f"| {measure} | {value} | {values} | {target} | {verdict} |")

    # Where the time goes: the raw run's stages, and the SQL runs' time inside the embedder.
    print()
    stages = ("tokenize", "pad", "run", "pool")
    shares = {stage: median(series(runs, "raw", lambda run, s=stage: run[f"{s}_ms"] / 1000 / run["seconds"]).values()) for stage in stages}
    print("Raw run, share of its time: " + ", ".join(f"{stage} {shares[stage]:.1%}" for stage in stages) + ".")
    for workload in ("embed_batch", "float_batch", "semantic_chunk", "potion_batch", "e5_batch", "e5_float_batch"):
        inside = median(series(runs, workload, lambda run: run["embed_ms"] / 1000 / run["seconds"]).values())
        print(f"`{workload}`: {inside:.2%} of the SQL time is inside the model's embed (embedding_stats().embed_ms).")
    for model in MODELS:
        backends = list(series(runs, f"backend:{model}", lambda run: run).values())
        anon = median(b["rss_anon_after_kb"] for b in backends) / 1024
        file_backed = median(b["rss_file_after_kb"] for b in backends) / 1024
        print(f"{model}, backend after embedding: RssAnon {anon:,.0f} MiB, RssFile {file_backed:,.0f} MiB (medians).")


if __name__ == "__main__":
    main()
