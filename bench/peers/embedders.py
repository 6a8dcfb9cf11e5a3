"""The embedding models of pg_chunk, for the Python peers: the same files, the same arithmetic.

  MiniLM        all-MiniLM-L6-v2 in ONNX Runtime, as pg_chunk runs it (crates/pg_chunk_embed):
                tokenizer.json with its padding and truncation replaced (the file pads and
                truncates to 128; pg_chunk truncates at 256 tokens, [CLS]/[SEP] included, and
                pads each batch to its longest row), texts sorted by token length, batches of 16
                (sentence-transformers' rule; pg_chunk instead chooses where each batch ends by
                a cost model, crates/pg_chunk_embed/src/batching.rs: that is one of its levers, not given to the peers),
                `threads` intra-op and 1 inter-op thread, mean pooling over the attention mask,
                L2 normalisation. The model file is the float32 copy pg_chunk installs
                (model.optimized.onnx, optimisation off: all-MiniLM-L6-v2 as a user runs it), or
                the file named by PG_CHUNK_PEERS_MINILM_FILE in the same folder, e.g.
                model.int8.onnx, pg_chunk's default: a graph that quantizes activations with one
                scale a run (DynamicQuantize) is then run one text at a time, as pg_chunk runs it
                (its vectors would otherwise depend on the batch; the installed MiniLM quantizes
                per token and batches), and token types are fed only to a graph that declares
                them.
  potion        potion-base-8m through model2vec's StaticModel loaded from the installed folder
                (what a Chonkie or LangChain user would run; pg_chunk's static model does the same
                arithmetic: no special tokens, [UNK] dropped, mean, L2 normalisation).

And the adapters that hand them to the peers: a LangChain `Embeddings` and a Chonkie
`BaseEmbeddings` around either. Every adapter counts its calls, texts, characters and seconds,
so that a run can say how much embedding each chunker asks for.
"""

import os
import time
from pathlib import Path

import numpy as np

MAX_TOKENS = 256
BATCH_SIZE = 16


class MiniLM:
    def __init__(self, model_dir, threads, model_file=None, optimize_graph=None):
        import onnxruntime
        import tokenizers

        model_dir = Path(model_dir)
        if model_file is None and os.environ.get("PG_CHUNK_PEERS_MINILM_FILE"):
            model_file = model_dir / os.environ["PG_CHUNK_PEERS_MINILM_FILE"]
        if model_file is None:
            # The install-time optimised float copy, loaded without optimising.
            optimised = model_dir / "model.optimized.onnx"
            model_file = optimised if optimised.is_file() else model_dir / "model.onnx"
        model_file = Path(model_file)
        if optimize_graph is None:
            optimize_graph = model_file.name not in ("model.optimized.onnx", "model.int8.onnx")
        self.model_file = model_file
        self.optimize_graph = optimize_graph
        self.tokenizer = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.pad_id = self.tokenizer.token_to_id("[PAD]") or 0
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # As pg_chunk: no spinning threads (matters only above one thread).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        if not optimize_graph:
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        self.session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self.dimension = 384
        self.feeds_types = any(i.name == "token_type_ids" for i in self.session.get_inputs())
        self.batch_size = 1 if b"DynamicQuantize" in model_file.read_bytes() else BATCH_SIZE

    def embed(self, texts):
        """Unit vectors for `texts`, in input order, as a (len(texts), 384) float32 array."""
        encodings = self.tokenizer.encode_batch_fast(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))  # stable
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for first in range(0, len(order), self.batch_size):
            batch = order[first : first + self.batch_size]
            columns = max(len(encodings[i].ids) for i in batch)
            ids = np.full((len(batch), columns), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), columns), dtype=np.int64)
            types = np.zeros((len(batch), columns), dtype=np.int64)
            for row, i in enumerate(batch):
                length = len(encodings[i].ids)
                ids[row, :length] = encodings[i].ids
                mask[row, :length] = 1
                types[row, :length] = encodings[i].type_ids
            feeds = {"input_ids": ids, "attention_mask": mask}
            if self.feeds_types:
                feeds["token_type_ids"] = types
            (hidden,) = self.session.run(["last_hidden_state"], feeds)
            weights = mask.astype(np.float32)[:, :, None]
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            vectors[batch] = pooled
        return vectors

    def token_counter(self):
        """A tokenizer for counting tokens: the same vocabulary, no truncation, no padding."""
        import tokenizers

        counter = tokenizers.Tokenizer.from_str(self.tokenizer.to_str())
        counter.no_truncation()
        counter.no_padding()
        return counter


