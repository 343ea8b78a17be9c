"""One SQL database holding agent stores: its engine, identity and schema.

:class:`Database` turns a store's URL or path into a SQLAlchemy engine
(SQLite with WAL and its pragmas, read-only when the file cannot be
written, or PostgreSQL), refuses a SQLite file with two names, and creates
the schema of :mod:`skrbal.online._sql._schema` or checks its version. The
store, its reader, writer and locks share one.
"""

from __future__ import annotations

import os
import time
import uuid
from time import monotonic
from urllib.parse import quote

from sqlalchemy import create_engine, event, func, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DatabaseError,
    DisconnectionError,
    IntegrityError,
    OperationalError,
    ProgrammingError,
)
from sqlalchemy.pool import StaticPool

from skrbal._secrets import mask_passwords
from skrbal.online._sql import _schema as schema
from skrbal.online._sql._driver import CommittedReads, Driver
from skrbal.online._sql._held import HeldConnection
from skrbal.online._sql._lock import PG_LOCK_SPACE
from skrbal.online._sql._sqlite_file import refuse_second_names, set_pragmas
from skrbal.online._sql._sqlite_file import writable as _writable
from skrbal.online._storage import StoreError

__all__ = ["Database"]


def _sqlite_pragmas(synchronous: str):
    """Per-connection settings of a SQLite store opened for writing."""

    def on_connect(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        set_pragmas(cursor, synchronous)
        cursor.close()

    return on_connect


# A pooled PostgreSQL connection idle for longer than this is pinged before
# use, as pool_pre_ping would at every checkout: a server restart or an idle
# timeout between an agent's calls then costs a reconnection, not a failed
# call, while calls in quick succession (a replay, a busy feed) skip the
# round trip, which cost as much as one of the call's own statements.
PING_AFTER_IDLE = 1.0


def _ping_when_idle(engine) -> None:
    """Ping a pooled connection at checkout if it was idle PING_AFTER_IDLE s."""

    @event.listens_for(engine, "checkin")
    def _checked_in(dbapi_connection, record):
        record.info["idle_since"] = monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, proxy):
        since = record.info.pop("idle_since", None)
        if since is None or monotonic() - since < PING_AFTER_IDLE:
            return  # a new connection, or one used a moment ago
        try:
            # SQLAlchemy 2.0.0's psycopg dialect returns False for a
            # connection the server ended; later versions raise.
            alive = engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error:
            alive = False
        if alive is False:
            # The pool drops it and connects anew (up to three times).
            raise DisconnectionError()


def _read_only_engine(path: str):
    """An engine that reads a SQLite file it may not write (nor its folder).

    ``mode=ro`` reads while a writer may be at work, but needs the WAL's
    ``-shm`` file to exist or be creatable; without it (a read-only copy
    of a closed store), ``immutable=1`` reads the file as it is.
    """
    quoted = quote(path)
    for flag in ("mode=ro", "immutable=1"):
        engine = create_engine(
            f"sqlite:///file:{quoted}?{flag}&uri=true", connect_args={"timeout": 60}
        )
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT count(*) FROM sqlite_master")
            return engine
        except OperationalError as exc:
            engine.dispose()
            error = exc
    raise StoreError(
        f"cannot read the store {path}: the file is read-only and cannot be "
        f"opened for reading either ({error.orig})."
    ) from error


