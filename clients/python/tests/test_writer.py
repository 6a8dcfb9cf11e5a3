"""pg_chunk.write_documents: documents added and updated by source key in batches, with a sync
config and with an async one whose queue it waits for."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from conftest import fresh_database

from pg_chunk import PgChunkError, StoreDocument, awrite_documents, search, write_documents


@pytest.fixture(scope="module")
def writer_db() -> str:
    """A store of its own, with "queued", an async config whose workers scripts/test.sh configures
    (TEST_WORKER_DATABASES in scripts/lib.sh names the database)."""
    conninfo = fresh_database("python")
    with psycopg.connect(conninfo) as conn:
        conn.execute("""INSERT INTO knowledge.chunk_configs (name, cfg, model, mode)
                        VALUES ('queued', '{"strategy": "fixed", "max_size": 200, "overlap": 0}', 'potion-base-8m', 'async')""")
    return conninfo


@pytest.fixture
def conn(writer_db: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(writer_db, autocommit=True) as connection:
        yield connection


def notes(prefix: str, count: int, config: str | None = None, word: str = "first") -> list[StoreDocument]:
    return [StoreDocument(content=f"Note {i} of {prefix}, the {word} version. It has two sentences.",
                          source_key=f"{prefix}/{i}", title=f"Note {i}", metadata={"prefix": prefix, "word": word},
                          source="notes", chunk_config=config) for i in range(count)]


def stored(conn: psycopg.Connection[Any], prefix: str, config: str) -> list[tuple[Any, ...]]:
    """Each document of the prefix with its fields and its chunks' contents of the config."""
    return conn.execute("""SELECT d.id, d.source_key, d.title, d.content, d.metadata, d.source,
                                  array(SELECT c.content FROM knowledge.chunks AS c
                                        WHERE c.document_id = d.id AND c.chunk_config = %s ORDER BY c.chunk_index)
                           FROM knowledge.documents AS d WHERE d.source_key LIKE %s ORDER BY d.id""",
                        (config, prefix + "/%")).fetchall()


def test_a_second_write_updates_by_source_key(conn: psycopg.Connection[Any], writer_db: str) -> None:
    first = write_documents(writer_db, notes("sync", 5, "default"), batch_size=2)
    assert [(w.source_key, w.added) for w in first] == [(f"sync/{i}", True) for i in range(5)]
    rows = stored(conn, "sync", "default")
    assert [r[0] for r in rows] == [w.document_id for w in first]
    assert all(r[6] == [r[3]] for r in rows), "each short note is one chunk of the default config"
    # Three of them again, changed, and a new one: updated in place, the new one added.
    second = write_documents(writer_db, notes("sync", 4, "default", "second")[1:] + notes("sync", 6, "default")[5:],
                             batch_size=3)
    assert [(w.document_id, w.added) for w in second] == [(first[i].document_id, False) for i in (1, 2, 3)] + \
        [(second[3].document_id, True)]
    rows = stored(conn, "sync", "default")
    assert len(rows) == 6
    assert [r[3].split(", the ")[1].split(" ")[0] for r in rows] == ["first", "second", "second", "second", "first", "first"]
    assert all(r[6] == [r[3]] and r[4]["word"] in r[3] for r in rows), "chunks and metadata follow the update"
    hit = search(writer_db, "the second version of note 2", 1, {"document_ids": [first[2].document_id]})
    assert hit[0].content == "Note 2 of sync, the second version. It has two sentences."


def test_an_async_config_s_queue_is_waited_for(conn: psycopg.Connection[Any], writer_db: str) -> None:
    written = write_documents(writer_db, notes("async", 6, "queued"), batch_size=4, wait=True, timeout=120)
    rows = stored(conn, "async", "queued")
    assert [r[0] for r in rows] == [w.document_id for w in written]
    assert all(r[6] and "".join(r[6]).replace(" ", "") == r[3].replace(" ", "") for r in rows), rows
    assert conn.execute("SELECT count(*) FROM knowledge.queue WHERE done_at IS NULL").fetchone() == (0,)


