"""Pools: a psycopg_pool pool serves every call, prewarm loads the model in each connection as
the pool opens it, and an async call given a sync pool never holds the event loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from conftest import assert_same_results, sql_search
from llama_index.core.schema import QueryBundle
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from pg_chunk import PgChunkError, aprewarm, prewarm
from pg_chunk.langchain import PgChunkRetriever, PgChunkVectorStore
from pg_chunk.llama_index import PgChunkRetriever as LlamaRetriever

QUESTION = "How do hives stay warm in winter?"
WARM = "SELECT knowledge.prewarm()"


def test_prewarm_loads_the_model_as_the_pool_opens_a_connection(search_db: str) -> None:
    with ConnectionPool(search_db, min_size=2, configure=prewarm(), open=True) as pool:
        for _ in range(2):
            with pool.connection() as conn:
                assert conn.execute(WARM).fetchone()[0] == 0, "loaded when the pool opened it"
    with ConnectionPool(search_db, min_size=1, open=True) as pool, pool.connection() as conn:
        assert conn.execute(WARM).fetchone()[0] > 0, "a connection opened without prewarm loads it now"
    with ConnectionPool(search_db, min_size=1, configure=prewarm("potion-base-8m", "all-minilm-l6-v2"),
                        open=True) as pool, pool.connection() as conn:
        assert conn.execute("SELECT knowledge.prewarm('potion-base-8m') + knowledge.prewarm('all-minilm-l6-v2')"
                            ).fetchone()[0] == 0


async def test_aprewarm_loads_the_model_in_an_async_pool(search_db: str) -> None:
    async with AsyncConnectionPool(search_db, min_size=1, configure=aprewarm(), open=False) as pool:
        async with pool.connection() as conn:
            assert (await (await conn.execute(WARM)).fetchone())[0] == 0


def test_an_unknown_model_fails_the_pool_s_connections(search_db: str) -> None:
    # psycopg_pool logs the configure error and retries; a connection asked for times out.
    with ConnectionPool(search_db, min_size=1, configure=prewarm("no-such-model"), open=False,
                        timeout=1, reconnect_timeout=1) as pool:
        with pytest.raises(PoolTimeout):
            pool.open(wait=True, timeout=2)


def test_every_client_takes_a_pool(conn: psycopg.Connection[Any], search_db: str) -> None:
    expected = sql_search(conn, QUESTION, 3)
    with ConnectionPool(search_db, min_size=1, configure=prewarm(), open=True) as pool:
        documents = PgChunkRetriever(connection=pool, k=3).invoke(QUESTION)
        assert_same_results([(d.metadata["chunk_id"], d.metadata["score"]) for d in documents],
                            [(r[0], r[4]) for r in expected])
        assert [n.node.text for n in LlamaRetriever(pool, k=3).retrieve(QUESTION)] == [r[3] for r in expected]
        assert [d.page_content for d in PgChunkVectorStore(pool).similarity_search(QUESTION, k=3)] == \
            [r[3] for r in expected]
        with pytest.raises(PgChunkError):
            PgChunkRetriever(connection=pool, mode="fuzzy").invoke(QUESTION)


class SlowPool:
    """A sync pool whose connections take half a second to hand out (time.sleep, as a busy pool
    or a slow network would), to see whether an async call holds the event loop meanwhile."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        time.sleep(0.5)
        with self.pool.connection() as conn:
            yield conn


async def longest_stall(call: Callable[[], Awaitable[Any]]) -> float:
    """The longest the event loop went without running a 10 ms ticker while ``call`` ran."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    try:
        await call()
    finally:
        done.set()
        await ticking
    return max(gaps)


async def test_an_async_call_given_a_sync_pool_never_holds_the_event_loop(search_db: str) -> None:
    with ConnectionPool(search_db, min_size=1, configure=prewarm(), open=True) as opened:
        pool = SlowPool(opened)
        calls = {
            "llama_index aretrieve": lambda: LlamaRetriever(pool, k=2).aretrieve(QueryBundle(QUESTION)),
            "langchain ainvoke": lambda: PgChunkRetriever(connection=pool, k=2).ainvoke(QUESTION),
            "vector store asimilarity_search": lambda: PgChunkVectorStore(pool).asimilarity_search(QUESTION, k=2),
            "vector store aget_by_ids": lambda: PgChunkVectorStore(pool).aget_by_ids(["sample"]),
        }
        for name, call in calls.items():
            stall = await longest_stall(call)
            assert stall < 0.3, f"{name} held the event loop for {stall:.2f} s"
