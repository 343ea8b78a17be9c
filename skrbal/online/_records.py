"""The records a live agent and its store exchange: frozen values, checked.

Each write and read of :class:`~skrbal.online.AgentStorage` takes or returns
these records (an agent, its commissioning steps, a block of observations, a
result, an event, a resume's replay); the storages turn them into rows and
back. What the event chain covers of them is stated with the protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skrbal._lazy import numpy as np  # imported when first used

__all__ = [
    "AgentRecord",
    "ClientKey",
    "Commissioning",
    "EventRecord",
    "LiveState",
    "ObserveBlock",
    "Replay",
    "RequestRecord",
    "ResultRecord",
    "SkippedRow",
]


@dataclass(frozen=True)
class AgentRecord:
    """An agent as stored: its configuration and its running counters.

    Parameters
    ----------
    name : str
        The agent's name, unique in its store.
    process : str
        JSON text of the decision process (``DecisionProcess.to_dict``).
    estimator, budget : str
        Canonical JSON of the estimator's and budget policy's configuration.
    estimator_fingerprint, budget_fingerprint : str
        SHA-256 of those JSON texts.
    settings : dict
        The agent's other parameters (``semi_supervised``, ``update``, ...).
    n_features : int
        Features per observation.
    feature_names : tuple of str or None
        Column names of the commissioning data.
    clock : {'step', 'timestamp'}
        What the budget policy counts time in.
    n_steps, n_requests, last_seq : int
        Steps so far, requests made, and the last event's number.
    budget_state : dict
        The budget policy's running state.
    created_at : float
        Wall-clock seconds of the commissioning.
    skrbal_version : str
        The version of skrbal that created the agent.
    agent_id : int or None, default=None
        The agent's key in its store (``None`` before it is created).

    Examples
    --------
    >>> from skrbal.online import AgentStore, RiskBasedAgent
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> store = AgentStore(":memory:")
    >>> RiskBasedAgent(estimator=GaussianNB(), store=store,
    ...                process=synthetic_decision_process()).fit(
    ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4]).close()
    >>> record = store.load_agent("agent")
    >>> record.n_steps, record.clock, record.last_seq
    (4, 'step', 1)
    >>> store.close()
    """

    name: str
    process: str
    estimator: str
    estimator_fingerprint: str
    budget: str
    budget_fingerprint: str
    settings: Mapping[str, Any]
    n_features: int
    feature_names: tuple | None
    clock: str
    n_steps: int
    n_requests: int
    last_seq: int
    budget_state: Mapping[str, Any]
    created_at: float
    skrbal_version: str
    agent_id: int | None = None


@dataclass(frozen=True)
class ClientKey:
    """The client's key of an idempotent call, and what its inputs were.

    A call made with a key is stored with it; the same call retried with
    the same key returns the stored answer instead of acting again (see
    :meth:`RiskBasedAgent.observe`).

    Parameters
    ----------
    key : str
        The client's key, unique per agent.
    digest : dict
        SHA-256 (hex) of each input of the call, by the input's name
        (``X``, ``timestamps``, ``label``, ...): a retry must match them.

    Examples
    --------
    >>> from skrbal.online import ClientKey
    >>> ClientKey("batch-7", {"X": "ab12"}).key
    'batch-7'
    """

    key: str
    digest: Mapping[str, str]


@dataclass(frozen=True)
class Commissioning:
    """The commissioning steps of a new agent: its first steps, 0 to n - 1.

    Parameters
    ----------
    features : ndarray of shape (n, n_features)
        Their features.
    labels : ndarray of shape (n,)
        Their labels, states of the process.
    actions : ndarray of shape (n,)
        The optimal action for each label.
    evpi : ndarray of shape (n,)
        The EVPI of the initial model at each step.
    times : ndarray of shape (n,)
        What the budget policy saw as their times.
    timestamps : ndarray of shape (n,) or None
        Their timestamps (seconds), if given.
    warnings : tuple of str, default=()
        The warnings the initial fit issued.
    belief : ndarray of shape (n, n_states) or None, default=None
        The initial model's belief at each step (what its EVPI was computed
        from), shown by the history like every later step's.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.online import Commissioning
    >>> steps = Commissioning(features=np.zeros((2, 1)), labels=np.array([1, 2]),
    ...                       actions=np.array([0, 0]), evpi=np.zeros(2),
    ...                       times=np.arange(2.0), timestamps=None)
    >>> len(steps.labels)
    2
    """

    features: np.ndarray
    labels: np.ndarray
    actions: np.ndarray
    evpi: np.ndarray
    times: np.ndarray
    timestamps: np.ndarray | None
    warnings: tuple = ()
    belief: np.ndarray | None = None
    snapshot: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RequestRecord:
    """An inspection request.

    Parameters
    ----------
    request_id : int
        Its number (1, 2, ... in the order requests were made).
    step : int
        The step to inspect.
    evpi : float, default=nan
        The value (EVPI, or the method's EVSI) that made it.
    method : str or None, default=None
        The inspection method's name (``None``: the process's perfect one).
    status : {'open', 'done', 'cancelled', 'expired'}, default='open'
        Where it stands. An expired request waited past the agent's
        ``request_timeout``: it no longer holds a slot, but its result is
        still taken.
    belief : ndarray or None, default=None
        The belief at its step, kept while it is open or expired (a report's
        posterior is computed from it).
    time : float or None, default=None
        The time (step or timestamp) the budget saw at its step, kept while
        it is open (its age decides its expiry).

    Examples
    --------
    >>> from skrbal.online import RequestRecord
    >>> RequestRecord(request_id=1, step=9, evpi=7.7).status
    'open'
    """

    request_id: int
    step: int
    evpi: float = float("nan")
    method: str | None = None
    status: str = "open"
    belief: np.ndarray | None = None
    time: float | None = None


@dataclass(frozen=True)
class SkippedRow:
    """A row the caller left out of an ``observe`` call for a missing value.

    A sensor dropout leaves a row with no value in some feature; the caller
    (``skrbal agent observe --skip-missing``) skips it rather than stop the
    batch, and the call records it with its block, in the same event (the
    ``skipped`` list of the ``observe`` event's payload): it is in the chain,
    counted by ``status`` (``n_skipped``) and shown by ``export --table
    events``. It has no step and is not decided.

    Parameters
    ----------
    row : int
        Its place in the caller's input (the command: the file's line).
    columns : tuple of str
        The features that had no value.
    time : str or None, default=None
        Its time as the input gave it, if any.

    Examples
    --------
    >>> from skrbal.online import SkippedRow
    >>> SkippedRow.checked([(7, ["f1"], "2026-01-02T00:00Z")])
    (SkippedRow(row=7, columns=('f1',), time='2026-01-02T00:00Z'),)
    """

    row: int
    columns: tuple
    time: str | None = None

    @classmethod
    def checked(cls, skipped) -> tuple:
        """Skipped rows given as records or ``(row, columns[, time])`` tuples.

        Parameters
        ----------
        skipped : iterable of SkippedRow or tuple, or None

        Returns
        -------
        rows : tuple of SkippedRow

        Raises
        ------
        ValueError
            For a row that is not a non-negative integer, no column named,
            or a time that is not text.
        """
        rows = []
        for item in skipped or ():
            row = item if isinstance(item, cls) else cls(*item)
            number, columns = row.row, tuple(str(c) for c in row.columns)
            if isinstance(number, bool) or not isinstance(number, (int, np.integer)):
                raise ValueError(f"skipped: row {number!r} is not an integer")
            if number < 0 or not columns:
                raise ValueError(
                    f"skipped: row {number} needs a non-negative number and the "
                    "columns without a value"
                )
            if row.time is not None and not isinstance(row.time, str):
                raise ValueError(f"skipped: the time of row {number} is not text")
            rows.append(cls(int(number), columns, row.time))
        return tuple(rows)

    @classmethod
    def from_payload(cls, records) -> tuple:
        """The ``skipped`` list of an ``observe`` event's payload, checked.

        Parameters
        ----------
        records : list of dict
            As :meth:`as_json` makes them.

        Returns
        -------
        rows : tuple of SkippedRow

        Raises
        ------
        ValueError
            For anything else (the store was edited or damaged).
        """
        if not isinstance(records, list) or not all(
            isinstance(r, dict)
            and sorted(r) == ["columns", "row", "time"]
            and isinstance(r["columns"], list)
            and all(isinstance(c, str) for c in r["columns"])
            for r in records
        ):
            raise ValueError("skipped: not a list of {row, columns, time}")
        return cls.checked((r["row"], r["columns"], r["time"]) for r in records)

    def as_json(self) -> dict:
        """The row as the ``observe`` event's payload lists it."""
        return {"row": self.row, "columns": list(self.columns), "time": self.time}


