"""LlamaIndex: a vector store over the store (nodes written as documents, deleted by their
document, chunks searched with LlamaIndex's filters), a retriever over knowledge.search and an
embedding model over knowledge.embed.

Needs llama-index-core (``pip install 'pg-chunk[llama-index]'``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import (
    BaseNode,
    Document,
    MetadataMode,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)

from pg_chunk.connection import async_connection_from, async_source, connection_from
from pg_chunk.embed import aembed, aembed_batch, embed, embed_batch
from pg_chunk.search import SearchResult, asearch, search, search_options
from pg_chunk.writer import (
    StoreDocument,
    adelete_documents,
    aread_documents,
    awrite_documents,
    delete_documents,
    read_documents,
    write_documents,
)

# What an LLM's prompt shows of a node besides its text: its document's title and source. The
# other metadata (ids, ranks, offsets) stays out of prompts and embeddings.
PROMPT_METADATA = ("title", "source")


def _node(result: SearchResult) -> NodeWithScore:
    metadata = result.metadata()
    hidden = [key for key in metadata if key not in PROMPT_METADATA]
    node = TextNode(
        id_=str(result.chunk_id),
        text=result.content,
        metadata=metadata,
        start_char_idx=result.char_offset,
        end_char_idx=result.char_offset + result.char_length,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=str(result.document_id))},
    )
    return NodeWithScore(node=node, score=result.score)


class PgChunkRetriever(BaseRetriever):
    """knowledge.search's results as LlamaIndex nodes, best first: a TextNode per chunk (id the
    chunk id, start_char_idx and end_char_idx its offsets into its document's content, its
    SOURCE relationship the document id, metadata as pg_chunk.langchain.PgChunkRetriever's) with
    the search's score. Arguments as that retriever's; ``async_connection`` serves ``aretrieve``
    (default: ``connection`` when it is a string, else the sync search in a thread)."""

    def __init__(
        self,
        connection: Any,
        *,
        async_connection: Any = None,
        k: int = 5,
        mode: str | None = None,
        chunk_config: str | None = None,
        filter: Mapping[str, Any] | None = None,
        document_ids: Sequence[int] | None = None,
        min_score: float | None = None,
        options: Mapping[str, Any] | None = None,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        super().__init__(callback_manager=callback_manager)
        self.connection = connection
        self.async_connection = async_connection
        self.k = k
        # Checked now, so that an option named twice fails when the retriever is made.
        self.options = search_options(mode=mode, config=chunk_config, filter=filter, document_ids=document_ids,
                                      min_score=min_score, options=options)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [_node(r) for r in search(self.connection, query_bundle.query_str, self.k, self.options)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        source = async_source(self.connection, self.async_connection)
        if source is None:
            # The sync search in a thread: on the event loop it would hold every other task.
            return await asyncio.to_thread(self._retrieve, query_bundle)
        return [_node(r) for r in await asearch(source, query_bundle.query_str, self.k, self.options)]


class PgChunkEmbedding(BaseEmbedding):
    """The database's models as a LlamaIndex embedding model: texts through knowledge.embed_batch
    as passages, queries through knowledge.embed as queries (the model's query prefix, for e5).
    ``model`` None is the server's pg_chunk.default_model; ``connection`` and
    ``async_connection`` as for PgChunkRetriever."""

    model: str | None = None
    _connection: Any = PrivateAttr()
    _async_connection: Any = PrivateAttr()

    def __init__(self, connection: Any, *, model: str | None = None, async_connection: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(model=model, model_name=model or "pg_chunk.default_model", **kwargs)
        self._connection = connection
        self._async_connection = async_connection

    @classmethod
    def class_name(cls) -> str:
        return "PgChunkEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return embed(self._connection, query, self.model, "query")

    def _get_text_embedding(self, text: str) -> list[float]:
        return embed(self._connection, text, self.model, "passage")

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return embed_batch(self._connection, texts, self.model, "passage")

    async def _aget_query_embedding(self, query: str) -> list[float]:
        source = async_source(self._connection, self._async_connection)
        if source is None:
            return await asyncio.to_thread(self._get_query_embedding, query)
        return await aembed(source, query, self.model, "query")

    async def _aget_text_embedding(self, text: str) -> list[float]:
        source = async_source(self._connection, self._async_connection)
        if source is None:
            return await asyncio.to_thread(self._get_text_embedding, text)
        return await aembed(source, text, self.model, "passage")

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        source = async_source(self._connection, self._async_connection)
        if source is None:
            return await asyncio.to_thread(self._get_text_embeddings, texts)
        return await aembed_batch(source, texts, self.model, "passage")


# A node's document it came from (LlamaIndex's ref_doc_id), kept in its document's metadata so
# that delete(ref_doc_id) finds every node of it.
REF_DOC_ID = "ref_doc_id"
DELETE_REF_DOC_SQL = """
DELETE FROM knowledge.documents AS d
WHERE d.attachment_id IS NULL AND d.metadata @> jsonb_build_object('ref_doc_id', %(ref_doc_id)s::text)
"""

_SCALAR_OPERATORS = {
    FilterOperator.EQ: "$eq", FilterOperator.NE: "$ne", FilterOperator.GT: "$gt", FilterOperator.GTE: "$gte",
    FilterOperator.LT: "$lt", FilterOperator.LTE: "$lte", FilterOperator.IN: "$in", FilterOperator.NIN: "$nin",
    # An array field holds the value: in the search's filter a field holding an array matches
    # when one of its elements does.
    FilterOperator.ANY: "$in", FilterOperator.CONTAINS: "$eq",
}


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _condition(f: MetadataFilter) -> dict[str, Any]:
    if f.operator in _SCALAR_OPERATORS:
        return {f.key: {_SCALAR_OPERATORS[f.operator]: f.value}}
    if f.operator == FilterOperator.ALL:
        values = f.value if isinstance(f.value, list) else [f.value]
        return {"$and": [{f.key: {"$eq": v}} for v in values]} if values else {}
    if f.operator in (FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE):
        operator = "$like" if f.operator == FilterOperator.TEXT_MATCH else "$ilike"
        return {f.key: {operator: f"%{_like_escaped(str(f.value))}%"}}
    if f.operator == FilterOperator.IS_EMPTY:
        # Missing, null, [] or "", as LlamaIndex's own stores take it.
        return {"$or": [{f.key: {"$empty": True}}, {f.key: ""}]}
    raise ValueError(f"LlamaIndex filter operator {f.operator.value!r} has no translation")


def metadata_filter(filters: MetadataFilters) -> dict[str, Any]:
    """LlamaIndex's MetadataFilters as knowledge.search's ``filter`` option (docs/store.md,
    "Filters"): every FilterOperator, nested filters, and the conditions AND, OR and NOT (none
    of its filters holds)."""
    parts = [metadata_filter(f) if isinstance(f, MetadataFilters) else _condition(f) for f in filters.filters]
    if not parts:
        return {}
    if filters.condition == FilterCondition.OR:
        return {"$or": parts}
    if filters.condition == FilterCondition.NOT:
        return {"$not": {"$or": parts}}
    return {"$and": parts}


_MODES = {
    VectorStoreQueryMode.DEFAULT: None,
    VectorStoreQueryMode.HYBRID: "hybrid",
    VectorStoreQueryMode.SEMANTIC_HYBRID: "hybrid",
    VectorStoreQueryMode.TEXT_SEARCH: "text",
    VectorStoreQueryMode.SPARSE: "text",
}


class PgChunkVectorStore(BasePydanticVectorStore):
    """The store as a LlamaIndex vector store. ``add`` writes each node as a document (its id the
    node's id, as a source key: added again, it is updated; its metadata the node's, with its
    ``ref_doc_id``), which the database chunks and embeds with each config's own model (a node's
    own embedding is not stored); ``delete(ref_doc_id)`` deletes the documents of the nodes of
    that document, ``delete_nodes`` and ``get_nodes`` work by node id. ``query`` searches with
    knowledge.search: the query text (not its embedding: ``is_embedding_query`` is False), its
    ``filters`` as the search's filter (every FilterOperator, nested AND / OR / NOT), ``doc_ids``
    as a filter of ref_doc_id, its mode (DEFAULT: the store's ``mode``; HYBRID; TEXT_SEARCH).
    Each result is a chunk: a TextNode whose id is the chunk id, whose text and offsets (into the
    node's text) are the chunk's, whose SOURCE (``ref_doc_id``) is the ref_doc_id of the node it
    was written from (that node's id for a node without one) and whose metadata is that node's; its
    similarity is the chunk's cosine similarity to the query cut to [0, 1] (0 in text mode), in
    the search's order.

    ``connection``, ``async_connection``, ``chunk_config``, ``mode``, ``options`` and
    ``batch_size`` as for pg_chunk.langchain.PgChunkVectorStore."""

    stores_text: bool = True
    is_embedding_query: bool = False
    flat_metadata: bool = False
    chunk_config: str | None = None
    mode: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    batch_size: int = 100
    _connection: Any = PrivateAttr()
    _async_connection: Any = PrivateAttr()

    def __init__(self, connection: Any, *, async_connection: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._connection = connection
        self._async_connection = async_connection
        search_options(mode=self.mode, config=self.chunk_config, options=self.options)

    @classmethod
    def class_name(cls) -> str:
        return "PgChunkVectorStore"

    @property
    def client(self) -> Any:
        return self._connection

    def _documents(self, nodes: Sequence[BaseNode]) -> list[StoreDocument]:
        documents = []
        for node in nodes:
            metadata = dict(node.metadata)
            # A Document added whole (no transformations) is its own ref_doc_id.
            ref_doc_id = node.ref_doc_id or (node.node_id if isinstance(node, Document) else None)
            if ref_doc_id is not None:
                metadata[REF_DOC_ID] = ref_doc_id
            documents.append(StoreDocument(content=node.get_content(metadata_mode=MetadataMode.NONE),
                                           source_key=node.node_id, metadata=metadata,
                                           chunk_config=self.chunk_config))
        return documents

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        write_documents(self._connection, self._documents(nodes), batch_size=self.batch_size)
        return [node.node_id for node in nodes]

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        source = async_source(self._connection, self._async_connection)
        if source is None:
            return await asyncio.to_thread(self.add, nodes)
        await awrite_documents(source, self._documents(nodes), batch_size=self.batch_size)
        return [node.node_id for node in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        with connection_from(self._connection) as conn, conn.transaction():
            conn.execute(DELETE_REF_DOC_SQL, {"ref_doc_id": ref_doc_id})

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        source = async_source(self._connection, self._async_connection)
        if source is None:
            return await asyncio.to_thread(self.delete, ref_doc_id)
        async with async_connection_from(source) as conn, conn.transaction():
            await conn.execute(DELETE_REF_DOC_SQL, {"ref_doc_id": ref_doc_id})

    def delete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None,
                     **delete_kwargs: Any) -> None:
        delete_documents(self._connection, _node_ids(node_ids, filters))

    async def adelete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None,
                            **delete_kwargs: Any) -> None:
        source = async_source(self._connection, self._async_connection)
        if source is None:
            return await asyncio.to_thread(self.delete_nodes, node_ids, filters)
        await adelete_documents(source, _node_ids(node_ids, filters))

    def get_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None) -> list[BaseNode]:
        return [_stored_node(d) for d in read_documents(self._connection, _node_ids(node_ids, filters))]

    async def aget_nodes(self, node_ids: list[str] | None = None,
                         filters: MetadataFilters | None = None) -> list[BaseNode]:
        source = async_source(self._connection, self._async_connection)
        if source is None:
            return await asyncio.to_thread(self.get_nodes, node_ids, filters)
        return [_stored_node(d) for d in await aread_documents(source, _node_ids(node_ids, filters))]

    def _query_options(self, query: VectorStoreQuery) -> tuple[str, dict[str, Any]]:
        if query.mode not in _MODES:
            raise ValueError(f"query mode {query.mode.value!r} is not one pg_chunk searches with: "
                             "default, hybrid, semantic_hybrid, text_search or sparse")
        if query.node_ids:
            raise ValueError("a query by node ids is not supported: each result is a chunk; use get_nodes")
        if not query.query_str:
            raise ValueError("pg_chunk searches with the query's text (query_str), not its embedding")
        conditions = []
        if query.filters is not None:
            conditions.append(metadata_filter(query.filters))
        if query.doc_ids:
            conditions.append({REF_DOC_ID: {"$in": list(query.doc_ids)}})
        mode = _MODES[query.mode] or self.mode
        options = search_options(mode=mode, config=self.chunk_config,
                                 filter={"$and": conditions} if conditions else None,
                                 options=self.options)
        return query.query_str, options

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        text, options = self._query_options(query)
        return _result(search(self._connection, text, query.similarity_top_k, options))

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        source = async_source(self._connection, self._async_connection)
        if source is None:
            return await asyncio.to_thread(self.query, query)
        text, options = self._query_options(query)
        return _result(await asearch(source, text, query.similarity_top_k, options))


def _node_ids(node_ids: list[str] | None, filters: MetadataFilters | None) -> list[str]:
    if filters is not None or node_ids is None:
        raise ValueError("pg_chunk gets and deletes nodes by their ids only")
    return list(node_ids)


def _stored_node(document: Any) -> TextNode:
    metadata = dict(document.metadata)
    ref_doc_id = metadata.pop(REF_DOC_ID, None)
    relationships = {} if ref_doc_id is None else {NodeRelationship.SOURCE: RelatedNodeInfo(node_id=ref_doc_id)}
    return TextNode(id_=document.source_key, text=document.content, metadata=metadata, relationships=relationships)


def _chunk_node(result: SearchResult) -> TextNode:
    metadata = dict(result.document_metadata)
    source = metadata.pop(REF_DOC_ID, None) or result.source_key
    return TextNode(
        id_=str(result.chunk_id),
        text=result.content,
        metadata=metadata,
        start_char_idx=result.char_offset,
        end_char_idx=result.char_offset + result.char_length,
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=str(source))},
    )


def _result(results: list[SearchResult]) -> VectorStoreQueryResult:
    return VectorStoreQueryResult(
        nodes=[_chunk_node(r) for r in results],
        similarities=[r.relevance() for r in results],
        ids=[str(r.chunk_id) for r in results],
    )
