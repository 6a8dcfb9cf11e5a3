"""pg_chunk.llama_index.PgChunkRetriever: knowledge.search through LlamaIndex."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from conftest import assert_same_results, sql_search
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers.no_text import NoText
from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore

from pg_chunk import PgChunkError
from pg_chunk.llama_index import PgChunkRetriever

QUESTION = "Why do volcanoes erupt?"


def ranked(nodes: list[NodeWithScore]) -> list[tuple[Any, ...]]:
    return [(int(n.node.node_id), n.score) for n in nodes]


def test_nodes_are_the_search_s_chunks_with_their_offsets(conn: psycopg.Connection[Any], search_db: str) -> None:
    nodes = PgChunkRetriever(search_db, k=40).retrieve(QUESTION)
    assert_same_results(ranked(nodes), [(r[0], r[4]) for r in sql_search(conn, QUESTION, 40)])
    for n in nodes:
        node = n.node
        content, = conn.execute("SELECT content FROM knowledge.documents WHERE id = %s",
                                (node.metadata["document_id"],)).fetchone()
        assert content[node.start_char_idx:node.end_char_idx] == node.get_content()
        assert node.end_char_idx - node.start_char_idx == node.metadata["char_length"]
        assert node.relationships[NodeRelationship.SOURCE].node_id == str(node.metadata["document_id"])
    sample = [n.node for n in nodes if n.node.metadata["source_key"] == "sample"]
    assert sorted(node.start_char_idx for node in sample)[1:] == [898, 1296, 2339]
    # A prompt shows the document's title and source, not the ids and ranks.
    prompt = sample[0].get_content(MetadataMode.LLM)
    assert prompt.startswith("title: Three subjects\nsource: examples/sample.txt\n\n")


async def test_aretrieve_gives_what_retrieve_gives(conn: psycopg.Connection[Any], search_db: str) -> None:
    expected = [(r[0], r[4]) for r in sql_search(conn, QUESTION, 3, {"mode": "vector"})]
    retriever = PgChunkRetriever(search_db, k=3, mode="vector")
    assert_same_results(ranked(retriever.retrieve(QUESTION)), expected)
    assert_same_results(ranked(await retriever.aretrieve(QUESTION)), expected)
    async with await psycopg.AsyncConnection.connect(search_db) as aconn:
        retriever = PgChunkRetriever(conn, async_connection=aconn, k=3, mode="vector")
        assert_same_results(ranked(await retriever.aretrieve(QUESTION)), expected)


def test_a_query_engine_retrieves(conn: psycopg.Connection[Any], search_db: str) -> None:
    # No LLM: NoText (response mode "no_text") returns the retrieved nodes without writing an answer.
    retriever = PgChunkRetriever(search_db, k=2, filter={"collection": "sample"})
    engine = RetrieverQueryEngine(retriever, response_synthesizer=NoText(llm=MockLLM()))
    response = engine.query(QUESTION)
    expected = sql_search(conn, QUESTION, 2, {"filter": {"collection": "sample"}})
    assert_same_results(ranked(response.source_nodes), [(r[0], r[4]) for r in expected])
    assert "Volcanoes form where molten rock" in response.source_nodes[0].node.get_content()


def test_bad_options_raise_the_server_s_22023(search_db: str) -> None:
    with pytest.raises(PgChunkError) as raised:
        PgChunkRetriever(search_db, options={"fusion": "average"}).retrieve(QUESTION)
    assert (raised.value.sqlstate, raised.value.message) == ("22023", 'search option fusion must be "scores" or "rrf", not "average"')
