"""Writes all-MiniLM-L6-v2 with integer kernels: ONNX Runtime's dynamic quantizer over the float
copy that ONNX Runtime optimised at install (model.optimized.onnx and its .data weights).

    python scripts/int8/quantize.py FLOAT_MODEL OUTPUT

Recipe (scripts/int8/README.md has the measurements behind it): every MatMul with constant
weights becomes DynamicQuantizeLinear + MatMulInteger with int8 weights per output channel
(symmetric), activations uint8 per tensor at run time; the word-embedding Gather stays float32.
One MatMul stays float32: the feed-forward down-projection of the second layer, the one whose
rounding moved the worst parity sentence most. Deterministic: the same inputs give the same bytes.
"""
import sys

import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic

FFN_DOWN_SHAPE = [1536, 384]  # MiniLM's feed-forward output projection, [in, out]
KEPT_FLOAT_LAYER = 1          # 0-based layer whose FFN down-projection stays float32


def ffn_down_projections(model):
    """Names of the MatMul nodes multiplying by a constant FFN down-projection, in graph order."""
    shapes = {t.name: list(t.dims) for t in model.graph.initializer}
    return [n.name for n in model.graph.node
            if n.op_type == "MatMul" and shapes.get(n.input[1]) == FFN_DOWN_SHAPE]


def main(source, output):
    model = onnx.load(source)  # weights from the .data file beside it
    down = ffn_down_projections(model)
    if len(down) != 6:
        sys.exit(f"{source}: expected 6 feed-forward down-projections (MiniLM-L6), found {len(down)}")
    quantize_dynamic(source, output, per_channel=True, weight_type=QuantType.QInt8,
                     op_types_to_quantize=["MatMul"], nodes_to_exclude=[down[KEPT_FLOAT_LAYER]])
    quantized = onnx.load(output)
    ops = sorted({n.op_type for n in quantized.graph.node})
    print(f"wrote {output}: {sum(n.op_type == 'MatMulInteger' for n in quantized.graph.node)} MatMulInteger, "
          f"{sum(n.op_type == 'MatMul' for n in quantized.graph.node)} MatMul left; ops {', '.join(ops)}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