class Database(CommittedReads):
    """The database of an :class:`~skrbal.online.AgentStore`, opened.

    Parameters
    ----------
    url : str or os.PathLike
        As :class:`~skrbal.online.AgentStore` takes it.
    synchronous : {'full', 'normal'}
        SQLite's ``synchronous`` pragma.

    Attributes
    ----------
    engine : sqlalchemy.engine.Engine
    path : str or None
        The absolute path of a SQLite file.
    read_only : bool
        Whether a SQLite file is opened for reading only.
    display_url : str
        The URL, password hidden.
    identity : tuple
        What names the database in this process's lock registry.

    Examples
    --------
    >>> from skrbal.online._sql._database import Database
    >>> database = Database(":memory:", "full")
    >>> database.display_url, database.schema_version
    ('sqlite://', 1)
    >>> database.close()
    """

    def __init__(self, url, synchronous: str):
        url = os.fspath(url)
        self._drivers = {}
        if url == ":memory:":
            url = "sqlite://"
        elif "://" not in url:
            url = "sqlite:///" + os.path.abspath(url)
        try:
            parsed = make_url(url)
        except (ArgumentError, ValueError):  # ValueError: a port not a number
            raise ValueError(
                f"url: {mask_passwords(url)!r} is neither a file path nor a "
                "database URL (sqlite:///path or "
                "postgresql://user:password@host:port/database)."
            ) from None
        backend = parsed.get_backend_name()
        self.path, self.read_only = None, False
        if backend == "sqlite":
            memory = parsed.database in (None, "", ":memory:")
            if memory:
                self.engine = create_engine(
                    parsed,
                    poolclass=StaticPool,
                    connect_args={"check_same_thread": False},
                )
                # Unique for ever: an id() is reused once the object is gone,
                # and an unclosed agent of the old store still holds its key.
                self.identity = ("memory", uuid.uuid4().hex)
            else:
                self.path = os.path.abspath(parsed.database)
                if not os.path.isdir(os.path.dirname(self.path)):
                    raise ValueError(
                        f"url: the folder of the SQLite file {self.path!r} does "
                        "not exist."
                    )
                refuse_second_names(self.path)
                self.identity = ("sqlite", os.path.realpath(self.path))
                if os.path.exists(self.path) and not _writable(self.path):
                    self.read_only = True
                    self.engine = _read_only_engine(self.path)
                else:
                    self.engine = create_engine(parsed, connect_args={"timeout": 60})
            if not self.read_only:
                event.listen(self.engine, "connect", _sqlite_pragmas(synchronous))
        elif backend == "postgresql":
            if parsed.drivername == "postgresql":
                parsed = parsed.set(drivername="postgresql+psycopg")
            self.engine = create_engine(parsed)
            _ping_when_idle(self.engine)
            self.identity = ("postgresql", parsed.render_as_string(hide_password=True))
        else:
            hint = (
                " (PostgreSQL's scheme is postgresql://, not postgres://)"
                if backend == "postgres"
                else ""
            )
            raise ValueError(
                f"url: the store supports SQLite and PostgreSQL, got the "
                f"{backend!r} database of {mask_passwords(url)!r}{hint}."
            )
        self.display_url = mask_passwords(parsed.render_as_string(hide_password=False))
        try:
            self._prepare_schema()
        except DatabaseError as exc:
            self.engine.dispose()
            raise StoreError(
                f"cannot open the store {self.display_url}: {exc.orig}"
            ) from exc

    # ------------------------------------------------------------------ #
    # schema
    # ------------------------------------------------------------------ #
    def _prepare_schema(self):
        for attempt in range(3):
            try:
                with self.engine.begin() as conn:
                    self._create_or_upgrade(conn)
                return
            except (IntegrityError, ProgrammingError, OperationalError):
                # Another process created the tables at the same moment.
                if attempt == 2:
                    raise
                time.sleep(0.1 * (attempt + 1))

    def _version(self, conn) -> int | None:
        """The store's schema version, None for a database without tables."""
        if not inspect(conn).has_table(schema.schema_version.name):
            return None
        version = conn.execute(select(func.max(schema.schema_version.c.version)))
        version = version.scalar()
        if version is None:
            raise StoreError(
                f"store {self.display_url}: skrbal_schema_version is empty; the "
                "store is damaged or not a skrbal store."
            )
        if version > schema.SCHEMA_VERSION:
            raise StoreError(
                f"store {self.display_url} has schema version {version}, newer "
                f"than this skrbal's {schema.SCHEMA_VERSION}: upgrade skrbal to "
                "use it."
            )
        if version < schema.SCHEMA_VERSION:  # pragma: no cover (none so far)
            raise StoreError(
                f"store {self.display_url} has schema version {version}, older "
                f"than this skrbal's {schema.SCHEMA_VERSION}, and no migration "
                "leads from it."
            )
        return version

    def _create_or_upgrade(self, conn):
        version = self._version(conn)
        if version == schema.SCHEMA_VERSION:
            return  # the common case: nothing to write, no lock taken
        if self.read_only:
            raise StoreError(
                f"store {self.path} is read-only and has "
                + ("no tables" if version is None else f"schema version {version}")
                + f", not {schema.SCHEMA_VERSION}: open it once where it can be "
                "written to create it."
            )
        # Creating: one transaction that a second process waits
        # for, then re-reads, so a kill leaves nothing or a complete store
        # and of two processes creating one store, one creates and the other
        # opens.
        if conn.dialect.name == "sqlite":
            # The sqlite3 module opens a transaction only before a DML
            # statement, so each CREATE or ALTER would commit on its own;
            # BEGIN IMMEDIATE opens one, with the database's write lock.
            if not conn.connection.dbapi_connection.in_transaction:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            # PostgreSQL's DDL is transactional; a transaction-level advisory
            # lock (key 0: no agent's) orders the creators.
            conn.execute(
                text("SELECT pg_advisory_xact_lock(:space, 0)"),
                {"space": PG_LOCK_SPACE},
            )
        version = self._version(conn)
        if version is None:
            schema.metadata.create_all(conn)
            conn.execute(
                schema.schema_version.insert().values(
                    version=schema.SCHEMA_VERSION, applied_at=time.time()
                )
            )
            return

    @property
    def schema_version(self) -> int:
        """Schema version of the store (equal to the code's once opened)."""
        with self.engine.connect() as conn:
            return conn.execute(
                select(func.max(schema.schema_version.c.version))
            ).scalar()

    # ------------------------------------------------------------------ #
    # the connection interface of the writer (as _sqlite_file.SqliteFile)
    # ------------------------------------------------------------------ #
    @property
    def dialect(self) -> str:
        """``'sqlite'`` or ``'postgresql'``."""
        return self.engine.dialect.name

    def begin(self):
        """A transaction on a pooled connection (a context manager)."""
        return self.engine.begin()

    def held_connection(self) -> HeldConnection | None:
        """The connection a SQLite file's writes keep (None: use the pool)."""
        if self.path is None or self.read_only:
            return None
        return HeldConnection(self.engine)

    def driver(self, conn) -> Driver:
        """The SQL texts of ``conn``'s dialect."""
        dialect = conn.dialect
        known = self._drivers.get(dialect)
        if known is None:
            known = self._drivers[dialect] = Driver(dialect)
        return known

    def rows(self, sql: str, params: dict) -> list:
        """The rows of one of the driver's SQL texts, on a pooled connection."""
        with self.engine.connect() as conn:
            return conn.execute(text(sql), params).all()

    def close(self) -> None:
        """Close the connections."""
        self.engine.dispose()
