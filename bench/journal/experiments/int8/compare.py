"""How minilm.py's graph was chosen: parity, batching and speed of int8 variants of all-MiniLM-L6-v2.

    python bench/journal/experiments/int8/compare.py MODELS_DIR [ROUNDS]

Needs onnx and numpy (scripts/model-venv.txt) and onnxruntime 1.31.1, e.g. the installer's model
environment with `pip install onnxruntime==1.31.1` added. MODELS_DIR is the installed models
folder. Variants, each written by ONNX Runtime's optimiser as the installer writes it
(pg_chunk_optimize_model: extended level, SkipLayerNormalization fusion off) and loaded with
optimisation off, as the extension loads it:
- per token (installed): minilm.py as it is;
- per run: the same graph with each linear layer a DynamicQuantizeMatMul (one activation scale
  a run, as the previous default) and its residual a SkipLayerNormalization;
- per token, SkipLayerNormalization: the installed graph with its residuals fused.
Texts: the 50 sentences of tests/fixtures/parity.json (their token ids are in the fixture),
twelve times over for speed. Printed: mean and least cosine with the float copy's vectors, the
largest difference between a text's vector alone and in a batch of 16, and sentences/s one text a
run and in length-sorted batches of 16 (one thread, rounds interleaved, median).
"""
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "scripts" / "int8"))  # minilm.py
import minilm  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def per_run_linear(g, name, x, weight, bias, quantize):
    scale = (np.abs(weight).max(axis=0) / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
    return g.node("DynamicQuantizeMatMul", [x, g.const(f"{name}.int8", q), g.const(f"{name}.scale", scale), "",
                                            g.const(f"{name}.bias", bias.astype(np.float32))],
                  [name], domain="com.microsoft")


def optimised(model, folder, label, fuse_skip_norm):
    """The model as the installer writes it (fuse_skip_norm: as ONNX Runtime would by default)."""
    source, output = folder / f"{label}.onnx", folder / f"{label}.opt.onnx"
    onnx.save(model, source)
    return optimise(source, output, fuse_skip_norm)


def optimise(source, output, fuse_skip_norm=False):
    """Writes the file at source to output (a Path) as pg_chunk_optimize_model does, its weights in
    output's name + ".data"; returns output's path."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(output)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", output.name + ".data")
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    if not fuse_skip_norm:
        options.add_session_config_entry("optimization.disable_specified_optimizers", "SkipLayerNormFusion")
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    return str(output)


def session(path, threads=1):
    """The file loaded as the extension loads it (optimisation off), with `threads` intra-op threads."""
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def embed(run, token_ids, batch_size):
    """Unit mean-pooled vectors in input order; batches of texts sorted by length."""
    feeds_types = "token_type_ids" in [i.name for i in run.get_inputs()]
    order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
    vectors = [None] * len(token_ids)
    for first in range(0, len(order), batch_size):
        batch = order[first:first + batch_size]
        ids = np.zeros((len(batch), max(len(token_ids[i]) for i in batch)), np.int64)
        mask = np.zeros_like(ids)
        for row, i in enumerate(batch):
            ids[row, :len(token_ids[i])], mask[row, :len(token_ids[i])] = token_ids[i], 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if feeds_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        states = run.run(None, feeds)[0]
        pooled = (states * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        for row, i in enumerate(batch):
            vectors[i] = pooled[row] / np.linalg.norm(pooled[row])
    return np.array(vectors)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    rounds = int(sys.argv[2]) if len(sys.argv) == 3 else 3
    float_copy = Path(sys.argv[1]) / "all-minilm-l6-v2" / "model.optimized.onnx"
    token_ids = json.loads((ROOT / "tests/fixtures/parity.json").read_text())["token_ids"]["all-minilm-l6-v2"]
    float_vectors = embed(session(str(float_copy)), token_ids, 1)
    weights, eps = minilm.read_weights(onnx.load(str(float_copy)))
    per_token = minilm.build(weights, eps, all_float=False)
    per_run = minilm.build(weights, eps, all_float=False, make_linear=per_run_linear)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        variants = {"per token (installed)": session(optimised(per_token, folder, "per_token", False)),
                    "per run": session(optimised(per_run, folder, "per_run", True)),
                    "per token, SkipLayerNormalization": session(optimised(per_token, folder, "fused", True))}
        runs = [(label, run, size) for label, run in variants.items() for size in (1, 16)]
        for label, run in variants.items():
            alone, batched = embed(run, token_ids, 1), embed(run, token_ids, 16)
            cosines = (alone * float_vectors).sum(1)
            print(f"{label:36s} cosine with float: mean {cosines.mean():.4f} least {cosines.min():.4f}; "
                  f"alone vs in a batch of 16: largest difference {np.abs(alone - batched).max():.2e}", flush=True)
        texts = token_ids * 12
        rates = {(label, size): [] for label, _, size in runs}
        for round_ in range(rounds):
            for label, run, size in (runs if round_ % 2 == 0 else runs[::-1]):
                started = time.perf_counter()
                embed(run, texts, size)
                rates[label, size].append(len(texts) / (time.perf_counter() - started))
        for (label, size), measured in rates.items():
            print(f"{label:36s} {'one a run' if size == 1 else 'batches of 16':14s} "
                  f"{statistics.median(measured):6.0f} sentences/s  ({', '.join(f'{r:.0f}' for r in measured)})")


if __name__ == "__main__":
    main()
