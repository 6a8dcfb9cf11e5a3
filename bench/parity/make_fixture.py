"""Writes tests/fixtures/parity.json: reference embeddings that pg_chunk's SQL embeddings must match.

The reference is computed the way sentence-transformers computes these two models, from the very
files scripts/models.sh installed (checked against its SHA256SUMS), with Python onnxruntime and
Hugging Face tokenizers:

all-minilm-l6-v2  one sentence at a time, no padding, truncated to 256 tokens (the model's
                  max_seq_length; its tokenizer.json says 128 and pads to 128, both overridden);
                  input_ids, attention_mask, token_type_ids as int64; mean of last_hidden_state
                  over every token ([CLS] and [SEP] included); L2-normalised.
potion-base-8m    tokens without [CLS]/[SEP], [UNK] ids dropped (as model2vec does); mean of
                  their rows of the embedding matrix; L2-normalised; no tokens gives the zero vector.

Run through bench/parity/run.sh, which provides the pinned Python packages.
"""

import argparse
import hashlib
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime
import tokenizers

MINILM = "all-minilm-l6-v2"
POTION = "potion-base-8m"
MINILM_MAX_TOKENS = 256
DECIMALS = 6

# A sentence above 256 MiniLM tokens, to exercise truncation. It stays below 512 tokens, where
# model2vec would start truncating potion-base-8m's input, so that model sees every token.
LONG_SENTENCE = " ".join([
    "The committee's final report, which ran to several hundred pages and took almost three years",
    "to prepare, argued that the city's water system, built in stages between 1890 and 1965 by",
    "engineers who could not have imagined today's population, suffered from four separate problems:",
    "pipes made of cast iron and, in some older districts, of lead, which corroded slowly and released",
    "metals into the supply whenever the water chemistry changed; reservoirs that had been designed",
    "for a climate with reliable spring rains and now sat half empty through long, hot summers;",
    "pumping stations whose electric motors, some of them older than the engineers maintaining them,",
    "failed at the worst possible moments, usually during heat waves when demand peaked; and a billing",
    "system so outdated that nobody could say with confidence how much water was lost to leaks",
    "between the treatment plant and the customer's tap, although estimates ranged from fifteen to",
    "thirty percent, a figure that alarmed the auditors, angered the ratepayers, and embarrassed the",
    "council members who had repeatedly postponed the necessary investment in favour of projects",
    "that were more visible, more popular, and, as the report noted with some dryness, far more",
    "likely to be photographed at a ribbon-cutting ceremony than a new valve buried six feet under",
    "a residential street in the middle of the night, when crews could work without stopping traffic",
    "and residents would barely notice that anything had happened at all, which was, of course,",
    "exactly the point of good infrastructure, and also the reason why it was so easy to neglect.",
])

