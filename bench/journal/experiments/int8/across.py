"""all-MiniLM-L6-v2's integer graph on another CPU: its speed there, and its vectors against this one's.

    python bench/journal/experiments/int8/across.py MODELS_DIR SOURCES ROUNDS VECTORS.npz
    python bench/journal/experiments/int8/across.py --compare HERE.npz THERE.npz

Environment and the first three arguments as precision.py's. The first form prints the CPU (its
model name and which of AVX2, AVX-512 VNNI, AVX-VNNI and AMX it has), precision.py's MiniLM lines
(cosines with the float copy, then sentences/s of the installed graph, uint8 weights,
x64quantprecision and the float copy, one thread, rounds interleaved), then the installed graph's
sentences/s with 1, 2, 4, ... threads up to the CPU count (the FAQ sentences in batches of 16, the
best of two runs), and saves each variant's FAQ vectors, and the float copy's, in VECTORS.npz. The
second form prints, for each of them, the mean and least cosine between two such files' vectors:
the same texts embedded on two CPUs. bench/journal/experiments/int8/device.sh runs the first form on the device
machine.
"""
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "scripts" / "int8"))  # minilm.py
import compare  # noqa: E402
from precision import minilm_variants  # noqa: E402
from static import faq_bench, print_parity, print_speeds  # noqa: E402

FLAGS = ("avx2", "avx512_vnni", "avx_vnni", "amx_int8")


def cpu():
    """The CPU's model name and which of FLAGS it has."""
    info = Path("/proc/cpuinfo").read_text()
    name = next(line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name"))
    flags = set(next(line for line in info.splitlines() if line.startswith("flags")).split(":", 1)[1].split())
    return f"{name}, {os.cpu_count()} CPUs; " + ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in FLAGS)


def print_threads(path, faq):
    """The installed graph's sentences/s with 1, 2, 4, ... intra-op threads (best of two runs)."""
    counts = [1]
    while counts[-1] * 2 <= os.cpu_count():
        counts.append(counts[-1] * 2)
    for threads in counts:
        run = compare.session(path, threads)
        times = []
        for _ in range(2):
            started = time.perf_counter()
            compare.embed(run, faq, 16)
            times.append(time.perf_counter() - started)
        print(f"installed, {threads:2d} threads {len(faq) / min(times):6.1f} sentences/s", flush=True)


def measure(vectors_path):
    bench = faq_bench(__doc__)
    print(cpu(), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        variants = minilm_variants(bench, folder)
        vectors = print_parity(variants, bench, 18)
        variants["float copy"] = compare.session(str(bench.models / "model.optimized.onnx"))
        print_speeds(variants, bench.faq, bench.rounds, 18)
    print_threads(str(bench.models / "model.int8.onnx"), bench.faq)
    saved = {label.replace(" ", "_"): v for label, v in vectors.items()}
    np.savez(vectors_path, cpu=cpu(), float=bench.float_faq, **saved)


def compare_files(here, there):
    a, b = np.load(here), np.load(there)
    print(f"{here}: {a['cpu']}\n{there}: {b['cpu']}")
    for label in (name for name in a.files if name != "cpu"):
        cosines = (a[label] * b[label]).sum(1)
        print(f"{label:18s} {len(cosines)} FAQ sentences: cosine mean {cosines.mean():.6f} least {cosines.min():.6f}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        compare_files(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5:
        measure(sys.argv.pop())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
