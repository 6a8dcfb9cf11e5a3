"""LangChain: a vector store over the store (documents written, read and deleted by id, chunks
searched), a retriever over knowledge.search and Embeddings over knowledge.embed.

Needs langchain-core (``pip install 'pg-chunk[langchain]'``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance
from psycopg.rows import dict_row
from pydantic import Field, model_validator
from typing_extensions import Self

from pg_chunk.connection import async_connection_from, async_source, connection_from
from pg_chunk.embed import aembed, aembed_batch, embed, embed_batch
from pg_chunk.search import SearchResult, asearch, search, search_options
from pg_chunk.writer import (
    StoreDocument,
    StoredDocument,
    adelete_documents,
    aread_documents,
    awrite_documents,
    delete_documents,
    read_documents,
    write_documents,
)


def _document(result: SearchResult) -> Document:
    return Document(page_content=result.content, metadata=result.metadata(), id=str(result.chunk_id))


class PgChunkRetriever(BaseRetriever):
    """knowledge.search's hybrid (or vector, or text) results as LangChain Documents, best first.

    ``connection`` is a connection string, a psycopg Connection or a pool; ``async_connection``
    the same for ``ainvoke`` (default: ``connection`` when it is a string; otherwise ainvoke runs
    the sync search in a thread). ``chunk_config`` is the search's ``config`` option, ``filter``
    its ``filter`` option (docs/store.md, "Filters"); ``options`` holds any other (``{"fusion":
    "rrf"}``). ``invoke(query, k=..., filter=...)`` sets k or the filter for one call. Each
    Document's metadata is pg_chunk.SearchResult's fields but the content: chunk_id, document_id,
    chunk_index, char_offset, char_length, chunk_metadata, score, similarity, vector_rank,
    text_rank, below_min_score, title, source, source_key and document_metadata; its id is the
    chunk id.
    """

    # Left out of the repr (and so of LangChain's traces): a connection string may hold a password.
    connection: Any = Field(repr=False)
    async_connection: Any = Field(default=None, repr=False)
    k: int = 5
    mode: str | None = None
    chunk_config: str | None = None
    filter: dict[str, Any] | None = None
    document_ids: list[int] | None = None
    min_score: float | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _options_named_once(self) -> PgChunkRetriever:
        self.search_options()
        return self

    def search_options(self) -> dict[str, Any]:
        """The options object knowledge.search is called with."""
        return search_options(mode=self.mode, config=self.chunk_config, filter=self.filter,
                              document_ids=self.document_ids, min_score=self.min_score, options=self.options)

    def _call(self, k: int | None, filter: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        # invoke(query, k=..., filter=...) overrides the retriever's own for one call.
        options = self.search_options()
        if filter is not None:
            options["filter"] = filter
        return (self.k if k is None else k), options

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None, filter: dict[str, Any] | None = None) -> list[Document]:
        k, options = self._call(k, filter)
        return [_document(r) for r in search(self.connection, query, k, options)]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None,
        filter: dict[str, Any] | None = None
    ) -> list[Document]:
        source = async_source(self.connection, self.async_connection)
        if source is None:
            return await run_in_executor(None, self._get_relevant_documents, query, run_manager=run_manager.get_sync(),
                                         k=k, filter=filter)
        k, options = self._call(k, filter)
        return [_document(r) for r in await asearch(source, query, k, options)]


class PgChunkEmbeddings(Embeddings):
    """Vectors from the database's models: documents through knowledge.embed_batch as passages,
    queries through knowledge.embed as queries (the model's query prefix, for e5). ``model`` None
    is the server's pg_chunk.default_model; ``connection`` and ``async_connection`` as for
    PgChunkRetriever."""

    def __init__(self, connection: Any, *, model: str | None = None, async_connection: Any = None) -> None:
        self.connection = connection
        self.model = model
        self.async_connection = async_connection

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed_batch(self.connection, texts, self.model, "passage")

    def embed_query(self, text: str) -> list[float]:
        return embed(self.connection, text, self.model, "query")

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        source = async_source(self.connection, self.async_connection)
        if source is None:
            return await run_in_executor(None, self.embed_documents, texts)
        return await aembed_batch(source, texts, self.model, "passage")

    async def aembed_query(self, text: str) -> list[float]:
        source = async_source(self.connection, self.async_connection)
        if source is None:
            return await run_in_executor(None, self.embed_query, text)
        return await aembed(source, text, self.model, "query")


def _whole(document: StoredDocument) -> Document:
    return Document(id=document.source_key, page_content=document.content, metadata=document.metadata)


def _stored_chunk(result: SearchResult) -> Document:
    return Document(id=result.source_key, page_content=result.content, metadata=dict(result.document_metadata))


# The vectors maximal marginal relevance compares: the query's, by the config's model, and each
# candidate chunk's as stored.
MODEL_SQL = "SELECT c.model FROM knowledge.chunk_configs AS c WHERE c.name = %(config)s"
VECTORS_SQL = "SELECT c.id, c.embedding::real[] AS embedding FROM knowledge.chunks AS c WHERE c.id = ANY (%(ids)s)"


class PgChunkVectorStore(VectorStore):
    """The store as a LangChain VectorStore: documents written, read and deleted by id, and the
    chunks the database cut and embedded from them searched with knowledge.search.

    An id is the document's source key (pg_chunk.write_documents): adding a document with an id
    already there updates it (rechunking only what changed), and a document added without one
    gets a new UUID. The database embeds, with each config's own model: there is no Embeddings to
    give, and ``embeddings`` is None.

    A search returns chunks, best first: each a Document whose page_content is the chunk's text
    and whose id and metadata are its document's, so one document may come back more than once
    (pg_chunk.langchain.PgChunkRetriever gives each chunk's offsets, ranks and own metadata).
    ``filter`` is the search's ``filter`` option (docs/store.md, "Filters": ``{"year": {"$gte":
    2020}}``); ``similarity_search_with_score`` gives knowledge.search's score (higher is better,
    comparable within one search), ``similarity_search_with_relevance_scores`` the chunk's cosine
    similarity to the query cut to [0, 1] (0 in text mode).

    ``connection`` and ``async_connection`` as for PgChunkRetriever; ``chunk_config`` names the
    config whose chunks are searched and that chunks what is added (None: the "default" config
    is searched, and every active config chunks what is added); ``mode`` and ``options`` are the
    search's; ``batch_size`` documents go in one transaction.
    """

    def __init__(self, connection: Any, *, async_connection: Any = None, chunk_config: str | None = None,
                 mode: str | None = None, options: dict[str, Any] | None = None, batch_size: int = 100) -> None:
        self.connection = connection
        self.async_connection = async_connection
        self.chunk_config = chunk_config
        self.mode = mode
        self.options = dict(options or {})
        self.batch_size = batch_size
        self._search_options(None)

    def __repr__(self) -> str:
        # Not the connection: a connection string may hold a password.
        return f"PgChunkVectorStore(chunk_config={self.chunk_config!r}, mode={self.mode!r}, options={self.options!r})"

    def _search_options(self, filter: dict[str, Any] | None) -> dict[str, Any]:
        return search_options(mode=self.mode, config=self.chunk_config, filter=filter, options=self.options)

    def _store_documents(self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None,
                         ids: list[str | None] | None) -> list[StoreDocument]:
        texts = list(texts)
        metadatas = [{} for _ in texts] if metadatas is None else list(metadatas)
        keys = [None for _ in texts] if ids is None else list(ids)
        if not len(texts) == len(metadatas) == len(keys):
            raise ValueError(f"{len(texts)} texts, {len(metadatas)} metadatas and {len(keys)} ids: they must match")
        return [StoreDocument(content=text, source_key=key or str(uuid.uuid4()), metadata=metadata or {},
                              chunk_config=self.chunk_config)
                for text, metadata, key in zip(texts, metadatas, keys)]

    def add_texts(self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None, *,
                  ids: list[str | None] | None = None, batch_size: int | None = None, **kwargs: Any) -> list[str]:
        """Adds (or, by id, updates) one document a text; returns their ids. ``batch_size``
        (LangChain's indexing API passes it) overrides the store's for this call."""
        _no_other_arguments("add_texts", kwargs)
        documents = self._store_documents(texts, metadatas, ids)
        write_documents(self.connection, documents, batch_size=batch_size or self.batch_size)
        return _ids(documents)

    async def aadd_texts(self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None, *,
                         ids: list[str | None] | None = None, batch_size: int | None = None,
                         **kwargs: Any) -> list[str]:
        _no_other_arguments("aadd_texts", kwargs)
        source = async_source(self.connection, self.async_connection)
        if source is None:
            return await run_in_executor(None, self.add_texts, texts, metadatas, ids=ids, batch_size=batch_size)
        documents = self._store_documents(texts, metadatas, ids)
        await awrite_documents(source, documents, batch_size=batch_size or self.batch_size)
        return _ids(documents)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """Deletes the documents with these ids, and their chunks (an id not there is no error)."""
        _no_other_arguments("delete", kwargs)
        delete_documents(self.connection, _ids_to_delete(ids))
        return True

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        _no_other_arguments("adelete", kwargs)
        source = async_source(self.connection, self.async_connection)
        if source is None:
            return await run_in_executor(None, self.delete, ids)
        await adelete_documents(source, _ids_to_delete(ids))
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The documents with these ids, whole, in the order of ``ids`` (an id not there is left out)."""
        return [_whole(d) for d in read_documents(self.connection, ids)]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        source = async_source(self.connection, self.async_connection)
        if source is None:
            return await run_in_executor(None, self.get_by_ids, ids)
        return [_whole(d) for d in await aread_documents(source, ids)]

    def _search(self, query: str, k: int, filter: dict[str, Any] | None, kwargs: dict[str, Any]) -> list[SearchResult]:
        _no_other_arguments("a search", kwargs)
        return search(self.connection, query, k, self._search_options(filter))

    async def _asearch(self, query: str, k: int, filter: dict[str, Any] | None,
                       kwargs: dict[str, Any]) -> list[SearchResult]:
        _no_other_arguments("a search", kwargs)
        source = async_source(self.connection, self.async_connection)
        if source is None:
            return await run_in_executor(None, search, self.connection, query, k, self._search_options(filter))
        return await asearch(source, query, k, self._search_options(filter))

    def similarity_search(self, query: str, k: int = 4, filter: dict[str, Any] | None = None,
                          **kwargs: Any) -> list[Document]:
        return [_stored_chunk(r) for r in self._search(query, k, filter, kwargs)]

    async def asimilarity_search(self, query: str, k: int = 4, filter: dict[str, Any] | None = None,
                                 **kwargs: Any) -> list[Document]:
        return [_stored_chunk(r) for r in await self._asearch(query, k, filter, kwargs)]

    def similarity_search_with_score(self, query: str, k: int = 4, filter: dict[str, Any] | None = None,
                                     **kwargs: Any) -> list[tuple[Document, float]]:
        return [(_stored_chunk(r), r.score) for r in self._search(query, k, filter, kwargs)]

    async def asimilarity_search_with_score(self, query: str, k: int = 4, filter: dict[str, Any] | None = None,
                                            **kwargs: Any) -> list[tuple[Document, float]]:
        return [(_stored_chunk(r), r.score) for r in await self._asearch(query, k, filter, kwargs)]

    def _similarity_search_with_relevance_scores(self, query: str, k: int = 4, filter: dict[str, Any] | None = None,
                                                 **kwargs: Any) -> list[tuple[Document, float]]:
        return [(_stored_chunk(r), r.relevance()) for r in self._search(query, k, filter, kwargs)]

    async def _asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        return [(_stored_chunk(r), r.relevance()) for r in await self._asearch(query, k, filter, kwargs)]

    def max_marginal_relevance_search(self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5,
                                      filter: dict[str, Any] | None = None, **kwargs: Any) -> list[Document]:
        """The ``k`` of the search's best ``fetch_k`` chunks that are most similar to the query and
        least to each other (``lambda_mult`` 1: similarity alone, 0: diversity alone)."""
        _no_other_arguments("max_marginal_relevance_search", kwargs)
        options = self._search_options(filter)
        with connection_from(self.connection) as conn, conn.cursor(row_factory=dict_row) as cur:
            results = search(conn, query, fetch_k, options)
            cur.execute(MODEL_SQL, {"config": options.get("config", "default")})
            model = (cur.fetchone() or {}).get("model")
            query_vector = embed(conn, query, model, "query")
            cur.execute(VECTORS_SQL, {"ids": [r.chunk_id for r in results]})
            vectors = {row["id"]: row["embedding"] for row in cur.fetchall()}
        return _most_marginal(query_vector, results, vectors, k, lambda_mult)

    async def amax_marginal_relevance_search(self, query: str, k: int = 4, fetch_k: int = 20,
                                             lambda_mult: float = 0.5, filter: dict[str, Any] | None = None,
                                             **kwargs: Any) -> list[Document]:
        _no_other_arguments("amax_marginal_relevance_search", kwargs)
        source = async_source(self.connection, self.async_connection)
        if source is None:
            return await run_in_executor(None, self.max_marginal_relevance_search, query, k, fetch_k, lambda_mult,
                                         filter)
        options = self._search_options(filter)
        async with async_connection_from(source) as conn, conn.cursor(row_factory=dict_row) as cur:
            results = await asearch(conn, query, fetch_k, options)
            await cur.execute(MODEL_SQL, {"config": options.get("config", "default")})
            model = (await cur.fetchone() or {}).get("model")
            query_vector = await aembed(conn, query, model, "query")
            await cur.execute(VECTORS_SQL, {"ids": [r.chunk_id for r in results]})
            vectors = {row["id"]: row["embedding"] for row in await cur.fetchall()}
        return _most_marginal(query_vector, results, vectors, k, lambda_mult)

    @classmethod
    def from_texts(cls, texts: list[str], embedding: Embeddings | None = None,
                   metadatas: list[dict[str, Any]] | None = None, *, ids: list[str] | None = None,
                   **kwargs: Any) -> Self:
        """A store on ``connection`` (and the other keyword arguments of PgChunkVectorStore) with
        these texts added. ``embedding`` must be None or PgChunkEmbeddings: the database embeds."""
        _database_embeds(embedding)
        store = cls(**kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store

    @classmethod
    async def afrom_texts(cls, texts: list[str], embedding: Embeddings | None = None,
                          metadatas: list[dict[str, Any]] | None = None, *, ids: list[str] | None = None,
                          **kwargs: Any) -> Self:
        _database_embeds(embedding)
        store = cls(**kwargs)
        await store.aadd_texts(texts, metadatas, ids=ids)
        return store


def _most_marginal(query_vector: list[float], results: list[SearchResult], vectors: dict[int, list[float]], k: int,
                   lambda_mult: float) -> list[Document]:
    import numpy as np  # langchain-core's MMR needs numpy; the rest of this module does not

    if not results:
        return []
    chosen = maximal_marginal_relevance(np.array(query_vector, dtype=np.float32),
                                        [vectors[r.chunk_id] for r in results], lambda_mult=lambda_mult, k=k)
    return [_stored_chunk(results[i]) for i in chosen]


def _ids(documents: list[StoreDocument]) -> list[str]:
    # Every document the store writes has a source key (_store_documents).
    return [str(d.source_key) for d in documents]


def _ids_to_delete(ids: list[str] | None) -> list[str]:
    if ids is None:
        raise ValueError("delete needs the ids of the documents to delete; to empty the store, "
                         "DELETE FROM knowledge.documents")
    return list(ids)


def _no_other_arguments(call: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"{call} takes no argument {', '.join(sorted(kwargs))} (search options go in options=)")


def _database_embeds(embedding: Embeddings | None) -> None:
    if embedding is not None and not isinstance(embedding, PgChunkEmbeddings):
        raise TypeError(f"PgChunkVectorStore embeds in the database with each config's model: pass embedding=None, "
                        f"not a {type(embedding).__name__}")
