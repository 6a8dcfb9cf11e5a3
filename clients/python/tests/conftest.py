"""The databases the tests run in, made afresh on the cluster libpq's environment names
(PGHOST, PGPORT), as tests/src/lib.rs makes the client tests' own."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

REPOSITORY = Path(__file__).resolve().parents[3]


def fresh_database(name: str) -> str:
    """The connection string of ``pg_chunk_test_<name>``, made afresh with pg_chunk in it."""
    database = f"pg_chunk_test_{name}"
    with psycopg.connect("dbname=postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {database}")
    conninfo = f"dbname={database}"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET client_min_messages = warning")
        conn.execute("CREATE EXTENSION pg_chunk CASCADE")
    return conninfo


@functools.cache
def search_database() -> str:
    """A store that the search tests only read: the search corpus's 36 one-chunk documents
    (metadata {"title", "collection": "corpus"}) and examples/sample.txt (four chunks, metadata
    {"collection": "sample"}), chunked by the default config and by "small" (fixed pieces of at
    most 300 characters, potion-base-8m). Made once a session; LangChain's suites, whose
    parameters are properties, call it too."""
    conninfo = fresh_database("python_search")
    corpus = json.loads((REPOSITORY / "tests/fixtures/search_corpus.json").read_text())
    sample = (REPOSITORY / "examples/sample.txt").read_text()
    with psycopg.connect(conninfo) as conn:
        conn.execute("""INSERT INTO knowledge.chunk_configs (name, cfg, model)
                        VALUES ('small', '{"strategy": "fixed", "max_size": 300, "overlap": 0}', 'potion-base-8m')""")
        conn.execute("""INSERT INTO knowledge.documents (title, content, source, metadata)
                        SELECT d->>'title', d->>'content', 'search_corpus.json',
                               jsonb_build_object('title', d->>'title', 'collection', 'corpus')
                        FROM jsonb_array_elements(%s::jsonb) AS d""", (json.dumps(corpus["documents"]),))
        conn.execute("""INSERT INTO knowledge.documents (title, content, source, source_key, metadata)
                        VALUES ('Three subjects', %s, 'examples/sample.txt', 'sample', '{"collection": "sample"}')""",
                     (sample,))
    return conninfo


@pytest.fixture(scope="session")
def search_db() -> str:
    """search_database's connection string."""
    return search_database()


@pytest.fixture
def conn(search_db: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(search_db, autocommit=True) as connection:
        yield connection


def sql_search(conn: psycopg.Connection[Any], query: str, k: int = 5, options: dict[str, Any] | None = None
               ) -> list[tuple[Any, ...]]:
    """knowledge.search's own rows, to compare the clients' results with."""
    return conn.execute("SELECT * FROM knowledge.search(%s, %s, %s::jsonb)",
                        (query, k, json.dumps(options or {}))).fetchall()


def assert_same_results(actual: list[tuple[Any, ...]], expected: list[tuple[Any, ...]]) -> None:
    """Rows (chunk id, score, anything else) equal, scores within 1e-9 of each other: a search's
    scores differ in their last bits from one backend to another (z-scores summed in another
    order)."""
    assert [(r[0], *r[2:]) for r in actual] == [(r[0], *r[2:]) for r in expected]
    assert [r[1] for r in actual] == pytest.approx([r[1] for r in expected], rel=1e-9, abs=1e-12)
