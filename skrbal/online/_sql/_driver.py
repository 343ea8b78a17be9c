"""The statements every write sends, through the driver's own cursor.

A live agent writes at every call, and SQLAlchemy Core's execution (compiled
statement, bound parameters, result object) costs more than SQLite needs to
run the statement itself. So the statements of every event -- the agent's
move from event ``seq`` to ``seq + 1``, the observe's block and requests,
the event, a result, a cancellation, an expiry, an action, a new agent --
are fixed SQL texts sent through the DBAPI cursor of the transaction's own
connection: the same transaction, the same values, the same rows as Core
wrote them. Two drivers run them: :class:`Driver` on a SQLAlchemy
connection (SQLite or PostgreSQL), whose driver errors become SQLAlchemy's
exception of the same kind (``IntegrityError``, ``OperationalError``, ...),
as Core would have raised; and :class:`SqliteDriver` on a standard-library
``sqlite3`` connection, for a SQLite file opened without SQLAlchemy (see
:mod:`._sqlite_file`). This module imports no SQLAlchemy.
"""

from __future__ import annotations

import functools
import re
import sqlite3

from skrbal.online._sql._blocks import STEP_COLUMNS
from skrbal.online._sql._lock import LOCK_HELD

# UPDATE ... RETURNING: SQLite 3.35 and later; PostgreSQL always.
_SQLITE_RETURNING = sqlite3.sqlite_version_info >= (3, 35)
_NAMED = re.compile(r"(?<!:):([a-z_][a-z_0-9]*)")

