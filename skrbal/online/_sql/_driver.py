"""The statements every write sends, through the driver's own cursor.

A live agent writes at every call, and SQLAlchemy Core's execution (compiled
statement, bound parameters, result object) costs more than SQLite needs to
run the statement itself. So the statements of every event -- the agent's
move from event ``seq`` to ``seq + 1``, the observe's block and requests,
the event -- are fixed SQL texts sent through the DBAPI cursor of the
transaction's own connection: the same transaction, the same values, the
same rows as Core wrote them (and a request's result). A driver error
becomes SQLAlchemy's exception of the same kind (``IntegrityError``,
``OperationalError``, ...), as Core would have raised.
"""

from __future__ import annotations

import functools
import re
import sqlite3

from sqlalchemy.exc import DBAPIError

from skrbal.online._sql import _schema as schema
from skrbal.online._sql._lock import LOCK_HELD

# UPDATE ... RETURNING: SQLite 3.35 and later; PostgreSQL always.
_SQLITE_RETURNING = sqlite3.sqlite_version_info >= (3, 35)
_NAMED = re.compile(r"(?<!:):([a-z_]+)")


def _insert_text(table, columns) -> str:
    names = ", ".join(columns)
    marks = ", ".join(f":{c}" for c in columns)
    return f"INSERT INTO {table.name} ({names}) VALUES ({marks})"


_BLOCK_COLUMNS = tuple(c.name for c in schema.blocks.columns)
_EVENT_COLUMNS = (
    "agent_id",
    "seq",
    "kind",
    "step",
    "request_id",
    "payload",
    "created_at",
    "client_key",
    "key_digest",
    "hash",
)
_REQUEST_COLUMNS = (
    "agent_id",
    "request_id",
    "step",
    "status",
    "evpi",
    "opened_seq",
    "method",
)
INSERT_BLOCK = _insert_text(schema.blocks, _BLOCK_COLUMNS)
INSERT_EVENT = _insert_text(schema.events, _EVENT_COLUMNS)
INSERT_REQUESTS = _insert_text(schema.requests, _REQUEST_COLUMNS)
# A request's result (skrbal_requests' columns that a result sets).
FINISH_REQUEST = (
    f"UPDATE {schema.requests.name} SET "
    + ", ".join(
        f"{c} = :{c}"
        for c in (
            "status",
            "closed_seq",
            "label",
            "action",
            "result_timestamp",
            "report",
            "posterior",
        )
    )
    + " WHERE agent_id = :w_agent_id AND request_id = :w_request_id"
)
PREVIOUS_HASH = (
    f"SELECT hash FROM {schema.events.name} "
    "WHERE agent_id = :w_agent_id AND seq = :w_seq"
)


@functools.lru_cache(maxsize=64)  # a handful of column sets, one per write kind
def move_text(columns, returning: bool, locked: bool = False) -> str:
    """The agent's move: ``last_seq`` and ``columns`` set where it still is
    at ``w_seq``; with ``returning``, the previous event's hash comes back
    (one row when the agent moved, none when another writer moved it), and
    with ``locked`` too whether its PostgreSQL lock is still held
    (:data:`~skrbal.online._sql._lock.LOCK_HELD`): one round trip, not three."""
    sets = ", ".join(f"{c} = :{c}" for c in ("last_seq", *columns))
    text = (
        f"UPDATE {schema.agents.name} SET {sets} "
        "WHERE agent_id = :w_agent_id AND last_seq = :w_seq"
    )
    if returning:
        text += f" RETURNING ({PREVIOUS_HASH})"
        if locked:
            text += f", ({LOCK_HELD})"
    return text


class Driver:
    """The SQL texts of one dialect, run on a transaction's DBAPI cursor.

    Parameters
    ----------
    dialect : sqlalchemy.engine.Dialect
        The store engine's dialect (its parameter style and DBAPI module).

    Examples
    --------
    >>> from sqlalchemy import create_engine
    >>> engine = create_engine("sqlite://")
    >>> driver = Driver(engine.dialect)
    >>> with engine.begin() as conn:
    ...     cursor = driver.cursor(conn)
    ...     driver.execute(cursor, "SELECT :a + :b", {"a": 1, "b": 2}).fetchone()
    (3,)
    """

    def __init__(self, dialect):
        self.dialect = dialect
        self.returning = dialect.name != "sqlite" or _SQLITE_RETURNING
        self._error = dialect.loaded_dbapi.Error
        self._texts: dict = {}

    def text(self, sql: str) -> str:
        """``sql`` (named ``:marks``) in the driver's parameter style."""
        done = self._texts.get(sql)
        if done is None:
            style = self.dialect.paramstyle
            if style in ("named", "qmark"):
                # sqlite3 takes :name with a dict in either style.
                done = sql
            elif style == "pyformat":
                done = _NAMED.sub(r"%(\1)s", sql)
            else:  # pragma: no cover - the store's drivers are the two above
                raise ValueError(f"no SQL texts for parameter style {style!r}")
            self._texts[sql] = done
        return done

    @staticmethod
    def cursor(conn):
        """A DBAPI cursor of ``conn``'s connection, in its transaction."""
        return conn.connection.cursor()

    def execute(self, cursor, sql: str, params, many: bool = False, conn=None):
        """Run ``sql`` with ``params`` (a dict, or a list of them with ``many``).

        A driver error is raised as SQLAlchemy's; one that says the
        connection is gone invalidates ``conn`` (the transaction's
        SQLAlchemy connection), so the pool does not hand it out again.
        """
        text = self.text(sql)
        try:
            if many:
                cursor.executemany(text, params)
            else:
                cursor.execute(text, params)
        except self._error as exc:
            lost = conn is not None and self.dialect.is_disconnect(
                exc, conn.connection.dbapi_connection, cursor
            )
            if lost:
                conn.invalidate(exc)
            raise DBAPIError.instance(
                text,
                params,
                exc,
                self._error,
                hide_parameters=True,
                connection_invalidated=lost,
                dialect=self.dialect,
                ismulti=many,
            ) from exc
        return cursor
