"""An agent that observes from its stored snapshot, without the model (issue 28.25).

:class:`SnapshotAgent` runs the same ``observe`` as
:class:`~skrbal.online.RiskBasedAgent` (it inherits
:class:`~skrbal.online._agent_observe.ObserveCalls`: keys, expiry, the stall
report, the commit), over a :class:`SnapshotCampaign` that decides from the
latest snapshot the store's chain covers instead of from the model: the
beliefs from the model's Student-t predictive, the value of the pending
results from the fantasised copies' stacked predictive, with the process's
tables, the budget's rule, the kernel and a
:class:`~skrbal._learning._decision_state.DecisionState`. It imports neither
scikit-learn nor pandas, so ``skrbal agent observe`` starts in a fraction of
the time.

It applies to the agents the snapshot decides (:func:`snapshot_agent`): no
inspection methods, a budget :func:`~skrbal.budget.scan_rule` knows, and a
snapshot of the current model whose fantasised requests are the open ones now.
A call that would change the fantasised requests (a request opened while fewer
than 32 are fantasised, an expiry among them) needs the model to learn the new
fantasies: it raises :class:`NeedsModel` before writing anything, and the
caller observes with the full agent instead.
"""

from __future__ import annotations

import json

import numpy as np

from skrbal._decision import ProcessTables, process_from_dict
from skrbal._learning import (
    MAX_FANTASISED,
    SNAPSHOT_VERSION,
    BlockFantasies,
    DecisionKernel,
    DecisionState,
    Request,
    RequestBook,
)
from skrbal._predictive import PredictiveClassifier, StudentTPredictive
from skrbal.budget import scan_rule
from skrbal.exceptions import NeedsModel, StoreError
from skrbal.online._agent_observe import ObserveCalls
from skrbal.online._idempotency import CallKeys
from skrbal.online._repeats import RecentRows

__all__ = ["SnapshotAgent", "SnapshotCampaign", "snapshot_agent"]


class _Steps:
    """The steps a snapshot campaign keeps: their count (the store keeps them)."""

    def __init__(self, n_steps: int):
        self.n_steps = n_steps

    def extend(self, X, action, y=None, keep=()) -> None:
        """Count the steps decided (a retried call's decide none)."""
        self.n_steps += X.shape[0]


