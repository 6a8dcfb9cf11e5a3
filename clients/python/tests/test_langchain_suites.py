"""LangChain's standard integration suites (langchain-tests), which every LangChain integration
runs: PgChunkVectorStore passes VectorStoreIntegrationTests (sync and async), PgChunkRetriever
RetrieversIntegrationTests and PgChunkEmbeddings EmbeddingsIntegrationTests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from conftest import fresh_database, search_database
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import (
    EmbeddingsIntegrationTests,
    RetrieversIntegrationTests,
    VectorStoreIntegrationTests,
)

from pg_chunk.langchain import PgChunkEmbeddings, PgChunkRetriever, PgChunkVectorStore


@pytest.fixture(scope="module")
def vector_db() -> str:
    return fresh_database("python_vector_store")


class TestPgChunkVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, vector_db: str) -> Iterator[VectorStore]:  # type: ignore[override]
        # Empty before each test, as the suite asks; the database embeds (the suite's fake
        # embeddings are not used).
        with psycopg.connect(vector_db, autocommit=True) as conn:
            conn.execute("DELETE FROM knowledge.documents")
        yield PgChunkVectorStore(vector_db)


class TestPgChunkRetriever(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[PgChunkRetriever]:
        return PgChunkRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"connection": search_database()}

    @property
    def retriever_query_example(self) -> str:
        return "How do hives stay warm in winter?"


class TestPgChunkEmbeddings(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[PgChunkEmbeddings]:
        return PgChunkEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"connection": search_database()}
