"""The scale benchmark's report: markdown tables from run.sh's "size<TAB>key<TAB>value" rows, and
optionally an SVG plot of latency and ingestion against the store's chunks.

    python3 bench/scale/report.py scale.tsv "machine line" [scale.svg]
"""
import math
import sys
from collections import defaultdict


def load(path):
    by_size = defaultdict(dict)
    for line in open(path):
        size, key, value = line.rstrip("\n").split("\t")
        by_size[int(size)][key] = float(value) if value not in ("", "NaN") else math.nan
    return dict(sorted(by_size.items()))


def mbps(v, prefix):
    return v.get(prefix + "mb", math.nan) / v[prefix + "s"] if prefix + "s" in v else math.nan


def bulk_mbps(v):
    return v["bulk_mb"] / v["bulk_s"]


def report(rows, same, machine):
    sizes = list(rows)
    out = [f"    {machine}", ""]
    first = rows[sizes[0]]
    out += ["| chunks | documents | MB | bulk load MB/s (insert s + HNSW s + GIN s + statistics s) | sync trigger MB/s | async, 2 workers, MB/s | edit 10% s | VACUUM s |",
            "|---|---|---|---|---|---|---|---|"]
    for s, v in rows.items():
        p = "bulk_"
        out.append(f"| {v['chunks']:,.0f} | {v['documents']:,.0f} | {v['mb']:.1f} | {bulk_mbps(v):.2f} ({v[p + 'insert_s']:.1f} + "
                   f"{v[p + 'hnsw_build_s']:.1f} + {v[p + 'gin_build_s']:.1f} + {v.get(p + 'stats_s', math.nan):.1f}) | {mbps(v, 'sync_'):.2f} | {mbps(v, 'async_'):.2f} | "
                   f"{v['edit_s']:.1f} | {v['vacuum_s']:.1f} |")
    out += ["", f"The same {same['same_docs_mb']:.1f} MB into an empty store: through the sync trigger {same['same_docs_sync_s']:.1f} s, "
            f"by the bulk load {same['same_docs_bulk_s']:.1f} s ({same['same_docs_bulk_insert_s']:.1f} + {same['same_docs_bulk_hnsw_build_s']:.1f} "
            f"+ {same['same_docs_bulk_gin_build_s']:.1f} + {same.get('same_docs_bulk_stats_s', math.nan):.1f}), {same['same_docs_sync_s'] / same['same_docs_bulk_s']:.2f} × as fast (target ≥ 3). "
            f"Sync trigger at the largest size ÷ at the first: {mbps(rows[sizes[-1]], 'sync_') / mbps(first, 'sync_'):.2f} (target ≥ 0.8).", ""]
    out += ["| chunks | search, clients | p50 ms | p95 ms | p99 ms | queries/s |", "|---|---|---|---|---|---|"]
    for s, v in rows.items():
        for mode in ("hybrid", "text", "vector"):
            for c in (1, 8):
                k = f"{mode}_{c}_"
                out.append(f"| {v['chunks']:,.0f} | {mode}, {c} | {v[k + 'p50']:.2f} | {v[k + 'p95']:.2f} | {v[k + 'p99']:.2f} | {v[k + 'qps']:.1f} |")
    out += ["", "| chunks | hybrid q/s, 8 clients ÷ 1 | vector recall@10 %, by id / by distance | text leg: % of exhaustive BM25's top 10, questions exact | text leg p50 / p95 ms | exhaustive p50 / p95 ms | backend private / peak MiB |",
            "|---|---|---|---|---|---|---|"]
    for s, v in rows.items():
        out.append(f"| {v['chunks']:,.0f} | {v['hybrid_8_qps'] / v['hybrid_1_qps']:.2f} | {v['vector_recall10']:.1f} / {v.get('vector_recall10_distance', math.nan):.1f} | "
                   f"{v['text_search_share']:.1f}, {v['text_search_exact']:.0f} | {v['text_search_p50']:.2f} / {v['text_search_p95']:.2f} | "
                   f"{v['text_exhaustive_p50']:.2f} / {v['text_exhaustive_p95']:.2f} | {v['memory_rssanon_mib']:.1f} / {v['memory_vmhwm_mib']:.1f} |")
    disks = sorted(k for v in rows.values() for k in v if k.startswith("disk_") and k != "disk_total")
    disks = list(dict.fromkeys(disks)) + ["disk_total"]
    out += ["", "| chunks | " + " | ".join(d[5:].replace("_", " ") for d in disks) + " |", "|---" * (len(disks) + 1) + "|"]
    for s, v in rows.items():
        out.append(f"| {v['chunks']:,.0f} | " + " | ".join(f"{v.get(d, 0):,.0f}" for d in disks) + " |")
    out.append("")
    out.append("Disk in bytes per chunk of the config.")
    return "\n".join(out)


