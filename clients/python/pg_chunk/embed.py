"""knowledge.embed and knowledge.embed_batch from Python: vectors made by the database's own
models, as lists of floats (``::real[]``, so no vector type need be registered)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pg_chunk.connection import AsyncConnectionSource, ConnectionSource, async_connection_from, connection_from

EMBED_SQL = "SELECT knowledge.embed(%(text)s, %(model)s, %(role)s)::real[]"
EMBED_BATCH_SQL = """
SELECT e.embedding::real[] FROM knowledge.embed_batch(%(texts)s::text[], %(model)s, %(role)s) AS e
ORDER BY e.ordinality
"""


def _embed_parameters(text: str, model: str | None, role: str) -> dict[str, Any]:
    return {"text": text, "model": model, "role": role}


def _batch_parameters(texts: Sequence[str], model: str | None, role: str) -> dict[str, Any]:
    return {"texts": list(texts), "model": model, "role": role}


def embed(source: ConnectionSource, text: str, model: str | None = None, role: str = "passage") -> list[float]:
    """knowledge.embed(text, model, role): model None is pg_chunk.default_model; role "query"
    or "passage" picks the model's prefix."""
    with connection_from(source) as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute(EMBED_SQL, _embed_parameters(text, model, role))
        row = cur.fetchone()
        assert row is not None
        return list(row[0])


def embed_batch(
    source: ConnectionSource, texts: Sequence[str], model: str | None = None, role: str = "passage"
) -> list[list[float]]:
    """knowledge.embed_batch(texts, model, role), in the order of ``texts``."""
    if not texts:
        return []
    with connection_from(source) as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute(EMBED_BATCH_SQL, _batch_parameters(texts, model, role))
        return [list(row[0]) for row in cur.fetchall()]


async def aembed(source: AsyncConnectionSource, text: str, model: str | None = None, role: str = "passage") -> list[float]:
    """embed, on an asyncio connection."""
    async with async_connection_from(source) as conn, conn.transaction(), conn.cursor() as cur:
        await cur.execute(EMBED_SQL, _embed_parameters(text, model, role))
        row = await cur.fetchone()
        assert row is not None
        return list(row[0])


async def aembed_batch(
    source: AsyncConnectionSource, texts: Sequence[str], model: str | None = None, role: str = "passage"
) -> list[list[float]]:
    """embed_batch, on an asyncio connection."""
    if not texts:
        return []
    async with async_connection_from(source) as conn, conn.transaction(), conn.cursor() as cur:
        await cur.execute(EMBED_BATCH_SQL, _batch_parameters(texts, model, role))
        return [list(row[0]) for row in await cur.fetchall()]
