"""Embeds the benchmark sentences with all-MiniLM-L6-v2 in plain ONNX Runtime, outside PostgreSQL.

The baseline pg_chunk's SQL embeddings are compared against: the same work the extension does,
from the same installed files, with the same ONNX Runtime release. run.sh passes the files and
the graph optimisation setting that knowledge.models registers.

  tokenize   each sentence with tokenizer.json on one thread, truncated at 256 tokens ([CLS]/[SEP]
             included), no padding from the file
  batch      sort by token length (stable), cut into batches of 16, pad each to its longest row
             (pad id of [PAD], attention mask 0 there, token types 0)
  run        one InferenceSession, 1 intra-op and 1 inter-op thread, the CPU provider;
             input_ids, attention_mask (and token_type_ids when the graph has it) as int64;
             output last_hidden_state
  pool       mean over the tokens whose mask is 1, then L2-normalise

It embeds one warm-up sentence first (as the SQL runs warm the model with one call), then the
corpus once, timed, and prints "key<TAB>value" rows: seconds, sentences, and each stage's time
(tokenize_ms, pad_ms, run_ms, pool_ms).
Run it with bench/embeddings/run.sh, which provides the Python packages of bench/parity/run.sh.
"""

import argparse
import os
import time
from pathlib import Path

# Set before importing tokenizers: no rayon pool, as inside a PostgreSQL backend.
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import numpy as np  # noqa: E402
import onnxruntime  # noqa: E402
import tokenizers  # noqa: E402

MAX_TOKENS = 256


class MiniLM:
    def __init__(self, model_file, tokenizer_file, optimize_graph):
        self.tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.pad_id = self.tokenizer.token_to_id("[PAD]") or 0
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        if not optimize_graph:
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        self.session = onnxruntime.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
        # As the extension: token types only for a graph that declares them.
        self.feeds_types = any(i.name == "token_type_ids" for i in self.session.get_inputs())

    def embed(self, texts, batch_size, stages):
        """Unit vectors for `texts`, in input order; adds each stage's seconds to `stages`."""
        started = time.perf_counter()
        # Serial (TOKENIZERS_PARALLELISM=false) and without offsets, as the extension's encode_fast.
        encodings = self.tokenizer.encode_batch_fast(texts)
        stages["tokenize"] += time.perf_counter() - started

        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))  # stable
        vectors = np.zeros((len(texts), 384), dtype=np.float32)
        for first in range(0, len(order), batch_size):
            batch = order[first : first + batch_size]

            started = time.perf_counter()
            columns = max(len(encodings[i].ids) for i in batch)
            ids = np.full((len(batch), columns), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), columns), dtype=np.int64)
            types = np.zeros((len(batch), columns), dtype=np.int64)
            for row, i in enumerate(batch):
                length = len(encodings[i].ids)
                ids[row, :length] = encodings[i].ids
                mask[row, :length] = 1
                types[row, :length] = encodings[i].type_ids
            stages["pad"] += time.perf_counter() - started

            started = time.perf_counter()
            feeds = {"input_ids": ids, "attention_mask": mask}
            if self.feeds_types:
                feeds["token_type_ids"] = types
            (hidden,) = self.session.run(["last_hidden_state"], feeds)
            stages["run"] += time.perf_counter() - started

            started = time.perf_counter()
            weights = mask.astype(np.float32)[:, :, None]
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            vectors[batch] = pooled
            stages["pool"] += time.perf_counter() - started
        return vectors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-file", type=Path, required=True)
    parser.add_argument("--tokenizer-file", type=Path, required=True)
    parser.add_argument("--no-graph-optimization", action="store_true", help="as knowledge.models.optimize_graph = false")
    parser.add_argument("--sentences", type=Path, required=True, help="one sentence per line")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    texts = args.sentences.read_text(encoding="utf-8").splitlines()
    model = MiniLM(args.model_file, args.tokenizer_file, not args.no_graph_optimization)
    model.embed(["warm up"], args.batch_size, {"tokenize": 0.0, "pad": 0.0, "run": 0.0, "pool": 0.0})

    stages = {"tokenize": 0.0, "pad": 0.0, "run": 0.0, "pool": 0.0}
    started = time.perf_counter()
    vectors = model.embed(texts, args.batch_size, stages)
    seconds = time.perf_counter() - started
    assert vectors.shape == (len(texts), 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    print(f"seconds\t{seconds}\nsentences\t{len(texts)}")
    for stage, stage_seconds in stages.items():
        print(f"{stage}_ms\t{stage_seconds * 1000}")


if __name__ == "__main__":
    main()
