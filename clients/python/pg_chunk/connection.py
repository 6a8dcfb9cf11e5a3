"""Where a call gets its connection, and the one place psycopg's errors become PgChunkError."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Union
from urllib.parse import quote

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pg_chunk.errors import PgChunkError

# A connection string (a connection is opened for each call and closed after it), an open
# connection (used as it is: a call inside your transaction joins it as a savepoint), or a pool
# (anything with a ``connection()`` context manager, such as psycopg_pool's ConnectionPool).
ConnectionSource = Union[str, psycopg.Connection[Any], Any]
AsyncConnectionSource = Union[str, psycopg.AsyncConnection[Any], Any]


def _not_connected(error: psycopg.Error, conninfo: str) -> PgChunkError:
    """The error of a connection string that did not connect, with nothing of its password: libpq
    quotes the part of a string it cannot parse (which may be the password), so a string that
    does not parse loses every quoted part of the message, and one that does loses its password,
    as written and percent-encoded. It is raised without psycopg's exception, whose message is
    whole."""
    message = str(error).strip()
    try:
        password = str(conninfo_to_dict(conninfo).get("password") or "")
    except psycopg.Error:
        return PgChunkError(re.sub(r'"[^"]*"', '"…"', message))
    for written in {password, quote(password, safe="")} - {""}:
        message = message.replace(written, "…")
    return PgChunkError(message)


@contextmanager
def connection_from(source: ConnectionSource) -> Iterator[psycopg.Connection[Any]]:
    """An open connection from ``source``; psycopg's errors inside come out as PgChunkError."""
    try:
        if isinstance(source, str):
            try:
                connected = psycopg.connect(source)
            except psycopg.Error as error:
                raise _not_connected(error, source) from None
            with connected as conn:
                yield conn
        elif isinstance(source, psycopg.Connection):
            yield source
        elif callable(getattr(source, "connection", None)):
            with source.connection() as conn:
                yield conn
        else:
            raise TypeError(f"not a connection, pool or connection string: a {type(source).__name__}")
    except psycopg.Error as error:
        raise PgChunkError.from_psycopg(error) from error


@asynccontextmanager
async def async_connection_from(source: AsyncConnectionSource) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """connection_from for asyncio: a connection string, an AsyncConnection or an async pool."""
    try:
        if isinstance(source, str):
            try:
                connected = await psycopg.AsyncConnection.connect(source)
            except psycopg.Error as error:
                raise _not_connected(error, source) from None
            async with connected as conn:
                yield conn
        elif isinstance(source, psycopg.AsyncConnection):
            yield source
        elif callable(getattr(source, "connection", None)):
            async with source.connection() as conn:
                yield conn
        else:
            raise TypeError(f"not an async connection, pool or connection string: a {type(source).__name__}")
    except psycopg.Error as error:
        raise PgChunkError.from_psycopg(error) from error


def async_source(connection: Any, async_connection: Any) -> Any:
    """What an async call connects with: ``async_connection``, else ``connection`` when it is a
    connection string; None: the caller runs its sync call in a thread, so that the event loop
    never waits on a sync connection or pool."""
    if async_connection is not None:
        return async_connection
    return connection if isinstance(connection, str) else None


PREWARM_SQL = "SELECT knowledge.prewarm(%(model)s)"


def prewarm(*models: str | None) -> Callable[[psycopg.Connection[Any]], None]:
    """A pool's ``configure`` callback (psycopg_pool's ConnectionPool) that loads ``models`` in
    each connection as the pool opens it, so that no search or write pays for the load
    (knowledge.prewarm; no model named: the server's pg_chunk.default_model)."""
    chosen = list(models) or [None]

    def configure(conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            for model in chosen:
                conn.execute(PREWARM_SQL, {"model": model})

    return configure


def aprewarm(*models: str | None) -> Callable[[psycopg.AsyncConnection[Any]], Awaitable[None]]:
    """prewarm for an AsyncConnectionPool."""
    chosen = list(models) or [None]

    async def configure(conn: psycopg.AsyncConnection[Any]) -> None:
        async with conn.transaction():
            for model in chosen:
                await conn.execute(PREWARM_SQL, {"model": model})

    return configure