# The tables' names and the columns the texts write, spelled here so that a
# store on the standard library's sqlite3 needs no SQLAlchemy; a test checks
# them against the tables of :mod:`._schema`.
AGENTS, OBSERVATIONS, BLOCKS = "skrbal_agents", "skrbal_observations", "skrbal_blocks"
ACTIONS, REQUESTS, EVENTS = "skrbal_actions", "skrbal_requests", "skrbal_events"
AGENT_COLUMNS = (
    "agent_id",
    "name",
    "created_at",
    "skrbal_version",
    "process",
    "estimator",
    "estimator_fingerprint",
    "budget",
    "budget_fingerprint",
    "settings",
    "n_features",
    "feature_names",
    "clock",
    "n_steps",
    "n_requests",
    "last_seq",
    "budget_state",
    "owner",
)
# A new agent's row: every column but its key and its lock's holder.
_NEW_AGENT_COLUMNS = AGENT_COLUMNS[1:-1]
_OBSERVATION_COLUMNS = (
    "agent_id",
    "step",
    "seq",
    "kind",
    "timestamp",
    "time",
    "features",
    "belief",
    "evpi",
    "action",
    "label",
    "taken_action",
    "request_id",
)
BLOCK_COLUMNS = ("agent_id", "first_step", "n_steps", "seq", *STEP_COLUMNS)
EVENT_COLUMNS = (
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
# The columns a request's result sets.
RESULT_COLUMNS = (
    "status",
    "closed_seq",
    "label",
    "action",
    "result_timestamp",
    "report",
    "posterior",
)


def _insert_text(table: str, columns) -> str:
    names = ", ".join(columns)
    marks = ", ".join(f":{c}" for c in columns)
    return f"INSERT INTO {table} ({names}) VALUES ({marks})"


INSERT_BLOCK = _insert_text(BLOCKS, BLOCK_COLUMNS)
INSERT_EVENT = _insert_text(EVENTS, EVENT_COLUMNS)
INSERT_REQUESTS = _insert_text(REQUESTS, _REQUEST_COLUMNS)
INSERT_OBSERVATIONS = _insert_text(OBSERVATIONS, _OBSERVATION_COLUMNS)
INSERT_AGENT = _insert_text(AGENTS, _NEW_AGENT_COLUMNS)
AGENT_NAMED = f"SELECT agent_id FROM {AGENTS} WHERE name = :name"
# A request made and done in one event (a routine inspection's label).
INSERT_DONE_REQUEST = _insert_text(
    REQUESTS,
    (
        "agent_id",
        "request_id",
        "step",
        "evpi",
        "opened_seq",
        "method",
        "origin",
        *RESULT_COLUMNS,
    ),
)
# A request's result (skrbal_requests' columns that a result sets).
FINISH_REQUEST = (
    f"UPDATE {REQUESTS} SET "
    + ", ".join(f"{c} = :{c}" for c in RESULT_COLUMNS)
    + " WHERE agent_id = :w_agent_id AND request_id = :w_request_id"
)
CANCEL_REQUEST = (
    f"UPDATE {REQUESTS} SET status = 'cancelled', closed_seq = :closed_seq, "
    "note = :note WHERE agent_id = :w_agent_id AND request_id = :w_request_id"
)
DELETE_ACTION = f"DELETE FROM {ACTIONS} WHERE agent_id = :agent_id AND step = :step"
INSERT_ACTION = _insert_text(ACTIONS, ("agent_id", "step", "action"))
SET_OWNER = f"UPDATE {AGENTS} SET owner = :owner WHERE agent_id = :w_agent_id"
OWNER = f"SELECT owner FROM {AGENTS} WHERE agent_id = :w_agent_id"
PREVIOUS_HASH = (
    f"SELECT hash FROM {EVENTS} WHERE agent_id = :w_agent_id AND seq = :w_seq"
)
# An agent's name and head (its last event's number and hash).
HEAD = (
    f"SELECT a.name, e.seq, e.hash FROM {AGENTS} a JOIN {EVENTS} e "
    "ON e.agent_id = a.agent_id AND e.seq = a.last_seq "
    "WHERE a.agent_id = :w_agent_id"
)


@functools.lru_cache(maxsize=64)  # one per number of requests expiring at once
def expire_text(n_requests: int) -> str:
    """The expiry of ``n_requests`` open requests (``:r0``, ``:r1``, ...)."""
    ids = ", ".join(f":r{i}" for i in range(n_requests))
    return (
        f"UPDATE {REQUESTS} SET status = 'expired', closed_seq = :closed_seq "
        f"WHERE agent_id = :w_agent_id AND request_id IN ({ids}) "
        "AND status = 'open'"
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
        f"UPDATE {AGENTS} SET {sets} WHERE agent_id = :w_agent_id AND last_seq = :w_seq"
    )
    if returning:
        text += f" RETURNING ({PREVIOUS_HASH})"
        if locked:
            text += f", ({LOCK_HELD})"
    return text


class CommittedReads:
    """What the writer reads of an agent's row as committed, through the
    database's own ``rows(sql, params)`` (SQLAlchemy's pool or sqlite3)."""

    def head(self, agent_id) -> tuple | None:
        """An agent's name and head (``name, seq, hash``) as committed."""
        got = self.rows(HEAD, {"w_agent_id": agent_id})
        return tuple(got[0]) if got else None

    def owner_of(self, agent_id) -> str | None:
        """Who holds an agent's write lock, as its holder wrote it."""
        got = self.rows(OWNER, {"w_agent_id": agent_id})
        return got[0][0] if got else None


class SqliteDriver:
    """The SQL texts on a standard-library ``sqlite3`` connection.

    The writer's other driver (:class:`Driver` runs the same texts on a
    SQLAlchemy connection's DBAPI cursor): a driver error is ``sqlite3``'s
    own, a unique key's :attr:`integrity_error`.

    Examples
    --------
    >>> import sqlite3
    >>> from skrbal.online._sql._driver import SqliteDriver
    >>> run = SqliteDriver()
    >>> cursor = run.cursor(sqlite3.connect(":memory:"))
    >>> run.execute(cursor, "SELECT :a + :b", {"a": 1, "b": 2}).fetchone()
    (3,)
    """

    returning = _SQLITE_RETURNING
    integrity_error = sqlite3.IntegrityError

    @staticmethod
    def cursor(conn):
        """A cursor of ``conn`` (a ``sqlite3`` connection, or one that makes
        them), in its transaction."""
        return conn.cursor()

    @staticmethod
    def execute(cursor, sql: str, params, many: bool = False, conn=None):
        """Run ``sql`` with ``params`` (a dict, or a list of them with ``many``)."""
        if many:
            cursor.executemany(sql, params)
        else:
            cursor.execute(sql, params)
        return cursor


class Driver:
    """The SQL texts of one dialect, run on a transaction's DBAPI cursor.

    A driver error is raised as SQLAlchemy's exception of its kind; a unique
    key's is :attr:`integrity_error`.

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
        from sqlalchemy.exc import DBAPIError, IntegrityError

        self.dialect = dialect
        self.returning = dialect.name != "sqlite" or _SQLITE_RETURNING
        self.integrity_error = IntegrityError
        self._error = dialect.loaded_dbapi.Error
        self._wrap = DBAPIError.instance
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
            raise self._wrap(
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
