"""Starting a live agent: commissioning it in a store, or resuming it from one.

The part of :class:`~skrbal.online.RiskBasedAgent` that makes its campaign
and opens its store; the live calls are in :mod:`skrbal.online._agent` and
:mod:`skrbal.online._agent_calls`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array

from skrbal._datetimes import carry_utc_offsets
from skrbal._learning import (
    Campaign,
    CampaignParams,
    Request,
    RequestBook,
    check_learnable,
    warning_texts,
)
from skrbal.exceptions import (
    UncommissionedStatesWarning,
    UnlabelledClassesWarning,
    caller_stacklevel,
)
from skrbal.online._commissioning import (
    checked_labels,
    data_prior_pinned,
    leading,
    missing_labels,
    rows_of,
)
from skrbal.online._config import (
    process_from_json,
    resolve_config,
    stored_configuration,
)
from skrbal.online._connect import open_storage, store_parameter
from skrbal.online._idempotency import CallKeys
from skrbal.online._records import Commissioning
from skrbal.online._repeats import RecentRows
from skrbal.online._replay import new_steps, replay_campaign
from skrbal.online._settings import (
    agent_record,
    check_params,
    check_step_periods,
    parameters_of,
    time_column,
    time_format,
)
from skrbal.online._storage import StoreError
from skrbal.online._timestamps import as_seconds

__all__ = ["StartCalls"]


def _warn_uncommissioned(process, y, name: str) -> None:
    """Warn naming the process's states without a commissioning example."""
    classes, names = process.classes_, process.state_names
    unseen = [j for j, c in enumerate(classes) if not np.any(y == c)]
    if not unseen:
        return
    shown = [
        str(classes[j])
        if names is None or names[j] == str(classes[j])
        else f"{names[j]} ({classes[j]})"
        for j in unseen
    ]
    warnings.warn(
        f"agent {name!r}: no commissioning example of state(s) "
        f"{', '.join(shown)}: its beliefs about them come from the model's prior "
        "alone until an inspection finds one (see the user guide, "
        "'Commissioning a new structure').",
        UncommissionedStatesWarning,
        stacklevel=caller_stacklevel(),
    )


def _keeps_snapshots(store) -> bool:
    """Whether ``store`` keeps the model's snapshot in its events (issue 28.25)."""
    return bool(store.keeps_snapshots)


def _without_repeated_unlabelled(caught: list) -> list:
    """The warnings of a commissioning, the model's own unlabelled-class one dropped.

    The agent's :class:`UncommissionedStatesWarning` names the same states by
    their names, whatever the model; a mixture's
    :class:`~skrbal.exceptions.UnlabelledClassesWarning` would say it again.
    """
    if not any(issubclass(w.category, UncommissionedStatesWarning) for w in caught):
        return caught
    return [
        w
        for w in caught
        if issubclass(w.category, UncommissionedStatesWarning)
        or not issubclass(w.category, UnlabelledClassesWarning)
    ]


