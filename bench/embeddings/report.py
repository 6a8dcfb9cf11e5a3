"""Prints the markdown table of bench/embeddings/run.sh from its results.tsv.

results.tsv has one measurement a line: round, workload, key, value. Workloads raw,
embed_batch, semantic_chunk and potion_batch have seconds and sentences (and stage times);
backend:<model> has load_ms, first_call_ms and resident memory in kB. Throughput is sentences /
seconds of each run; a ratio is taken within a round (SQL run / raw run of the same round) and
its median reported, so that rounds run while the machine was busier compare like with like.
"""

import sys
from collections import defaultdict
from statistics import median

MINILM = "all-minilm-l6-v2"
POTION = "potion-base-8m"
E5 = "multilingual-e5-small"
# The wheel's model.onnx optimised at each load (run.sh adds it to the bench database).
MINILM_PLAIN = "all-minilm-l6-v2-onnx"


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
        for workload in ("raw", "embed_batch", "semantic_chunk", "potion_batch", "e5_batch")
    }
    raw = throughput["raw"]
    row("raw ONNX Runtime, MiniLM (Python, outside PostgreSQL)", raw.values(), PER_SECOND)
    for workload in ("embed_batch", "semantic_chunk"):
        row(f"`knowledge.{workload}`, MiniLM", throughput[workload].values(), PER_SECOND)
        ratios = [throughput[workload][r] / raw[r] for r in throughput[workload] if r in raw]
        row(f"`{workload}` / raw (same round)", ratios, RATIO, "≥ 0.9", lambda v: v >= 0.9)
    row("`knowledge.embed_batch`, potion-base-8m, one backend (one core)", throughput["potion_batch"].values(), PER_SECOND,
        "≥ 5,000/s", lambda v: v >= 5000)
    row("`knowledge.embed_batch`, multilingual-e5-small (4-bit), English sentences", throughput["e5_batch"].values(), PER_SECOND)

    for model, target in ((MINILM, "≤ 0.3 s"), (MINILM_PLAIN, ""), (POTION, ""), (E5, "")):
        backends = series(runs, f"backend:{model}", lambda run: run).values()
        met = (lambda v: v <= 0.3) if target else None
        row(f"model load in a fresh backend, {model} (`load_ms`)", [b["load_ms"] / 1000 for b in backends], SECONDS, target, met)
        row(f"first `knowledge.embed` call in a fresh backend, {model}", [b["first_call_ms"] / 1000 for b in backends], SECONDS)
    for model in (MINILM, MINILM_PLAIN, POTION, E5):
        backends = series(runs, f"backend:{model}", lambda run: run).values()
        row(f"backend VmRSS before loading, {model}", [b["rss_before_kb"] / 1024 for b in backends], MIB)
        row(f"backend VmRSS growth, {model}: loaded", [(b["rss_loaded_kb"] - b["rss_before_kb"]) / 1024 for b in backends], MIB)
        row(f"backend VmRSS growth, {model}: loaded + 2,000 sentences embedded",
            [(b["rss_after_kb"] - b["rss_before_kb"]) / 1024 for b in backends], MIB)

    print("| measure | median | range (runs) | target | |")
    print("|---|---|---|---|---|")
    for measure, value, values, target, verdict in rows:
        print(f"| {measure} | {value} | {values} | {target} | {verdict} |")

    # Where the time goes: the raw run's stages, and the SQL runs' time inside the embedder.
    print()
    stages = ("tokenize", "pad", "run", "pool")
    shares = {stage: median(series(runs, "raw", lambda run, s=stage: run[f"{s}_ms"] / 1000 / run["seconds"]).values()) for stage in stages}
    print("Raw run, share of its time: " + ", ".join(f"{stage} {shares[stage]:.1%}" for stage in stages) + ".")
    for workload in ("embed_batch", "semantic_chunk", "potion_batch", "e5_batch"):
        inside = median(series(runs, workload, lambda run: run["embed_ms"] / 1000 / run["seconds"]).values())
        print(f"`{workload}`: {inside:.2%} of the SQL time is inside the model's embed (embedding_stats().embed_ms).")
    for model in (MINILM, MINILM_PLAIN, POTION, E5):
        backends = list(series(runs, f"backend:{model}", lambda run: run).values())
        anon = median(b["rss_anon_after_kb"] for b in backends) / 1024
        file_backed = median(b["rss_file_after_kb"] for b in backends) / 1024
        print(f"{model}, backend after embedding: RssAnon {anon:,.0f} MiB, RssFile {file_backed:,.0f} MiB (medians).")


if __name__ == "__main__":
    main()
