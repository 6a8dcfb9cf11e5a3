"""pg_chunk.langchain.PgChunkVectorStore beyond LangChain's suite (test_langchain_suites.py):
chunks come back with their document's id and metadata, filters and scores are the search's,
maximal marginal relevance, configs, the indexing API, and what it refuses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from conftest import REPOSITORY, assert_same_results, fresh_database, sql_search
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.indexing import InMemoryRecordManager, index

from pg_chunk import PgChunkError
from pg_chunk.langchain import PgChunkEmbeddings, PgChunkVectorStore

SAMPLE = (REPOSITORY / "examples/sample.txt").read_text()
QUESTION = "How do hives stay warm in winter?"


@pytest.fixture(scope="module")
def store_db() -> str:
    conninfo = fresh_database("python_vector_store_own")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("""INSERT INTO knowledge.chunk_configs (name, cfg, model, active)
                        VALUES ('small', '{"strategy": "fixed", "max_size": 300, "overlap": 0}', 'potion-base-8m', false)""")
    return conninfo


@pytest.fixture
def db(store_db: str) -> Iterator[psycopg.Connection[Any]]:
    """An empty store's connection, with autocommit."""
    with psycopg.connect(store_db, autocommit=True) as conn:
        conn.execute("DELETE FROM knowledge.documents")
        yield conn


def write_sample(store: PgChunkVectorStore) -> None:
    store.add_texts([SAMPLE, "Lava cools into basalt near the vent."],
                    [{"kind": "notes", "year": 2020}, {"kind": "rock", "year": 1990}], ids=["sample", "lava"])


def test_a_search_returns_chunks_with_their_document_s_id_and_metadata(db: psycopg.Connection[Any], store_db: str) -> None:
    store = PgChunkVectorStore(store_db)
    write_sample(store)
    rows = sql_search(db, QUESTION, 3)
    found = store.similarity_search_with_score(QUESTION, k=3)
    keys = dict(db.execute("SELECT id, source_key FROM knowledge.documents").fetchall())
    assert [(d.id, d.page_content) for d, _ in found] == [(keys[r[1]], r[3]) for r in rows]
    metadata = {"sample": {"kind": "notes", "year": 2020}, "lava": {"kind": "rock", "year": 1990}}
    assert all(d.metadata == metadata[str(d.id)] for d, _ in found)
    # The sample is four chunks: each a piece of the document, not the document.
    samples = [d.page_content for d, _ in found if d.id == "sample"]
    assert len(samples) >= 2 and all(len(c) < len(SAMPLE) and c in SAMPLE for c in samples)
    assert_same_results([(r[0], score) for r, (_, score) in zip(rows, found)], [(r[0], r[4]) for r in rows])
    whole = store.get_by_ids(["lava", "missing", "sample"])
    assert [(d.id, d.page_content, d.metadata) for d in whole] == [
        ("lava", "Lava cools into basalt near the vent.", {"kind": "rock", "year": 1990}),
        ("sample", SAMPLE, {"kind": "notes", "year": 2020})]


def test_relevance_is_the_similarity_cut_to_zero_and_one(db: psycopg.Connection[Any], store_db: str) -> None:
    store = PgChunkVectorStore(store_db)
    write_sample(store)
    rows = sql_search(db, QUESTION, 5)
    relevances = [r for _, r in store.similarity_search_with_relevance_scores(QUESTION, k=5)]
    assert relevances == pytest.approx([min(1.0, max(0.0, r[7])) for r in rows], abs=1e-9)
    assert all(0 <= r <= 1 for r in relevances)
    assert relevances[0] > 0.3
    # Text mode has no similarity: relevance 0, and a threshold keeps nothing.
    text = PgChunkVectorStore(store_db, mode="text")
    assert [r for _, r in text.similarity_search_with_relevance_scores("hive winter", k=2)] == [0.0, 0.0]
    assert text.similarity_search_with_relevance_scores("hive winter", k=2, score_threshold=0.1) == []