class StartCalls:
    """Commissioning and resuming: how a :class:`RiskBasedAgent` starts."""

    def _open_store(self):
        return open_storage(self.store)

    def fit(self, X, y, *, timestamps=None):
        """Commission the agent: scikit-learn's name for :meth:`commission`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        timestamps : array-like of shape (n_samples,), default=None
            As in :meth:`commission`.

        Returns
        -------
        self : RiskBasedAgent
            Open for writing.
        """
        return self.commission(X, y, timestamps=timestamps)

    def commission(self, X, y, timestamps=None):
        """Create the agent in its store from an initial labelled set.

        The commissioning samples become the first steps of the agent's
        stream, with known labels; the model is fitted on them and the agent
        is created in the store. An agent is commissioned once: an agent of
        the same name must not exist in the store, and this object must not
        be open already (resume a stored agent with :meth:`from_store`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features of the commissioning inspections, in temporal order.
        y : array-like of shape (n_samples,)
            Their labels, states of the process. A label may be missing
            (``None``, NaN or ``''``) after the first rows: see Notes.
        timestamps : array-like of shape (n_samples,), default=None
            Their times (seconds or datetimes). Given here, every later
            observation needs timestamps too. A named pandas Series (a
            campaign's column, ``campaign["time"]``) keeps its name as the
            agent's time column, which ``skrbal agent observe`` then reads.

        Returns
        -------
        self : RiskBasedAgent
            Open for writing; call :meth:`close` (or use ``with``) when done.

        Notes
        -----
        The budget policy sees the commissioning steps as steps that cannot
        be inspected (their labels are known), with the EVPI of the initial
        model, as :class:`~skrbal.active.RiskBasedLearner` shows it its
        initial labelled steps: a policy that counts every step (a rate of
        inspections) counts them too.

        A campaign with unlabelled rows (a few inspections, then monitoring)
        is taken as it happened: the leading labelled rows, up to the first
        row without a label, commission the model (the checks of a
        commissioning set apply to them alone); every later row is then
        observed in order, as :meth:`observe` does (decisions taken,
        inspections requested, committed as they are decided), and a later
        row that carries a label teaches it as the inspection of its step
        once the rows up to it are observed: the result of the agent's
        request when it requested that step (:meth:`record_inspection`),
        else a routine inspection (:meth:`record_label`), dated at the row's
        timestamp. A ``'data'`` prior of the estimator (``mean_prior`` and
        ``covariance_prior`` both ``'data'``) is about the features' scale: it
        is then taken from every row of ``X``, labelled or not, and pinned in
        ``estimator`` as arrays, so that one labelled row is enough to
        start. Errors name rows counted from 0, as the campaign reader
        (:func:`~skrbal.datasets.load_campaign`) and ``skrbal agent init``
        do.

        Raises
        ------
        StoreError
            When this agent is already commissioned and open, or the store
            already holds an agent of this name.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> agent = RiskBasedAgent(estimator=GaussianNB(),
        ...                        process=synthetic_decision_process())
        >>> agent = agent.commission([[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
        >>> agent.n_steps_
        4
        >>> agent.close()

        Unlabelled rows after the commissioning ones are observed; a later
        label is learned as a routine inspection of its step:

        >>> agent = RiskBasedAgent(estimator=GaussianNB(),
        ...                        process=synthetic_decision_process())
        >>> agent = agent.commission([[-5.0], [0.0], [6.0], [19.0], [-4.0], [0.5]],
        ...                          [1, 2, 3, 4, None, 2])
        >>> agent.n_steps_, agent.status()["n_routine"]
        (6, 1)
        >>> agent.close()
        """
        lock = getattr(self, "_lock", None)
        if lock is not None and lock.held:
            raise StoreError(
                f"agent {self.name!r} is already commissioned and open in store "
                f"{self.store_.display_url}; an agent is commissioned once. Keep "
                "using it, or close() it and resume it with "
                "RiskBasedAgent.from_store()."
            )
        missing = missing_labels(y)
        if missing is not None:
            return self._commission_in_parts(X, y, timestamps, missing)
        budget = self._check_params()
        feature_names = getattr(X, "columns", None)
        X = check_array(X, dtype=np.float64)
        y = self._check_labels(y, "y")
        if y.shape != (X.shape[0],):
            raise ValueError(
                f"y must hold one label per row of X: X has {X.shape[0]} rows, y "
                f"has shape {y.shape}."
            )
        times_given, given_times = time_format(timestamps), timestamps
        if timestamps is not None:
            timestamps = as_seconds(timestamps, "timestamps", X.shape[0])
        perfect = self.process.perfect_information_action(y)
        campaign = self._new_campaign(budget)
        steps = new_steps(self._dense, X.shape[1], self.process.classes_)
        steps.extend(X, perfect, y=y)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _warn_uncommissioned(self.process, y, self.name)
            model = campaign.fit(self.estimator, steps)
        caught = _without_repeated_unlabelled(caught)
        check_learnable(model, self.process, "the commissioned model")
        clock = "step" if timestamps is None else "timestamp"  # for good
        if clock == "step":
            check_step_periods(budget)
        times = np.arange(X.shape[0], dtype=float) if timestamps is None else timestamps
        # The policy sees the commissioning steps as steps it cannot inspect,
        # valued as every later step is (the best method's EVSI).
        beliefs = campaign.beliefs(X, step=0)
        decided = campaign.decide(
            X, beliefs, times, available=np.zeros(X.shape[0], dtype=bool)
        )
        evpi, budget_state = decided.evpi, decided.budget_state

        store, owned = self._open_store()
        names = None if feature_names is None else [str(c) for c in feature_names]
        record = agent_record(
            self._params(),
            self.name,
            self.estimator,
            X.shape,
            names,
            clock,
            budget_state,
            times_given,
            zoned=carry_utc_offsets(given_times),
            column=time_column(given_times),
        )
        commissioning = Commissioning(
            features=X,
            labels=y,
            actions=perfect,
            evpi=evpi,
            times=times,
            timestamps=timestamps,
            warnings=tuple(warning_texts(caught)),
            belief=beliefs,
            snapshot=campaign.snapshot() if _keeps_snapshots(store) else None,
        )
        try:
            agent_id = store.create_agent(record, commissioning)
            self._start(store, owned, agent_id, campaign)
        except BaseException:
            if owned:
                store.close()
            raise
        for w in caught:  # once the commissioning is committed
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        self.feature_names_in_ = None if names is None else np.asarray(names, object)
        self._clock = clock
        self._last_time, self.last_evpi_ = float(times[-1]), None
        self._seq = 1
        self._n_commissioning = X.shape[0]
        self._recent = RecentRows(store, agent_id, X.shape[0])
        return self

    def _commission_in_parts(self, X, y, timestamps, missing: np.ndarray):
        """See :meth:`RiskBasedAgent.commission`: labelled rows, then the stream."""
        n = missing.size
        n_rows = len(X) if hasattr(X, "iloc") else np.asarray(X).shape[0]
        if n_rows != n:
            raise ValueError(
                f"y must hold one label per row of X: X has {n_rows} rows, y has {n}."
            )
        if missing[0]:
            raise ValueError(
                "y: row 0 (counted from 0) has no label: the commissioning rows, "
                "labelled, come first; the rows after the first unlabelled one are "
                "observed."
            )
        n0 = int(np.argmax(missing))
        values = np.asarray(y, dtype=object)
        later = np.flatnonzero(~missing[n0:]) + n0
        labels = checked_labels(self.process.classes_, values[later], later)
        stamps = None if timestamps is None else as_seconds(timestamps, "timestamps", n)
        given, pinned = self.estimator, data_prior_pinned(self.estimator, X)
        if pinned is not None:
            self.estimator = pinned
        try:
            self.commission(
                rows_of(X, 0, n0),
                checked_labels(self.process.classes_, values[:n0], range(n0)),
                # As given, not as seconds: the agent keeps how times were given
                # (ISO comes back ISO) and whether they carried a UTC offset.
                timestamps=None if stamps is None else leading(timestamps, n0),
            )
        except BaseException:
            self.estimator = given
            raise
        start = n0
        for row, label in zip(later.tolist(), labels):
            decided = self.observe(
                rows_of(X, start, row + 1),
                timestamps=None if stamps is None else stamps[start : row + 1],
            )
            start = row + 1
            at = None if stamps is None else float(stamps[row])
            request = decided["request_id"].iloc[-1]
            if pd.isna(request):
                self.record_label(row, label, timestamp=at)
            else:  # the agent asked for this very inspection
                self.record_inspection(int(request), label, timestamp=at)
        if start < n:
            self.observe(
                rows_of(X, start, n),
                timestamps=None if stamps is None else stamps[start:],
            )
        return self

    @property
    def _dense(self) -> bool:
        """Whether every step is kept: EM and smoothing read them all, the
        history prior their actions."""
        return self.semi_supervised is not None or self.history_prior > 0

    def _params(self) -> CampaignParams:
        """The parameters the agent shares with the stream learner."""
        return CampaignParams.of(self)

    def _check_params(self):
        """Name any invalid parameter; return the budget policy (or None)."""
        return check_params(self._params(), self.name, self.estimator)

    def _new_campaign(self, budget) -> Campaign:
        return CampaignParams.of(self, budget=budget).campaign()

    def _start(self, store, owned, agent_id, campaign, lock=None):
        if lock is None:
            lock = store.lock_agent(agent_id, self.name)
        self.store_, self._owns_store, self._lock = store, owned, lock
        self._keys = CallKeys(store, agent_id, self.name)
        self.agent_id_ = agent_id
        self.budget_ = campaign.budget
        campaign.keeps_snapshots = _keeps_snapshots(store)
        self._campaign = campaign
        self.classes_ = self.process.classes_
        self.n_features_in_ = campaign.steps.n_features

    @classmethod
    def from_store(
        cls,
        store,
        name: str = "agent",
        *,
        estimator=None,
        budget=None,
        lock_timeout: float = 0.0,
        expected_head=None,
    ):
        """Resume an agent from its store, exactly where it stopped.

        Parameters
        ----------
        store : AgentStorage, str or path-like
            The store (an :class:`AgentStore`, an :class:`InMemoryAgentStore`,
            ...), or an :class:`AgentStore`'s URL / SQLite path.
        name : str, default="agent"
            The agent's name.
        estimator : classifier, default=None
            The agent's estimator. Needed only when the store may not
            rebuild it: a class outside the allowlist (the store never
            imports other code) or a parameter that names a file (a
            Pipeline's ``memory``) or exceeds a bound; it must match the
            stored configuration.
        budget : BudgetPolicy, default=None
            The same for the budget policy.
        lock_timeout : float, default=0.0
            Seconds to wait for another writer of the agent to close it.
        expected_head : dict, (int, str) or str, default=None
            A head of the agent's chain kept outside the store, as
            :meth:`AgentStore.verify` takes it: a store rolled back to
            before it (or rewritten up to it) is refused.

        Returns
        -------
        agent : RiskBasedAgent
            Open for writing, with the model rebuilt from the stored data.

        Raises
        ------
        AgentLockedError
            When the agent is open for writing elsewhere.
        ConfigurationError
            When a given estimator or budget differs from the stored one, or
            a stored one cannot be rebuilt or does not match its stored
            fingerprint.
        StoreError
            When the store is damaged or was edited: the agent's event chain
            or a table disagreeing with it (see :meth:`AgentStore.verify`).
        """
        given = store
        store, owned = open_storage(store)
        try:
            record = store.load_agent(name)
            with stored_configuration(name, store.display_url):
                estimator = resolve_config(
                    record.estimator,
                    estimator,
                    "estimator",
                    record.estimator_fingerprint,
                )
                budget = resolve_config(
                    record.budget, budget, "budget", record.budget_fingerprint
                )
                settings = record.settings
                process = process_from_json(record.process)
                agent = cls(
                    estimator=estimator,
                    process=process,
                    budget=budget,
                    **parameters_of(settings, process),
                    store=store_parameter(given) if owned else store,
                    name=name,
                )
                agent._check_params()
            agent._resume(store, owned, record, lock_timeout, expected_head)
        except BaseException:
            if owned:
                store.close()
            raise
        return agent

    def _resume(self, store, owned, record, lock_timeout, expected_head=None):
        budget = self._check_params()
        lock = store.lock_agent(record.agent_id, self.name, lock_timeout)
        try:
            if expected_head is not None:
                if not hasattr(store, "verify"):
                    raise ValueError(
                        f"expected_head: store {store.display_url} keeps no event "
                        "chain to check it against (an AgentStore does)."
                    )
                # Under the lock, before the replay (which verifies again,
                # against the store's own anchors).
                store.verify(self.name, expected_head=expected_head)
            # Read under the lock: the agent may have moved since.
            replay = store.load_replay(self.name, every_step=self._dense)
            campaign = self._new_campaign(budget)
            # Warnings of the replayed fits were issued and stored already.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                replay_campaign(campaign, self.estimator, replay, self._dense)
        except BaseException:
            lock.release()
            raise
        record = replay.agent
        self._start(store, owned, record.agent_id, campaign, lock)
        campaign.budget_state = dict(record.budget_state)
        names = record.feature_names
        self.feature_names_in_ = None if names is None else np.asarray(names, object)
        self._clock = record.clock
        self._seq = record.last_seq
        self._n_commissioning = replay.n_commissioning
        self._recent = RecentRows(store, record.agent_id, replay.n_commissioning)
        self._last_time, self.last_evpi_ = replay.last_time, replay.last_evpi
        names = [m.name for m in self.inspections or ()]
        campaign.requests = RequestBook(record.n_requests)
        for r in replay.requests:
            if self.inspections is None:
                method = 0  # the process's inspection: the kernel's method 0
            else:
                method = None if r.method is None else names.index(r.method)
            campaign.requests.load(
                r.request_id, Request(r.step, r.status, method, r.belief, r.time)
            )

    # ------------------------------------------------------------------ #
    # the live calls
    # ------------------------------------------------------------------ #
