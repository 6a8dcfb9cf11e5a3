"""knowledge.documents by source key: written in batches (the store's triggers chunk and embed
them, or queue them for an async config), read and deleted."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.types.json import Jsonb

from pg_chunk.connection import AsyncConnectionSource, ConnectionSource, async_connection_from, connection_from


@dataclass(frozen=True)
class StoreDocument:
    """A document to write. ``source_key`` is its identity for the writer: a document written
    again with the same key is updated, not added (None: always added). ``chunk_config`` None
    chunks it with every active config, a name with that config only; ``language`` None keeps a
    stored document's language (``'english'`` for a new one)."""

    content: str
    source_key: str | None = None
    title: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None
    language: str | None = None
    chunk_config: str | None = None


@dataclass(frozen=True)
class Written:
    """What happened to one document: its id, and whether it was added (or updated)."""

    document_id: int
    source_key: str | None
    added: bool


# Documents mirrored by knowledge.attach also have source keys (their table's ids); the writer
# leaves them alone. A document written directly is known by its key (the unique index
# knowledge.documents_source_key, WHERE attachment_id IS NULL), so writers of one key meet in
# ON CONFLICT: one adds it, the others update it. A row's xmax is 0 when this statement inserted
# it. An update that leaves content, language and chunk_config as they were rewrites no chunk
# (docs/store.md).
WRITE_SQL = """
INSERT INTO knowledge.documents AS d (source_key, title, content, metadata, source, language, chunk_config)
VALUES (%(source_key)s, %(title)s, %(content)s, %(metadata)s, %(source)s, coalesce(%(language)s, 'english'),
        %(chunk_config)s)
ON CONFLICT (source_key) WHERE attachment_id IS NULL DO UPDATE
SET title = excluded.title, content = excluded.content, metadata = excluded.metadata, source = excluded.source,
    language = coalesce(%(language)s, d.language), chunk_config = excluded.chunk_config
RETURNING d.id, d.xmax = 0
"""

WAIT_SQL = "SELECT knowledge.wait_for_queue(%(timeout)s)"

# The writer's documents (not an attachment's, whose keys are their table's ids) by source key.
READ_SQL = """
SELECT d.id, d.source_key, d.title, d.content, d.metadata, d.source, d.language
FROM knowledge.documents AS d
WHERE d.attachment_id IS NULL AND d.source_key = ANY (%(keys)s::text[])
"""
DELETE_SQL = """
DELETE FROM knowledge.documents AS d
WHERE d.attachment_id IS NULL AND d.source_key = ANY (%(keys)s::text[])
"""


@dataclass(frozen=True)
class StoredDocument:
    """A document the writer wrote, as read back by ``read_documents``."""

    document_id: int
    source_key: str
    title: str | None
    content: str
    metadata: dict[str, Any]
    source: str | None
    language: str


def _batches(documents: Iterable[StoreDocument], batch_size: int) -> Iterator[list[StoreDocument]]:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    batch: list[StoreDocument] = []
    for document in documents:
        batch.append(document)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def _check_keys(batch: list[StoreDocument]) -> None:
    keys = [d.source_key for d in batch if d.source_key is not None]
    if len(set(keys)) < len(keys):
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"source keys repeated in one batch: {', '.join(repeated)}")


def _row(document: StoreDocument) -> dict[str, Any]:
    return {
        "source_key": document.source_key,
        "title": document.title,
        "content": document.content,
        "metadata": Jsonb(dict(document.metadata)),
        "source": document.source,
        "language": document.language,
        "chunk_config": document.chunk_config,
    }


def _check_wait(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any], wait: bool) -> None:
    # The workers see the documents only once they are committed: waiting inside the caller's
    # transaction would time out.
    if wait and conn.info.transaction_status != TransactionStatus.IDLE:
        raise ValueError("wait=True needs the documents committed, but the connection is inside a transaction")


def _collect(warnings: list[str]) -> Callable[[psycopg.errors.Diagnostic], None]:
    # knowledge.wait_for_queue warns when no worker serves the database: the likely reason for a
    # timeout, which the TimeoutError repeats.
    return lambda diagnostic: warnings.append(f"{diagnostic.message_primary} {diagnostic.message_hint or ''}".strip())


def _check_drained(row: tuple[Any, ...] | None, timeout: float, warnings: list[str]) -> None:
    if not (row and row[0]):
        said = "".join(f"; the server said: {w}" for w in warnings)
        raise TimeoutError(f"knowledge.wait_for_queue: the queue was not empty after {timeout} s{said}")


def _one(row: tuple[Any, ...] | None) -> tuple[int, bool]:
    # WRITE_SQL returns one row per document: its id and whether it was added.
    assert row is not None
    return row[0], row[1]


def _key_order(batch: list[StoreDocument]) -> list[int]:
    # Each batch writes its keys in one order, so that two batches holding the same keys lock
    # their rows in the same order and cannot deadlock.
    return sorted(range(len(batch)), key=lambda i: (batch[i].source_key is None, batch[i].source_key or ""))