def test_an_update_by_id_rechunks_and_a_delete_removes_the_chunks(db: psycopg.Connection[Any], store_db: str) -> None:
    store = PgChunkVectorStore(store_db)
    write_sample(store)
    chunks = "SELECT count(*) FROM knowledge.chunks AS c JOIN knowledge.documents AS d ON d.id = c.document_id WHERE d.source_key = %s"
    assert db.execute(chunks, ("sample",)).fetchone()[0] == 4
    assert store.add_texts(["Bees cluster to keep warm."], ids=["sample"]) == ["sample"]
    assert db.execute(chunks, ("sample",)).fetchone()[0] == 1
    assert store.similarity_search(QUESTION, k=1)[0] == Document(id="sample", page_content="Bees cluster to keep warm.",
                                                                  metadata={})
    assert store.delete(["sample", "missing"]) is True
    assert db.execute(chunks, ("sample",)).fetchone()[0] == 0
    assert [d.id for d in store.similarity_search(QUESTION, k=5)] == ["lava"]


@pytest.mark.parametrize(
    ("filter", "ids"),
    [
        ({"kind": "rock"}, ["lava"]),
        ({"year": {"$gte": 2000}}, ["sample"]),
        ({"$or": [{"kind": {"$in": ["rock"]}}, {"year": {"$between": [2019, 2021]}}]}, ["sample", "lava"]),
        ({"kind": {"$like": "no%"}, "$not": {"year": 1990}}, ["sample"]),
        ({"missing": {"$exists": True}}, []),
    ],
)
async def test_a_filter_is_the_search_s(db: psycopg.Connection[Any], store_db: str, filter: dict[str, Any],
                                        ids: list[str]) -> None:
    store = PgChunkVectorStore(store_db)
    write_sample(store)
    expected = [r[0] for r in sql_search(db, QUESTION, 10, {"filter": filter})]
    found = store.similarity_search(QUESTION, k=10, filter=filter)
    assert sorted(set(d.id for d in found)) == sorted(ids)
    assert len(found) == len(expected)
    assert [d.page_content for d in await store.asimilarity_search(QUESTION, k=10, filter=filter)] == \
        [d.page_content for d in found]


def test_a_bad_filter_is_the_server_s_22023(db: psycopg.Connection[Any], store_db: str) -> None:
    store = PgChunkVectorStore(store_db)
    with pytest.raises(PgChunkError) as raised:
        store.similarity_search(QUESTION, filter={"year": {"$near": 3}})
    assert raised.value.sqlstate == "22023"
    assert raised.value.message.startswith('unknown filter operator "$near"')


async def test_maximal_marginal_relevance_picks_from_the_best_fetch_k(db: psycopg.Connection[Any], store_db: str) -> None:
    store = PgChunkVectorStore(store_db)
    write_sample(store)
    rows = sql_search(db, QUESTION, 5)
    # lambda_mult 1: similarity alone, so the candidates in order of their similarity to the query.
    by_similarity = [r[3] for r in sorted(rows, key=lambda r: -r[7])]
    for found in (store.max_marginal_relevance_search(QUESTION, k=3, fetch_k=5, lambda_mult=1.0),
                  await store.amax_marginal_relevance_search(QUESTION, k=3, fetch_k=5, lambda_mult=1.0)):
        assert [d.page_content for d in found] == by_similarity[:3]
    diverse = store.max_marginal_relevance_search(QUESTION, k=3, fetch_k=5, lambda_mult=0.0)
    assert len(diverse) == 3 and diverse[0].page_content == by_similarity[0]
    assert {d.page_content for d in diverse} <= {r[3] for r in rows}
    mmr = store.as_retriever(search_type="mmr", search_kwargs={"k": 2, "fetch_k": 5})
    assert len(mmr.invoke(QUESTION)) == 2