# 50 sentences: short and long, questions and lists, numbers, code, URLs, and a few non-ASCII
# characters (accents that the tokenizers strip, typographic quotes, an emoji that is [UNK]).
SENTENCES = [
    "Hi.",
    "Yes!",
    "Photosynthesis",
    "The cat sat on the mat.",
    "Honeybees communicate the location of flowers with a waggle dance.",
    "A colony needs roughly twenty kilograms of honey to survive the winter.",
    "PostgreSQL uses multi-version concurrency control, so readers never block writers.",
    "Rust's borrow checker rejects programs that could produce data races.",
    "How many chunks does a ten-page document usually produce?",
    "Why does the semantic strategy cut here and not two sentences later?",
    "Wait... what?!",
    "Well, well, well: (nested (parentheses)) and [brackets]; {braces}, too!",
    "The invoice totals $1,234.56 and is due on 2024-03-15.",
    "Version 1.2.3 fixed 17 bugs, 4 of them critical, in 0.5 seconds flat.",
    "Pi is approximately 3.14159, and e is approximately 2.71828.",
    "Call 555-0142 or write to support@example.com before 5 p.m. EST.",
    "See https://www.postgresql.org/docs/15/index.html for the manual.",
    "Run `SELECT * FROM knowledge.chunk(doc, '{\"max_size\": 500}');` in psql.",
    "fn main() { println!(\"hello, world\"); }",
    "She ordered a café au lait and a croissant at the corner bakery.",
    "It would be naïve to think the résumé alone decides the interview.",
    "The coöperative in Zürich sells crème brûlée on Saturdays.",
    "He said “this is fine” — and then the server caught fire.",
    "The forecast for tomorrow is sunny 🙂 with a light breeze.",
    "The word 你好 means hello in Mandarin.",
    "Temperatures ranged from −5 °C at night to 12 °C at noon.",
    "Dr. Smith and Mrs. Jones met at 9 a.m. on Jan. 3rd.",
    "The U.S. economy grew 2.5% in Q3, i.e. faster than expected.",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG.",
    "the quick brown fox jumps over the lazy dog",
    "First line of a poem\nsecond line of the same poem.",
    "Tabs\tand  double  spaces   should not   matter much.",
    "Embeddings map text to vectors so that similar meanings lie close together.",
    "Cosine similarity measures the angle between two vectors, not their length.",
    "A good chunk boundary falls where the topic changes, not every 500 characters.",
    "Mount Everest is 8,849 metres tall and lies on the border of Nepal and China.",
    "The French Revolution began in 1789 with the storming of the Bastille.",
    "Water boils at 100 degrees Celsius at sea level.",
    "Mitochondria produce most of the chemical energy a cell needs.",
    "The stock market fell sharply after the central bank raised interest rates.",
    "My grandmother's recipe calls for two cups of flour, three eggs, and a pinch of salt.",
    "Please remember to water the plants while I'm away next week.",
    "The defendant pleaded not guilty to all charges.",
    "Quantum computers use qubits, which can be in a superposition of states.",
    "Shakespeare wrote Hamlet around 1600; it is his longest play.",
    "Our team won the championship 3-2 in extra time!",
    "Is it raining in London, or is that just a stereotype?",
    "Error 404: the page you requested could not be found.",
    "To be, or not to be, that is the question.",
    LONG_SENTENCE,
]


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pinned_sha256s(models_dir):
    """SHA256SUMS as written by scripts/models.sh: '<sha256>  <path relative to models_dir>'."""
    pinned = {}
    for line in (models_dir / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        pinned[name] = digest
    return pinned


def checked_file(models_dir, pinned, name):
    """The path of an installed model file, after checking it is the file models.sh pinned."""
    path = models_dir / name
    digest = sha256_of(path)
    if pinned.get(name) != digest:
        sys.exit(f"{path}: sha256 {digest}, SHA256SUMS says {pinned.get(name)}; run scripts/models.sh")
    return path, digest


def read_safetensors_f32(path, tensor):
    """One F32 tensor of a safetensors file: u64 LE header length, JSON header, raw LE data."""
    raw = path.read_bytes()
    header_length = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + header_length])
    entry = header[tensor]
    if entry["dtype"] != "F32":
        sys.exit(f"{path}: tensor {tensor} is {entry['dtype']}, expected F32")
    start, end = entry["data_offsets"]
    data = raw[8 + header_length + start : 8 + header_length + end]
    return np.frombuffer(data, dtype="<f4").reshape(entry["shape"])


def normalised(vector):
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


def rounded(vector):
    return [round(float(x), DECIMALS) for x in vector]


def minilm_reference(model_path, tokenizer_path, sentences):
    tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MINILM_MAX_TOKENS)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
    results = []
    for sentence in sentences:
        encoding = tokenizer.encode(sentence)
        feed = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        (hidden,) = session.run(["last_hidden_state"], feed)
        mask = feed["attention_mask"][0].astype(np.float64)
        pooled = (hidden[0].astype(np.float64) * mask[:, None]).sum(axis=0) / mask.sum()
        results.append((encoding.ids, normalised(pooled)))
    return results


