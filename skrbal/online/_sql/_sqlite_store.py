"""An agent store on a SQLite file, through the standard library's ``sqlite3``.

What one live call of an agent needs of its store -- its agent's record, a
client key's earlier call, the latest model snapshot, the write lock, the
call's write, a status -- without importing SQLAlchemy, whose import alone
costs a one-row ``skrbal agent observe`` most of its target. The writes are
the store's own writer (:class:`~._writing.StoreWriter`, through
:class:`~._store_writing.AgentStoreWriting`) over a
:class:`~._sqlite_file.SqliteFile`; the reads are the SQL texts of
:mod:`._live` and :mod:`._summary`, which :class:`~skrbal.online.AgentStore`
runs through SQLAlchemy. Everything else (history, export, verify, resume)
is :class:`~skrbal.online.AgentStore`'s.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from contextlib import contextmanager

from skrbal.online._sql._anchor import AnchorFile
from skrbal.online._sql._blocks import read_steps
from skrbal.online._sql._chain import ANCHOR_ENV, chain_secret
from skrbal.online._sql._live import (
    LiveReads,
    agent_record,
    block_of,
    damage_message,
    heads,
    n_states,
)
from skrbal.online._sql._sqlite_file import SqliteFile
from skrbal.online._sql._store_writing import AgentStoreWriting
from skrbal.online._sql._summary import AgentSummary
from skrbal.online._storage import StoreError

__all__ = ["SqliteStore"]

_SYNCHRONOUS = ("full", "normal")


def _read(method):
    """A read whose ``sqlite3`` database errors (a dropped table, a corrupt
    file) end in the store's :class:`StoreError` naming the agent."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            name = args[0] if args and isinstance(args[0], str) else None
            raise StoreError(damage_message(self.display_url, name, exc)) from None

    return guarded


