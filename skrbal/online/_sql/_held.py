"""The connection a SQLite file store keeps for its writes, call after call.

A live agent writes one transaction per call. Taking a connection from the
pool and giving it back (SQLAlchemy's checkout, its ``Connection`` object,
the reset on return) cost a 1,000-row ``observe`` as much CPU as its SQL
statements, so a store on a SQLite file keeps one connection for its
writes (:class:`HeldConnection`) instead. Each write is still its own
transaction on it, committed or rolled back as before; between writes the
connection holds no transaction, hence no lock and no read snapshot.

The held connection serves one write at a time in the process that opened
it: a write while it is busy (another thread's), or in a forked child, takes
a connection from the pool as every write did before.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

__all__ = ["HeldConnection"]


class HeldConnection:
    """One pooled connection kept checked out for a store's own transactions.

    Parameters
    ----------
    engine : sqlalchemy.engine.Engine or SqliteFile
        The store's engine (a SQLite file's), or the file opened with the
        standard library's ``sqlite3`` (:class:`~._sqlite_file.SqliteFile`):
        what gives ``connect()`` and ``begin()``, whose connections have
        ``begin()``, ``close()``, ``closed`` and ``invalidated``.

    Examples
    --------
    >>> import os, tempfile
    >>> from sqlalchemy import create_engine
    >>> engine = create_engine(
    ...     "sqlite:///" + os.path.join(tempfile.mkdtemp(), "held.db"))
    >>> held = HeldConnection(engine)
    >>> with held.begin() as conn:
    ...     _ = conn.exec_driver_sql("CREATE TABLE t (a INTEGER)")
    >>> with held.begin() as again:
    ...     again is conn
    True
    >>> held.close()
    >>> engine.pool.checkedout()
    0
    """

    def __init__(self, engine):
        self._engine = engine
        self._conn = None
        self._pid = None
        self._busy = threading.Lock()

    @contextmanager
    def begin(self):
        """One transaction, on the held connection when it is free.

        Yields
        ------
        conn : sqlalchemy.engine.Connection
            In a transaction that commits when the block ends, and rolls
            back if it raises.
        """
        if self._pid not in (None, os.getpid()) or not self._busy.acquire(
            blocking=False
        ):
            # A forked child must not use its parent's SQLite connection, and
            # one connection runs one transaction at a time.
            with self._engine.begin() as conn:
                yield conn
            return
        try:
            conn = self._conn
            if conn is None or conn.closed or conn.invalidated:
                if conn is not None:
                    conn.close()  # an invalidated one: back to the pool, dropped
                conn = self._conn = self._engine.connect()
                self._pid = os.getpid()
            with conn.begin():
                yield conn
        finally:
            self._busy.release()

    def close(self) -> None:
        """Give the connection back to the pool (idempotent)."""
        conn, self._conn = self._conn, None
        if conn is not None and self._pid == os.getpid():
            conn.close()
