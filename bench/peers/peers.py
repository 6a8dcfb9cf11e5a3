"""Runs the Python chunkers pg_chunk is compared with over the workload, one fresh process each.

    python peers.py --workload DIR --out DIR [--rounds R] [--first-round K] [--peers ID,ID,...]

DIR is what workload.py wrote. Each round runs every peer once, in an order that rotates from
round to round, each in a new Python process (so its peak memory and its first call are its own).
run.sh calls this with --rounds 1 --first-round K between pg_chunk's SQL runs of round K, so
that ratios can be taken within a round.

A peer's process, timed from the moment this script starts it:
  setup        import the library, load the model, build the chunker (its defaults; the model is
               the installed one of pg_chunk, through embedders.py)
  first call   chunk the manifest's first-call document (the one of median size);
               first_call_seconds = from process start to that document's chunks
  workload     chunk every document in manifest order, warm: `seconds`
  + embed      semantic peers then embed every chunk with the same model, one call a document
               (what pg_chunk's insert trigger stores): a second row, mode "chunk+embed", whose
               seconds are the chunking plus the chunks' embedding
Embedding-stage rows (task "embed") embed sentences.txt in one call after one warm-up sentence:
raw ONNX Runtime with MiniLM (batches of 16 padded to their longest, sorted by length), and
model2vec with potion-base-8m.

Every row is appended to OUT/results.jsonl; report.py reads it (schema in bench/peers/README.md).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts when importing embedders.py
MINILM = "all-minilm-l6-v2"
POTION = "potion-base-8m"

# id: (system, task, model, label, settings). Settings are the libraries' defaults unless said.
PEERS = {
    "langchain-semantic-minilm": ("langchain", "semantic", MINILM, "LangChain SemanticChunker", "buffer_size 1, percentile 95"),
    "langchain-semantic-potion": ("langchain", "semantic", POTION, "LangChain SemanticChunker", "buffer_size 1, percentile 95"),
    "chonkie-semantic-minilm": ("chonkie", "semantic", MINILM, "Chonkie SemanticChunker", "threshold 0.8, chunk_size 2048 tokens, similarity_window 3"),
    "chonkie-semantic-potion": ("chonkie", "semantic", POTION, "Chonkie SemanticChunker", "threshold 0.8, chunk_size 2048 tokens, similarity_window 3"),
    # pg_chunk's recursive defaults: at most 1,500 characters, overlap 100.
    "langchain-recursive": ("langchain", "recursive", None, "LangChain RecursiveCharacterTextSplitter", "chunk_size 1500 chars, overlap 100"),
    "semchunk": ("semchunk", "recursive", None, "semchunk", "chunk_size 1500 chars (len), overlap 100"),
    "embed-minilm-ort": ("onnxruntime", "embed", MINILM, "ONNX Runtime (raw)", "batch 16, padded to longest, truncation 256"),
    "embed-potion-model2vec": ("model2vec", "embed", POTION, "model2vec StaticModel (raw)", "encode, one process"),
}


def vm_rss_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def build_chunker(peer_id, args, counts):
    """A function from a document's text to its chunks' texts, and the embedder (or None)."""
    import embedders

    system, task, model, _, _ = PEERS[peer_id]
    if system == "langchain" and task == "semantic":
        from langchain_experimental.text_splitter import SemanticChunker

        embedder = embedders.load(model, args)
        chunker = SemanticChunker(embedders.langchain_embeddings(embedder, counts))
        return chunker.split_text, embedder
    if system == "chonkie":
        from chonkie import SemanticChunker

        embedder = embedders.load(model, args)
        if model == POTION:
            chonkie_model = embedders.chonkie_model2vec(embedder, counts)
        else:
            chonkie_model = embedders.chonkie_embeddings(embedder, counts)
        chunker = SemanticChunker(embedding_model=chonkie_model)
        return (lambda text: [c.text for c in chunker.chunk(text)]), embedder
    if peer_id == "langchain-recursive":
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        splitter = RecursiveCharacterTextSplitter(chunk_size=1500, chunk_overlap=100)
        return splitter.split_text, None
    if peer_id == "semchunk":
        import semchunk

        chunker = semchunk.chunkerify(len, 1500)
        return (lambda text: chunker(text, overlap=100)), None
    raise ValueError(peer_id)


def child_chunk(peer_id, args, spawned_at):
    import embedders

    system, task, model, label, settings = PEERS[peer_id]
    manifest = json.loads((args.workload / "manifest.json").read_text())
    names = [row["name"] for row in manifest["files"]]
    texts = [(args.workload / "docs" / name).read_text(encoding="utf-8") for name in names]
    total_bytes = sum(len(t.encode()) for t in texts)
    first_doc = (args.workload / "docs" / manifest["first_call_document"]).read_text(encoding="utf-8")

    setup_started = time.perf_counter()
    counts = embedders.Counts()
    chunk, embedder = build_chunker(peer_id, args, counts)
    setup_seconds = time.perf_counter() - setup_started
    rss_after_setup = vm_rss_kib()
    chunk(first_doc)
    first_call_seconds = time.time() - spawned_at

    counts.__init__()
    started = time.perf_counter()
    chunked = [chunk(text) for text in texts]
    seconds = time.perf_counter() - started
    chunks = sum(len(c) for c in chunked)
    chunk_chars = [len(piece) for c in chunked for piece in c]
    base = {
        "system": system, "id": peer_id, "label": label, "settings": settings, "task": task, "model": model,
        "documents": len(texts), "bytes": total_bytes, "chunks": chunks,
        "mean_chunk_chars": statistics.fmean(chunk_chars) if chunk_chars else 0,
        "max_chunk_chars": max(chunk_chars, default=0),
        "threads": args.threads, "first_call_document": manifest["first_call_document"],
        "setup_seconds": setup_seconds, "rss_after_setup_kib": rss_after_setup,
    }
    if embedder is not None:
        base["model_file"] = str(getattr(embedder, "model_file", args.potion_dir))
    rows = [dict(base, mode="chunk", seconds=seconds, first_call_seconds=first_call_seconds, **counts.as_dict())]

    if embedder is not None:
        stored = embedders.Counts()
        for pieces in chunked:
            begun = time.perf_counter()
            if pieces:
                embedder.embed(pieces)
            stored.add(pieces, begun)
        rows.append(dict(base, mode="chunk+embed", seconds=seconds + stored.seconds, chunk_seconds=seconds,
                         chunk_embed_seconds=stored.seconds, **counts.as_dict()))
    return rows


def child_embed(peer_id, args, spawned_at):
    import embedders

    system, task, model, label, settings = PEERS[peer_id]
    sentences = (args.workload / "sentences.txt").read_text(encoding="utf-8").splitlines()
    setup_started = time.perf_counter()
    embedder = embedders.load(model, args)
    setup_seconds = time.perf_counter() - setup_started
    rss_after_setup = vm_rss_kib()
    embedder.embed(["warm up"])
    first_call_seconds = time.time() - spawned_at
    started = time.perf_counter()
    vectors = embedder.embed(sentences)
    seconds = time.perf_counter() - started
    assert vectors.shape[0] == len(sentences)
    return [{
        "system": system, "id": peer_id, "label": label, "settings": settings, "task": task, "model": model,
        "mode": "sentences", "sentences": len(sentences), "sentence_chars": sum(len(s) for s in sentences),
        "seconds": seconds, "first_call_seconds": first_call_seconds, "threads": args.threads,
        "setup_seconds": setup_seconds, "rss_after_setup_kib": rss_after_setup,
        "model_file": str(getattr(embedder, "model_file", args.potion_dir)),
    }]


def run_child(peer_id, args, round_number):
    """Runs one peer in a new process; its rows, with the process's peak RSS and wall time."""
    import embedders

    result = args.out / f".child-{peer_id}.json"
    result.unlink(missing_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", peer_id, "--result", str(result),
               "--workload", str(args.workload), "--out", str(args.out), "--threads", str(args.threads),
               "--minilm-dir", str(args.minilm_dir), "--potion-dir", str(args.potion_dir)]
    env = embedders.child_env(args.threads)
    spawned_at = time.time()
    env["PEERS_SPAWNED_AT"] = repr(spawned_at)
    process = subprocess.Popen(command, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.time() - spawned_at
    if process.returncode != 0:
        raise SystemExit(f"{peer_id} failed with exit code {process.returncode}")
    rows = json.loads(result.read_text())
    result.unlink()
    for row in rows:
        row.update(round=round_number, peak_rss_kib=usage.ru_maxrss, process_seconds=wall,
                   at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(spawned_at)))
    return rows


