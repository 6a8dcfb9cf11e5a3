"""Static activation scales for minilm.py's graph, measured and not adopted (bench/journal/int8.md).

    python bench/journal/experiments/int8/static.py MODELS_DIR SOURCES [ROUNDS]

Environment as compare.py's, plus `tokenizers`. MODELS_DIR is the installed models folder;
SOURCES is python3.11-doc's reST folder (`.../html/_sources`, as bench/retrieval unpacks it).
Each linear layer's input gets one scale fixed at build time (calibrated: the 99.9th percentile of
the tokens' largest magnitudes on 800 sentences of the Tutorial, through the float graph) instead
of one computed per token as the graph runs: `QuantizeLinear` with a constant scale and
`MatMulIntegerToFloat` with its bias, and none of the per-token operators. Still independent of
the batch. Variants: every layer static; static but the attention output and feed-forward
down-projection (`ao`, `fo`) per token; only the QKV projection static. Printed: mean and least
cosine with the float copy on the 50 parity sentences (one a run) and on 600 sentences of the
FAQ (batches of 16), then sentences/s on those FAQ sentences, one thread, rounds interleaved.
"""
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "scripts" / "int8"))  # minilm.py
import compare  # noqa: E402
import minilm  # noqa: E402

PERCENTILE = 99.9


def sentences(folder, limit):
    found = []
    for path in sorted(folder.glob("*.rst.txt")):
        text = re.sub(r"\s+", " ", path.read_text(errors="ignore"))
        found += [s for s in re.split(r"(?<=[.!?])\s+", text) if 20 <= len(s) <= 1500]
    return found[:limit]


def calibrated_scales(weights, eps, token_ids):
    """Each linear layer's input scale: the float graph's inputs to the layers exposed as outputs."""
    inputs = {}

    def recording(g, name, x, weight, bias, quantize):
        inputs[name] = x
        return minilm.linear(g, name, x, weight, bias, quantize)

    model = minilm.build(weights, eps, all_float=True, make_linear=recording)
    model.graph.output.extend(helper.make_tensor_value_info(x, TensorProto.FLOAT, None) for x in inputs.values())
    run = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    largest = {name: [] for name in inputs}
    for first in range(0, len(token_ids), 16):
        batch = token_ids[first:first + 16]
        ids = np.zeros((len(batch), max(map(len, batch))), np.int64)
        mask = np.zeros_like(ids)
        for row, t in enumerate(batch):
            ids[row, :len(t)], mask[row, :len(t)] = t, 1
        for name, value in zip(inputs, run.run(None, {"input_ids": ids, "attention_mask": mask})[1:]):
            largest[name].append(np.abs(value[mask.astype(bool)]).max(axis=1))
    return {name: np.float32(np.percentile(np.concatenate(v), PERCENTILE) / 127.0) for name, v in largest.items()}


def static_linear(scales, per_token):
    def linear(g, name, x, weight, bias, quantize):
        if name.rsplit(".", 1)[1] in per_token:
            return minilm.int8_linear(g, name, x, weight, bias)
        scale = (np.abs(weight).max(axis=0) / 127.0).astype(np.float32)
        scale[scale == 0] = 1.0
        q = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
        x_scale = g.const(f"{name}.x_scale", np.array(scales[name], np.float32))
        middle = g.const(f"{name}.middle", np.array(128, np.uint8))
        quantized = g.node("QuantizeLinear", [x, x_scale, middle], [f"{name}.quantized"])
        return g.node("MatMulIntegerToFloat", [quantized, g.const(f"{name}.int8", q), x_scale,
                                               g.const(f"{name}.scale", scale), middle, "",
                                               g.const(f"{name}.bias", bias.astype(np.float32))],
                      [name], domain="com.microsoft")
    return linear


def faq_bench(usage):
    """What static.py and cheaper.py measure on, from their arguments (MODELS_DIR SOURCES [ROUNDS]):
    the model folder, the sources, the rounds, an encoder, 600 FAQ sentences' token ids, the parity
    sentences' token ids, the float copy's vectors of both, and its weights and layer-norm epsilon."""
    if len(sys.argv) not in (3, 4):
        sys.exit(usage)
    models, sources = Path(sys.argv[1]) / "all-minilm-l6-v2", Path(sys.argv[2])
    tokenizer = Tokenizer.from_file(str(models / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    encode = lambda texts: [e.ids for e in tokenizer.encode_batch(texts)]  # noqa: E731
    faq = encode(sentences(sources / "faq", 600))
    parity = json.loads((compare.ROOT / "tests/fixtures/parity.json").read_text())["token_ids"]["all-minilm-l6-v2"]
    float_run = compare.session(str(models / "model.optimized.onnx"))
    weights, eps = minilm.read_weights(onnx.load(str(models / "model.optimized.onnx")))
    return SimpleNamespace(models=models, sources=sources, rounds=int(sys.argv[3]) if len(sys.argv) == 4 else 3,
                           encode=encode, faq=faq, parity=parity, float_parity=compare.embed(float_run, parity, 1),
                           float_faq=compare.embed(float_run, faq, 16), weights=weights, eps=eps)


def print_parity(variants, bench, width, more=lambda vectors: ""):
    """Each variant's mean and least cosine with the float copy on the parity sentences (one a run)
    and the FAQ sentences (batches of 16); `more` adds to the line from the FAQ vectors. Returns
    each variant's FAQ vectors by label."""
    faq_vectors = {}
    for label, run in variants.items():
        on_parity = (compare.embed(run, bench.parity, 1) * bench.float_parity).sum(1)
        vectors = faq_vectors[label] = compare.embed(run, bench.faq, 16)
        on_faq = (vectors * bench.float_faq).sum(1)
        print(f"{label:{width}s} cosine with float: parity mean {on_parity.mean():.4f} least {on_parity.min():.4f}; "
              f"FAQ mean {on_faq.mean():.4f} least {on_faq.min():.4f}{more(vectors)}", flush=True)
    return faq_vectors


def print_speeds(variants, faq, rounds, width):
    """Sentences/s of each variant on the FAQ sentences in batches of 16, rounds interleaved: median (rounds)."""
    rates = {label: [] for label in variants}
    for round_ in range(rounds):
        for label, run in (list(variants.items())[::1 if round_ % 2 == 0 else -1]):
            started = time.perf_counter()
            compare.embed(run, faq, 16)
            rates[label].append(len(faq) / (time.perf_counter() - started))
    for label, measured in rates.items():
        print(f"{label:{width}s} {statistics.median(measured):5.1f} sentences/s ({', '.join(f'{r:.1f}' for r in measured)})")


def main():
    bench = faq_bench(__doc__)
    weights, eps = bench.weights, bench.eps
    scales = calibrated_scales(weights, eps, bench.encode(sentences(bench.sources / "tutorial", 800)))
    variants = {"per token (installed)": compare.session(str(bench.models / "model.int8.onnx"))}
    with tempfile.TemporaryDirectory() as folder:
        for label, per_token in (("static", ()), ("static, ao and fo per token", ("ao", "fo")),
                                 ("static qkv, the rest per token", ("ao", "fi", "fo"))):
            model = minilm.build(weights, eps, all_float=False, make_linear=static_linear(scales, per_token))
            variants[label] = compare.session(compare.optimised(model, Path(folder), f"v{len(variants)}", False))
        print_parity(variants, bench, 32)
        print_speeds(variants, bench.faq, bench.rounds, 32)


if __name__ == "__main__":
    main()
