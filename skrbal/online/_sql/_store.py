"""The agent store: a SQLite file or a PostgreSQL database, via SQLAlchemy Core."""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy.exc import (
    DatabaseError,
)

from skrbal.online._records import (
    AgentRecord,
    Commissioning,
    ObserveBlock,
    Replay,
    ResultRecord,
)
from skrbal.online._sql._anchor import AnchorFile
from skrbal.online._sql._chain import ANCHOR_ENV, chain_secret
from skrbal.online._sql._database import Database
from skrbal.online._sql._frames import StoreFrames
from skrbal.online._sql._lock import AgentLock
from skrbal.online._sql._reading import sql_rows
from skrbal.online._sql._summary import AgentSummary
from skrbal.online._sql._writing import StoreWriter, label_to_json
from skrbal.online._storage import StoreError

if TYPE_CHECKING:  # frames are made in _frames: a status needs no pandas
    import pandas as pd

__all__ = ["AgentStore", "StoreError", "label_to_json"]


_SYNCHRONOUS = ("full", "normal")


def _named_damage(read):
    """A reading method whose database errors (a dropped table, a corrupt
    file) end in a :class:`StoreError` naming the agent, not the driver's."""

    @functools.wraps(read)
    def guarded(self, *args, **kwargs):
        try:
            return read(self, *args, **kwargs)
        except DatabaseError as exc:
            name = args[0] if args else kwargs.get("name")
            raise StoreError(self._reader.damage_message(name, exc)) from None

    return guarded


