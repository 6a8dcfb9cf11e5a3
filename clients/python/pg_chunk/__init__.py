"""pg_chunk from Python: knowledge.search's hybrid results, the document writer and the
database's embeddings, on psycopg 3. The LangChain and LlamaIndex retrievers live in
pg_chunk.langchain and pg_chunk.llama_index (each needs its framework); docs/clients.md shows them."""

from pg_chunk.embed import aembed, aembed_batch, embed, embed_batch
from pg_chunk.errors import PgChunkError
from pg_chunk.search import SearchResult, asearch, search, search_options
from pg_chunk.writer import StoreDocument, Written, awrite_documents, write_documents

__all__ = [
    "PgChunkError",
    "SearchResult",
    "StoreDocument",
    "Written",
    "aembed",
    "aembed_batch",
    "asearch",
    "awrite_documents",
    "embed",
    "embed_batch",
    "search",
    "search_options",
    "write_documents",
]
