"""No secret of a connection string in a repr, an error message or the traceback that shows it."""

from __future__ import annotations

import traceback

import pytest

from pg_chunk import PgChunkError, search

SECRET = "hunter2-s3cret"


def test_no_repr_shows_the_connection_string() -> None:
    from pg_chunk.langchain import PgChunkEmbeddings, PgChunkRetriever
    from pg_chunk.llama_index import PgChunkRetriever as LlamaIndexRetriever

    conninfo = f"dbname=pg_chunk password={SECRET}"
    for made in (PgChunkRetriever(connection=conninfo, async_connection=conninfo),
                 PgChunkEmbeddings(conninfo, async_connection=conninfo), LlamaIndexRetriever(conninfo)):
        assert SECRET not in repr(made) and SECRET not in str(made), type(made)


@pytest.mark.parametrize("conninfo", [
    # Parses, and cannot connect.
    f"host=/nonexistent dbname=pg_chunk password={SECRET}",
    f"postgresql://app:{SECRET}@/pg_chunk?host=/nonexistent",
    # Does not parse, and libpq quotes the part it cannot read: a password with a space, not
    # quoted; one with a bad percent-encoding.
    f"dbname=pg_chunk password=abc {SECRET}",
    f"postgresql://app:{SECRET}%zz@/pg_chunk",
    f"dbname=pg_chunk password='{SECRET}",
])
def test_a_connection_string_that_does_not_connect_is_reported_without_its_password(conninfo: str) -> None:
    with pytest.raises(PgChunkError) as caught:
        search(conninfo, "bees")
    shown = "".join(traceback.format_exception(caught.value))
    assert SECRET not in shown, shown
    assert caught.value.sqlstate is None


def test_an_object_that_is_no_connection_is_named_by_its_type_alone() -> None:
    with pytest.raises(TypeError) as caught:
        search({"password": SECRET}, "bees")  # type: ignore[arg-type]
    assert SECRET not in str(caught.value) and "dict" in str(caught.value)
