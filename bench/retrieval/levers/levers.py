"""Two retrieval levers measured offline on the chunks, queries and scoring of bench/retrieval:
context in the embedding and late chunking, against the plain embedding pg_chunk stores.

    source scripts/lib.sh && source bench/python_env.sh && ensure_reference_venv
    $REFERENCE_VENV/bin/python bench/retrieval/levers/levers.py

Every chunk of each config under test gets one vector per variant (all-minilm-l6-v2 through
ONNX Runtime: mean pooling, L2 normalisation, inputs cut at 256 tokens as the product does):
  plain              the chunk's content alone (what knowledge.chunks stores);
  title              "<document title>\n<content>";
  headings           "<heading path>\n<content>": the Markdown "#" headings (outside ``` or ~~~
                     fences) enclosing the chunk's start, outermost first, joined by " > "; the
                     content alone where none encloses it;
  title+headings     the title, then the path less its first element when that is the title;
  late-256, late-512 late chunking (Günther et al., 2024): the document tokenized once, a window
                     of W tokens ([CLS] and [SEP] included) around the chunk, centred as far as
                     the document allows, run through the model, and only the output states of
                     the chunk's tokens (character offsets inside the chunk's range) mean-pooled
                     and L2-normalised; a chunk longer than the window pools what fits.
Queries are embedded plainly. Per set, config and variant: exact cosine top 20 among the chunks of
the same set and config (ties by chunk id), its top 5 scored with score.py's score() (recall, hit
rate, precision, IoU, as Chroma's chunking evaluation, k = 5); and hybrid: that vector top 20 fused
by reciprocal rank, Σ 1/(60 + rank) as PostgreSQL's numeric computes it, with the text top 20 that
knowledge.search(query, 20, mode text) returns (ties by chunk id), top 5 scored the same way. The
benchmark's own vector and hybrid rows (results.csv) are scored alongside; how many of the plain
variant's top-5 lists equal the benchmark's, and how close its vectors are to the stored ones
(knowledge.chunks.embedding) and its query vectors to knowledge.embed's, are reported as checks.
Then Δ recall against plain with a 95% interval (paired over queries), and the embedding time of
each variant (first run; cached) against plain.

Needs: DATA (default $PG_CHUNK_BUILD_DIR/experiments, else /var/cache/pg_chunk-build/experiments)
with documents.csv, queries.csv, chunks.csv and results.csv exported from the benchmark's
database (bench/retrieval/levers/export.sh); a database DB (default retrieval_snapshot, read only but
for temp tables; psql on PATH) holding the same chunks (pg_chunk_bench_retrieval as run.sh left it), for the text leg and the checks; MODEL_DIR (default pg_chunk's
all-minilm-l6-v2) with model.onnx and tokenizer.json; onnxruntime, tokenizers and numpy (the
reference venv). Knobs: CONFIGS (default default,recursive-200), SETS (default every set in
documents.csv), THREADS (default 2), OUT (default DATA/../levers: the npz/csv caches under
OUT/cache, the tables also written to OUT/levers.md; delete OUT/cache to recompute).
"""

import os

THREADS = int(os.environ.get("THREADS", "2"))
for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(name, str(THREADS))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import csv  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from decimal import Decimal  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/retrieval: score.py
from score import score  # noqa: E402  (bench/retrieval/score.py)

BUILD_DIR = Path(os.environ.get("PG_CHUNK_BUILD_DIR", "/var/cache/pg_chunk-build"))
DATA = Path(os.environ.get("DATA", BUILD_DIR / "experiments"))
OUT = Path(os.environ.get("OUT", DATA.parent / "levers"))
CACHE = OUT / "cache"
DB = os.environ.get("DB", "retrieval_snapshot")
MODEL_DIR = Path(os.environ.get("MODEL_DIR", "/usr/share/postgresql/15/pg_chunk/models/all-minilm-l6-v2"))
MODEL_NAME = "all-minilm-l6-v2"
CONFIGS = os.environ.get("CONFIGS", "default,recursive-200").split(",")
MAX_TOKENS = 256  # what pg_chunk registers for MiniLM; inputs are cut there, [CLS] and [SEP] included
K = 5
CANDIDATES = 4 * K  # knowledge.search's candidates per leg
VARIANTS = ["plain", "title", "headings", "title+headings", "late-256", "late-512"]
BATCH = {"late-256": 16, "late-512": 8}  # texts per model run; 32 for the others