class AgentStore:
    """A database holding any number of named agents, isolated from each other.

    Parameters
    ----------
    url : str or os.PathLike
        A file path (a SQLite database, created if missing), ``":memory:"``
        (an in-memory SQLite database that lives as long as this object), or
        a SQLAlchemy URL: ``sqlite:///path.db`` or
        ``postgresql+psycopg://user@host:port/database`` (``postgresql://``
        is read as ``postgresql+psycopg://``).
    synchronous : {'full', 'normal'}, default='full'
        SQLite only: ``'full'`` syncs every commit to disk, so a decision
        returned to the caller survives a power cut; ``'normal'`` (in WAL
        mode) survives a crash or kill of the process but may lose the last
        commits of a power cut or operating-system crash, and saves the
        disk sync (a few milliseconds) per call. PostgreSQL commits as its
        server is configured.
    chain_key : bytes or path-like, default=None
        A secret key (at least 16 bytes, or a file holding it) that makes
        each agent's event chain an HMAC-SHA256 signature: agents created
        with it are signed, and verifying, resuming or writing them needs
        it. ``None`` reads the file named by ``SKRBAL_CHAIN_KEY_FILE``, else
        the value of ``SKRBAL_CHAIN_KEY``, else keeps plain SHA-256 hashes.
        See the Notes for what each mode detects.
    anchor_file : path-like, default=None
        A sidecar file the store appends each agent's head (its last
        event's number and hash) to after every commit, and that
        :meth:`verify` and :meth:`RiskBasedAgent.from_store` check: a store
        rolled back to before that head is refused. ``None`` reads
        ``SKRBAL_ANCHOR_FILE``, else keeps no sidecar.

    Attributes
    ----------
    engine : sqlalchemy.engine.Engine
        The connection pool.
    path : str or None
        The absolute path of a SQLite file, ``None`` otherwise.
    read_only : bool
        Whether the store is a SQLite file this process cannot write (or
        whose folder it cannot write): it is opened for reading only
        (``mode=ro``, or ``immutable=1`` without the WAL's ``-shm`` file);
        :meth:`status`, :meth:`history` and the other readers work, and
        opening an agent for writing raises :class:`StoreError`.
    display_url : str
        The URL, password hidden (for messages).
    anchor : AnchorFile or None
        The sidecar of ``anchor_file``.

    See Also
    --------
    RiskBasedAgent : The agent that writes to the store.

    Notes
    -----
    Opening a store creates the tables of ``skrbal.online._sql._schema`` if the
    database has none, and refuses a store of another schema version. The
    store only reads and writes data: configurations are JSON, never pickles,
    so opening a store cannot execute code. Reading methods
    (:meth:`agent_names`, :meth:`status`, :meth:`history`, :meth:`requests`)
    take no lock and work while an agent is writing.

    What the checks of :meth:`verify` (also run by
    :meth:`RiskBasedAgent.from_store`) detect, by mode:

    - the hash chain alone: any edit, deletion, insertion or reordering of
      events, blocks, requests, actions and commissioning rows, and
      counters that disagree with the log; not an edit by someone who
      recomputes every hash, and not a rollback (the newest events
      deleted with their rows and the counters set back, or an older copy
      of the database restored), since a truncated chain is whole;
    - with ``chain_key``: also edits with every hash recomputed by anyone
      without the key, and the removal of the signature; not a rollback to
      an earlier state the key signed;
    - with an anchor (``expected_head``, or ``anchor_file``): also a
      rollback to before the anchored event, and any rewrite of the events
      up to it, hashes recomputed or not; not a rollback or rewrite of the
      events after it (keep the anchor current), nor one by someone who can
      rewrite the anchor too.

    Examples
    --------
    >>> from skrbal.online import AgentStore
    >>> store = AgentStore(":memory:")
    >>> store.agent_names()
    []
    >>> store.close()
    """

    def __init__(
        self, url, *, synchronous: str = "full", chain_key=None, anchor_file=None
    ):
        if synchronous not in _SYNCHRONOUS:
            raise ValueError(
                f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}."
            )
        self._chain_key = chain_secret(chain_key)
        if anchor_file is None and os.environ.get(ANCHOR_ENV):
            anchor_file = os.environ[ANCHOR_ENV]
        self.anchor = None if anchor_file is None else AnchorFile(anchor_file)
        self.database = Database(url, synchronous)
        db = self.database
        self.engine, self.path, self.read_only = db.engine, db.path, db.read_only
        self.display_url = db.display_url
        self._writer = StoreWriter(self.database, self._chain_key, self.anchor)
        self._reader = StoreFrames(self.database, self._chain_key, self.anchor)

    @property
    def chain_keyed(self) -> bool:
        """Whether the store was opened with a chain key (``chain_key``)."""
        return self._chain_key is not None

    def chain_digest(self, data: bytes) -> str:
        """The chain hash of ``data``: an HMAC-SHA256 under the store's chain
        key when it has one (:attr:`chain_keyed`), a SHA-256 otherwise.

        For chains kept beside the agents' (a fleet budget's ledger), which
        sign with the same key and never see it.

        Parameters
        ----------
        data : bytes

        Returns
        -------
        digest : str
            64 hexadecimal digits.

        Examples
        --------
        >>> from skrbal.online import AgentStore
        >>> with AgentStore(":memory:", chain_key=b"k" * 16) as store:
        ...     store.chain_keyed, len(store.chain_digest(b"event"))
        (True, 64)
        """
        if self._chain_key is None:
            return hashlib.sha256(data).hexdigest()
        return hmac.new(self._chain_key, data, hashlib.sha256).hexdigest()

    @property
    def schema_version(self) -> int:
        """Schema version of the store (equal to the code's once opened)."""
        return self.database.schema_version

    # ------------------------------------------------------------------ #
    # reading (no lock)
    # ------------------------------------------------------------------ #
    @_named_damage
    def agent_names(self) -> list[str]:
        """Names of the agents in the store, sorted.

        Returns
        -------
        names : list of str
        """
        return self._reader.agent_names()

    @_named_damage
    def history(self, name: str) -> pd.DataFrame:
        """Every step of an agent: observation, belief, EVPI, request, action.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        history : DataFrame
            One row per step (commissioning samples first): ``step``,
            ``kind``, ``timestamp``, ``evpi``, ``belief_<label>`` per state,
            ``request_id`` and ``request_status`` (``open``, ``done``,
            ``cancelled``, missing without a request), ``label`` (once known),
            ``recommended_action`` (under the belief, or the optimal action
            for a commissioning label), ``action`` (the action taken: the one
            the user recorded, else the optimal one for the inspected state,
            else the recommended one), for an agent with inspection methods
            ``method``, ``report`` and ``posterior_<label>`` of each request
            with a result (``label`` stays missing after a report that leaves
            the state uncertain), and ``feature_<j>``.
        """
        return self._reader.history(name)

    @_named_damage
    def requests(self, name: str) -> pd.DataFrame:
        """Every inspection request of an agent, in the order they were made.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        requests : DataFrame
            ``request_id``, ``step``, ``status`` (``open``, ``done``,
            ``cancelled``), ``evpi``, ``label`` and ``action`` (the optimal
            action for the inspected state) once done, ``result_timestamp``
            and ``note`` (the reason given for a cancellation), ``origin``
            (``'agent'``, or ``'routine'`` for a label the agent did not
            request, see :meth:`RiskBasedAgent.record_label`); for an agent
            with inspection methods also ``method``, ``report`` and
            ``posterior_<label>``.
        """
        return self._reader.requests(name)

    @_named_damage
    def configuration(self, name: str) -> dict:
        """How an agent was set up, as stored (JSON values).

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        configuration : dict
            ``process`` (:meth:`skrbal.DecisionProcess.to_dict`), ``estimator`` and
            ``budget`` (their JSON descriptions: class and parameters),
            ``settings`` (``semi_supervised``, ``update``, ``em_start``,
            ``initial_state``, ``max_open_requests``), ``n_features``,
            ``feature_names``, ``created_at`` and ``skrbal_version``.
        """
        return self._reader.configuration(name)

    @_named_damage
    def events(self, name: str) -> pd.DataFrame:
        """The agent's log: every call that changed it, in order.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        events : DataFrame
            ``seq`` (1, 2, ...), ``kind`` (``commission``, ``observe``,
            ``result``, ``cancel``, ``action``, ``expire``, ``skip``: rows
            skipped after the last decided one), ``step`` (the first step of
            an ``observe``), ``request_id``, ``payload`` (dict: the budget
            state after an ``observe``, the label of a ``result``, the
            warnings its fit issued, ...), ``created_at`` (wall-clock
            seconds) and ``client_key`` (the key of a call made with one,
            else None).
        """
        return self._reader.events(name)

    @_named_damage
    def status(self, name: str) -> dict:
        """Counts, spend, open requests and labelled set of an agent.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        status : dict
            ``name``, ``n_commissioning``, ``n_observations``, ``n_requests``,
            ``n_open``, ``n_results``, ``n_cancelled``, ``inspection_cost``,
            ``spend`` (cost of the inspections with a result),
            ``committed_spend`` (including the open requests),
            ``open_requests`` (list of dicts: ``request_id``, ``step``,
            ``evpi``, ``timestamp``), ``labelled`` (dict label -> number of
            known labels, commissioning included), ``last_evpi`` (of the last
            observation, ``None`` before any), ``budget_state`` and
            ``clock`` (``'step'`` or ``'timestamp'``: the budget's time, set
            at commissioning). For an agent
            with inspection methods, ``spend`` and ``committed_spend``
            price each request at its method's cost, and ``n_inspections_by_method`` and
            ``spend_by_method`` split the results by method, as
            :func:`~skrbal.metrics.campaign_summary` does with ``methods``.
            Routine inspections (labels the agent did not request,
            :meth:`RiskBasedAgent.record_label`) are counted apart:
            ``n_routine`` and ``routine_spend`` (at their method's cost);
            the other counts and spends are the agent's requests only.
        """
        return self._reader.status(name)

    def verify(self, name: str, *, expected_head=None) -> dict:
        """Check an agent's records for damage or edits, reading only.

        Walks the agent's event chain (each event's hash follows from the
        previous one and from the agent's configuration) and checks the
        other tables against it: the commissioning rows and every block
        against the digests their events logged, each request against the
        results and cancellations logged, and the agent's counters and
        budget state against the log. :meth:`RiskBasedAgent.from_store`
        runs it before replaying. Memory: one block; time: linear in the
        agent's steps.

        Parameters
        ----------
        name : str
            The agent.
        expected_head : dict, (int, str) or str, default=None
            A head of the agent's chain kept outside the store (``seq`` and
            ``hash`` of an earlier ``verify`` or ``status``, or
            ``'SEQ:HASH'``): the chain must hold that event with that hash,
            so a store rolled back to before it, or rewritten up to it, is
            refused. The store's ``anchor_file`` is checked too.

        Returns
        -------
        head : dict
            ``seq`` and ``hash`` of the agent's last event, verified: keep
            it (a log, a monitoring system) as the next ``expected_head``.

        Raises
        ------
        StoreError
            At the first damage found, naming the agent, the table and the
            event or row; or when the chain does not meet an anchor.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import AgentStore, RiskBasedAgent
        >>> store = AgentStore(":memory:")
        >>> RiskBasedAgent(estimator=GaussianNB(), store=store,
        ...                process=synthetic_decision_process()).fit(
        ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4]).close()
        >>> store.verify("agent")["seq"]
        1
        >>> store.close()
        """
        return self._reader.verify(name, expected_head)

    # ------------------------------------------------------------------ #
    # the storage contract of a live agent (AgentStorage)
    # ------------------------------------------------------------------ #
    @_named_damage
    def load_agent(self, name: str) -> AgentRecord:
        """The record of an agent: configuration and running counters.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        record : AgentRecord
        """
        return self._reader.load_agent(name)

    def load_replay(self, name: str, *, every_step: bool) -> Replay:
        """What resuming an agent needs, read a block at a time.

        Parameters
        ----------
        name : str
            The agent.
        every_step : bool
            Whether the features of every observed step are needed (EM and
            smoothing read them all), or only of those with a request not
            cancelled.

        Returns
        -------
        replay : Replay
        """
        return self._reader.load_replay(name, every_step)

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
        if self.read_only:
            raise StoreError(
                f"store {self.path} is read-only (the file or its folder cannot "
                f"be written): agent {name!r} can be read (status, history, "
                "export) but not opened for writing."
            )
        lock = AgentLock(self.database, agent_id, name, timeout)
        try:
            self._writer.mark_owner(agent_id)
        except BaseException:
            lock.release()
            raise
        self._writer.locks[agent_id] = (lock, name)
        return lock

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
        self, agent_id: int, seq: int, request_id: int, step: int, reason, key=None
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
        """
        self._writer.record_cancel(agent_id, seq, request_id, step, reason, key)

    def record_expire(self, agent_id: int, seq: int, request_ids, steps) -> None:
        """Commit the expiry of open requests as event ``seq + 1``.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        seq : int
            The agent's last event.
        request_ids, steps : sequence of int
            The requests that expire, and their steps.
        """
        self._writer.record_expire(agent_id, seq, request_ids, steps)

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

    def find_key(self, agent_id: int, key: str):
        """The event of the call an agent made with a client key.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        key : str
            The client's key.

        Returns
        -------
        event : EventRecord or None
            With its :class:`ClientKey` (the digests of the call's inputs);
            ``None`` when no call of the agent used that key.
        """
        return self._reader.find_key(agent_id, key)

    def load_block(self, agent_id: int, first_step: int) -> ObserveBlock:
        """The steps of one stored ``observe`` call, as committed.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        first_step : int
            The call's first step.

        Returns
        -------
        block : ObserveBlock
            Its steps, its requests (with their methods) and the budget
            state after it.
        """
        return self._reader.load_block(agent_id, first_step)

    def load_steps(self, agent_id: int, steps, columns) -> dict:
        """Some per-step columns of some observed steps, a block at a time.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        steps : sequence of int
            Observed (not commissioning) steps, ascending.
        columns : sequence of str
            Among ``timestamp``, ``time``, ``features``, ``belief``,
            ``evpi``, ``action`` and ``request_id``.

        Returns
        -------
        values : dict
            Each column's values at those steps.
        """
        return self._reader.load_steps(agent_id, steps, columns)

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

    @contextmanager
    def summary(self):
        """The status queries of :func:`~skrbal.online.sqlite_summary` on this
        store's connection (any backend), inside a ``with`` block.

        Yields
        ------
        summary : AgentSummary
            Its ``status(name)``, ``configuration(name)``, ``agent_names()``
            and ``requests_in(name, status)``.

        Examples
        --------
        >>> from skrbal.online import AgentStore
        >>> with AgentStore(":memory:") as store, store.summary() as summary:
        ...     summary.agent_names()
        []
        """
        with self.engine.connect() as conn:
            yield AgentSummary(sql_rows(conn), self.display_url)

    def close(self) -> None:
        """Close the store's connections."""
        self._writer.close()
        self.database.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __deepcopy__(self, memo):
        # A store is a handle on a database, like a path: copies (sklearn's
        # clone of an agent, say) share it rather than open a second pool.
        return self

    def __repr__(self):
        return f"AgentStore({self.display_url!r})"