class SnapshotCampaign:
    """The part of a :class:`~skrbal._learning.Campaign` that ``observe`` uses,
    deciding from a snapshot of the model.

    Parameters
    ----------
    decisions : DecisionState
        The requests, the budget's state and the kernel, as stored.
    snapshot : dict
        The snapshot (:func:`~skrbal._learning._snapshot.snapshot_value`).
    process : ProcessTables
        The decision's tables.
    pending_value : {'fantasy', 'ignore'}
        Whether a request's value counts the pending results.
    n_steps : int, default=0
        The agent's steps so far.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._learning._snapshot import snapshot_value
    >>> from skrbal.mixture import BayesianGMMClassifier
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal._learning._decision_state import DecisionState
    >>> from skrbal._learning._kernel import DecisionKernel
    >>> from skrbal.budget._rules import CostThresholdRule
    >>> process = synthetic_decision_process()
    >>> model = BayesianGMMClassifier().fit([[-1.5], [-0.5], [0.5], [1.5]] * 2,
    ...                                     [1, 2, 3, 4] * 2)
    >>> state = DecisionState(DecisionKernel(process, None, CostThresholdRule()))
    >>> state.start()
    >>> campaign = SnapshotCampaign(state, snapshot_value(model), process, "fantasy")
    >>> X = np.array([[0.7]])
    >>> bool(np.array_equal(campaign.beliefs(X), model.predict_proba(X)))
    True
    """

    def __init__(self, decisions, snapshot, process, pending_value, n_steps=0):
        self.decisions, self.process = decisions, process
        self.pending_value = pending_value
        self.model = PredictiveClassifier(
            StudentTPredictive.from_json(snapshot["model"]), snapshot["classes"]
        )
        held = snapshot.get("fantasies", {})
        self.pending = list(held.get("pending", []))
        self._weights = self._stacked = None
        if held.get("weights") is not None:
            self._weights = np.asarray(held["weights"], dtype=np.float64)
            self._stacked = StudentTPredictive.from_json(held["predictive"])
        self.steps = _Steps(n_steps)
        self.keeps_snapshots = True

    def current(self) -> bool:
        """Whether the snapshot's fantasised requests are those open now."""
        if self.pending_value != "fantasy":
            return True
        return self.pending == self.requests.oldest_open(MAX_FANTASISED)

    def beliefs(self, X, *, step=None) -> np.ndarray:
        """The model's beliefs over ``X`` (:meth:`Campaign.beliefs`)."""
        return self.decisions.kernel.beliefs(self.model, X)

    def decide(self, X, proba, times, *, commit=None):
        """Decide a block as :meth:`Campaign.decide` does, from the snapshot."""
        fantasies = None
        if self.requests.n_open and self.pending_value == "fantasy":
            if self._weights is not None:
                fantasies = BlockFantasies(
                    self._weights, (), X, self.process, self._stacked.proba
                )
        return self.decisions.decide(proba, times, fantasies=fantasies, commit=commit)

    def snapshot_after(self, *, model=None, closed=(), opened=()):
        """``None`` when the call keeps the fantasised requests; else
        :class:`NeedsModel` (their copies must learn from the model)."""
        if self.pending_value != "fantasy":
            return None
        ids = [int(i) for i, _ in opened]
        before, after = self.decisions.fantasised(MAX_FANTASISED, closed, ids)
        if after != before:
            raise NeedsModel("the call changes the fantasised requests")
        return None

    def keep_snapshot(self, after) -> None:
        """Nothing to keep: :meth:`snapshot_after` never builds one."""

    def open_requests(self, first, decided, proba, times):
        """:meth:`DecisionState.open_requests`."""
        return self.decisions.open_requests(first, decided, proba, times)

    def next_request_ids(self, decided) -> np.ndarray:
        """:meth:`DecisionState.next_request_ids`."""
        return self.decisions.next_request_ids(decided)

    def stall_report(self, n_blocked: int) -> int:
        """:meth:`DecisionState.stall_report`."""
        return self.decisions.stall_report(n_blocked)

    def overdue(self, now: float) -> list[int]:
        """:meth:`DecisionState.overdue`."""
        return self.decisions.overdue(now)

    def expire(self, ids) -> None:
        """:meth:`DecisionState.expire`."""
        self.decisions.expire(ids)

    @property
    def requests(self) -> RequestBook:
        """The requests (:attr:`DecisionState.requests`)."""
        return self.decisions.requests


class SnapshotAgent(ObserveCalls):
    """A stored agent that observes from its snapshot, without its model.

    The same :meth:`observe` as :class:`RiskBasedAgent` (the same class
    runs it), deciding from the latest snapshot of the model the store's
    chain covers (issue 28.25); its decisions come as arrays
    (``output='arrays'``). Build one with :func:`snapshot_agent`; it holds
    the agent's write lock until :meth:`close`. A call that needs the model
    raises :class:`NeedsModel` having written nothing.

    Parameters
    ----------
    store : AgentStore
        The store.
    record : AgentRecord
        The agent, read under its lock.
    live : LiveState
        Its requests, last time and EVPI, and snapshot.
    campaign : SnapshotCampaign
        The decisions' state, deciding from the snapshot.
    lock : AgentLock
        The agent's write lock, held.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.mixture import BayesianGMMClassifier
    >>> from skrbal.online import AgentStore, RiskBasedAgent, snapshot_agent
    >>> store = AgentStore(":memory:")
    >>> RiskBasedAgent(estimator=BayesianGMMClassifier(), store=store,
    ...                process=synthetic_decision_process()).fit(
    ...     [[-1.5], [-0.5], [0.5], [1.5]] * 2, [1, 2, 3, 4] * 2).close()
    >>> agent = snapshot_agent(store, "agent")
    >>> agent.observe([[-1.4]])["step"], agent.n_steps_
    (array([8]), 9)
    >>> agent.close()
    >>> store.close()
    """

    def __init__(self, store, record, live, campaign, lock):
        settings = record.settings
        self.store_, self._lock, self._campaign = store, lock, campaign
        self.name, self.agent_id_ = record.name, record.agent_id
        self.process = campaign.process
        self.classes_ = np.asarray(self.process.classes_)
        self.inspections = None
        self.request_timeout = settings.get("request_timeout")
        self.max_open_requests = settings.get("max_open_requests")
        self.n_features_in_ = record.n_features
        names = record.feature_names
        self.feature_names_in_ = None if names is None else np.asarray(names, object)
        self._clock, self._seq = record.clock, record.last_seq
        self._keys = CallKeys(store, record.agent_id, record.name)
        self._recent = RecentRows(store, record.agent_id, live.n_commissioning)
        self._last_time, self.last_evpi_ = live.last_time, live.last_evpi

    def observe(self, X, timestamps=None, *, key=None, skipped=None, output="arrays"):
        """:meth:`RiskBasedAgent.observe`, as arrays (``output='arrays'``)."""
        if output != "arrays":
            raise ValueError("a snapshot agent returns arrays: output='arrays'.")
        return super().observe(X, timestamps, key=key, skipped=skipped, output=output)

    def status(self) -> dict:
        """The agent's status, as the store reads it (:meth:`AgentStore.status`)."""
        return self.store_.status(self.name)

    @property
    def n_steps_(self) -> int:
        """Steps so far, commissioning samples included."""
        return self._campaign.steps.n_steps

    def _check_open(self):
        if not self._lock.held:
            raise StoreError(f"agent {self.name!r} is not open.")

    def close(self) -> None:
        """Release the agent's write lock."""
        self._lock.release()