class Potion:
    def __init__(self, model_dir):
        from model2vec import StaticModel

        self.model = StaticModel.from_pretrained(str(model_dir))
        self.dimension = self.model.dim

    def embed(self, texts):
        # Never model2vec's process pool (it starts one above 10,000 texts): one thread, as pg_chunk.
        return self.model.encode(list(texts), use_multiprocessing=False)


def load(model, args):
    """The embedder named `model` ("all-minilm-l6-v2" or "potion-base-8m") from the run's options."""
    if model == "all-minilm-l6-v2":
        return MiniLM(args.minilm_dir, args.threads)
    if model == "potion-base-8m":
        return Potion(args.potion_dir)
    raise ValueError(f"unknown model {model!r}")


class Counts:
    """What a chunker asked of its embedder."""

    def __init__(self):
        self.calls = 0
        self.texts = 0
        self.chars = 0
        self.largest_call = 0
        self.seconds = 0.0

    def add(self, texts, started):
        self.calls += 1
        self.texts += len(texts)
        self.chars += sum(len(t) for t in texts)
        self.largest_call = max(self.largest_call, len(texts))
        self.seconds += time.perf_counter() - started

    def as_dict(self):
        return {
            "embed_calls": self.calls,
            "embedded_texts": self.texts,
            "embedded_chars": self.chars,
            "largest_embed_call": self.largest_call,
            "embed_seconds": self.seconds,
        }


def langchain_embeddings(embedder, counts):
    """A LangChain `Embeddings` over `embedder` (SemanticChunker calls embed_documents once a document)."""
    from langchain_core.embeddings import Embeddings

    class PgChunkModelEmbeddings(Embeddings):
        def embed_documents(self, texts):
            started = time.perf_counter()
            vectors = embedder.embed(texts) if texts else np.zeros((0, embedder.dimension), np.float32)
            counts.add(texts, started)
            return vectors.tolist()

        def embed_query(self, text):
            return self.embed_documents([text])[0]

    return PgChunkModelEmbeddings()


def chonkie_embeddings(embedder, counts):
    """A Chonkie `BaseEmbeddings` over the MiniLM embedder (SemanticChunker calls embed_batch)."""
    from chonkie.embeddings import BaseEmbeddings

    class MiniLMEmbeddings(BaseEmbeddings):
        def __init__(self):
            super().__init__()
            # Chonkie counts every sentence's tokens with get_tokenizer() (for chunk_size): give it
            # a copy that neither truncates nor pads, or long sentences would count as 256.
            self._counter = embedder.token_counter()

        @property
        def dimension(self):
            return embedder.dimension

        def embed(self, text):
            return self.embed_batch([text])[0]

        def embed_batch(self, texts):
            started = time.perf_counter()
            vectors = embedder.embed(texts) if texts else np.zeros((0, embedder.dimension), np.float32)
            counts.add(texts, started)
            return list(vectors)

        def get_tokenizer(self):
            return self._counter

    return MiniLMEmbeddings()


def chonkie_model2vec(potion, counts):
    """Chonkie's own Model2VecEmbeddings over the loaded StaticModel, with calls counted."""
    from chonkie.embeddings import Model2VecEmbeddings

    class CountedModel2VecEmbeddings(Model2VecEmbeddings):
        def embed_batch(self, texts):
            started = time.perf_counter()
            vectors = super().embed_batch(texts)
            counts.add(texts, started)
            return vectors

    return CountedModel2VecEmbeddings(potion.model)


def child_env(threads):
    """Environment for a peer's process: no hidden thread pools beyond `threads`, nothing fetched,
    and no DeprecationWarning (langchain-experimental prints one on import)."""
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
        env[name] = str(threads)
    env["TOKENIZERS_PARALLELISM"] = "false"
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["PYTHONWARNINGS"] = "ignore::DeprecationWarning"
    return env
