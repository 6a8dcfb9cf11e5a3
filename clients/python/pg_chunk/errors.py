"""What pg_chunk raises when the database refuses a call."""

from __future__ import annotations

import psycopg


class PgChunkError(Exception):
    """An error from the database, with the SQLSTATE and message the server sent.

    ``sqlstate`` is the five-character code (``"22023"`` for a bad search option, ``"42704"``
    for an unknown config or language, ``"54000"`` for a query over 10,000 characters:
    docs/errors.md lists them); ``message``, ``detail`` and ``hint`` are the server's text. The
    psycopg exception is the ``__cause__``. ``sqlstate`` is None for a failure without one (a
    connection that could not be made).
    """

    def __init__(self, message: str, sqlstate: str | None = None, detail: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message if sqlstate is None else f"{message} (SQLSTATE {sqlstate})")
        self.message = message
        self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint

    @classmethod
    def from_psycopg(cls, error: psycopg.Error) -> PgChunkError:
        diag = error.diag
        message = diag.message_primary or str(error).strip()
        return cls(message, error.sqlstate, diag.message_detail, diag.message_hint)