def potion_reference(model_path, tokenizer_path, sentences):
    tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    unk_id = tokenizer.token_to_id("[UNK]")
    embeddings = read_safetensors_f32(model_path, "embeddings")
    results = []
    for sentence in sentences:
        ids = [i for i in tokenizer.encode(sentence, add_special_tokens=False).ids if i != unk_id]
        if ids:
            pooled = embeddings[ids].astype(np.float64).mean(axis=0)
        else:
            pooled = np.zeros(embeddings.shape[1])
        results.append((ids, normalised(pooled)))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models-dir", type=Path, default=Path("/usr/share/postgresql/15/pg_chunk/models"))
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/parity.json"))
    args = parser.parse_args()

    assert len(SENTENCES) == 50 and len(set(SENTENCES)) == 50
    pinned = pinned_sha256s(args.models_dir)
    minilm_model, minilm_model_sha = checked_file(args.models_dir, pinned, f"{MINILM}/model.onnx")
    minilm_tok, minilm_tok_sha = checked_file(args.models_dir, pinned, f"{MINILM}/tokenizer.json")
    potion_model, potion_model_sha = checked_file(args.models_dir, pinned, f"{POTION}/model.safetensors")
    potion_tok, potion_tok_sha = checked_file(args.models_dir, pinned, f"{POTION}/tokenizer.json")

    started = time.perf_counter()
    minilm = minilm_reference(minilm_model, minilm_tok, SENTENCES)
    potion = potion_reference(potion_model, potion_tok, SENTENCES)
    elapsed = time.perf_counter() - started

    # The fixture must exercise truncation: some sentence has more tokens than MiniLM keeps.
    untruncated = tokenizers.Tokenizer.from_file(str(minilm_tok))
    untruncated.no_truncation()
    untruncated.no_padding()
    longest = max(len(untruncated.encode(s).ids) for s in SENTENCES)
    assert MINILM_MAX_TOKENS < longest < 512, longest

    fixture = {
        "description": "Reference sentence embeddings for pg_chunk's parity test: the SQL embedding "
        "of sentences[i] with a model must have cosine >= 0.9999 with embeddings[model][i]. Written by "
        "bench/parity/run.sh (bench/parity/make_fixture.py says how each vector is computed).",
        "generator": {
            "python": platform.python_version(),
            "onnxruntime": onnxruntime.__version__,
            "tokenizers": tokenizers.__version__,
            "numpy": np.__version__,
            "decimals": DECIMALS,
        },
        "models": {
            MINILM: {
                "kind": "transformer",
                "dimensions": len(minilm[0][1]),
                "max_tokens": MINILM_MAX_TOKENS,
                "pooling": "mean over attention_mask, [CLS] and [SEP] included; L2-normalised",
                "files": {"model.onnx": minilm_model_sha, "tokenizer.json": minilm_tok_sha},
            },
            POTION: {
                "kind": "static",
                "dimensions": len(potion[0][1]),
                "pooling": "mean of embedding rows of the tokens without special tokens and without [UNK]; "
                "L2-normalised",
                "files": {"model.safetensors": potion_model_sha, "tokenizer.json": potion_tok_sha},
            },
        },
        # The layout tests/embeddings.rs reads: embeddings[model][i] is the vector of sentences[i].
        "sentences": SENTENCES,
        # What each model's tokenizer made of sentences[i] (MiniLM: truncated, [CLS]/[SEP] included;
        # potion: no special tokens, [UNK] dropped), to tell a tokenizer mismatch from a model one.
        "token_ids": {MINILM: [ids for ids, _ in minilm], POTION: [ids for ids, _ in potion]},
        "embeddings": {
            MINILM: [rounded(vector) for _, vector in minilm],
            POTION: [rounded(vector) for _, vector in potion],
        },
    }

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json_with_flat_arrays(fixture) + "\n", encoding="utf-8")
    size = args.out.stat().st_size
    print(f"{len(SENTENCES)} sentences, 2 models: embedded in {elapsed:.2f} s")
    print(f"wrote {args.out} ({size:,} bytes)")


def json_with_flat_arrays(value, indent=0):
    """JSON with objects indented and every array of numbers on one line, so that a regenerated
    fixture diffs line by line (one line per vector) and the file stays readable."""
    pad = " " * indent
    if isinstance(value, dict):
        items = [
            f'{pad} {json.dumps(key, ensure_ascii=False)}: {json_with_flat_arrays(item, indent + 1).lstrip()}'
            for key, item in value.items()
        ]
        return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and value and all(isinstance(x, (dict, list, str)) for x in value):
        items = [json_with_flat_arrays(item, indent + 1) for item in value]
        return pad + "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return pad + json.dumps(value, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