@dataclass(frozen=True)
class ObserveBlock:
    """The steps of one ``observe`` call, its requests and the state after.

    Parameters
    ----------
    first_step : int
        The step of the first row.
    times : ndarray of shape (n,)
        What the budget policy saw as their times.
    timestamps : ndarray of shape (n,) or None
        Their timestamps, if given.
    features : ndarray of shape (n, n_features)
    belief : ndarray of shape (n, n_states)
    evpi : ndarray of shape (n,)
    action : ndarray of shape (n,)
        The recommended action at each step.
    request_ids : ndarray of shape (n,)
        The request made at each step, 0 for none.
    requests : tuple of RequestRecord
        The requests made, in order.
    budget_state : dict
        The budget policy's state after the call.
    clock : {'step', 'timestamp'}
        What the budget policy counts time in.
    key : ClientKey or None, default=None
        The client's key of the call, if it gave one.
    skipped : tuple of SkippedRow, default=()
        The rows the caller left out for a missing value (recorded with the
        block, in its event).
    snapshot : dict or None, default=None
        What deciding the next block needs of the model after the call
        (``Campaign.snapshot_after``), kept
        in its event's payload so that the chain covers it; ``None`` when
        the call changes neither the model nor the fantasised requests, or
        the model has none.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.online import ObserveBlock
    >>> block = ObserveBlock(first_step=4, times=np.array([4.0]), timestamps=None,
    ...                      features=np.zeros((1, 1)), belief=np.ones((1, 1)),
    ...                      evpi=np.zeros(1), action=np.zeros(1, int),
    ...                      request_ids=np.zeros(1, int), requests=(),
    ...                      budget_state={}, clock="step")
    >>> block.n_steps
    1
    """

    first_step: int
    times: np.ndarray
    timestamps: np.ndarray | None
    features: np.ndarray
    belief: np.ndarray
    evpi: np.ndarray
    action: np.ndarray
    request_ids: np.ndarray
    requests: tuple
    budget_state: Mapping[str, Any]
    clock: str
    key: ClientKey | None = None
    skipped: tuple = ()
    snapshot: Mapping[str, Any] | None = None

    @property
    def n_steps(self) -> int:
        """Number of steps in the block."""
        return int(self.features.shape[0])


