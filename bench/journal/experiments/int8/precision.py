"""Why the installed MiniLM graph is further from the float model on a CPU with AVX2 but no VNNI
(bench/journal/int8.md), measured: ONNX Runtime's u8 × s8 kernel there multiplies with
VPMADDUBSW, which adds each pair of products in 16 bits and saturates; with VNNI (or u8 × u8) the
sums are exact in 32 bits.

    python bench/journal/experiments/int8/precision.py MODELS_DIR SOURCES [ROUNDS]

Environment and arguments as static.py's. Variants of all-minilm-l6-v2:
- installed: model.int8.onnx loaded as pg_chunk loads it (optimisation off);
- uint8 weights: minilm.py's graph with each weight stored as uint8 around zero point 128 (the
  same values), so ONNX Runtime takes its u8 × u8 kernel; written by the optimiser as the
  installer writes it;
- x64quantprecision: model.int8.onnx loaded with ONNX Runtime's `session.x64quantprecision = 1`
  and its extended optimisations, under which its Avx2WeightS8ToU8Transformer does the same
  conversion as the graph loads (only on CPUs where u8 × s8 can saturate).
Printed: mean and least cosine with the float copy on the parity sentences and 600 FAQ sentences,
then sentences/s on the FAQ sentences in batches of 16, one thread, rounds interleaved; then the
same cosines for multilingual-e5-small's installed graph, as installed and with
x64quantprecision, on the 147 texts of scripts/e5/sentences.tsv (`passage: `).
"""
import csv
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnx import numpy_helper
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "scripts" / "int8"))  # minilm.py
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "scripts" / "e5"))
import compare  # noqa: E402
import convert  # noqa: E402
import minilm  # noqa: E402
from static import faq_bench, print_parity, print_speeds  # noqa: E402


def uint8_linear(g, name, x, weight, bias, quantize):
    """convert.int8_linear with its int8 weight q stored as q + 128 (uint8) and zero point 128."""
    result = convert.int8_linear(g, name, x, weight, bias)
    at = next(i for i, t in enumerate(g.initializers) if t.name == f"{name}.int8")
    q = numpy_helper.to_array(g.initializers[at])
    g.initializers[at] = numpy_helper.from_array((q.astype(np.int16) + 128).astype(np.uint8), f"{name}.int8")
    product = next(n for n in g.nodes if n.name == f"{name}.product")
    product.input.append(product.input[4])  # the weight's zero point: 128, the input's
    return result


def precise(path):
    """The file loaded with x64quantprecision and the extended optimisations, one thread."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.add_session_config_entry("session.x64quantprecision", "1")
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def e5_parity(models):
    folder = models.parent / "multilingual-e5-small"
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(512)
    with open(compare.ROOT / "scripts/e5/sentences.tsv", encoding="utf-8") as f:
        texts = ["passage: " + row["text"] for row in csv.DictReader(f, delimiter="\t")]
    token_ids = [e.ids for e in tokenizer.encode_batch(texts)]
    float_vectors = compare.embed(compare.session(str(folder / "model.onnx")), token_ids, 1)
    installed = str(folder / "model.int8.onnx")
    for label, run in (("e5 installed", compare.session(installed)), ("e5 x64quantprecision", precise(installed))):
        cosines = (compare.embed(run, token_ids, 1) * float_vectors).sum(1)
        print(f"{label:22s} cosine with float on {len(texts)} texts: mean {cosines.mean():.4f} least {cosines.min():.4f}")


def minilm_variants(bench, folder):
    """The three variants of the docstring, by label; the uint8 graph is written in folder."""
    installed = str(bench.models / "model.int8.onnx")
    unsigned = minilm.build(bench.weights, bench.eps, all_float=False, make_linear=uint8_linear)
    return {"installed": compare.session(installed),
            "uint8 weights": compare.session(compare.optimised(unsigned, Path(folder), "uint8", False)),
            "x64quantprecision": precise(installed)}


def main():
    bench = faq_bench(__doc__)
    with tempfile.TemporaryDirectory() as folder:
        variants = minilm_variants(bench, folder)
        print_parity(variants, bench, 18)
        print_speeds(variants, bench.faq, bench.rounds, 18)
    e5_parity(bench.models)


if __name__ == "__main__":
    main()
