"""pg_chunk.langchain.PgChunkRetriever: knowledge.search through LangChain, sync and async."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from conftest import assert_same_results, sql_search
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from pg_chunk import PgChunkError
from pg_chunk.langchain import PgChunkRetriever

QUESTION = "How do hives stay warm in winter?"
ANSWER = "vibrate their flight muscles without moving their wings"

METADATA_KEYS = {"chunk_id", "document_id", "chunk_index", "char_offset", "char_length", "chunk_metadata", "score", "similarity",
                 "vector_rank", "text_rank", "below_min_score", "title", "source", "source_key", "document_metadata"}


def ranked(documents: list[Document]) -> list[tuple[Any, ...]]:
    return [(d.metadata["chunk_id"], d.metadata["score"], d.metadata["vector_rank"], d.metadata["text_rank"],
             d.metadata["below_min_score"]) for d in documents]


def sql_ranked(conn: psycopg.Connection[Any], query: str, k: int = 5, options: dict[str, Any] | None = None
               ) -> list[tuple[Any, ...]]:
    return [(r[0], r[4], r[5], r[6], r[8]) for r in sql_search(conn, query, k, options)]


def chain(retriever: PgChunkRetriever) -> Any:
    """A RAG chain in LCEL whose model echoes its prompt, so that the test sees what it was given."""
    prompt = ChatPromptTemplate.from_template("Answer from this context:\n{context}\n\nQuestion: {question}")
    context = retriever | RunnableLambda(lambda docs: "\n\n".join(d.page_content for d in docs))
    echo = RunnableLambda(lambda value: value.to_string())
    return {"context": context, "question": RunnablePassthrough()} | prompt | echo


def test_a_chain_retrieves_the_answer(search_db: str) -> None:
    prompt = chain(PgChunkRetriever(connection=search_db, k=2)).invoke(QUESTION)
    assert ANSWER in prompt
    assert prompt.endswith(f"Question: {QUESTION}")


async def test_a_chain_retrieves_the_answer_async(search_db: str) -> None:
    prompt = await chain(PgChunkRetriever(connection=search_db, k=2)).ainvoke(QUESTION)
    assert ANSWER in prompt


def test_results_are_knowledge_search_s_in_its_order(conn: psycopg.Connection[Any], search_db: str) -> None:
    documents = PgChunkRetriever(connection=search_db).invoke(QUESTION)
    assert_same_results(ranked(documents), sql_ranked(conn, QUESTION))
    assert len(documents) == 5


async def test_ainvoke_gives_what_invoke_gives(conn: psycopg.Connection[Any], search_db: str) -> None:
    expected = sql_ranked(conn, QUESTION, 3)
    # A connection string serves both; an AsyncConnection is used as given.
    assert_same_results(ranked(await PgChunkRetriever(connection=search_db, k=3).ainvoke(QUESTION)), expected)
    async with await psycopg.AsyncConnection.connect(search_db) as aconn:
        retriever = PgChunkRetriever(connection=conn, async_connection=aconn, k=3)
        assert_same_results(ranked(await retriever.ainvoke(QUESTION)), expected)
    # A sync connection alone: ainvoke runs the sync search in a thread.
    assert_same_results(ranked(await PgChunkRetriever(connection=conn, k=3).ainvoke(QUESTION)), expected)


def test_documents_carry_the_chunk_and_its_document(conn: psycopg.Connection[Any], search_db: str) -> None:
    # k = 40: every chunk of the default config, the sample's four with their offsets.
    documents = PgChunkRetriever(connection=search_db, k=40).invoke("Why do volcanoes erupt?")
    searched = {r[0]: r for r in sql_search(conn, "Why do volcanoes erupt?", 40)}
    assert len(documents) == 40
    for document in documents:
        m = document.metadata
        assert set(m) == METADATA_KEYS
        assert document.id == str(m["chunk_id"])
        row = searched[m["chunk_id"]]
        assert (m["document_id"], m["chunk_index"], document.page_content, m["vector_rank"], m["text_rank"],
                m["below_min_score"]) == row[1:4] + row[5:7] + row[8:]
        assert (m["score"], m["similarity"]) == pytest.approx(row[4:5] + row[7:8], rel=1e-9)
        chunk_config, chunk_metadata, title, source, source_key, content, metadata = conn.execute(
            """SELECT c.chunk_config, c.metadata, d.title, d.source, d.source_key, d.content, d.metadata
               FROM knowledge.chunks AS c JOIN knowledge.documents AS d ON d.id = c.document_id WHERE c.id = %s""",
            (m["chunk_id"],)).fetchone()
        assert chunk_config == "default"
        assert m["chunk_metadata"] == chunk_metadata and "split_reason" in chunk_metadata
        assert content[m["char_offset"]:m["char_offset"] + m["char_length"]] == document.page_content
        assert (m["title"], m["source"], m["source_key"], m["document_metadata"]) == (title, source, source_key, metadata)
    sample = [d.metadata for d in documents if d.metadata["source_key"] == "sample"]
    assert sorted(m["chunk_index"] for m in sample) == [0, 1, 2, 3]
    assert all(m["char_offset"] > 0 for m in sample if m["chunk_index"] > 0)
    assert all(m["title"] == "Three subjects" and m["document_metadata"] == {"collection": "sample"} for m in sample)


def sample_id(conn: psycopg.Connection[Any]) -> int:
    return conn.execute("SELECT id FROM knowledge.documents WHERE source_key = 'sample'").fetchone()[0]


# The retriever's arguments, and the options knowledge.search must be given for the same results;
# document_ids name the sample's id, which a case receives.
OPTION_CASES = {
    "k": lambda sample: ({"k": 2}, None),
    "mode text": lambda sample: ({"mode": "text"}, {"mode": "text"}),
    "mode vector": lambda sample: ({"mode": "vector"}, {"mode": "vector"}),
    "chunk_config": lambda sample: ({"chunk_config": "small"}, {"config": "small"}),
    "filter": lambda sample: ({"filter": {"collection": "sample"}}, {"filter": {"collection": "sample"}}),
    "filter operators": lambda sample: ({"filter": {"collection": {"$ne": "corpus"}, "title": {"$like": "Three%"}}},
                                        {"filter": {"collection": {"$ne": "corpus"}, "title": {"$like": "Three%"}}}),
    "metadata": lambda sample: ({"options": {"metadata": {"collection": "sample"}}}, {"metadata": {"collection": "sample"}}),
    "document_ids": lambda sample: ({"document_ids": [sample, 1]}, {"document_ids": [sample, 1]}),
    "min_score": lambda sample: ({"min_score": 0.95}, {"min_score": 0.95}),
    "fusion": lambda sample: ({"options": {"fusion": "rrf"}}, {"fusion": "rrf"}),
    "bm25": lambda sample: ({"options": {"neighbours": 0, "k1": 0.5, "b": 0.2}}, {"neighbours": 0, "k1": 0.5, "b": 0.2}),
    "language": lambda sample: ({"mode": "text", "options": {"language": "simple"}}, {"mode": "text", "language": "simple"}),
}


@pytest.mark.parametrize("case", OPTION_CASES)
def test_each_option_reaches_the_search(conn: psycopg.Connection[Any], search_db: str, case: str) -> None:
    arguments, options = OPTION_CASES[case](sample_id(conn))
    query = "How do volcanoes and bees survive the winter?"
    documents = PgChunkRetriever(connection=search_db, **arguments).invoke(query)
    expected = sql_ranked(conn, query, arguments.get("k", 5), options)
    assert_same_results(ranked(documents), expected)
    # Each case gives other results than the defaults (scores beyond their last bits' noise), so an
    # option dropped on the way fails.
    def coarse(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [(r[0], round(r[1], 6), *r[2:]) for r in rows]
    assert coarse(expected) != coarse(sql_ranked(conn, query))


def test_invoke_sets_k_and_the_filter_for_one_call(conn: psycopg.Connection[Any], search_db: str) -> None:
    retriever = PgChunkRetriever(connection=search_db, k=4)
    only_sample = {"collection": "sample"}
    expected = sql_ranked(conn, QUESTION, 2, {"filter": only_sample})
    assert_same_results(ranked(retriever.invoke(QUESTION, k=2, filter=only_sample)), expected)
    assert len(retriever.invoke(QUESTION)) == 4


async def test_ainvoke_sets_k_and_the_filter_for_one_call(conn: psycopg.Connection[Any], search_db: str) -> None:
    only_sample = {"collection": "sample"}
    expected = sql_ranked(conn, QUESTION, 2, {"filter": only_sample})
    # Through an async connection string, and through the sync search in a thread.
    for retriever in (PgChunkRetriever(connection=search_db, k=4), PgChunkRetriever(connection=conn, k=4)):
        assert_same_results(ranked(await retriever.ainvoke(QUESTION, k=2, filter=only_sample)), expected)


def test_an_option_named_twice_is_refused(search_db: str) -> None:
    with pytest.raises(ValueError, match="'mode' is given twice"):
        PgChunkRetriever(connection=search_db, mode="text", options={"mode": "vector"})


@pytest.mark.parametrize(
    ("arguments", "message", "hint"),
    [
        ({"mode": "fuzzy"}, 'search option mode must be "hybrid", "vector" or "text", not "fuzzy"', None),
        ({"options": {"colour": "red"}}, 'unknown search option "colour"', "Options are mode, config, min_score"),
        ({"options": {"k1": 11}}, "search option k1 must be a number from 0 to 10, not 11", None),
        ({"k": 0}, "k must be between 1 and 1000, not 0", None),
    ],
)
async def test_bad_options_raise_the_server_s_22023(search_db: str, arguments: dict[str, Any], message: str,
                                                   hint: str | None) -> None:
    retriever = PgChunkRetriever(connection=search_db, **arguments)
    for attempt in ("invoke", "ainvoke"):
        with pytest.raises(PgChunkError) as raised:
            if attempt == "invoke":
                retriever.invoke(QUESTION)
            else:
                await retriever.ainvoke(QUESTION)
        assert raised.value.sqlstate == "22023"
        assert raised.value.message == message
        assert str(raised.value) == f"{message} (SQLSTATE 22023)"
        assert isinstance(raised.value.__cause__, psycopg.errors.InvalidParameterValue)
        if hint:
            assert raised.value.hint is not None and raised.value.hint.startswith(hint)