@dataclass(frozen=True)
class ResultRecord:
    """The result of an inspection request.

    Parameters
    ----------
    request_id, step : int
        The request and its step.
    label : label or None
        The state found; ``None`` for a report that leaves it uncertain.
    action : int
        The optimal action for that state (or under the posterior).
    timestamp : float or None, default=None
        When the result came.
    warnings : tuple of str, default=()
        The warnings learning it issued.
    report : outcome or None, default=None
        The inspection method's report (with inspection methods).
    posterior : tuple of float or None, default=None
        The posterior over the states after the report.
    key : ClientKey or None, default=None
        The client's key of the call, if it gave one.
    origin : {None, 'routine'}, default=None
        ``None``: the result of the agent's request ``request_id``;
        ``'routine'``: a label the agent did not request, stored as request
        ``request_id`` (a new one) made and done in this one event.
    evpi : float or None, default=None
        With ``origin='routine'``: the EVPI of the step when observed.
    method : str or None, default=None
        With ``origin='routine'``: the inspection method's name (``None``:
        the process's perfect inspection).
    snapshot : dict or None, default=None
        What deciding the next block needs of the model after learning the
        result (``Campaign.snapshot_after``),
        kept in its event's payload so that the chain covers it; ``None``
        when the model has none.

    Examples
    --------
    >>> from skrbal.online import ResultRecord
    >>> ResultRecord(request_id=1, step=9, label=3, action=0).timestamp is None
    True
    """

    request_id: int
    step: int
    label: Any
    action: int
    timestamp: float | None = None
    warnings: tuple = ()
    report: Any = None
    posterior: tuple | None = None
    key: ClientKey | None = None
    origin: str | None = None
    evpi: float | None = None
    method: str | None = None
    snapshot: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class EventRecord:
    """One entry of an agent's log.

    Parameters
    ----------
    seq : int
        Its number (1, 2, ...).
    kind : {'commission', 'observe', 'result', 'cancel', 'action', 'expire', 'skip'}
        The call it records (``'expire'``: requests that waited past
        ``request_timeout``; ``'skip'``: rows skipped after the input's last
        decided row, with no block of their own).
    step : int or None
        The step it concerns (the first of an ``observe``).
    request_id : int or None
        The request it concerns.
    payload : dict
        What else it recorded (a result's label, an action, ...).
    key : ClientKey or None, default=None
        The client's key of the call, if it gave one.

    Examples
    --------
    >>> from skrbal.online import EventRecord
    >>> EventRecord(seq=3, kind="action", step=5, request_id=None,
    ...             payload={"action": 1}).payload["action"]
    1
    """

    seq: int
    kind: str
    step: int | None
    request_id: int | None
    payload: Mapping[str, Any]
    key: ClientKey | None = None


