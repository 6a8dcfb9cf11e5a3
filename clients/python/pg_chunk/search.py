"""knowledge.search from Python: the options, the query, and each result with its chunk's place
and its document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from pg_chunk.connection import AsyncConnectionSource, ConnectionSource, async_connection_from, connection_from

# knowledge.search's rows in its order (WITH ORDINALITY), each with what knowledge.chunks and
# knowledge.documents hold of it: the search itself returns neither offsets nor titles. Both joins
# run as the caller, as the search does, so row-level security applies to them alike. They are
# outer joins, so that the search runs even when the store is empty: an inner hash join skips
# its other side when the chunks it hashed are none, and a bad option would go unreported.
SEARCH_SQL = """
SELECT s.chunk_id, s.document_id, s.chunk_index, s.content, s.score, s.vector_rank, s.text_rank,
       s.similarity, s.below_min_score, c.char_offset, c.char_length, c.metadata AS chunk_metadata,
       d.title, d.source, d.source_key, d.metadata AS document_metadata
FROM knowledge.search(%(query)s, %(k)s, %(options)s) WITH ORDINALITY AS s
LEFT JOIN knowledge.chunks AS c ON c.id = s.chunk_id
LEFT JOIN knowledge.documents AS d ON d.id = s.document_id
ORDER BY s.ordinality
"""


@dataclass(frozen=True)
class SearchResult:
    """One row of knowledge.search (docs/store.md, "Search") with its chunk's offsets into the
    document's content (``content == document.content[char_offset:char_offset + char_length]``)
    and metadata (what its strategy wrote: the markdown strategy's ``heading_path``, say), and
    the document's title, source, source_key and metadata."""

    chunk_id: int
    document_id: int
    chunk_index: int
    content: str
    score: float
    vector_rank: int | None
    text_rank: int | None
    similarity: float | None
    below_min_score: bool
    char_offset: int
    char_length: int
    chunk_metadata: dict[str, Any]
    title: str | None
    source: str | None
    source_key: str | None
    document_metadata: dict[str, Any]

    def relevance(self) -> float:
        """The chunk's cosine similarity to the query cut to [0, 1], as the frameworks' score
        cutoffs expect (0 without one: text mode, or a query the model embeds to zeros)."""
        return min(1.0, max(0.0, self.similarity or 0.0))

    def metadata(self) -> dict[str, Any]:
        """Every field but the content, as the frameworks' documents and nodes carry it."""
        fields = dict(self.__dict__)
        del fields["content"]
        return fields


def search_options(
    *,
    mode: str | None = None,
    config: str | None = None,
    filter: Mapping[str, Any] | None = None,
    document_ids: Sequence[int] | None = None,
    min_score: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """knowledge.search's options object: the named ones that are not None, and ``options`` for
    any other (``language``, ``k1``, ``b``, ``fusion``, ``neighbours``, ``metadata``). ``filter``
    is the ``filter`` option: conditions on the metadata of each chunk and its document, such as
    ``{"year": {"$gte": 2020}, "lang": {"$in": ["en", "de"]}}`` (docs/store.md, "Filters"). The
    server checks every value and refuses a bad one with 22023; naming an option both ways is a
    ValueError here."""
    named = {
        "mode": mode,
        "config": config,
        "filter": None if filter is None else dict(filter),
        "document_ids": None if document_ids is None else list(document_ids),
        "min_score": min_score,
    }
    chosen = {key: value for key, value in named.items() if value is not None}
    for key, value in (options or {}).items():
        if key in chosen:
            raise ValueError(f"search option {key!r} is given twice: as an argument and in options")
        chosen[key] = value
    return chosen


def _parameters(query: str, k: int, options: Mapping[str, Any]) -> dict[str, Any]:
    return {"query": query, "k": k, "options": Jsonb(dict(options))}


def search(source: ConnectionSource, query: str, k: int = 5, options: Mapping[str, Any] | None = None) -> list[SearchResult]:
    """knowledge.search(query, k, options), best first. ``options`` as ``search_options`` makes it."""
    with connection_from(source) as conn, conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        cur.execute(SEARCH_SQL, _parameters(query, k, options or {}))
        return [SearchResult(**row) for row in cur.fetchall()]


async def asearch(
    source: AsyncConnectionSource, query: str, k: int = 5, options: Mapping[str, Any] | None = None
) -> list[SearchResult]:
    """search, on an asyncio connection."""
    async with async_connection_from(source) as conn, conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(SEARCH_SQL, _parameters(query, k, options or {}))
        return [SearchResult(**row) for row in await cur.fetchall()]
