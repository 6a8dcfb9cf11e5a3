"""Cheaper graphs for finding cuts, measured and not adopted (bench/journal/int8.md).

    python bench/journal/experiments/int8/cheaper.py MODELS_DIR SOURCES [ROUNDS]

Environment as static.py's, plus `onnx_ir` (ONNX Runtime's MatMulNBits quantizer imports it).
Semantic chunking embeds every sentence to compare it with its neighbours, so a graph that is
cheaper but ranks neighbours' similarities the same would make cut-finding cheaper. Variants
beside the installed graph (per-token integer kernels, six layers):
- the first 3 or 4 of the six layers, mean-pooled (the installed graph cut short);
- ONNX Runtime's `MatMulNBits` (weights 8 or 4 bits in blocks along the input, activations int8
  per block: accuracy level 4) over minilm.py's float graph.
Printed: mean and least cosine with the float copy on the 50 parity sentences (one a run) and on
600 FAQ sentences (batches of 16); the correlation of consecutive FAQ sentences' cosines with the
float copy's (what the semantic strategy cuts on), and the share of the float copy's lowest 10%
among the variant's lowest 10%; then sentences/s on the FAQ sentences, one thread, rounds
interleaved.
"""
import sys
import tempfile
from pathlib import Path

import numpy as np
from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "scripts" / "int8"))  # minilm.py
import compare  # noqa: E402
import minilm  # noqa: E402
from static import faq_bench, print_parity, print_speeds  # noqa: E402


def n_bits(weights, eps, bits, block):
    quantizer = MatMulNBitsQuantizer(
        minilm.build(weights, eps, all_float=True), bits=bits, block_size=block, is_symmetric=True, accuracy_level=4,
        algo_config=DefaultWeightOnlyQuantConfig(block_size=block, is_symmetric=True, accuracy_level=4, bits=bits))
    quantizer.process()
    return quantizer.model.model


def neighbours(vectors):
    return (vectors[:-1] * vectors[1:]).sum(1)


def main():
    bench = faq_bench(__doc__)
    float_similar = neighbours(bench.float_faq)
    lowest = len(float_similar) // 10
    float_lowest = set(np.argsort(float_similar)[:lowest])
    weights, eps = bench.weights, bench.eps
    built = {"first 3 layers": minilm.build(weights, eps, all_float=False, layers=3),
             "first 4 layers": minilm.build(weights, eps, all_float=False, layers=4),
             "MatMulNBits 8 bits, blocks of 128": n_bits(weights, eps, 8, 128),
             "MatMulNBits 4 bits, blocks of 32": n_bits(weights, eps, 4, 32)}
    variants = {"per token (installed)": compare.session(str(bench.models / "model.int8.onnx"))}
    with tempfile.TemporaryDirectory() as folder:
        for label, model in built.items():
            variants[label] = compare.session(compare.optimised(model, Path(folder), f"v{len(variants)}", False))

        def ranks_neighbours(vectors):
            similar = neighbours(vectors)
            shared = len(float_lowest & set(np.argsort(similar)[:lowest])) / lowest
            return (f"; neighbours' cosines: correlation {np.corrcoef(float_similar, similar)[0, 1]:.3f}, "
                    f"lowest 10% shared {shared:.2f}")

        print_parity(variants, bench, 34, ranks_neighbours)
        print_speeds(variants, bench.faq, bench.rounds, 34)


if __name__ == "__main__":
    main()
