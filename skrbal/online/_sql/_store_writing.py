"""The writing side of an agent store: its lock and its writes.

:class:`AgentStoreWriting` holds the public writers of
:class:`~skrbal.online.AgentStore` (creating an agent, locking it, and each
call's event, as :class:`~skrbal.online.AgentStorage` asks, and the
transactions a fleet joins), each a call on the
:class:`~._writing.StoreWriter` it owns; the store inherits them, so their
documentation is the store's.
"""

from __future__ import annotations

from contextlib import contextmanager

from skrbal.online._records import (
    AgentRecord,
    Commissioning,
    ObserveBlock,
    ResultRecord,
)
from skrbal.online._sql._lock import AgentLock
from skrbal.online._sql._writing import StoreWriter

__all__ = ["AgentStoreWriting"]


class AgentStoreWriting:
    """The writers of an :class:`~skrbal.online.AgentStore`, one transaction each.

    Parameters
    ----------
    database : Database
        The store's database.
    chain_key : bytes or None
        The secret of the event chain (None: plain SHA-256).
    anchor : AnchorFile or None
        The sidecar that each commit's head is appended to.

    See Also
    --------
    AgentStore : The store, which is its readers and its writers.
    """

    #: The agent keeps the model's snapshot after a call in the call's event
    #: (chained, so ``verify`` covers it), for a driver without the model.
    keeps_snapshots = True

    def __init__(self, database, chain_key, anchor):
        self._writer = StoreWriter(database, chain_key, anchor)

    def create_agent(self, record: AgentRecord, commissioning: Commissioning) -> int:
        """Create an agent with its commissioning steps, as event 1.

        Parameters
        ----------
        record : AgentRecord
            The new agent (its ``agent_id`` is ignored).
        commissioning : Commissioning
            Its commissioning steps.

        Returns
        -------
        agent_id : int
            The agent's key in the store.

        Raises
        ------
        StoreError
            When the store already has an agent of that name.
        """
        return self._writer.create_agent(record, commissioning)

    def lock_agent(self, agent_id: int, name: str, timeout: float = 0.0) -> AgentLock:
        """Exclusive write access to an agent, until ``release()``.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        name : str
            Its name (for messages).
        timeout : float, default=0.0
            Seconds to wait for another writer to close it.

        Returns
        -------
        lock : AgentLock

        Raises
        ------
        AgentLockedError
            When the agent is open for writing elsewhere.
        """
        return self._writer.lock(agent_id, name, timeout)

    def append_observe(self, agent_id: int, seq: int, block: ObserveBlock) -> None:
        """Commit the steps, requests and budget state of one ``observe`` call.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        seq : int
            The agent's last event; the block becomes event ``seq + 1``.
        block : ObserveBlock
            The call's steps and requests.

        Raises
        ------
        StoreError
            When another writer moved the agent past ``seq``.
        """
        self._writer.append_observe(agent_id, seq, block)

    def record_result(self, agent_id: int, seq: int, result: ResultRecord) -> None:
        """Commit the result of an inspection request as event ``seq + 1``.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        seq : int
            The agent's last event.
        result : ResultRecord
            The result.
        """
        self._writer.record_result(agent_id, seq, result)

    def record_cancel(
        self,
        agent_id: int,
        seq: int,
        request_id: int,
        step: int,
        reason,
        key=None,
        snapshot=None,
    ) -> None:
        """Commit the cancellation of a request as event ``seq + 1``.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        seq : int
            The agent's last event.
        request_id, step : int
            The request and its step.
        reason : str or None
            Kept with the request.
        key : ClientKey, default=None
            The client's key of the call, if it gave one.
        snapshot : dict, default=None
            The model's snapshot after the cancellation, kept in the event.
        """
        self._writer.record_cancel(
            agent_id, seq, request_id, step, reason, key, snapshot
        )

    def record_expire(
        self, agent_id: int, seq: int, request_ids, steps, snapshot=None
    ) -> None:
        """Commit the expiry of open requests as event ``seq + 1``.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        seq : int
            The agent's last event.
        request_ids, steps : sequence of int
            The requests that expire, and their steps.
        snapshot : dict, default=None
            The model's snapshot after the expiry, kept in the event.
        """
        self._writer.record_expire(agent_id, seq, request_ids, steps, snapshot)

    def record_action(
        self, agent_id: int, seq: int, step: int, action: int, key=None
    ) -> None:
        """Commit the action the user took at a step as event ``seq + 1``.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        seq : int
            The agent's last event.
        step : int
            The step.
        action : int
            The action's index.
        key : ClientKey, default=None
            The client's key of the call, if it gave one.
        """
        self._writer.record_action(agent_id, seq, step, action, key)

    def record_skipped(self, agent_id: int, seq: int, skipped, key=None) -> None:
        """Commit rows skipped after the last decided row as event ``seq + 1``.

        Parameters
        ----------
        agent_id, seq : int
            The agent's key, and its last event.
        skipped : tuple of SkippedRow
            The rows (an event of kind ``skip``, with no block).
        key : ClientKey, default=None
            The client's key of the call, if it gave one.
        """
        self._writer.record_skipped(agent_id, seq, skipped, key)

    @contextmanager
    def joined(self, conn):
        """Make this store's writes join ``conn``'s open transaction meanwhile.

        A caller that commits an agent's call together with its own rows (the
        fleet budget of :mod:`skrbal.fleet`, drawn under a fleet lock) opens a
        transaction on this store's engine and runs the call inside this
        block: each write joins it, and commits or rolls back with it. Not for
        a store shared by threads.

        Parameters
        ----------
        conn : sqlalchemy.engine.Connection
            A connection of this store's engine, in a transaction.

        Yields
        ------
        store : AgentStore
            This store.

        Examples
        --------
        >>> import os, tempfile
        >>> from skrbal.online import AgentStore
        >>> store = AgentStore(os.path.join(tempfile.mkdtemp(), "fleet.db"))
        >>> with store.engine.begin() as conn, store.joined(conn):
        ...     store.begin_write() is not None
        True
        >>> store.close()
        """
        with self._writer.joined(conn):
            yield self

    def begin_write(self):
        """The transaction of one write: a new one, or the one joined.

        Returns
        -------
        context : context manager
            Yields the connection to write with; a new transaction commits
            when it ends, a joined one (:meth:`joined`) is its owner's.
        """
        return self._writer.begin_write()

    def close(self) -> None:
        """Give back the connection held for the writes."""
        self._writer.close()