async def test_awrite_documents_adds_updates_and_waits(conn: psycopg.Connection[Any], writer_db: str) -> None:
    first = await awrite_documents(writer_db, notes("aio", 3, "queued"), batch_size=2, wait=True, timeout=120)
    again = await awrite_documents(writer_db, notes("aio", 3, "queued", "second"), wait=True, timeout=120)
    assert [(w.document_id, w.added) for w in again] == [(w.document_id, False) for w in first]
    rows = stored(conn, "aio", "queued")
    assert all("second" in r[3] and "second" in "".join(r[6]) for r in rows), rows


def test_a_failed_batch_keeps_the_batches_before_it(conn: psycopg.Connection[Any], writer_db: str) -> None:
    documents = notes("failed", 4, "default")
    documents[3] = StoreDocument(content="Unknown language.", source_key="failed/3", language="klingon")
    with pytest.raises(PgChunkError) as raised:
        write_documents(writer_db, documents, batch_size=2)
    assert raised.value.sqlstate == "42704"
    assert [r[1] for r in stored(conn, "failed", "default")] == ["failed/0", "failed/1"]


def test_writers_of_one_key_meet_in_the_unique_index(conn: psycopg.Connection[Any], writer_db: str) -> None:
    # Four writers of the same three keys at once, two in each order: one document a key, each
    # added once, and no deadlock.
    documents = notes("race", 3, "default")
    batches = [documents, documents[::-1], documents, documents[::-1]]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda batch: write_documents(writer_db, batch), batches))
    assert [[w.source_key for w in r] for r in results] == [[d.source_key for d in b] for b in batches]
    rows = stored(conn, "race", "default")
    assert len(rows) == 3
    assert sum(w.added for r in results for w in r) == 3
    assert {w.document_id for r in results for w in r} == {r[0] for r in rows}
    # A raw SQL writer of a key there is refused, as the writer's ON CONFLICT expects.
    with pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute("INSERT INTO knowledge.documents (source_key, content) VALUES ('race/0', 'Again.')")


def test_a_key_twice_in_a_batch_is_refused(writer_db: str) -> None:
    with pytest.raises(ValueError, match="source keys repeated in one batch: twice/0"):
        write_documents(writer_db, notes("twice", 1) * 2)


def test_waiting_inside_a_transaction_is_refused(writer_db: str) -> None:
    with psycopg.connect(writer_db) as conn, conn.transaction():
        with pytest.raises(ValueError, match="inside a transaction"):
            write_documents(conn, notes("inside", 1, "queued"), wait=True)


def test_writes_on_an_open_connection_join_its_transaction(conn: psycopg.Connection[Any], writer_db: str) -> None:
    with psycopg.connect(writer_db) as own:
        with own.transaction(force_rollback=True):
            write_documents(own, notes("rolled", 3, "default"), batch_size=2)
            assert len(stored(own, "rolled", "default")) == 3
    assert stored(conn, "rolled", "default") == []


def test_a_timeout_says_why_the_queue_did_not_drain() -> None:
    # No worker serves this database (it is not in pg_chunk.worker_databases).
    unserved = fresh_database("python_unserved")
    with psycopg.connect(unserved) as conn:
        conn.execute("INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES ('queued', 'potion-base-8m', 'async')")
    with pytest.raises(TimeoutError) as raised:
        write_documents(unserved, notes("unserved", 1, "queued"), wait=True, timeout=0.5)
    assert str(raised.value) == (
        "knowledge.wait_for_queue: the queue was not empty after 0.5 s; the server said: no pg_chunk worker serves"
        ' database "pg_chunk_test_python_unserved" Add the database to pg_chunk.worker_databases, with pg_chunk in'
        " shared_preload_libraries, and restart PostgreSQL.")
