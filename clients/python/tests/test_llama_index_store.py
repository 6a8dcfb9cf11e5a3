"""pg_chunk.llama_index.PgChunkVectorStore end to end: VectorStoreIndex.from_documents and an
IngestionPipeline write into the store, the index's retriever gives knowledge.search's chunks,
every FilterOperator and nested AND / OR / NOT filters keep exactly their documents, and
delete(ref_doc_id) takes a document's nodes away; sync and async."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from conftest import REPOSITORY, fresh_database, sql_search
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.llms import MockLLM
from llama_index.core.schema import Document, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from pg_chunk import PgChunkError
from pg_chunk.llama_index import PgChunkEmbedding, PgChunkVectorStore, metadata_filter

SAMPLE = (REPOSITORY / "examples/sample.txt").read_text()
QUESTION = "How do hives stay warm in winter?"


@pytest.fixture(scope="module")
def llama_db() -> str:
    return fresh_database("python_llama_store")


@pytest.fixture
def db(llama_db: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(llama_db, autocommit=True) as conn:
        conn.execute("DELETE FROM knowledge.documents")
        yield conn


def index_of(llama_db: str, documents: list[Document]) -> VectorStoreIndex:
    store = PgChunkVectorStore(llama_db)
    # No transformations: pg_chunk cuts each document where its meaning changes.
    return VectorStoreIndex.from_documents(documents, storage_context=StorageContext.from_defaults(vector_store=store),
                                           embed_model=PgChunkEmbedding(llama_db), transformations=[])


def test_an_index_from_documents_retrieves_knowledge_search_s_chunks(db: psycopg.Connection[Any], llama_db: str) -> None:
    documents = [Document(text=SAMPLE, id_="sample", metadata={"kind": "notes"}),
                 Document(text="Lava cools into basalt near the vent.", id_="lava", metadata={"kind": "rock"})]
    index = index_of(llama_db, documents)
    assert db.execute("SELECT count(*) FROM knowledge.chunks AS c JOIN knowledge.documents AS d ON d.id = c.document_id "
                      "WHERE d.metadata->>'ref_doc_id' = 'sample'").fetchone()[0] == 4, "the store chunked the sample"
    hits = index.as_retriever(similarity_top_k=3).retrieve(QUESTION)
    rows = sql_search(db, QUESTION, 3)
    assert [(h.node.node_id, h.node.get_content()) for h in hits] == [(str(r[0]), r[3]) for r in rows]
    assert [h.score for h in hits] == pytest.approx([min(1.0, max(0.0, r[7])) for r in rows], abs=1e-9)
    top = hits[0].node
    assert top.ref_doc_id == "sample" and top.metadata == {"kind": "notes"}
    assert SAMPLE[top.start_char_idx:top.end_char_idx] == top.get_content()
    # A query engine answers from them (a stand-in model: MockLLM).
    response = index.as_query_engine(llm=MockLLM(), similarity_top_k=3).query(QUESTION)
    assert [h.node.node_id for h in response.source_nodes] == [h.node.node_id for h in hits]
    # A document deleted from the index takes its chunks with it.
    index.delete_ref_doc("sample")
    assert {h.node.ref_doc_id for h in index.as_retriever(similarity_top_k=5).retrieve(QUESTION)} == {"lava"}


async def test_an_ingestion_pipeline_writes_nodes_and_async_calls_agree(db: psycopg.Connection[Any],
                                                                        llama_db: str) -> None:
    store = PgChunkVectorStore(llama_db)
    pipeline = IngestionPipeline(transformations=[SentenceSplitter(chunk_size=128, chunk_overlap=0),
                                                  PgChunkEmbedding(llama_db)], vector_store=store)
    nodes = pipeline.run(documents=[Document(text=SAMPLE, id_="sample", metadata={"kind": "notes"})])
    assert len(nodes) > 1
    stored = store.get_nodes([n.node_id for n in nodes])
    assert [(n.node_id, n.get_content(), n.ref_doc_id) for n in stored] == \
        [(n.node_id, n.get_content(), "sample") for n in nodes]
    query = VectorStoreQuery(query_str=QUESTION, similarity_top_k=3)
    sync, run_async = store.query(query), await store.aquery(query)
    assert sync.ids == run_async.ids and len(sync.ids) == 3
    assert [n.get_content() for n in sync.nodes] == [r[3] for r in sql_search(db, QUESTION, 3)]
    await store.adelete("sample")
    assert store.query(query).ids == []
    await store.async_add([TextNode(text="Bees dance.", id_="bee")])
    assert [n.get_content() for n in await store.aget_nodes(["bee"])] == ["Bees dance."]
    await store.adelete_nodes(["bee"])
    assert store.get_nodes(["bee"]) == []


# Each FilterOperator (and nested conditions), and the documents it keeps.
FILTERS = {
    "EQ": (MetadataFilters(filters=[MetadataFilter(key="kind", value="rock")]), {"lava", "granite"}),
    "NE": (MetadataFilters(filters=[MetadataFilter(key="kind", value="rock", operator=FilterOperator.NE)]),
           {"bees", "ice"}),
    "GT": (MetadataFilters(filters=[MetadataFilter(key="year", value=2000, operator=FilterOperator.GT)]),
           {"bees", "granite"}),
    "GTE": (MetadataFilters(filters=[MetadataFilter(key="year", value=2010, operator=FilterOperator.GTE)]),
            {"bees", "granite"}),
    "LT": (MetadataFilters(filters=[MetadataFilter(key="year", value=2000, operator=FilterOperator.LT)]),
           {"lava", "ice"}),
    "LTE": (MetadataFilters(filters=[MetadataFilter(key="year", value=1990, operator=FilterOperator.LTE)]),
            {"lava", "ice"}),
    "IN": (MetadataFilters(filters=[MetadataFilter(key="kind", value=["ice", "bee"], operator=FilterOperator.IN)]),
           {"bees", "ice"}),
    "NIN": (MetadataFilters(filters=[MetadataFilter(key="kind", value=["ice", "bee"], operator=FilterOperator.NIN)]),
            {"lava", "granite"}),
    "ANY": (MetadataFilters(filters=[MetadataFilter(key="tags", value=["hot", "cold"], operator=FilterOperator.ANY)]),
            {"lava", "ice"}),
    "ALL": (MetadataFilters(filters=[MetadataFilter(key="tags", value=["hot", "old"], operator=FilterOperator.ALL)]),
            {"lava"}),
    "CONTAINS": (MetadataFilters(filters=[MetadataFilter(key="tags", value="old", operator=FilterOperator.CONTAINS)]),
                 {"lava", "granite"}),
    "TEXT_MATCH": (MetadataFilters(filters=[MetadataFilter(key="title", value="Lava",
                                                           operator=FilterOperator.TEXT_MATCH)]), {"lava"}),
    "TEXT_MATCH_INSENSITIVE": (MetadataFilters(filters=[MetadataFilter(
        key="title", value="ROCK 100%", operator=FilterOperator.TEXT_MATCH_INSENSITIVE)]), {"granite"}),
    "IS_EMPTY": (MetadataFilters(filters=[MetadataFilter(key="tags", value=None, operator=FilterOperator.IS_EMPTY)]),
                 {"bees"}),
    "OR": (MetadataFilters(filters=[MetadataFilter(key="kind", value="bee"), MetadataFilter(key="year", value=1980)],
                           condition=FilterCondition.OR), {"bees", "ice"}),
    "NOT": (MetadataFilters(filters=[MetadataFilter(key="kind", value="bee"), MetadataFilter(key="year", value=1980)],
                            condition=FilterCondition.NOT), {"lava", "granite"}),
    "nested": (MetadataFilters(filters=[
        MetadataFilter(key="kind", value="rock"),
        MetadataFilters(filters=[MetadataFilter(key="year", value=1990, operator=FilterOperator.LTE),
                                 MetadataFilter(key="tags", value="new", operator=FilterOperator.CONTAINS)],
                        condition=FilterCondition.OR)]), {"lava"}),
}


@pytest.fixture
def tagged(db: psycopg.Connection[Any], llama_db: str) -> PgChunkVectorStore:
    store = PgChunkVectorStore(llama_db)
    store.add([
        TextNode(id_="lava", text="Lava cools into basalt near the vent.",
                 metadata={"kind": "rock", "year": 1990, "tags": ["hot", "old"], "title": "Lava fields"}),
        TextNode(id_="granite", text="Granite cools slowly deep underground.",
                 metadata={"kind": "rock", "year": 2015, "tags": ["old"], "title": "Rock 100% granite"}),
        TextNode(id_="bees", text="Bees cluster in the hive to keep warm.",
                 metadata={"kind": "bee", "year": 2020, "tags": [], "title": "Winter bees"}),
        TextNode(id_="ice", text="Glaciers carve valleys as they move.",
                 metadata={"kind": "ice", "year": 1980, "tags": ["cold"], "title": "Glaciers"}),
    ])
    return store


@pytest.mark.parametrize("case", FILTERS)
def test_each_filter_operator_keeps_exactly_its_documents(tagged: PgChunkVectorStore, case: str) -> None:
    filters, expected = FILTERS[case]
    for mode in (VectorStoreQueryMode.DEFAULT, VectorStoreQueryMode.TEXT_SEARCH):
        query = "lava rock granite bees glaciers cools keep carve"
        result = tagged.query(VectorStoreQuery(query_str=query, similarity_top_k=10, filters=filters, mode=mode))
        assert {n.ref_doc_id for n in result.nodes} == expected, (case, mode, metadata_filter(filters))


def test_every_filter_operator_has_its_case() -> None:
    assert {op.name for op in FilterOperator} <= set(FILTERS)


def test_doc_ids_and_what_is_refused(tagged: PgChunkVectorStore) -> None:
    tagged.add([TextNode(id_="basalt", text="Basalt cools from lava.",
                         relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="volcano-notes")})])
    result = tagged.query(VectorStoreQuery(query_str="cools", similarity_top_k=10, doc_ids=["volcano-notes"]))
    assert [n.get_content() for n in result.nodes] == ["Basalt cools from lava."]
    assert result.nodes[0].ref_doc_id == "volcano-notes"
    with pytest.raises(ValueError, match="query mode 'mmr'"):
        tagged.query(VectorStoreQuery(query_str="x", mode=VectorStoreQueryMode.MMR))
    with pytest.raises(ValueError, match="query's text"):
        tagged.query(VectorStoreQuery(query_embedding=[0.1, 0.2]))
    with pytest.raises(ValueError, match="by their ids only"):
        tagged.get_nodes(filters=MetadataFilters(filters=[]))
    with pytest.raises(PgChunkError) as raised:
        tagged.query(VectorStoreQuery(query_str="x", filters=MetadataFilters(
            filters=[MetadataFilter(key="year", value=[1, 2], operator=FilterOperator.GT)])))
    assert raised.value.sqlstate == "22023"
    node = tagged.query(VectorStoreQuery(query_str="vent", similarity_top_k=1, mode=VectorStoreQueryMode.TEXT_SEARCH)).nodes[0]
    assert node.relationships[NodeRelationship.SOURCE].node_id == "lava"
