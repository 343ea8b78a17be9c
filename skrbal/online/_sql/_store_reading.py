"""The reading side of an agent store: every reader, none taking a lock.

:class:`AgentStoreReading` holds the public readers of
:class:`~skrbal.online.AgentStore` (its history, requests, configuration,
events, status, summary and verification, and what resuming an agent
reads), each a call on the :class:`~._frames.StoreFrames` it owns; the store
inherits them, so their documentation is the store's.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy.exc import DatabaseError

from skrbal.online._records import AgentRecord, ObserveBlock, Replay
from skrbal.online._sql._frames import StoreFrames
from skrbal.online._storage import StoreError

if TYPE_CHECKING:  # frames are made in _frames: a status needs no pandas
    import pandas as pd

__all__ = ["AgentStoreReading"]


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


class AgentStoreReading:
    """The readers of an :class:`~skrbal.online.AgentStore`, taking no lock.

    Parameters
    ----------
    database : Database
        The store's database.
    chain_key : bytes or None
        The secret of the event chain (None: plain SHA-256).
    anchor : AnchorFile or None
        The sidecar of the agents' heads, checked by :meth:`verify`.

    See Also
    --------
    AgentStore : The store, which is its readers and its writers.
    """

    def __init__(self, database, chain_key, anchor):
        self._reader = StoreFrames(database, chain_key, anchor)

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

    def load_snapshot(self, name: str):
        """The latest event holding the snapshot of the agent's current model.

        The chain is verified first, as for a resumed agent, so the snapshot
        read is one the chain covers. The snapshot
        (``Campaign.snapshot_after``) is the
        event's ``payload["snapshot"]``: the model's predictive after the
        event and the fantasised requests of then.

        Parameters
        ----------
        name : str
            The agent's name.

        Returns
        -------
        event : EventRecord or None
            ``None`` when the model changed after the last snapshot, the
            agent has none (a store written before snapshots, a model without
            one), or its owner recorded an action (a repair may weigh in
            every later belief).

        Raises
        ------
        StoreError
            When the chain does not verify.
        """
        return self._reader.load_snapshot(name)

    def load_live(self, name: str):
        """What deciding the agent's next block needs, without the model.

        The chain is verified first, as for a resumed agent.

        Parameters
        ----------
        name : str
            The agent's name.

        Returns
        -------
        live : LiveState
            The agent, its requests, its last time and EVPI, and the latest
            snapshot of its model (:meth:`load_snapshot`).

        Raises
        ------
        StoreError
            When the chain does not verify.
        """
        return self._reader.load_live(name)

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
        with self._reader.summary() as summary:
            yield summary