@dataclass(frozen=True)
class Replay:
    """What resuming an agent needs, read from its store.

    Parameters
    ----------
    agent : AgentRecord
        The agent as stored.
    steps : ndarray of shape (n,)
        The steps whose features are given: every commissioning step, then
        every observed step, or only those with a request not cancelled.
    n_commissioning : int
        How many of ``steps`` are commissioning steps (the first ones).
    features : ndarray of shape (n, n_features)
    actions : ndarray of shape (n,)
        The recommended (commissioning: optimal) action at each step.
    labels : list
        The commissioning labels.
    events : tuple of EventRecord
        The ``result`` and ``action`` events, in order.
    requests : tuple of RequestRecord
        Every request, open ones with their belief.
    last_time : float
        The time the budget saw at the last step.
    last_evpi : float or None
        The EVPI of the last observation (``None`` before any).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import AgentStore, RiskBasedAgent
    >>> store = AgentStore(":memory:")
    >>> RiskBasedAgent(estimator=GaussianNB(), store=store,
    ...                process=synthetic_decision_process()).fit(
    ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4]).close()
    >>> replay = store.load_replay("agent", every_step=False)
    >>> replay.n_commissioning, replay.labels, replay.last_evpi
    (4, [1, 2, 3, 4], None)
    >>> store.close()
    """

    agent: AgentRecord
    steps: np.ndarray
    n_commissioning: int
    features: np.ndarray
    actions: np.ndarray
    labels: list
    events: tuple
    requests: tuple
    last_time: float
    last_evpi: float | None


@dataclass(frozen=True)
class LiveState:
    """What deciding an agent's next block needs of its store, without the model.

    A :class:`Replay` without the steps and the events, with the snapshot
    of the model instead (issue 28.25).

    Parameters
    ----------
    agent : AgentRecord
        The agent.
    n_commissioning : int
        Its commissioning steps.
    requests : tuple of RequestRecord
        Every request, as :class:`Replay` has them.
    last_time : float
        The time of the last step.
    last_evpi : float or None
        The EVPI of the last observation.
    snapshot : EventRecord or None
        The latest event holding the snapshot of the current model
        (``payload["snapshot"]``), or ``None``.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import AgentStore, RiskBasedAgent
    >>> store = AgentStore(":memory:")
    >>> RiskBasedAgent(estimator=GaussianNB(), store=store,
    ...                process=synthetic_decision_process()).fit(
    ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4]).close()
    >>> live = store.load_live("agent")
    >>> live.n_commissioning, live.snapshot  # GaussianNB has no snapshot
    (4, None)
    >>> store.close()
    """

    agent: AgentRecord
    n_commissioning: int
    requests: tuple
    last_time: float
    last_evpi: float | None
    snapshot: EventRecord | None