def _rule(text):
    """The numpy-only rule of a stored budget policy, or ``None`` (not one)."""
    return scan_rule(None if text is None else json.loads(text))


def snapshot_agent(store, name: str, lock_timeout: float = 0.0):
    """The agent ``name`` of ``store`` observing from its snapshot, or ``None``.

    ``None`` (observe with :class:`~skrbal.online.RiskBasedAgent`) unless
    the snapshot decides it: a snapshot of the current model (version
    ``skrbal._learning.SNAPSHOT_VERSION``) whose fantasised
    requests are the open ones, no inspection methods, no history prior, and
    a budget of a kind it decides (CostThreshold, SpendCap, MinimumGap,
    PacedBudget, or none). The chain is verified first, as
    a resumed agent's is, so a store the full path refuses is refused here
    with the same error.

    Parameters
    ----------
    store : AgentStore
        The store (a SQLite file, say).
    name : str
        The agent's name.
    lock_timeout : float, default=0.0
        Seconds to wait for the agent's write lock.

    Returns
    -------
    agent : SnapshotAgent or None
        Holding the agent's write lock; ``None`` when the snapshot does not
        decide the agent.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import AgentStore, RiskBasedAgent, snapshot_agent
    >>> store = AgentStore(":memory:")
    >>> RiskBasedAgent(estimator=GaussianNB(), store=store,
    ...                process=synthetic_decision_process()).fit(
    ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4]).close()
    >>> snapshot_agent(store, "agent") is None  # GaussianNB: no snapshot
    True
    >>> store.close()
    """
    record = store.load_agent(name)
    settings = record.settings
    if (
        settings.get("inspections") is not None
        or settings.get("history_prior", 0.0)
        or settings.get("follow_up", False)
    ):
        return None
    rule = _rule(record.budget)
    if rule is None:
        return None
    lock = store.lock_agent(record.agent_id, name, lock_timeout)
    try:
        live = store.load_live(name)
        event = live.snapshot
        snapshot = None if event is None else event.payload["snapshot"]
        if snapshot is None or snapshot.get("version") != SNAPSHOT_VERSION:
            lock.release()
            return None
        record = live.agent  # read under the lock
        process = process_from_dict(ProcessTables, json.loads(record.process))
        kernel = DecisionKernel(
            process, None, rule, settings.get("max_open_requests"), False
        )
        decisions = DecisionState(kernel, settings.get("request_timeout"))
        decisions.budget_state = dict(record.budget_state)
        book = decisions.requests = RequestBook(record.n_requests)
        for r in live.requests:  # as a resumed agent loads them
            book.load(r.request_id, Request(r.step, r.status, 0, r.belief, r.time))
        campaign = SnapshotCampaign(
            decisions,
            snapshot,
            process,
            settings.get("pending_value", "fantasy"),
            record.n_steps,
        )
        if not campaign.current():
            lock.release()
            return None
        return SnapshotAgent(store, record, live, campaign, lock)
    except BaseException:
        if lock.held:
            lock.release()
        raise