def environment(args):
    from importlib import metadata

    versions = {}
    for package in ("chonkie", "chonkie-core", "langchain-experimental", "langchain-core", "langchain-text-splitters",
                    "semchunk", "model2vec", "onnxruntime", "tokenizers", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    cpu = subprocess.run(["bash", "-c", "source scripts/lib.sh && cpu_description"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], check=True).stdout.strip()
    return {"python": platform.python_version(), "versions": versions, "cpu": cpu, "cpus": os.cpu_count(),
            "threads": args.threads, "minilm_dir": str(args.minilm_dir), "potion_dir": str(args.potion_dir),
            "minilm_file": os.environ.get("PG_CHUNK_PEERS_MINILM_FILE", "model.optimized.onnx")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", type=Path, required=True, help="the directory workload.py wrote")
    parser.add_argument("--out", type=Path, required=True, help="results.jsonl is appended here")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--first-round", type=int, default=1, help="number of the first round (run.sh counts)")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated ids (default: all)")
    parser.add_argument("--threads", type=int, default=1,
                        help="ONNX Runtime intra-op threads (default 1: pg_chunk.threads' default)")
    parser.add_argument("--minilm-dir", type=Path, default=Path("/usr/share/postgresql/15/pg_chunk/models/all-minilm-l6-v2"))
    parser.add_argument("--potion-dir", type=Path, default=Path("/usr/share/postgresql/15/pg_chunk/models/potion-base-8m"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        sys.path.insert(0, str(HERE))
        spawned_at = float(os.environ["PEERS_SPAWNED_AT"])
        task = PEERS[args.child][1]
        rows = (child_embed if task == "embed" else child_chunk)(args.child, args, spawned_at)
        args.result.write_text(json.dumps(rows))
        return

    sys.path.insert(0, str(HERE))
    peer_ids = [p for p in args.peers.split(",") if p]
    unknown = [p for p in peer_ids if p not in PEERS]
    if unknown:
        parser.error(f"unknown peers {unknown}; known: {', '.join(PEERS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "environment.json").write_text(json.dumps(environment(args), indent=1) + "\n")
    manifest = json.loads((args.workload / "manifest.json").read_text())
    print(f"workload: {manifest['documents']} documents, {manifest['bytes'] / 1e6:.2f} MB, "
          f"{manifest['sentences']} sentences; threads {args.threads}", flush=True)
    for round_number in range(args.first_round, args.first_round + args.rounds):
        shift = (round_number - 1) % len(peer_ids)
        for peer_id in peer_ids[shift:] + peer_ids[:shift]:
            rows = run_child(peer_id, args, round_number)
            with open(args.out / "results.jsonl", "a") as results:
                for row in rows:
                    results.write(json.dumps(row, sort_keys=True) + "\n")
            for row in rows:
                amount = (f"{row['sentences'] / row['seconds']:.0f} sentences/s" if row["task"] == "embed"
                          else f"{row['bytes'] / 1e6 / row['seconds']:.3f} MB/s, {row['chunks']} chunks")
                first = f", first call {row['first_call_seconds']:.2f} s" if "first_call_seconds" in row else ""
                print(f"round {round_number}: {peer_id} ({row['mode']}): {row['seconds']:.2f} s, {amount}{first}, "
                      f"peak RSS {row['peak_rss_kib'] / 1024:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
