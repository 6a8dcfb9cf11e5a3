"""How ONNX Runtime's load time for all-MiniLM-L6-v2 depends on where graph optimisation happens.

Run with the parity venv (bench/parity/run.sh creates it):
    /var/tmp/pg_chunk-build/parity-venv/bin/python bench/journal/experiments/load_options.py

Compares the installed model loaded with every optimisation on (what pg_chunk does today) against
a copy that ONNX Runtime optimised once (level "extended", written to a temporary file) and that is
then loaded with optimisations disabled or basic: session creation time (3 loads) and the time of
one batch of 16 sentences (mean of 10), one thread.
"""
import os
import tempfile
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MODELS = "/usr/share/postgresql/15/pg_chunk/models/all-minilm-l6-v2"


def options(level, save_to=None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = level
    if save_to:
        so.optimized_model_filepath = save_to
    return so


def main():
    original = f"{MODELS}/model.onnx"
    optimised = os.path.join(tempfile.mkdtemp(), "model.optimized.onnx")
    ort.InferenceSession(original, options(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, optimised), providers=["CPUExecutionProvider"])
    print(f"optimised copy: {os.path.getsize(optimised) / 1e6:.1f} MB")
    tokenizer = Tokenizer.from_file(f"{MODELS}/tokenizer.json")
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch([f"Sentence {i} talks about databases, rivers and bees in some detail." for i in range(16)])
    feed = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    for name, path, level in [
        ("installed model, all optimisations", original, ort.GraphOptimizationLevel.ORT_ENABLE_ALL),
        ("optimised copy, optimisations disabled", optimised, ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
        ("optimised copy, basic optimisations", optimised, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC),
    ]:
        loads = []
        for _ in range(3):
            started = time.time()
            session = ort.InferenceSession(path, options(level), providers=["CPUExecutionProvider"])
            loads.append(time.time() - started)
        session.run(None, feed)
        started = time.time()
        for _ in range(10):
            session.run(None, feed)
        batch_ms = (time.time() - started) * 100
        print(f"{name}: load {', '.join(f'{x:.3f}' for x in loads)} s; batch of 16: {batch_ms:.1f} ms")


if __name__ == "__main__":
    main()