def test_a_config_chunks_what_is_added_and_is_searched(db: psycopg.Connection[Any], store_db: str) -> None:
    small = PgChunkVectorStore(store_db, chunk_config="small")
    small.add_texts([SAMPLE], ids=["sample"])
    configs = db.execute("SELECT DISTINCT chunk_config FROM knowledge.chunks").fetchall()
    assert configs == [("small",)]
    expected = [r[3] for r in sql_search(db, QUESTION, 3, {"config": "small"})]
    assert [d.page_content for d in small.similarity_search(QUESTION, k=3)] == expected
    assert PgChunkVectorStore(store_db).similarity_search(QUESTION) == []


async def test_from_texts_and_documents_sync_and_async(db: psycopg.Connection[Any], store_db: str) -> None:
    store = PgChunkVectorStore.from_texts(["Bees dance."], None, [{"n": 1}], ids=["a"], connection=store_db)
    assert store.get_by_ids(["a"]) == [Document(id="a", page_content="Bees dance.", metadata={"n": 1})]
    store = await PgChunkVectorStore.afrom_documents([Document(page_content="Ants march.", id="b")],
                                                     PgChunkEmbeddings(store_db), connection=store_db)
    assert await store.aget_by_ids(["b", "a"]) == [Document(id="b", page_content="Ants march."),
                                                  Document(id="a", page_content="Bees dance.", metadata={"n": 1})]
    # An async store on a sync connection runs each call in a thread.
    threaded = PgChunkVectorStore(db)
    assert await threaded.aadd_texts(["Moths circle."], ids=["c"]) == ["c"]
    assert [d.id for d in await threaded.aget_by_ids(["c"])] == ["c"]
    assert await threaded.adelete(["c"]) is True
    assert await threaded.asimilarity_search("moths", k=5) != []
    async with await psycopg.AsyncConnection.connect(store_db, autocommit=True) as aconn:
        given = PgChunkVectorStore(db, async_connection=aconn)
        ids = await given.aadd_texts(["Crickets chirp."])
        assert len(ids) == 1 and len(ids[0]) == 36
        assert [d.page_content for d in await given.aget_by_ids(ids)] == ["Crickets chirp."]


def test_what_it_refuses(store_db: str) -> None:
    store = PgChunkVectorStore(store_db)
    with pytest.raises(TypeError, match="embeds in the database"):
        PgChunkVectorStore.from_texts(["x"], DeterministicFakeEmbedding(size=6), connection=store_db)
    with pytest.raises(ValueError, match="delete needs the ids"):
        store.delete()
    with pytest.raises(TypeError, match="takes no argument colour"):
        store.similarity_search("x", colour="red")
    with pytest.raises(ValueError, match="2 texts, 1 metadatas and 2 ids"):
        store.add_texts(["a", "b"], [{}], ids=["1", "2"])
    with pytest.raises(ValueError, match="'mode' is given twice"):
        PgChunkVectorStore(store_db, mode="text", options={"mode": "vector"})
    assert "password" not in repr(PgChunkVectorStore("dbname=x password=secret"))


def test_langchain_s_indexing_api_adds_skips_and_cleans_up(db: psycopg.Connection[Any], store_db: str) -> None:
    store = PgChunkVectorStore(store_db)
    manager = InMemoryRecordManager(namespace="pg_chunk")
    manager.create_schema()
    documents = [Document(page_content=f"Page {i} of the lighthouse log.", metadata={"source": f"log/{i}"})
                 for i in range(3)]
    first = index(documents, manager, store, cleanup="incremental", source_id_key="source", key_encoder="sha256")
    assert (first["num_added"], first["num_skipped"]) == (3, 0)
    changed = [documents[0], documents[1], Document(page_content="Page 2, rewritten.", metadata={"source": "log/2"})]
    second = index(changed, manager, store, cleanup="incremental", source_id_key="source", key_encoder="sha256")
    assert (second["num_added"], second["num_skipped"], second["num_deleted"]) == (1, 2, 1)
    assert db.execute("SELECT count(*) FROM knowledge.documents").fetchone()[0] == 3
    contents = {d.page_content for d in store.similarity_search("lighthouse log page", k=10)}
    assert contents == {"Page 0 of the lighthouse log.", "Page 1 of the lighthouse log.", "Page 2, rewritten."}