csv.field_size_limit(1 << 30)


def rows(name):
    with open(DATA / name, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def psql(script, stdin_data=""):
    """Runs a psql script (stdin: the script, then any inline COPY data); returns its stdout."""
    done = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", DB],
                          input=script + stdin_data, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"psql failed: {done.stderr}")
    return done.stdout


def csv_lines(records):
    out = []
    for record in records:
        w = []
        for value in record:
            value = str(value)
            w.append('"' + value.replace('"', '""') + '"')
        out.append(",".join(w))
    return "\n".join(out) + "\n\\.\n"


# --- the model ------------------------------------------------------------------------------

class Model:
    def __init__(self):
        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(MODEL_DIR / "model.onnx"), options,
                                            providers=["CPUExecutionProvider"])
        self.plain = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
        self.plain.no_padding()
        self.plain.no_truncation()
        self.cut = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
        self.cut.no_padding()
        self.cut.enable_truncation(MAX_TOKENS, strategy="longest_first", direction="right")
        self.pad = self.plain.token_to_id("[PAD]") or 0
        self.cls = self.plain.token_to_id("[CLS]")
        self.sep = self.plain.token_to_id("[SEP]")

    def run(self, sequences):
        """Hidden states of one padded batch: (rows, columns, 384) and the mask."""
        columns = max(len(s) for s in sequences)
        ids = np.full((len(sequences), columns), self.pad, dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, s in enumerate(sequences):
            ids[row, :len(s)] = s
            mask[row, :len(s)] = 1
        hidden = self.session.run(["last_hidden_state"], {
            "input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        return hidden, mask

    def batches(self, lengths, size):
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        return [order[i:i + size] for i in range(0, len(order), size)]

    def embed(self, texts, batch=32):
        """Sentence vectors as the product computes them; also (inputs cut, tokens fed)."""
        encodings = [self.cut.encode(t) for t in texts]
        truncated = sum(bool(e.overflowing) for e in encodings)
        vectors = np.zeros((len(texts), 384), dtype=np.float32)
        for group in self.batches([len(e.ids) for e in encodings], batch):
            hidden, mask = self.run([encodings[i].ids for i in group])
            pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            vectors[group] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return vectors, truncated, sum(len(e.ids) for e in encodings)

    def late(self, documents, chunks, window, batch):
        """chunks: [(doc, start, end)]; one late-chunked vector each; also (chunks cut, tokens fed)."""
        room = window - 2  # [CLS] and [SEP]
        tokenized = {}
        inputs, spans, truncated = [], [], 0
        for doc, start, end in chunks:
            if doc not in tokenized:
                e = self.plain.encode(documents[doc], add_special_tokens=False)
                offsets = np.array(e.offsets, dtype=np.int64).reshape(-1, 2)
                tokenized[doc] = (e.ids, offsets[:, 0], offsets[:, 1])
            ids, starts, ends = tokenized[doc]
            inside = np.flatnonzero((starts >= start) & (ends <= end))
            if len(inside) == 0:  # no token wholly inside: those that overlap it
                inside = np.flatnonzero((starts < end) & (ends > start))
            a, b = int(inside[0]), int(inside[-1]) + 1
            if b - a >= room:
                truncated += b - a > room
                lo, hi = a, a + room
            else:
                lo = a - (room - (b - a)) // 2
                lo = max(0, min(lo, len(ids) - room))
                hi = min(len(ids), lo + room)
            inputs.append([self.cls] + list(ids[lo:hi]) + [self.sep])
            spans.append((a - lo + 1, min(b, hi) - lo + 1))  # the chunk's tokens in the input
        vectors = np.zeros((len(chunks), 384), dtype=np.float32)
        for group in self.batches([len(s) for s in inputs], batch):
            hidden, _ = self.run([inputs[i] for i in group])
            for row, i in enumerate(group):
                first, last = spans[i]
                v = hidden[row, first:last].mean(0)
                vectors[i] = v / np.linalg.norm(v)
        return vectors, truncated, sum(len(s) for s in inputs)


# --- contexts -------------------------------------------------------------------------------

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$")
FENCE = re.compile(r"^(```|~~~)")


def headings(content):
    """[(offset of the line, level, text)] of the Markdown headings outside fenced code."""
    out, offset, fenced = [], 0, False
    for line in content.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)) and m.group(2):
            out.append((offset, len(m.group(1)), m.group(2)))
        offset += len(line) + 1
    return out


def heading_path(marks, position):
    stack = []
    for offset, level, text in marks:
        if offset > position:
            break
        stack = [h for h in stack if h[0] < level] + [(level, text)]
    return [text for _, text in stack]


def context_text(variant, title, path, content):
    if variant == "title":
        context = title
    elif variant == "headings":
        context = " > ".join(path)
    else:  # title+headings
        context = " > ".join([title] + (path[1:] if path and path[0] == title else path))
    return f"{context}\n{content}" if context else content


# --- data -----------------------------------------------------------------------------------

def load():
    documents = {doc: (set_, title, content) for doc, set_, title, content in rows("documents.csv")}
    sets = [s for s in dict.fromkeys(s for s, _, _ in documents.values())
            if s in os.environ.get("SETS", s).split(",")]
    answers = defaultdict(lambda: defaultdict(list))  # (set, query) → doc → [(start, end)]
    texts = {}
    for set_, query, text, doc, offset, length in rows("queries.csv"):
        answers[set_, query][doc].append((int(offset), int(offset) + int(length)))
        texts[set_, query] = text
    chunks = defaultdict(list)  # config → [(id, set, doc, start, end, content)], by id
    for cid, config, set_, doc, _index, offset, length, _tokens, content in rows("chunks.csv"):
        if config in CONFIGS and set_ in sets:
            chunks[config].append((int(cid), set_, doc, int(offset), int(offset) + int(length), content))
    for config in CONFIGS:
        if not chunks[config]:
            sys.exit(f"no chunks for config {config} in {DATA / 'chunks.csv'}")
        chunks[config].sort()
    bench = defaultdict(list)  # (set, config, mode, query) → [chunk ids] by rank
    located = {}
    for set_, config, mode, query, _ms, rank, cid, _did, doc, offset, length in rows("results.csv"):
        bench.setdefault((set_, config, mode, query), [])
        if rank:
            bench[set_, config, mode, query].append(int(cid))
            located[int(cid)] = (doc, int(offset), int(offset) + int(length))
    return documents, sets, answers, texts, chunks, bench, located


def cached(path, compute):
    """compute() → dict of arrays, saved as npz at path; loaded from there on a rerun."""
    if path.exists():
        return dict(np.load(path))
    result = compute()
    np.savez(path, **result)
    return result


def embed_variant(model, documents, variant, chunks):
    """Vectors of chunks [(id, set, doc, start, end, content)] for one variant; (vectors, cut, tokens)."""
    if variant.startswith("late-"):
        window = int(variant.removeprefix("late-"))
        content = {doc: c for doc, (_, _, c) in documents.items()}
        return model.late(content, [(d, s, e) for _, _, d, s, e, _ in chunks], window, BATCH[variant])
    if variant == "plain":
        texts = [c[5] for c in chunks]
    else:
        marks = {}
        texts = []
        for _, _, doc, start, _, content in chunks:
            _, title, text = documents[doc]
            if doc not in marks:
                marks[doc] = headings(text)
            texts.append(context_text(variant, title, heading_path(marks[doc], start), content))
    return model.embed(texts, BATCH.get(variant, 32))


def chunk_vectors(model, documents, config, variant, chunks):
    ids = np.array([c[0] for c in chunks])

    def compute():
        print(f"    embedding {config} {variant} ({len(chunks)} chunks)", file=sys.stderr, flush=True)
        started = time.perf_counter()
        vectors, truncated, tokens = embed_variant(model, documents, variant, chunks)
        return {"ids": ids, "vectors": vectors, "seconds": np.array(time.perf_counter() - started),
                "truncated": np.array(truncated), "tokens": np.array(tokens)}

    result = cached(CACHE / f"{config}-{variant}.npz", compute)
    if not np.array_equal(result["ids"], ids):
        sys.exit(f"{CACHE / f'{config}-{variant}.npz'} holds other chunks: delete it")
    return result


def text_hits(config, queries, options=None, depth=CANDIDATES, label=""):
    """(set, query) → [chunk ids] by text rank: knowledge.search's text top `depth` (20: what it
    fuses) for each query's text, with any further search options (BM25's k1 and b); `label` names
    the cache of texts other than the queries' own."""
    options = options or {}
    suffix = ("".join(f"-{k}{v}" for k, v in sorted(options.items())) + (f"-top{depth}" if depth != CANDIDATES else "")
              + (f"-{label}" if label else ""))
    path = CACHE / f"text-{config}{suffix}.csv"
    if not path.exists():
        print(f"    text top {depth} for {config}{suffix} ({len(queries)} queries)", file=sys.stderr, flush=True)
        extra = "".join(f", '{k}', {v}" for k, v in sorted(options.items()))
        script = (
            "SET client_min_messages = warning;\n"
            "CREATE TEMP TABLE levers_queries (set text, query text, text text);\n"
            "COPY levers_queries FROM STDIN WITH (FORMAT csv);\n"
            + csv_lines(queries)
            + "COPY (SELECT q.set, q.query, s.text_rank, s.chunk_id FROM levers_queries AS q, LATERAL "
            f"knowledge.search(q.text, {depth}, jsonb_build_object('mode', 'text', 'config', "
            f"'{config}', 'metadata', jsonb_build_object('set', q.set){extra})) AS s "
            "ORDER BY q.set, q.query, s.text_rank) TO STDOUT WITH (FORMAT csv);\n")
        path.write_text(psql(script), encoding="utf-8")
    hits = defaultdict(list)
    with open(path, newline="", encoding="utf-8") as f:
        for set_, query, rank, cid in csv.reader(f):
            hits[set_, query].append(int(cid))
            assert len(hits[set_, query]) == int(rank)
    return hits


def ids_and_vectors(out):
    """psql's "id|[x,y,...]" lines as {"ids": array, "vectors": float32 array}."""
    ids, vectors = [], []
    for line in out.splitlines():
        cid, vector = line.split("|")
        ids.append(int(cid))
        vectors.append(np.array(vector.strip("[]").split(","), dtype=np.float32))
    return {"ids": np.array(ids), "vectors": np.array(vectors)}


def stored_embeddings(config):
    return cached(CACHE / f"stored-{config}.npz", lambda: ids_and_vectors(psql(
        f"SELECT id, embedding::text FROM knowledge.chunks WHERE chunk_config = '{config}' ORDER BY id")))


def set_vectors(config, chunks):
    """set → (the config's chunk ids of that set, in id order; their stored vectors, float64)."""
    stored = stored_embeddings(config)
    position = {int(c): i for i, c in enumerate(stored["ids"])}
    by_set = {}
    for set_ in dict.fromkeys(c[1] for c in chunks[config]):
        ids = np.array([c[0] for c in chunks[config] if c[1] == set_])
        by_set[set_] = ids, stored["vectors"][[position[c] for c in ids]].astype(np.float64)
    return by_set


def nearest(ids, vectors, query_vector, depth=CANDIDATES):
    """The vector leg: ids by exact cosine with the query vector, best first, ties by id."""
    return [int(ids[i]) for i in np.lexsort((ids, -(vectors @ np.asarray(query_vector, np.float64))))[:depth]]


def product_query_vectors(queries):
    def compute():
        script = (
            "CREATE TEMP TABLE levers_queries (n int, text text);\n"
            "COPY levers_queries FROM STDIN WITH (FORMAT csv);\n"
            + csv_lines((n, text) for n, (_, _, text) in enumerate(queries))
            + f"COPY (SELECT knowledge.embed(text, '{MODEL_NAME}', 'query')::text FROM levers_queries "
            "ORDER BY n) TO STDOUT;\n")
        return {"vectors": np.array([line.strip("[]").split(",") for line in psql(script).splitlines()],
                                    dtype=np.float32)}

    return cached(CACHE / "queries-product.npz", compute)["vectors"]


def offline(loaded=None):
    """What the offline scripts (neighbours.py, feedback.py, …) ask with: load()'s sets, answers and
    chunks (from `loaded`, load()'s result, when the caller needs more of it); the queries (set,
    query, text) in order, their vectors as knowledge.search embeds them, each query's row among
    them, and each chunk's (document, start, end)."""
    _, sets, answers, texts, chunks, _, _ = loaded or load()
    CACHE.mkdir(parents=True, exist_ok=True)
    queries = sorted((s, q, texts[s, q]) for s, q in texts if s in sets)
    row_of = {(s, q): i for i, (s, q, _) in enumerate(queries)}
    where = {c[0]: (c[2], c[3], c[4]) for config in CONFIGS for c in chunks[config]}
    return sets, answers, chunks, queries, product_query_vectors(queries), row_of, where


def sample_timing(model, documents, config, chunks):
    """Seconds per variant on the same random sample of chunks, variants interleaved, best of
    TIMING_ROUNDS rounds: relative costs measured under the same load (the first run's times
    depend on whatever else the machine was doing then). {variant: seconds}."""
    size = int(os.environ.get("TIMING_SAMPLE", "200"))
    rounds = int(os.environ.get("TIMING_ROUNDS", "2"))
    path = CACHE / f"timing-{config}-{size}x{rounds}.npz"

    def compute():
        print(f"    timing {config}: {size} chunks, {rounds} rounds", file=sys.stderr, flush=True)
        picked = np.random.default_rng(2026).choice(len(chunks), min(size, len(chunks)), replace=False)
        sample = [chunks[i] for i in sorted(picked)]
        best = {v: float("inf") for v in VARIANTS}
        for _ in range(rounds):
            for variant in VARIANTS:
                started = time.perf_counter()
                embed_variant(model, documents, variant, sample)
                best[variant] = min(best[variant], time.perf_counter() - started)
        return {v: np.array(best[v]) for v in VARIANTS}

    if size <= 0:
        return None
    return {v: float(x) for v, x in cached(path, compute).items()}


# --- scoring --------------------------------------------------------------------------------

def fused(vector_ids, text_ids, rrf):
    """knowledge.search's fusion: Σ 1/(60 + rank) (numeric), best first, ties by chunk id."""
    scores = defaultdict(Decimal)
    for ids in (vector_ids, text_ids):
        for rank, cid in enumerate(ids[:CANDIDATES], 1):
            scores[cid] += rrf[rank]
    return [cid for cid, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))][:K]


