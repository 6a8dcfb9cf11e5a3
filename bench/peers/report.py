"""Tables and a bar chart of the side-by-side benchmark: pg_chunk against each Python peer.

    python3 report.py OUT_DIR [--chart ratios.svg] [--markdown results.md]

Reads every *.jsonl in OUT_DIR: the peers' rows (peers.py writes results.jsonl) and pg_chunk's
(the SQL side writes pg_chunk.jsonl; the schema is in bench/peers/README.md). Prints markdown:
one row per measurement with its medians over rounds, then the ratios. A ratio is taken within
a round (pg_chunk's throughput ÷ the peer's in the same round, so > 1 means pg_chunk is faster),
then the median over the rounds both have; where they share no round it is the ratio of the
medians, and the table says so. A pg_chunk row is paired with every peer row of the same task,
model and mode. The chart draws the throughput ratios on a logarithmic axis, as an SVG written
here without any plotting library. Writes summary.csv into OUT_DIR.
"""

import argparse
import csv
import json
import math
import statistics
import time
from collections import defaultdict
from pathlib import Path

MODEL_NAMES = {"all-minilm-l6-v2": "MiniLM", "potion-base-8m": "potion-base-8m", None: "—"}


def throughput(row):
    """(value, unit) of a row: sentences/s for the embedding stage, MB/s (10^6 bytes) otherwise."""
    if row["task"] == "embed":
        return row["sentences"] / row["seconds"], "sentences/s"
    return row["bytes"] / 1e6 / row["seconds"], "MB/s"


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def load(out_dir):
    rows = []
    for path in sorted(out_dir.glob("*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                missing = [k for k in ("system", "id", "task", "mode", "round", "seconds") if k not in row]
                if missing:
                    raise SystemExit(f"{path}:{number}: no {', '.join(missing)}")
                row.setdefault("model", None)
                rows.append(row)
    return rows


def groups(rows):
    """{(system, id, task, model, mode): {round: row}}, the last row of a round winning."""
    grouped = defaultdict(dict)
    for row in rows:
        grouped[(row["system"], row["id"], row["task"], row["model"], row["mode"])][row["round"]] = row
    return grouped


def fmt(value, digits=2):
    if value is None:
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def summary(grouped):
    """One dict per measurement: medians over its rounds."""
    lines = []
    for key, by_round in grouped.items():
        system, ident, task, model, mode = key
        rounds = list(by_round.values())
        value_unit = [throughput(r) for r in rounds]
        first = rounds[0]
        lines.append({
            "system": system, "id": ident, "label": first.get("label", ident), "task": task, "model": model,
            "mode": mode, "rounds": len(rounds), "unit": value_unit[0][1],
            "seconds": median(r["seconds"] for r in rounds),
            "throughput": median(v for v, _ in value_unit),
            "throughput_min": min(v for v, _ in value_unit), "throughput_max": max(v for v, _ in value_unit),
            "documents_per_s": median(r["documents"] / r["seconds"] for r in rounds) if task != "embed" else None,
            "documents": first.get("documents"), "bytes": first.get("bytes"), "sentences": first.get("sentences"),
            "chunks": median(r.get("chunks") for r in rounds),
            "mean_chunk_chars": median(r.get("mean_chunk_chars") for r in rounds),
            "first_call_seconds": median(r.get("first_call_seconds") for r in rounds),
            "peak_rss_mib": median(r["peak_rss_kib"] / 1024 if r.get("peak_rss_kib") else None for r in rounds),
            "threads": first.get("threads"),
            "by_round": {n: v for n, (v, _) in zip(by_round, value_unit)},
        })
    order = {"embed": 0, "semantic": 1, "recursive": 2}
    lines.sort(key=lambda s: (order.get(s["task"], 9), s["model"] or "", s["mode"], s["system"] != "pg_chunk", s["id"]))
    return lines


def same_workload(a, b):
    if a["task"] == "embed":
        return a["sentences"] == b["sentences"]
    return (a["bytes"], a["documents"]) == (b["bytes"], b["documents"])


def ratios(lines):
    pairs = []
    for pg in (s for s in lines if s["system"] == "pg_chunk"):
        for peer in lines:
            if peer["system"] == "pg_chunk" or (peer["task"], peer["model"], peer["mode"]) != (pg["task"], pg["model"], pg["mode"]):
                continue
            shared = sorted(set(pg["by_round"]) & set(peer["by_round"]))
            per_round = [pg["by_round"][n] / peer["by_round"][n] for n in shared]
            pairs.append({
                "pg": pg, "peer": peer,
                "ratio": statistics.median(per_round) if per_round else pg["throughput"] / peer["throughput"],
                "low": min(per_round) if per_round else None, "high": max(per_round) if per_round else None,
                "within_rounds": len(per_round),
                # Only figures over the same text compare; say so where the workloads differ.
                "mismatch": "" if same_workload(pg, peer) else " (**other workload**)",
            })
    return pairs


def pair_label(p):
    """"MiniLM, chunk: semantic_chunk ÷ Chonkie SemanticChunker" and the like."""
    pg, peer = p["pg"], p["peer"]
    context = ", ".join(x for x in (MODEL_NAMES.get(pg["model"]) if pg["model"] else None, pg["mode"]) if x)
    return f"{context}: {pg['label']} ÷ {peer['label']}"


def markdown(lines, pairs, environment):
    out = []
    out.append("| system | measurement | model | mode | rounds | median s | throughput | docs/s | chunks | mean chunk chars | first call s | peak RSS MiB |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in lines:
        out.append(
            f"| {s['system']} | {s['label']} | {MODEL_NAMES.get(s['model'], s['model'])} "
            f"| {s['mode']} | {s['rounds']} | {fmt(s['seconds'])} | {fmt(s['throughput'], 3)} {s['unit']} "
            f"| {fmt(s['documents_per_s'])} | {fmt(s['chunks'], 0)} | {fmt(s['mean_chunk_chars'], 0)} "
            f"| {fmt(s['first_call_seconds'])} | {fmt(s['peak_rss_mib'], 0)} |"
        )
    if pairs:
        out.append("")
        out.append("| pg_chunk | peer | task | model | mode | pg_chunk ÷ peer, throughput (median, range, rounds) | first call s (pg_chunk / peer) | peak RSS MiB (pg_chunk / peer) |")
        out.append("|---|---|---|---|---|---|---|---|")
        for p in pairs:
            spread = (f"{fmt(p['ratio'])} ({fmt(p['low'])}–{fmt(p['high'])}, {p['within_rounds']})" if p["within_rounds"]
                      else f"{fmt(p['ratio'])} (ratio of medians: no shared round)")
            out.append(
                f"| {p['pg']['label']} | {p['peer']['label']}{p['mismatch']} | {p['pg']['task']} | {MODEL_NAMES.get(p['pg']['model'], p['pg']['model'])} "
                f"| {p['pg']['mode']} | {spread} | {fmt(p['pg']['first_call_seconds'])} / {fmt(p['peer']['first_call_seconds'])} "
                f"| {fmt(p['pg']['peak_rss_mib'], 0)} / {fmt(p['peer']['peak_rss_mib'], 0)} |"
            )
    if environment:
        versions = ", ".join(f"{k} {v}" for k, v in environment.get("versions", {}).items() if v)
        out.append("")
        out.append(f"Peers: Python {environment.get('python')}, {versions}; {environment.get('threads')} intra-op "
                   f"thread(s); CPU {environment.get('cpu')} ({environment.get('cpus')} cores); the peers' MiniLM file: "
                   f"{environment.get('minilm_file', 'model.optimized.onnx')}.")
    return "\n".join(out)


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_chart(pairs, title):
    """Horizontal bars of pg_chunk ÷ peer on a log10 axis, 1 marked; green where pg_chunk is faster."""
    label_width = 20 + 7 * max(len(pair_label(p)) for p in pairs)
    plot_width, bar_height, gap, top = 420, 18, 8, 56
    height = top + len(pairs) * (bar_height + gap) + 44
    values = [p["ratio"] for p in pairs]
    low = 10 ** math.floor(math.log10(min(values + [1.0]) * 0.9))
    high = 10 ** math.ceil(math.log10(max(values + [1.0]) * 1.1))
    span = math.log10(high) - math.log10(low)

    def x(value):
        return label_width + plot_width * (math.log10(value) - math.log10(low)) / span

    width = max(label_width + plot_width + 70, 760)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="DejaVu Sans, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="22" font-size="14" font-weight="bold">{escape(title)}</text>',
        '<text x="10" y="40" fill="#555">pg_chunk throughput ÷ peer throughput, same model, text and machine '
        '(median of per-round ratios; log scale; &gt; 1: pg_chunk faster)</text>',
    ]
    decade = low
    axis_bottom = top + len(pairs) * (bar_height + gap)
    while decade <= high * 1.0001:
        for step in (1, 2, 5):
            tick = decade * step
            if low <= tick <= high * 1.0001:
                px = x(tick)
                major = step == 1
                parts.append(f'<line x1="{px:.1f}" y1="{top - 4}" x2="{px:.1f}" y2="{axis_bottom}" '
                             f'stroke="{"#bbb" if major else "#e5e5e5"}"/>')
                parts.append(f'<text x="{px:.1f}" y="{axis_bottom + 16}" text-anchor="middle" fill="#555">{tick:g}</text>')
        decade *= 10
    one = x(1.0)
    for i, p in enumerate(pairs):
        y = top + i * (bar_height + gap)
        left, right = sorted((one, x(p["ratio"])))
        colour = "#2e8b57" if p["ratio"] >= 1 else "#d2691e"
        label = pair_label(p)
        parts.append(f'<text x="{label_width - 8}" y="{y + 13}" text-anchor="end">{escape(label)}</text>')
        parts.append(f'<rect x="{left:.1f}" y="{y}" width="{max(right - left, 1):.1f}" height="{bar_height}" fill="{colour}"/>')
        text_x = right + 4 if p["ratio"] >= 1 else left - 4
        anchor = "start" if p["ratio"] >= 1 else "end"
        parts.append(f'<text x="{text_x:.1f}" y="{y + 13}" text-anchor="{anchor}">{p["ratio"]:.2f}×</text>')
    parts.append(f'<line x1="{one:.1f}" y1="{top - 6}" x2="{one:.1f}" y2="{axis_bottom}" stroke="black" stroke-width="1.5"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--chart", type=Path, help="write the ratio chart here (SVG)")
    parser.add_argument("--markdown", type=Path, help="also write the tables here")
    args = parser.parse_args()

    rows = load(args.out_dir)
    if not rows:
        raise SystemExit(f"no results in {args.out_dir}")
    lines = summary(groups(rows))
    pairs = ratios(lines)
    environment_file = args.out_dir / "environment.json"
    environment = json.loads(environment_file.read_text()) if environment_file.exists() else None
    stamps = sorted(r["at"] for r in rows if r.get("at"))
    when = f"{stamps[0]} – {stamps[-1]}" if stamps else time.strftime("%Y-%m-%d")
    text = f"Rows of {when}.\n\n" + markdown(lines, pairs, environment)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")

    with open(args.out_dir / "summary.csv", "w", newline="") as file:
        fields = [k for k in lines[0] if k != "by_round"]
        writer = csv.DictWriter(file, fieldnames=fields)
        writer.writeheader()
        for s in lines:
            writer.writerow({k: s[k] for k in fields})

    if args.chart:
        if pairs:
            day = stamps[0][:10] if stamps else time.strftime("%Y-%m-%d")
            args.chart.write_text(svg_chart(pairs, f"pg_chunk against Python chunkers, {day}"))
            print(f"\nchart: {args.chart}")
        else:
            print("\nno pg_chunk rows: no ratios, no chart")


if __name__ == "__main__":
    main()