def svg(rows, path):
    """Two panels, chunks on a log axis: p95 latency (1 client) and ingestion MB/s."""
    w, h, pad = 360, 260, 50
    xs = [v["chunks"] for v in rows.values()]
    lo, hi = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]

    def panel(x0, title, series, unit):
        top = max(y for _, ys in series for y in ys if not math.isnan(y)) * 1.15
        px = lambda c: x0 + pad + (math.log10(c) - lo) / (hi - lo) * (w - pad - 10)
        py = lambda y: h - pad + 10 - y / top * (h - pad - 20)
        parts = [f'<text x="{x0 + w / 2}" y="16" text-anchor="middle" font-size="13">{title}</text>',
                 f'<line x1="{x0 + pad}" y1="{h - pad + 10}" x2="{x0 + w - 10}" y2="{h - pad + 10}" stroke="black"/>',
                 f'<line x1="{x0 + pad}" y1="30" x2="{x0 + pad}" y2="{h - pad + 10}" stroke="black"/>',
                 f'<text x="{x0 + w / 2}" y="{h - 8}" text-anchor="middle" font-size="11">chunks (log scale)</text>',
                 f'<text x="{x0 + 12}" y="{h / 2}" font-size="11" transform="rotate(-90 {x0 + 12} {h / 2})" text-anchor="middle">{unit}</text>']
        for c in xs:
            parts.append(f'<text x="{px(c):.1f}" y="{h - pad + 24}" text-anchor="middle" font-size="10">{c:,.0f}</text>')
        for t in range(5):
            y = top * t / 4
            parts.append(f'<text x="{x0 + pad - 4}" y="{py(y) + 3:.1f}" text-anchor="end" font-size="10">{y:.3g}</text>')
        for i, (name, ys) in enumerate(series):
            pts = [(px(c), py(y)) for c, y in zip(xs, ys) if not math.isnan(y)]
            parts.append(f'<polyline fill="none" stroke="{colours[i]}" stroke-width="2" points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in pts)}"/>')
            parts += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{colours[i]}"/>' for a, b in pts]
            parts.append(f'<text x="{x0 + pad + 8}" y="{40 + 14 * i}" font-size="11" fill="{colours[i]}">{name}</text>')
        return parts

    v = list(rows.values())
    latency = [(m, [r[f"{m}_1_p95"] for r in v]) for m in ("hybrid", "text", "vector")]
    ingestion = [("bulk load", [bulk_mbps(r) for r in v]), ("sync trigger", [mbps(r, "sync_") for r in v]),
                 ("async, 2 workers", [mbps(r, "async_") for r in v])]
    body = panel(0, "search p95, 1 client, k = 10", latency, "ms") + panel(w + 20, "ingestion", ingestion, "MB/s")
    with open(path, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w + 20}" height="{h}" font-family="sans-serif">\n'
                + "\n".join(body) + "\n</svg>\n")


if __name__ == "__main__":
    rows = load(sys.argv[1])
    same = rows.pop(0)
    print(report(rows, same, sys.argv[2]))
    if len(sys.argv) > 3:
        svg(rows, sys.argv[3])
