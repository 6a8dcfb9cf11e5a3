"""LangChain: a retriever over knowledge.search and Embeddings over knowledge.embed.

Needs langchain-core (``pip install 'pg-chunk[langchain]'``)."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import Field, model_validator

from pg_chunk.embed import aembed, aembed_batch, embed, embed_batch
from pg_chunk.search import SearchResult, asearch, search, search_options


def _document(result: SearchResult) -> Document:
    return Document(page_content=result.content, metadata=result.metadata(), id=str(result.chunk_id))


class PgChunkRetriever(BaseRetriever):
    """knowledge.search's hybrid (or vector, or text) results as LangChain Documents, best first.

    ``connection`` is a connection string, a psycopg Connection or a pool; ``async_connection``
    the same for ``ainvoke`` (default: ``connection`` when it is a string; otherwise ainvoke runs
    the sync search in a thread). ``chunk_config`` is the search's ``config`` option, ``filter``
    its ``metadata`` option; ``options`` holds any other (``{"fusion": "rrf"}``). Each Document's
    metadata is pg_chunk.SearchResult's fields but the content: chunk_id, document_id,
    chunk_index, char_offset, char_length, score, similarity, vector_rank, text_rank,
    below_min_score, title, source, source_key and document_metadata; its id is the chunk id.
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

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [_document(r) for r in search(self.connection, query, self.k, self.search_options())]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        source = self.async_connection
        if source is None and isinstance(self.connection, str):
            source = self.connection
        if source is None:
            return await run_in_executor(None, self._get_relevant_documents, query, run_manager=run_manager.get_sync())
        return [_document(r) for r in await asearch(source, query, self.k, self.search_options())]


class PgChunkEmbeddings(Embeddings):
    """Vectors from the database's models: documents through knowledge.embed_batch as passages,
    queries through knowledge.embed as queries (the model's query prefix, for e5). ``model`` None
    is the server's pg_chunk.default_model; ``connection`` and ``async_connection`` as for
    PgChunkRetriever."""

    def __init__(self, connection: Any, *, model: str | None = None, async_connection: Any = None) -> None:
        self.connection = connection
        self.model = model
        self.async_connection = async_connection

    def _async_source(self) -> Any:
        if self.async_connection is not None:
            return self.async_connection
        return self.connection if isinstance(self.connection, str) else None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed_batch(self.connection, texts, self.model, "passage")

    def embed_query(self, text: str) -> list[float]:
        return embed(self.connection, text, self.model, "query")

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        source = self._async_source()
        if source is None:
            return await run_in_executor(None, self.embed_documents, texts)
        return await aembed_batch(source, texts, self.model, "passage")

    async def aembed_query(self, text: str) -> list[float]:
        source = self._async_source()
        if source is None:
            return await run_in_executor(None, self.embed_query, text)
        return await aembed(source, text, self.model, "query")
