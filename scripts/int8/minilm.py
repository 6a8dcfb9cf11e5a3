"""Writes all-MiniLM-L6-v2 as a compact ONNX graph with integer kernels.

    python scripts/int8/minilm.py FLOAT_MODEL OUTPUT [--float]

FLOAT_MODEL is the float copy ONNX Runtime optimised at install (model.optimized.onnx, its
weights in model.optimized.onnx.data). Its weights are found by the names of their biases (each
linear layer's MatMul feeds an Add or a SkipLayerNormalization that names the bias) and rebuilt
into ONNX Runtime's fused operators: per layer one linear layer for Q, K and V together,
MultiHeadAttention with the key padding mask, a linear layer, the residual Add and
LayerNormalization, a linear layer, Gelu (erf), a linear layer, Add and LayerNormalization.
Every linear layer has int8 weights per output channel and quantizes its input per token
(per row: QuantizeLinear with one scale a row, symmetric around zero point 128), then
MatMulIntegerToFloat: a token's result depends on that token's values only, so a text's vector
is the same alone or batched with others, and texts can be batched. The residual is an Add and a
LayerNormalization rather than SkipLayerNormalization, which this ONNX Runtime runs about a
third slower on CPU (scripts/int8/README.md). The word embeddings stay float32; token type 0 is
folded into the position table (pg_chunk feeds no token types to this graph). --float keeps
every layer float32, to check the rebuilt graph against the exported one. Deterministic: the
same input gives the same bytes.
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e5"))
from convert import GraphBuilder, add_norm, int8_linear  # noqa: E402

LAYERS, HIDDEN, HEADS, FFN = 6, 384, 12, 1536


def read_weights(model):
    """name -> float32 array: the embeddings, layer norms and every linear layer's weight ([in, out])
    and bias, under the exported names without their "inner." prefix."""
    arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {output: node for node in model.graph.node for output in node.output}
    weights = {name[len("inner."):]: array for name, array in arrays.items() if name.startswith("inner.")}
    for node in model.graph.node:
        biases = [i for i in node.input if i.startswith("inner.encoder.") and i.endswith("dense.bias")
                  or i.startswith("inner.encoder.") and i.endswith(("query.bias", "key.bias", "value.bias"))]
        for bias in biases:
            matmuls = [producer[i] for i in node.input if i in producer and producer[i].op_type == "MatMul"
                       and producer[i].input[1] in arrays]
            if len(matmuls) != 1:
                sys.exit(f"{bias}: expected one MatMul with constant weights feeding {node.name}, found {len(matmuls)}")
            weights[bias[len("inner."):-len(".bias")] + ".weight"] = arrays[matmuls[0].input[1]]
    epsilons = {a.f for node in model.graph.node if node.op_type.endswith("LayerNormalization")
                for a in node.attribute if a.name == "epsilon"}
    if len(epsilons) != 1:
        sys.exit(f"expected one layer-norm epsilon, found {sorted(epsilons)}")
    return weights, epsilons.pop()


def linear(g, name, x, weight, bias, quantize):
    """x [.., in] -> [.., out] with weight [in, out]; with quantize, integer kernels with the
    input quantized per token (convert.py's int8_linear)."""
    if not quantize:
        product = g.node("MatMul", [x, g.const(f"{name}.weight", weight.astype(np.float32))], [f"{name}.product"])
        return g.node("Add", [product, g.const(f"{name}.bias", bias.astype(np.float32))], [name])
    return int8_linear(g, name, x, weight, bias)


def build(weights, eps, all_float, make_linear=linear, layers=LAYERS):
    """The graph; make_linear (how a linear layer is written) and layers (how many of the six)
    build the variants that were measured against it (the benchmark history, bench/README.md,
    History)."""
    w = lambda name: weights[name]
    g = GraphBuilder()
    g.node("Cast", ["attention_mask"], ["mask_i32"], to=TensorProto.INT32)
    g.node("Shape", ["input_ids"], ["seq_len"], start=1, end=2)
    g.node("Gather", [g.const("word", w("embeddings.word_embeddings.weight")), "input_ids"], ["words"])
    position_type = w("embeddings.position_embeddings.weight") + w("embeddings.token_type_embeddings.weight")[0]
    g.node("Slice", [g.const("position_type", position_type.astype(np.float32)), g.const("zero", np.array([0], np.int64)),
                     "seq_len", g.const("axis0", np.array([0], np.int64))], ["positions"])
    g.node("Add", ["words", "positions"], ["embedded"])
    x = g.node("LayerNormalization", ["embedded", g.const("emb.ln.w", w("embeddings.LayerNorm.weight")),
                                      g.const("emb.ln.b", w("embeddings.LayerNorm.bias"))],
               ["emb.ln"], axis=-1, epsilon=eps)
    quantize = not all_float
    for layer in range(layers):
        p = f"encoder.layer.{layer}."
        qkv_weight = np.concatenate([w(p + f"attention.self.{k}.weight") for k in ("query", "key", "value")], axis=1)
        qkv_bias = np.concatenate([w(p + f"attention.self.{k}.bias") for k in ("query", "key", "value")])
        qkv = make_linear(g, f"l{layer}.qkv", x, qkv_weight, qkv_bias, quantize)
        g.node("Split", [qkv, g.const(f"l{layer}.split", np.array([HIDDEN] * 3, np.int64))],
               [f"l{layer}.q", f"l{layer}.k", f"l{layer}.v"], axis=-1)
        context = g.node("MultiHeadAttention", [f"l{layer}.q", f"l{layer}.k", f"l{layer}.v", "", "mask_i32"],
                         [f"l{layer}.attention"], domain="com.microsoft", num_heads=HEADS)
        out = make_linear(g, f"l{layer}.ao", context, w(p + "attention.output.dense.weight"),
                     w(p + "attention.output.dense.bias"), quantize)
        x = add_norm(g, f"l{layer}.aln", out, x, w(p + "attention.output.LayerNorm.weight"),
                     w(p + "attention.output.LayerNorm.bias"), eps)
        inner = make_linear(g, f"l{layer}.fi", x, w(p + "intermediate.dense.weight"), w(p + "intermediate.dense.bias"),
                       quantize)
        inner = g.node("Gelu", [inner], [f"l{layer}.gelu"], domain="com.microsoft")
        out = make_linear(g, f"l{layer}.fo", inner, w(p + "output.dense.weight"), w(p + "output.dense.bias"),
                     quantize)
        x = add_norm(g, "last_hidden_state" if layer == layers - 1 else f"l{layer}.oln", out, x,
                     w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias"), eps)
    batch_seq = ["batch", "sequence"]
    graph = helper.make_graph(
        g.nodes, "all-minilm-l6-v2",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, batch_seq),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, batch_seq)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, batch_seq + [HIDDEN])],
        g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="pg_chunk scripts/int8/minilm.py", ir_version=8)
    model.doc_string = ("sentence-transformers/all-MiniLM-L6-v2, "
                        + ("float32" if all_float else "linear layers int8 per output channel, inputs int8 per token"))
    onnx.checker.check_model(model)
    return model


def main():
    args = [a for a in sys.argv[1:] if a != "--float"]
    if len(args) != 2:
        sys.exit(__doc__)
    weights, eps = read_weights(onnx.load(args[0]))
    model = build(weights, eps, "--float" in sys.argv)
    onnx.save(model, args[1])
    print(f"wrote {args[1]}: {len(model.graph.node)} nodes, "
          f"{sum(n.op_type == 'MatMulIntegerToFloat' for n in model.graph.node)} MatMulIntegerToFloat")


if __name__ == "__main__":
    main()
