"""pg_chunk from Python: knowledge.search's hybrid results, documents written, read and deleted
by source key, and the database's embeddings, on psycopg 3. LangChain's vector store, retriever
and embeddings live in pg_chunk.langchain, LlamaIndex's retriever in pg_chunk.llama_index (each
needs its framework); docs/clients.md shows them."""

from pg_chunk.connection import aprewarm, prewarm
from pg_chunk.embed import aembed, aembed_batch, embed, embed_batch
from pg_chunk.errors import PgChunkError
from pg_chunk.search import SearchResult, asearch, search, search_options
from pg_chunk.writer import (
    StoredDocument,
    StoreDocument,
    Written,
    adelete_documents,
    aread_documents,
    awrite_documents,
    delete_documents,
    read_documents,
    write_documents,
)

__all__ = [
    "PgChunkError",
    "SearchResult",
    "StoreDocument",
    "StoredDocument",
    "Written",
    "adelete_documents",
    "aembed",
    "aembed_batch",
    "aprewarm",
    "aread_documents",
    "asearch",
    "awrite_documents",
    "delete_documents",
    "embed",
    "embed_batch",
    "prewarm",
    "read_documents",
    "search",
    "search_options",
    "write_documents",
]
