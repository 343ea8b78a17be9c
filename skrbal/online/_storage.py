"""The storage contract of a live agent: what it writes and reads, as records.

A :class:`~skrbal.online.RiskBasedAgent` talks to its store only through the
methods of :class:`AgentStorage` and the frozen records below, in the spirit
of optuna's ``BaseStorage``: the agent decides, the storage keeps. The SQL
implementation is :class:`~skrbal.online.AgentStore`; another backend (a
key-value service, a test double) implements the same protocol.

Every write moves the agent from event ``seq`` to ``seq + 1`` atomically and
refuses a lost update (another writer moved it first); reads of one agent
return what one committed state holds.

What a store keeps is covered by the agent's event chain (``verify``), by
one rule: **every value the agent, its history, status, export or report
reads is either in the chain or derived from what is**. In the chain: the
events (kind, step, request, payload, time, client key) and, through the
genesis, the configuration (process, estimator, budget, settings,
features); through digests in the events, the bytes of every block and the
commissioning rows; through the commission event (agents created since this
rule), the agent's name, creation time, version and fingerprints. Derived
and checked: the counters (steps, requests, last event), the budget state
(the last observe event's), the clock (from the commissioning timestamps),
each request (its step, EVPI, opening event and method from the block and
observe event that made it; its status, closing event, label, action,
result time, report, posterior, origin and note from the result,
cancellation or expiry logged), the actions taken (the action events), and
the fixed columns of commissioning rows and blocks (``seq``, ``kind``, no
belief, taken action or request for a commissioning step). Not covered, because
nothing reads it for a decision or a display of the agent: the ``owner``
of the write lock (a message's hint) and the agent's ``agent_id`` (the key
itself). Events logged before this rule was stated carry no
methods, result times or agent record: those columns of older rows are not
covered. ``tests/test_online_store_hostile.py`` edits each column of each
table in turn, and deletes and inserts a row of each, on each backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from skrbal.exceptions import StoreError
from skrbal.online._records import (
    AgentRecord,
    Commissioning,
    EventRecord,
    ObserveBlock,
    Replay,
    ResultRecord,
)

if TYPE_CHECKING:  # only named in a signature: reading a store needs no pandas
    import pandas as pd

__all__ = ["AgentStorage", "StoreError"]


@runtime_checkable
class AgentStorage(Protocol):
    """What a live agent needs from its store: the storage contract.

    Writes take the agent's key and the event number ``seq`` the agent last
    saw, commit atomically as event ``seq + 1``, and raise
    :class:`StoreError` if another writer moved the agent first.
    ``tests/test_online_contract.py`` runs the same calls on every
    implementation and requires the same answers.

    Attributes
    ----------
    display_url : str
        The store's name in messages (no password).
    keeps_snapshots : bool
        Whether the store keeps the model's snapshot after a call in the
        call's event (the ``snapshot`` of :class:`Commissioning`,
        :class:`ObserveBlock`, :class:`ResultRecord` and of
        :meth:`record_cancel` and :meth:`record_expire`), for a driver that
        decides without the model (issue 28.25). The agent builds none for
        a store that keeps none.

    See Also
    --------
    AgentStore : The SQL implementation (SQLite or PostgreSQL).
    InMemoryAgentStore : The implementation in memory.

    Examples
    --------
    >>> from skrbal.online import AgentStorage, AgentStore
    >>> with AgentStore(":memory:") as store:
    ...     print(isinstance(store, AgentStorage))
    True
    """

    display_url: str
    keeps_snapshots: bool

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

    def lock_agent(self, agent_id: int, name: str, timeout: float = 0.0):
        """Exclusive write access to an agent (``release()`` ends it)."""

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

    def load_replay(self, name: str, *, every_step: bool) -> Replay:
        """What resuming an agent needs, read in bounded memory.

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

    def append_observe(self, agent_id: int, seq: int, block: ObserveBlock) -> None:
        """Commit the steps, requests and budget state of one ``observe`` call.

        Parameters
        ----------
        agent_id, seq : int
            The agent's key, and its last event: the block becomes event
            ``seq + 1``.
        block : ObserveBlock
            The call's steps and requests.

        Raises
        ------
        StoreError
            When another writer moved the agent past ``seq``, or the call's
            client key is stored already.
        """

    def record_result(self, agent_id: int, seq: int, result: ResultRecord) -> None:
        """Commit the result of an inspection request as event ``seq + 1``.

        Parameters
        ----------
        agent_id, seq : int
            The agent's key, and its last event.
        result : ResultRecord
            The result (with its ``origin``: a routine inspection, a request
            made and done in this event).
        """

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
        agent_id, seq : int
            The agent's key, and its last event.
        request_id, step : int
            The request and its step.
        reason : str or None
            Kept with the request.
        key : ClientKey, default=None
            The client's key of the call, if it gave one.
        snapshot : dict, default=None
            The model's snapshot after the event (a store that keeps them
            stores it in the event).
        """

    def record_expire(
        self, agent_id: int, seq: int, request_ids, steps, snapshot=None
    ) -> None:
        """Commit the expiry of open requests as event ``seq + 1``.

        Their results are still taken.

        Parameters
        ----------
        agent_id, seq : int
            The agent's key, and its last event.
        request_ids, steps : sequence of int
            The requests that expire, and their steps.
        snapshot : dict, default=None
            The model's snapshot after the event (a store that keeps them
            stores it in the event).
        """

    def record_action(
        self, agent_id: int, seq: int, step: int, action: int, key=None
    ) -> None:
        """Commit the action the user took at a step as event ``seq + 1``.

        Parameters
        ----------
        agent_id, seq : int
            The agent's key, and its last event.
        step : int
            The step.
        action : int
            The action's index.
        key : ClientKey, default=None
            The client's key of the call, if it gave one.
        """

    def record_skipped(self, agent_id: int, seq: int, skipped, key=None) -> None:
        """Commit rows skipped after the last decided row as event ``seq + 1``.

        An event of kind ``skip`` with no block and no step, its payload's
        ``skipped`` list as an ``observe`` event's (28.21).

        Parameters
        ----------
        agent_id, seq : int
            The agent's key, and its last event.
        skipped : tuple of SkippedRow
            The rows, not empty.
        key : ClientKey, default=None
            The client's key of the call, if it gave one.
        """

    def find_key(self, agent_id: int, key: str) -> EventRecord | None:
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
            ``None`` when no call of the agent used that key.
        """

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

    def load_steps(self, agent_id: int, steps, columns) -> dict:
        """Some per-step columns of some observed steps.

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
            One array per column, in the order of ``steps``.
        """

    def status(self, name: str) -> dict:
        """Counts, spend, open requests, labelled set and last EVPI."""

    def history(self, name: str) -> pd.DataFrame:
        """Every step of the agent."""

    def requests(self, name: str) -> pd.DataFrame:
        """Every inspection request of the agent."""

    def close(self) -> None:
        """Release what the store holds (connections)."""
