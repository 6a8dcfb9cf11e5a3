"""Where a call gets its connection, and the one place psycopg's errors become PgChunkError."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Union

import psycopg

from pg_chunk.errors import PgChunkError

# A connection string (a connection is opened for each call and closed after it), an open
# connection (used as it is: a call inside your transaction joins it as a savepoint), or a pool
# (anything with a ``connection()`` context manager, such as psycopg_pool's ConnectionPool).
ConnectionSource = Union[str, psycopg.Connection[Any], Any]
AsyncConnectionSource = Union[str, psycopg.AsyncConnection[Any], Any]


@contextmanager
def connection_from(source: ConnectionSource) -> Iterator[psycopg.Connection[Any]]:
    """An open connection from ``source``; psycopg's errors inside come out as PgChunkError."""
    try:
        if isinstance(source, str):
            with psycopg.connect(source) as conn:
                yield conn
        elif isinstance(source, psycopg.Connection):
            yield source
        elif callable(getattr(source, "connection", None)):
            with source.connection() as conn:
                yield conn
        else:
            raise TypeError(f"not a connection, pool or connection string: {source!r}")
    except psycopg.Error as error:
        raise PgChunkError.from_psycopg(error) from error


@asynccontextmanager
async def async_connection_from(source: AsyncConnectionSource) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """connection_from for asyncio: a connection string, an AsyncConnection or an async pool."""
    try:
        if isinstance(source, str):
            async with await psycopg.AsyncConnection.connect(source) as conn:
                yield conn
        elif isinstance(source, psycopg.AsyncConnection):
            yield source
        elif callable(getattr(source, "connection", None)):
            async with source.connection() as conn:
                yield conn
        else:
            raise TypeError(f"not an async connection, pool or connection string: {source!r}")
    except psycopg.Error as error:
        raise PgChunkError.from_psycopg(error) from error