def mean(values):
    return sum(values) / len(values)


def against_first(recalls):
    """Table cells for lists of per-query recalls: the first's mean %, then each other's with its
    mean paired difference from the first ± the half width of the 95% interval."""
    cells = [f"{100 * np.mean(recalls[0]):.1f}"]
    for got in recalls[1:]:
        delta, half = interval([a - b for a, b in zip(got, recalls[0])])
        cells.append(f"{100 * np.mean(got):.1f} ({delta:+.1f} ± {half:.1f})")
    return cells


def interval(differences):
    """Mean of paired differences and the half width of its 95% interval (normal), in points."""
    d = 100 * np.array(differences)
    return d.mean(), 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else 0.0


def table(columns, rows):
    """A markdown table's lines: the header row, its rule and the rows, then an empty line."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns), *rows, ""]


def report(name, lines):
    """Prints the lines of a markdown report and writes them to OUT/name."""
    text = "\n".join(lines) + "\n"
    (OUT / name).write_text(text, encoding="utf-8")
    print(text)


def main():
    CACHE.mkdir(parents=True, exist_ok=True)
    documents, sets, answers, texts, chunks, bench, located = load()
    queries = sorted((s, q, texts[s, q]) for s, q in texts if s in sets)
    model = Model()
    lines = []
    say = lines.append
    say("# Retrieval levers, offline (bench/retrieval/levers/levers.py)\n")
    say(f"Data {DATA}; configs {', '.join(CONFIGS)}; sets {', '.join(sets)}; k = {K}; "
        f"candidates {CANDIDATES} per leg; {THREADS} threads; model {MODEL_DIR / 'model.onnx'}, "
        f"inputs cut at {MAX_TOKENS} tokens.\n")

    qv = cached(CACHE / "queries.npz", lambda: {"vectors": model.embed([t for _, _, t in queries])[0]})["vectors"]
    product_qv = product_query_vectors(queries)
    query_row = {(s, q): i for i, (s, q, _) in enumerate(queries)}
    rrf = {int(r): Decimal(v) for r, v in (line.split("|") for line in psql(
        f"SELECT r, 1.0 / (60 + r) FROM generate_series(1::bigint, {CANDIDATES}::bigint) AS r").splitlines())}
    where = {c[0]: (c[2], c[3], c[4]) for config in CONFIGS for c in chunks[config]}
    content = {c[0]: c[5] for config in CONFIGS for c in chunks[config]}

    def returned(ids):
        return [where.get(cid) or located[cid] for cid in ids]

    results = {}  # (set, config, variant) → [(vector score, hybrid score)] per query
    timing = {}
    checks = []
    agreement = {}
    for config in CONFIGS:
        hits = text_hits(config, queries)
        same_text = sum(hits[s, q][:K] == bench[(s, config, "text", q)] for s, q, _ in queries)
        checks.append(f"{config}: text top 5 from the snapshot's knowledge.search identical to the "
                      f"benchmark's text results for {same_text}/{len(queries)} queries")
        stored = stored_embeddings(config)
        for variant in VARIANTS:
            found = chunk_vectors(model, documents, config, variant, chunks[config])
            timing[config, variant] = (float(found["seconds"]), int(found["tokens"]), int(found["truncated"]))
            vectors = found["vectors"]
            if variant == "plain":
                position = {cid: i for i, cid in enumerate(stored["ids"])}
                stored_rows = stored["vectors"][[position[c[0]] for c in chunks[config]]]
                cosines = (vectors * stored_rows).sum(1)
                checks.append(f"{config}: plain chunk vectors against knowledge.chunks.embedding: cosine "
                              f"min {cosines.min():.6f}, mean {cosines.mean():.7f} over {len(cosines)} chunks")
            for set_ in sets:
                members = [i for i, c in enumerate(chunks[config]) if c[1] == set_]
                ids = np.array([chunks[config][i][0] for i in members])
                matrix = vectors[members].astype(np.float64)
                set_queries = [(s, q) for s, q, _ in queries if s == set_]
                similarity = qv[[query_row[k] for k in set_queries]].astype(np.float64) @ matrix.T
                per_query = []
                same = [0, 0, 0, 0]  # vector, hybrid: ids identical; else contents identical
                for row, key in enumerate(set_queries):
                    order = np.lexsort((ids, -similarity[row]))[:CANDIDATES]
                    vector_top = [int(ids[i]) for i in order]
                    hybrid_top = fused(vector_top, hits[key], rrf)
                    per_query.append((score(answers[key], returned(vector_top[:K])),
                                      score(answers[key], returned(hybrid_top))))
                    if variant == "plain":
                        for n, (mine, theirs) in enumerate([(vector_top[:K], bench[(set_, config, "vector", key[1])]),
                                                            (hybrid_top, bench[(set_, config, "hybrid", key[1])])]):
                            if mine == theirs:
                                same[2 * n] += 1
                            else:
                                same[2 * n + 1] += [content[c] for c in mine] == [content[c] for c in theirs]
                results[set_, config, variant] = per_query
                if variant == "plain":
                    agreement[set_, config] = (*same, len(set_queries))
        for set_ in sets:
            set_queries = [(s, q) for s, q, _ in queries if s == set_]
            results[set_, config, "benchmark"] = [
                (score(answers[key], returned(bench[(set_, config, "vector", key[1])])),
                 score(answers[key], returned(bench[(set_, config, "hybrid", key[1])])))
                for key in set_queries]
    sampled = {config: sample_timing(model, documents, config, chunks[config]) for config in CONFIGS}
    cosines = (qv * product_qv).sum(1)
    checks.append(f"queries: Python vectors against knowledge.embed(text, '{MODEL_NAME}', 'query'): cosine "
                  f"min {cosines.min():.6f} over {len(cosines)} queries")

    say("## Checks\n")
    for line in checks:
        say(f"- {line}")
    for (set_, config), (vector, vector_tied, hybrid, hybrid_tied, n) in agreement.items():
        say(f"- {set_} {config}: plain top 5 identical to the benchmark's (ids, in order) for "
            f"{vector}/{n} vector searches, {vector_tied} more with the same contents (duplicate "
            f"chunks, tied; the product's HNSW orders them its own way), {n - vector - vector_tied} other; "
            f"hybrid {hybrid}/{n}, {hybrid_tied} more with the same contents, {n - hybrid - hybrid_tied} other")
    for config in CONFIGS:
        for set_ in sets:
            marks, counts = {}, [0, 0, 0]  # chunks, with a heading path, whose path is more than the title
            for _, s, doc, start, _, _ in chunks[config]:
                if s != set_:
                    continue
                if doc not in marks:
                    marks[doc] = headings(documents[doc][2])
                path = heading_path(marks[doc], start)
                counts[0] += 1
                counts[1] += bool(path)
                counts[2] += path not in ([], [documents[doc][1]])
            say(f"- contexts, {set_} {config}: {counts[1]}/{counts[0]} chunks under a heading, "
                f"{counts[2]} whose heading path is more than the document title")
    say("")

    for set_ in sets:
        n = len(results[set_, CONFIGS[0], "plain"])
        say(f"## {set_}: {n} queries\n")
        say("| config | variant | vec recall % | vec hit % | vec precision % | vec IoU % | "
            "hyb recall % | hyb hit % | hyb precision % | hyb IoU % | Δ vec recall | Δ hyb recall |")
        say("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for config in CONFIGS:
            plain = results[set_, config, "plain"]
            for variant in ["benchmark"] + VARIANTS:
                per_query = results[set_, config, variant]
                v = [100 * mean([p[0][i] for p in per_query]) for i in range(4)]
                h = [100 * mean([p[1][i] for p in per_query]) for i in range(4)]
                deltas = ""
                if variant not in ("benchmark", "plain"):
                    dv = interval([p[0][0] - b[0][0] for p, b in zip(per_query, plain)])
                    dh = interval([p[1][0] - b[1][0] for p, b in zip(per_query, plain)])
                    deltas = f"{dv[0]:+.1f} ± {dv[1]:.1f} | {dh[0]:+.1f} ± {dh[1]:.1f}"
                else:
                    deltas = " | "
                say(f"| {config} | {variant} | " + " | ".join(f"{x:.1f}" for x in v + h) + f" | {deltas} |")
        say("")

    say("## Embedding time (first run, cached after)\n")
    say("| config | variant | chunks | seconds | × plain | tokens fed per chunk | inputs cut | "
        "sample s | sample × plain |")
    say("|---|---|---|---|---|---|---|---|---|")
    for config in CONFIGS:
        base = timing[config, "plain"][0]
        for variant in VARIANTS:
            seconds, tokens, truncated = timing[config, variant]
            n = len(chunks[config])
            sample = sampled[config]
            extra = (f"{sample[variant]:.1f} | {sample[variant] / sample['plain']:.2f}" if sample else " | ")
            say(f"| {config} | {variant} | {n} | {seconds:.1f} | {seconds / base:.2f} | {tokens / n:.0f} | "
                f"{truncated} | {extra} |")
    say("\nΔ: mean per-query difference from plain in recall points, ± the half width of its 95% interval "
        "(paired, normal). Inputs cut: for the text variants, inputs over 256 tokens; for late chunking, "
        "chunks longer than the window. Seconds: the whole config's first embedding (cached after); "
        "sample: the same random chunks embedded with each variant in turn, best of the rounds "
        "(TIMING_SAMPLE, TIMING_ROUNDS), the steadier ratio when other work shares the machine.")
    report("levers.md", lines)


if __name__ == "__main__":
    main()
