"""How minilm.py's choice of a float32 layer was made: parity of int8 variants with the float copy.

    python scripts/int8/sweep.py MODELS_DIR [--single]

Needs onnx and numpy (scripts/model-venv.txt) and onnxruntime 1.31.1, e.g. the installer's model
environment with `pip install onnxruntime==1.31.1` added. MODELS_DIR is the installed models
folder. Each variant is minilm.py's graph with another set of linear layers kept float32; the 50
sentences of tests/fixtures/parity.json (their token ids are in the fixture) are embedded one at
a time, one thread, and the mean and least cosine with the float copy's vectors printed.
Variants: every layer int8; the installed choice (layer 1's FFN down-projection float); layers
0-2's FFN down-projections float; with --single, each of the 24 linear layers float in turn.
"""
import json
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).parent))
import minilm  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LINEARS = ("attention.self", "attention.output.dense", "intermediate.dense", "output.dense")


def embed(model_bytes, token_ids, feeds_types):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    run = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    vectors = []
    for ids in token_ids:
        ids = np.array([ids], np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if feeds_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        vector = run.run(None, feeds)[0].mean(1)[0]
        vectors.append(vector / np.linalg.norm(vector))
    return np.array(vectors)


def main():
    source = Path(sys.argv[1]) / "all-minilm-l6-v2" / "model.optimized.onnx"
    token_ids = json.loads((ROOT / "tests/fixtures/parity.json").read_text())["token_ids"]["all-minilm-l6-v2"]
    float_vectors = embed(str(source), token_ids, True)
    weights, eps = minilm.read_weights(onnx.load(str(source)))
    variants = {"every layer int8": set(), "installed: layer 1 FFN down float": {(1, "output.dense")},
                "layers 0-2 FFN down float": {(layer, "output.dense") for layer in range(3)}}
    if "--single" in sys.argv:
        variants.update({f"layer {layer} {name} float": {(layer, name)} for layer in range(minilm.LAYERS) for name in LINEARS})
    for label, kept in variants.items():
        minilm.KEPT_FLOAT = kept
        model = minilm.build(weights, eps, all_float=False)
        cosines = (embed(model.SerializeToString(), token_ids, False) * float_vectors).sum(1)
        print(f"{label:40s} mean {cosines.mean():.4f}  least {cosines.min():.4f}  (sentence {int(cosines.argmin())})", flush=True)


if __name__ == "__main__":
    main()
