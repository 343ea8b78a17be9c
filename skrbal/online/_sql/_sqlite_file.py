"""A SQLite file store opened with the standard library's ``sqlite3`` alone.

Importing SQLAlchemy costs a one-row ``skrbal agent observe`` from the
command line more than its whole target, so on a SQLite file the reads and
writes a live call needs go through ``sqlite3``. :class:`SqliteFile` is the
connection interface the store's writer (:class:`~._writing.StoreWriter`)
asks of its database -- ``begin()``, ``held_connection()``, ``driver()``,
``head()``, ``owner_of()`` -- as :class:`~._database.Database` gives it
through SQLAlchemy: the same writer, the same SQL texts (:mod:`._driver`),
the same pragmas (WAL, ``synchronous``, foreign keys), the same hard-link
refusal and lock (:mod:`._lock`), the same held connection (:mod:`._held`).
A file this module cannot serve (missing, read-only, not a store of this
code's schema version) is left to :class:`~skrbal.online.AgentStore`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager

from skrbal.online._sql._driver import CommittedReads, SqliteDriver
from skrbal.online._sql._held import HeldConnection
from skrbal.online._sql._rows import SqliteRows
from skrbal.online._sql._version import SCHEMA_VERSION
from skrbal.online._storage import StoreError

__all__ = ["SqliteConnection", "SqliteFile", "refuse_second_names", "writable"]


def set_pragmas(cursor, synchronous: str) -> None:
    """The settings of a connection that writes a SQLite store."""
    # WAL lets readers (status, export) work while an agent writes.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA synchronous={synchronous.upper()}")
    cursor.execute("PRAGMA foreign_keys=ON")


def writable(path: str) -> bool:
    """Whether a SQLite file (with its WAL files beside it) can be written."""
    folder = os.path.dirname(path)
    return os.access(path, os.W_OK) and os.access(folder, os.W_OK)


def _holders(path: str) -> list[int]:
    """Processes holding a lock on a file (Linux's /proc/locks), by inode.

    An open SQLite connection in WAL mode holds a shared lock on its
    database file, whatever name it opened it by.
    """
    try:
        stat = os.stat(path)
        with open("/proc/locks") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return []
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}"
    inode = f"{device}:{stat.st_ino}"
    pids = set()
    for line in lines:
        fields = line.split()
        # "1: POSIX ADVISORY READ <pid> <major:minor:inode> <start> <end>"
        if len(fields) >= 6 and fields[5] == inode and fields[4].isdigit():
            pids.add(int(fields[4]))
    return sorted(pids)


def refuse_second_names(path: str) -> None:
    """Refuse a SQLite file that has more than one name (hard links).

    SQLite keeps its write-ahead log (``-wal``), the index of it (``-shm``,
    where its write lock lives) and skrbal's lock sidecar beside each name:
    two names of one file are two stores that each take their own locks,
    commit into their own log and corrupt the file they share. Checked on
    every open, so whichever name comes second meets the first.
    """
    try:
        links = os.stat(path).st_nlink
    except OSError:
        return
    if links <= 1:
        return
    pids = _holders(path)
    holder = (
        "it is open in " + ", ".join(f"pid {pid}" for pid in pids)
        if pids
        else "no process holds it open now"
    )
    raise StoreError(
        f"store {path}: the SQLite file has {links} names (hard links; {holder}). "
        "SQLite keeps its write-ahead log and its locks per name, so two names "
        "of one file are two writers that corrupt it. Open it by one name only "
        "(a symbolic link is fine): remove the other names, or copy the file "
        "with `sqlite3 <file> .backup <copy>` once no agent writes to it."
    )


class SqliteConnection:
    """One ``sqlite3`` connection to a store, its transactions explicit.

    What :class:`~._held.HeldConnection` and the writer use of a SQLAlchemy
    connection: :meth:`begin` (a transaction that commits when its block
    ends, rolls back if it raises), :meth:`cursor`, :meth:`close`,
    ``closed`` and ``invalidated``.

    Parameters
    ----------
    path : str
        The store's file.
    synchronous : {'full', 'normal'}
        SQLite's ``synchronous`` pragma.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "c.db")
    >>> conn = SqliteConnection(path, "full")
    >>> with conn.begin():
    ...     _ = conn.cursor().execute("CREATE TABLE t (a INTEGER)")
    >>> conn.cursor().execute("PRAGMA journal_mode").fetchone()
    ('wal',)
    >>> conn.close(); conn.closed
    True
    """

    invalidated = False  # a sqlite3 connection has no server to lose

    def __init__(self, path: str, synchronous: str):
        # isolation_level=None: no implicit BEGIN, the transactions are
        # begin()'s; any thread, one transaction at a time (the held
        # connection's lock), as SQLAlchemy's pool hands it out.
        self.dbapi = sqlite3.connect(
            path, timeout=60, isolation_level=None, check_same_thread=False
        )
        self.closed = False
        cursor = self.dbapi.cursor()
        set_pragmas(cursor, synchronous)
        cursor.close()

    @contextmanager
    def begin(self):
        """A transaction holding the write lock from its start."""
        self.dbapi.execute("BEGIN IMMEDIATE")
        try:
            yield self
            self.dbapi.execute("COMMIT")
        except BaseException:
            if self.dbapi.in_transaction:
                self.dbapi.execute("ROLLBACK")
            raise

    def cursor(self):
        """A cursor of the connection, in its transaction."""
        return self.dbapi.cursor()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if not self.closed:
            self.closed = True
            self.dbapi.close()


class SqliteFile(CommittedReads):
    """A SQLite file store's database, opened with ``sqlite3``.

    Use :meth:`open`, which returns None for a file it cannot serve.

    Parameters
    ----------
    path : str
        The store's file, absolute.
    synchronous : {'full', 'normal'}
        SQLite's ``synchronous`` pragma.

    Attributes
    ----------
    path : str
    read_only : bool
        Always False (a read-only file is left to the store).
    display_url : str
        ``sqlite:///`` and the path, as the store shows it.
    identity : tuple
        What names the database in this process's lock registry (the
        store's, so one process cannot open an agent through both).
    dialect : str
        ``'sqlite'``.

    Examples
    --------
    >>> import os, tempfile
    >>> from skrbal.online import AgentStore
    >>> path = os.path.join(tempfile.mkdtemp(), "agents.db")
    >>> SqliteFile.open(path, "full") is None  # no store yet
    True
    >>> AgentStore(path).close()
    >>> database = SqliteFile.open(path, "full")
    >>> database.display_url == "sqlite:///" + path
    True
    >>> database.close()
    """

    read_only = False
    dialect = "sqlite"

    def __init__(self, path: str, synchronous: str):
        self.path, self.synchronous = path, synchronous
        self.display_url = "sqlite:///" + path
        self.identity = ("sqlite", os.path.realpath(path))
        self._driver = SqliteDriver()
        self._reader = None
        self._reader_pid = None
        self._reading = threading.Lock()

    @classmethod
    def open(cls, path, synchronous: str = "full") -> SqliteFile | None:
        """The database of the store at ``path``, or None to leave it to
        :class:`~skrbal.online.AgentStore` (no file, not writable, no store
        of this code's schema version). A file with two names is refused
        with the store's :class:`StoreError`.
        """
        path = os.path.abspath(os.fspath(path))
        if not os.path.isfile(path) or not writable(path):
            return None
        refuse_second_names(path)
        database = cls(path, synchronous)
        try:
            version = database.rows(
                "SELECT max(version) FROM skrbal_schema_version", {}
            )[0][0]
        except sqlite3.Error:
            version = None
        if version != SCHEMA_VERSION:
            database.close()
            return None
        return database

    # the writer's connection interface
    def connect(self) -> SqliteConnection:
        """A new connection, its pragmas set."""
        return SqliteConnection(self.path, self.synchronous)

    @contextmanager
    def begin(self):
        """A transaction on a new connection, closed after it."""
        conn = self.connect()
        try:
            with conn.begin():
                yield conn
        finally:
            conn.close()

    def held_connection(self) -> HeldConnection:
        """The connection the writes keep, call after call."""
        return HeldConnection(self)

    def driver(self, conn) -> SqliteDriver:
        """The SQL texts on ``conn``."""
        return self._driver

    # reads
    @contextmanager
    def reading(self):
        """A read transaction (one snapshot), yielding its :class:`SqliteRows`."""
        with self._reading:
            if self._reader is None or self._reader_pid != os.getpid():
                # A forked child must not use its parent's connection.
                self._reader = sqlite3.connect(
                    self.path, timeout=60, isolation_level=None, check_same_thread=False
                )
                self._reader_pid = os.getpid()
            conn = self._reader
            conn.execute("BEGIN")
            try:
                yield SqliteRows(conn)
            finally:
                conn.execute("COMMIT")

    def rows(self, sql: str, params: dict) -> list:
        """The rows of one SQL text."""
        with self.reading() as rows:
            return rows.all(sql, params)

    def close(self) -> None:
        """Close the reading connection."""
        with self._reading:
            if self._reader is not None and self._reader_pid == os.getpid():
                self._reader.close()
            self._reader = None
