"""The rows of SQL text, from either driver: what the store's readers run on.

The readers a live call needs (the chain's verification, an agent's open
requests, some steps of its blocks) are SQL text with ``:name``
parameters. They run on a :class:`CoreRows` (a SQLAlchemy connection, any
backend: :class:`~skrbal.online.AgentStore`) or a :class:`SqliteRows` (a
standard-library ``sqlite3`` connection to a SQLite file:
:class:`~._sqlite_store.SqliteStore`), which both give the rows as tuples
whose columns are also attributes, as SQLAlchemy's rows are. This module
imports no SQLAlchemy.
"""

from __future__ import annotations

import collections
import functools

__all__ = ["CoreRows", "SqliteRows", "as_rows", "in_list"]


def in_list(name: str, values) -> tuple[str, dict]:
    """``(:name0, :name1, ...)`` and its parameters, for ``column IN ...``.

    Examples
    --------
    >>> in_list("s", [4, 7])
    ('(:s0, :s1)', {'s0': 4, 's1': 7})
    """
    values = list(values)
    params = {f"{name}{i}": v for i, v in enumerate(values)}
    return "(" + ", ".join(f":{key}" for key in params) + ")", params


@functools.lru_cache(maxsize=256)
def _record(columns: tuple):
    """A row of these columns from a tuple of values."""
    row = collections.namedtuple("Row", columns, rename=True)
    return lambda values: row(*values)


class SqliteRows:
    """SQL text on a ``sqlite3`` connection (in its read transaction).

    Parameters
    ----------
    conn : sqlite3.Connection

    Examples
    --------
    >>> import sqlite3
    >>> rows = SqliteRows(sqlite3.connect(":memory:"))
    >>> rows.all("SELECT :a AS a, :b AS b", {"a": 1, "b": 2})[0].b
    2
    """

    def __init__(self, conn):
        self._conn = conn

    def stream(self, sql: str, params: dict, size: int = 1_000):
        """The rows, one at a time (``sqlite3`` steps its statement a row at
        a time, whatever ``size``: it never holds more than the row)."""
        cursor = self._conn.execute(sql, params)
        make = _record(tuple(d[0] for d in cursor.description))
        try:
            yield from map(make, cursor)
        finally:
            cursor.close()

    def all(self, sql: str, params: dict) -> list:
        """Every row."""
        cursor = self._conn.execute(sql, params)
        try:
            make = _record(tuple(d[0] for d in cursor.description))
            return list(map(make, cursor.fetchall()))
        finally:
            cursor.close()

    def scalar(self, sql: str, params: dict):
        """The first column of the first row (None without one)."""
        row = self._conn.execute(sql, params).fetchone()
        return None if row is None else row[0]


class CoreRows:
    """SQL text on a SQLAlchemy connection (``text()``, any backend).

    Parameters
    ----------
    conn : sqlalchemy.engine.Connection
    """

    def __init__(self, conn):
        from sqlalchemy import text

        self._conn, self._text = conn, text

    def stream(self, sql: str, params: dict, size: int = 1_000):
        """The rows, fetched ``size`` at a time."""
        return self._conn.execution_options(yield_per=size).execute(
            self._text(sql), params
        )

    def all(self, sql: str, params: dict) -> list:
        """Every row."""
        return self._conn.execute(self._text(sql), params).all()

    def scalar(self, sql: str, params: dict):
        """The first column of the first row (None without one)."""
        return self._conn.execute(self._text(sql), params).scalar()


def as_rows(conn):
    """``conn`` as rows of SQL text: a :class:`SqliteRows` or
    :class:`CoreRows` as given, a SQLAlchemy connection wrapped."""
    if isinstance(conn, (SqliteRows, CoreRows)):
        return conn
    return CoreRows(conn)
