"""pg_chunk.langchain.PgChunkEmbeddings: LangChain's Embeddings over knowledge.embed."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from pg_chunk import PgChunkError
from pg_chunk.langchain import PgChunkEmbeddings

TEXTS = ["The cat sleeps on the sofa.", "Interest rates rose in March.", "A kitten naps on the couch."]


def sql_embed(conn: psycopg.Connection[Any], text: str, model: str | None, role: str) -> list[float]:
    return list(conn.execute("SELECT knowledge.embed(%s, %s, %s)::real[]", (text, model, role)).fetchone()[0])


def close(a: list[float], b: list[float]) -> bool:
    # A transformer's vector moves in the last bits with the batch it is embedded in.
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) < 1e-5


@pytest.mark.parametrize(("model", "dimension"), [(None, 384), ("potion-base-8m", 256), ("multilingual-e5-small", 384)])
async def test_vectors_are_knowledge_embed_s(conn: psycopg.Connection[Any], search_db: str, model: str | None,
                                             dimension: int) -> None:
    embeddings = PgChunkEmbeddings(search_db, model=model)
    documents = embeddings.embed_documents(TEXTS)
    query = embeddings.embed_query(TEXTS[0])
    assert len(documents) == 3 and len(query) == dimension
    for text, vector in zip(TEXTS, documents):
        assert close(vector, sql_embed(conn, text, model, "passage"))
    assert close(query, sql_embed(conn, TEXTS[0], model, "query"))
    for text, vector in zip(TEXTS, await embeddings.aembed_documents(TEXTS)):
        assert close(vector, sql_embed(conn, text, model, "passage"))
    assert close(await embeddings.aembed_query(TEXTS[0]), query)
    if model == "multilingual-e5-small":
        # e5 prefixes "query: " or "passage: ", so the roles differ.
        assert not close(query, documents[0])


def test_an_unknown_model_raises_the_server_s_error(search_db: str) -> None:
    with pytest.raises(PgChunkError) as raised:
        PgChunkEmbeddings(search_db, model="no-such-model").embed_query("text")
    assert raised.value.sqlstate == "42704"
    assert "no-such-model" in raised.value.message
