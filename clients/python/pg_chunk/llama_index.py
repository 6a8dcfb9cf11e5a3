"""LlamaIndex: a retriever over knowledge.search.

Needs llama-index-core (``pip install 'pg-chunk[llama-index]'``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeRelationship, NodeWithScore, QueryBundle, RelatedNodeInfo, TextNode

from pg_chunk.search import SearchResult, asearch, search, search_options

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
        source = self.async_connection
        if source is None and isinstance(self.connection, str):
            source = self.connection
        if source is None:
            # The sync search in a thread: on the event loop it would hold every other task.
            return await asyncio.to_thread(self._retrieve, query_bundle)
        return [_node(r) for r in await asearch(source, query_bundle.query_str, self.k, self.options)]