def _written(batch: list[StoreDocument], order: list[int], rows: list[tuple[int, bool]]) -> list[Written]:
    by_position = dict(zip(order, rows))
    return [Written(by_position[i][0], d.source_key, by_position[i][1]) for i, d in enumerate(batch)]


def write_documents(
    source: ConnectionSource,
    documents: Iterable[StoreDocument],
    *,
    batch_size: int = 100,
    wait: bool = False,
    timeout: float = 60.0,
) -> list[Written]:
    """Adds or updates ``documents`` by source key, ``batch_size`` to a transaction (on a
    connection already inside one, each batch is a savepoint of it). A sync config has chunked
    and embedded each batch when its transaction ends. With ``wait``, returns once
    knowledge.wait_for_queue says the queue is empty (an async config's documents chunked), or
    raises TimeoutError after ``timeout`` seconds."""
    written: list[Written] = []
    with connection_from(source) as conn:
        _check_wait(conn, wait)
        for batch in _batches(documents, batch_size):
            _check_keys(batch)
            with conn.transaction(), conn.cursor() as cur:
                order = _key_order(batch)
                cur.executemany(WRITE_SQL, [_row(batch[i]) for i in order], returning=True)
                rows: list[tuple[int, bool]] = []
                while True:
                    rows.append(_one(cur.fetchone()))
                    if not cur.nextset():
                        break
                written.extend(_written(batch, order, rows))
        if wait:
            warnings: list[str] = []
            handler = _collect(warnings)
            conn.add_notice_handler(handler)
            try:
                with conn.transaction(), conn.cursor() as cur:
                    cur.execute(WAIT_SQL, {"timeout": timedelta(seconds=timeout)})
                    row = cur.fetchone()
            finally:
                conn.remove_notice_handler(handler)
            _check_drained(row, timeout, warnings)
    return written


async def awrite_documents(
    source: AsyncConnectionSource,
    documents: Iterable[StoreDocument],
    *,
    batch_size: int = 100,
    wait: bool = False,
    timeout: float = 60.0,
) -> list[Written]:
    """write_documents, on an asyncio connection."""
    written: list[Written] = []
    async with async_connection_from(source) as conn:
        _check_wait(conn, wait)
        for batch in _batches(documents, batch_size):
            _check_keys(batch)
            async with conn.transaction(), conn.cursor() as cur:
                order = _key_order(batch)
                await cur.executemany(WRITE_SQL, [_row(batch[i]) for i in order], returning=True)
                rows: list[tuple[int, bool]] = []
                while True:
                    rows.append(_one(await cur.fetchone()))
                    if not cur.nextset():
                        break
                written.extend(_written(batch, order, rows))
        if wait:
            warnings: list[str] = []
            handler = _collect(warnings)
            conn.add_notice_handler(handler)
            try:
                async with conn.transaction(), conn.cursor() as cur:
                    await cur.execute(WAIT_SQL, {"timeout": timedelta(seconds=timeout)})
                    row = await cur.fetchone()
            finally:
                conn.remove_notice_handler(handler)
            _check_drained(row, timeout, warnings)
    return written


def _stored_in_order(keys: Iterable[str], rows: list[tuple[Any, ...]]) -> list[StoredDocument]:
    found = {row[1]: StoredDocument(*row) for row in rows}
    return [found[key] for key in dict.fromkeys(keys) if key in found]


def read_documents(source: ConnectionSource, keys: Iterable[str]) -> list[StoredDocument]:
    """The documents written with these source keys, in the order of ``keys`` (each once; a key
    with no document is left out)."""
    keys = list(keys)
    with connection_from(source) as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute(READ_SQL, {"keys": keys})
        return _stored_in_order(keys, cur.fetchall())


async def aread_documents(source: AsyncConnectionSource, keys: Iterable[str]) -> list[StoredDocument]:
    """read_documents, on an asyncio connection."""
    keys = list(keys)
    async with async_connection_from(source) as conn, conn.transaction(), conn.cursor() as cur:
        await cur.execute(READ_SQL, {"keys": keys})
        return _stored_in_order(keys, await cur.fetchall())


def delete_documents(source: ConnectionSource, keys: Iterable[str]) -> int:
    """Deletes the documents written with these source keys, and so their chunks; returns how
    many there were (a key with no document is no error)."""
    with connection_from(source) as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute(DELETE_SQL, {"keys": list(keys)})
        return cur.rowcount


async def adelete_documents(source: AsyncConnectionSource, keys: Iterable[str]) -> int:
    """delete_documents, on an asyncio connection."""
    async with async_connection_from(source) as conn, conn.transaction(), conn.cursor() as cur:
        await cur.execute(DELETE_SQL, {"keys": list(keys)})
        return cur.rowcount