class SqliteStore(AgentStoreWriting):
    """The store of a live call on a SQLite file, with no SQLAlchemy.

    Open it with :meth:`open`, which returns None for a file it cannot serve
    (no such file, a read-only one, no store of this code's schema
    version): :class:`~skrbal.online.AgentStore` opens those and says what
    is wrong. A file with two names (hard links) is refused as the store
    refuses it.

    Parameters
    ----------
    database : SqliteFile
        The opened file.
    chain_key, anchor_file
        As :class:`~skrbal.online.AgentStore` takes them.

    Attributes
    ----------
    path, display_url : str
    read_only : bool
        False.
    anchor : AnchorFile or None

    Examples
    --------
    >>> import os, tempfile
    >>> from skrbal.online import AgentStore
    >>> path = os.path.join(tempfile.mkdtemp(), "agents.db")
    >>> SqliteStore.open(path) is None
    True
    >>> AgentStore(path).close()
    >>> with SqliteStore.open(path) as store:
    ...     store.agent_names()
    []
    """

    read_only = False
    # The agent keeps its model's snapshot in the events (issue 28.25).
    keeps_snapshots = True

    def __init__(self, database: SqliteFile, *, chain_key=None, anchor_file=None):
        self._chain_key = chain_secret(chain_key)
        if anchor_file is None and os.environ.get(ANCHOR_ENV):
            anchor_file = os.environ[ANCHOR_ENV]
        self.anchor = None if anchor_file is None else AnchorFile(anchor_file)
        self.database = database
        self.path, self.display_url = database.path, database.display_url
        AgentStoreWriting.__init__(self, database, self._chain_key, self.anchor)

    @classmethod
    def open(
        cls, path, *, synchronous: str = "full", chain_key=None, anchor_file=None
    ) -> SqliteStore | None:
        """The store on the SQLite file ``path``, or None (see the class).

        Parameters
        ----------
        path : str or os.PathLike
            The store's file.
        synchronous, chain_key, anchor_file
            As :class:`~skrbal.online.AgentStore` takes them.

        Returns
        -------
        store : SqliteStore or None
        """
        if synchronous not in _SYNCHRONOUS:
            raise ValueError(
                f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}."
            )
        database = SqliteFile.open(path, synchronous)
        if database is None:
            return None
        try:
            return cls(database, chain_key=chain_key, anchor_file=anchor_file)
        except BaseException:  # a chain key refused: nothing left open
            database.close()
            raise

    @property
    def chain_keyed(self) -> bool:
        """Whether the store was opened with a chain key (``chain_key``)."""
        return self._chain_key is not None

    @_read
    def agent_names(self) -> list[str]:
        """See :meth:`~skrbal.online.AgentStore.agent_names`."""
        with self.database.reading() as rows:
            return LiveReads(rows, self.display_url).agent_names()

    @_read
    def load_agent(self, name: str):
        """See :meth:`~skrbal.online.AgentStore.load_agent`."""
        with self.database.reading() as rows:
            return LiveReads(rows, self.display_url).load_agent(name)

    @_read
    def find_key(self, agent_id: int, key: str):
        """See :meth:`~skrbal.online.AgentStore.find_key`."""
        with self.database.reading() as rows:
            return LiveReads(rows, self.display_url).find_key(agent_id, key)

    def _verified(self, reads, name, expected_head=None):
        """The row of agent ``name``, its whole chain verified (as resuming)."""
        agent = reads.agent_row(name)
        head = reads.verified(
            agent, self._chain_key, heads(self.anchor, name, expected_head)
        )
        return agent, head

    @_read
    def verify(self, name: str, *, expected_head=None) -> dict:
        """See :meth:`~skrbal.online.AgentStore.verify`."""
        with self.database.reading() as rows:
            _, (seq, digest) = self._verified(
                LiveReads(rows, self.display_url), name, expected_head
            )
        return {"seq": seq, "hash": digest}

    @_read
    def load_snapshot(self, name: str):
        """The latest event holding the snapshot of the agent's model, after
        verifying the whole chain (see ``AgentStore.load_snapshot``)."""
        with self.database.reading() as rows:
            reads = LiveReads(rows, self.display_url)
            agent, _ = self._verified(reads, name)
            return reads.snapshot_of(agent)

    @_read
    def load_live(self, name: str):
        """What deciding the agent's next block needs besides the model,
        after verifying the whole chain (see ``AgentStore.load_live``)."""
        from skrbal.online._records import LiveState  # issue 28.25's record

        with self.database.reading() as rows:
            reads = LiveReads(rows, self.display_url)
            agent, _ = self._verified(reads, name)
            fields = reads.live(agent)
        return LiveState(agent=agent_record(agent), **fields)

    @_read
    def configuration(self, name: str) -> dict:
        """See :meth:`~skrbal.online.AgentStore.configuration`."""
        with self.database.reading() as rows:
            return AgentSummary(rows.all, self.display_url).configuration(name)

    @_read
    def load_block(self, agent_id: int, first_step: int):
        """See :meth:`~skrbal.online.AgentStore.load_block`."""
        with self.database.reading() as rows:
            agent = LiveReads(rows, self.display_url).agent_by_id(agent_id)
            return block_of(rows, agent, first_step, n_states(agent))

    @_read
    def load_steps(self, agent_id: int, steps, columns) -> dict:
        """See :meth:`~skrbal.online.AgentStore.load_steps`."""
        with self.database.reading() as rows:
            agent = LiveReads(rows, self.display_url).agent_by_id(agent_id)
            return read_steps(rows, agent, steps, columns, n_states(agent))

    @_read
    def status(self, name: str) -> dict:
        """See :meth:`~skrbal.online.AgentStore.status`."""
        with self.database.reading() as rows:
            return AgentSummary(rows.all, self.display_url).status(name)

    @contextmanager
    def summary(self):
        """See :meth:`~skrbal.online.AgentStore.summary`: one read snapshot."""
        with self.database.reading() as rows:
            yield AgentSummary(rows.all, self.display_url)

    def close(self) -> None:
        """Close the store's connections."""
        AgentStoreWriting.close(self)
        self.database.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"SqliteStore({self.display_url!r})"
