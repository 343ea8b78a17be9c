"""The live risk-based agent: observe, request inspections, learn their results."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array

from skrbal._datetimes import carry_utc_offsets
from skrbal._decision import DecisionProcess
from skrbal._labels import states_of
from skrbal._learning import (
    Campaign,
    Request,
    RequestBook,
    check_learnable,
    warning_texts,
)
from skrbal.exceptions import (
    IdempotencyKeyError,
    RequestError,
    RequestExpiredWarning,
    StalledRequestsWarning,
    UncommissionedStatesWarning,
    UnlabelledClassesWarning,
    caller_stacklevel,
)
from skrbal.online._agent_calls import RecordCalls
from skrbal.online._commissioning import commission_in_parts, missing_labels
from skrbal.online._config import (
    process_from_json,
    resolve_config,
    stored_configuration,
)
from skrbal.online._decisions import (
    ObserveCall,
    as_given,
    check_features,
    decisions_frame,
    empty_decisions,
    observation_times,
    stored_decisions,
)
from skrbal.online._idempotency import (
    array_digest,
    check_key,
    client_key,
    stored_call,
)
from skrbal.online._replay import new_steps, replay_campaign
from skrbal.online._settings import (
    agent_record,
    check_params,
    check_step_periods,
    parameters_of,
    time_column,
    time_format,
)
from skrbal.online._sql._store import AgentStore, store_parameter
from skrbal.online._storage import (
    Commissioning,
    ObserveBlock,
    RequestRecord,
    StoreError,
)
from skrbal.online._timestamps import as_seconds, duration_text, time_text

__all__ = ["IdempotencyKeyError", "RequestError", "RiskBasedAgent"]


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


class RiskBasedAgent(RecordCalls, BaseEstimator):
    """Risk-based active learning on a live stream, with a durable store.

    The agent holds a classifier, a decision process and an inspection budget
    policy. Each new observation gets a belief over the health state, its EVPI
    and a recommended action; when the budget policy says the EVPI is worth
    the inspection cost, an inspection is requested. The result may come back
    much later (:meth:`record_inspection`), or never (:meth:`cancel_request`);
    the model learns it when it arrives. Everything the agent decides and
    learns is committed to an :class:`AgentStore` before the call returns, so
    the agent can resume after a restart (:meth:`from_store`) and continue
    with identical decisions.

    Parameters
    ----------
    estimator : classifier
        Any scikit-learn classifier with ``predict_proba`` (Pipelines
        included). It is cloned; if it has a ``classes`` parameter left at
        ``None``, the clone is given the process's labels.
    process : DecisionProcess
        The maintenance decision and its inspection cost.
    budget : BudgetPolicy, default=None
        Which inspections to request, from :mod:`skrbal.budget`. ``None`` is
        :class:`~skrbal.budget.CostThreshold`: inspect when EVPI exceeds the
        inspection cost (the paper). Its periods and gaps are counted in
        steps, or in seconds when the commissioning samples (and then every
        observation) have timestamps.
    inspections : list of InspectionMethod, default=None
        The inspection methods to choose from (:mod:`skrbal.inspection`), as
        in :class:`~skrbal.active.RiskBasedLearner`. ``None`` is one perfect
        inspection at ``process.inspection_cost``, and
        ``[perfect_inspection(process)]`` decides identically. With a list,
        each observation's method is the one of largest ``EVSI - cost``
        (:func:`~skrbal.inspection.choose_inspection`) and the budget policy
        decides whether to inspect with it (see Notes); the result of a
        method whose reports do not reveal the state is its report
        (``record_inspection(request_id, report=...)``), learned as soft
        evidence. Stored with the agent as JSON (name, cost, confusion,
        outcomes) and checked against the process on resume.
    semi_supervised : {None, 'em', 'smoothing'}, default=None
        The remedies of :class:`~skrbal.active.RiskBasedLearner`, with the
        same update rules: ``'em'`` refits by EM over every observation so far
        after each result; ``'smoothing'`` pseudo-labels the steps since the
        previous known label by forward-backward, with the actions taken in
        between (see :meth:`record_action`).
    update : {'auto', 'partial_fit', 'refit'}, default='auto'
        How the model learns a result, as in
        :class:`~skrbal.active.RiskBasedLearner`.
    em_start : {'labelled', 'previous'}, default='labelled'
        With ``semi_supervised='em'``, where each refit's EM starts, as in
        :class:`~skrbal.active.RiskBasedLearner`.
    initial_state : label, default=None
        With ``semi_supervised='smoothing'``, the state assumed before the
        first step. Defaults to the process's first state.
    max_open_requests : int, default=None
        At most this many requests wait for a result at once; while the cap
        is reached no inspection is requested. ``None``: no cap.
    pending_value : {'fantasy', 'ignore'}, default='fantasy'
        How the value of a new request counts the requests still awaiting a
        result, as in :class:`~skrbal.active.RiskBasedLearner`:
        ``'fantasy'`` averages it over the pending results' joint outcomes
        taught to copies of the model by ``partial_fit``, keeping the smaller
        of that and the plain value (an observation like a pending one loses
        value); ``'ignore'`` uses the plain value. Agents stored before this
        option existed resume with ``'ignore'``, as they decided.
    request_timeout : float, default=None
        How long a request may wait for its result: seconds when the agent
        has timestamps, observations otherwise. When an :meth:`observe` call
        starts past it (its first observation is that much later than the
        request's), an open request becomes ``expired`` (in status and
        exports), frees its slot of ``max_open_requests`` and raises a
        :class:`~skrbal.exceptions.RequestExpiredWarning`; its result is
        still taken if it comes. ``None``: requests wait for ever. With
        ``max_open_requests``, a budget that wants inspections while every
        slot is taken raises a
        :class:`~skrbal.exceptions.StalledRequestsWarning` (when a stall
        begins, then at 3, 7, 15, ... blocked inspections while it lasts),
        so results that never come back are never silent.
    store : AgentStore, str or path-like, default=None
        Where the agent lives: an :class:`AgentStore` or its URL / SQLite
        path. ``None``: a private in-memory SQLite store (nothing durable).
    name : str, default="agent"
        The agent's name in the store; one store holds many agents.

    Attributes
    ----------
    estimator_ : classifier
        The current model.
    classes_ : ndarray
        The process's labels.
    n_features_in_ : int
        Number of features of an observation.
    feature_names_in_ : ndarray of str
        Column names of the commissioning data, when it was a DataFrame.
    n_steps_ : int
        Steps so far, commissioning samples included (they are steps
        ``0 .. n_commissioning - 1``; observations follow).
    budget_ : BudgetPolicy
        The budget policy in use.
    budget_state_ : dict
        The policy's running state (JSON).
    last_evpi_ : float or None
        EVPI of the last observation.
    store_ : AgentStore
        The open store.
    agent_id_ : int
        The agent's key in the store.

    See Also
    --------
    skrbal.active.RiskBasedLearner : The same method replayed on a recorded
        stream, with every label at hand.
    AgentStore : The store, and reading it without opening the agent.

    Notes
    -----
    With ``inspections``, the budget policy sees, at each observation, the
    EVSI of the method of largest net value in place of the EVPI, and that
    method's cost as the inspection cost: :class:`~skrbal.budget.CostThreshold`
    then inspects exactly where :func:`~skrbal.inspection.choose_inspection`
    does, a :class:`~skrbal.budget.SpendCap` is charged the cost of the
    method used, and :class:`~skrbal.budget.QuantileThreshold` ranks the
    observations by that EVSI. (The policy is scanned over runs of
    consecutive observations with the same best method, which is the same
    as one scan since a policy's state changes only through the steps it
    absorbs.)

    A requested inspection means: act after its result (the action returned
    by :meth:`record_inspection`), as the paper's agent does; the recommended
    action returned by :meth:`observe` for that step is the one under the
    belief, for when the result never comes. Fed a recorded stream with each
    result returned at once, the agent makes the decisions and inspections of
    :class:`~skrbal.active.RiskBasedLearner` run with the commissioning
    samples as the first, initially labelled, steps of its stream.

    The store keeps configurations as JSON and the model as the data it was
    learned from, never as a pickle: on resume the model is rebuilt by
    replaying the commissioning fit and every result in their order. An
    estimator of an allowlisted class (skrbal's, and common scikit-learn
    ones) is rebuilt from its stored, bounded parameters; any other must be
    passed again to :meth:`from_store`, and is checked against the stored
    configuration. An estimator with a
    ``random_state`` needs an int for the replay to be exact.

    Memory: without ``semi_supervised`` the agent keeps only the features of
    its labelled steps and of the steps awaiting a result, so it grows with
    the inspections, not with the stream; EM and smoothing read every
    observation, and keep them all.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import RiskBasedAgent
    >>> rng = np.random.default_rng(0)
    >>> means = np.array([-5.0, -0.7, 5.8, 19.0])
    >>> y0 = np.array([1, 2, 3, 4, 1, 2, 3, 4])
    >>> process = synthetic_decision_process().set_params(inspection_cost=1.0)
    >>> agent = RiskBasedAgent(estimator=GaussianNB(var_smoothing=0.05),
    ...                        process=process)
    >>> agent = agent.fit(rng.normal(means[y0 - 1], 1.0)[:, None], y0)
    >>> decisions = agent.observe([[-5.2], [12.5]])
    >>> decisions["evpi"].round(2).tolist()
    [0.0, 7.74]
    >>> decisions[["step", "inspect", "request_id", "action"]]
       step  inspect  request_id  action
    0     8    False        <NA>       0
    1     9     True           1       1
    >>> agent.record_inspection(1, 3)  # state 3 found: no repair needed
    0
    >>> agent.status()["n_results"]
    1
    >>> agent.close()
    """

    def __init__(
        self,
        *,
        estimator,
        process: DecisionProcess,
        budget=None,
        inspections=None,
        semi_supervised: str | None = None,
        update: str = "auto",
        em_start: str = "labelled",
        initial_state=None,
        max_open_requests: int | None = None,
        pending_value: str = "fantasy",
        request_timeout: float | None = None,
        store=None,
        name: str = "agent",
    ):
        self.estimator = estimator
        self.process = process
        self.budget = budget
        self.inspections = inspections
        self.semi_supervised = semi_supervised
        self.update = update
        self.em_start = em_start
        self.initial_state = initial_state
        self.max_open_requests = max_open_requests
        self.pending_value = pending_value
        self.request_timeout = request_timeout
        self.store = store
        self.name = name

    # ------------------------------------------------------------------ #
    # configuration
    # ------------------------------------------------------------------ #
    def get_params(self, deep=True):
        """Parameters of the agent; a store URL's password is masked in repr.

        The ``store`` is the URL as given, as a string equal to it whose
        ``repr`` shows ``***`` for its password, so that a clone connects as
        the original does and no display of the parameters echoes it.

        Parameters
        ----------
        deep : bool, default=True
            Also the parameters of the estimator and budget.

        Returns
        -------
        params : dict
        """
        params = super().get_params(deep=deep)
        params["store"] = store_parameter(params["store"])
        return params

    def _open_store(self):
        if isinstance(self.store, AgentStore):
            return self.store, False
        return AgentStore(":memory:" if self.store is None else self.store), True

    def _check_labels(self, y, name: str) -> np.ndarray:
        """Labels as the process's own values; a clear error for others."""
        return states_of(y, self.process.classes_, name=name)

    # ------------------------------------------------------------------ #
    # starting: commissioning or resume
    # ------------------------------------------------------------------ #
    def fit(self, X, y, *, timestamps=None) -> RiskBasedAgent:
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

    def commission(self, X, y, timestamps=None) -> RiskBasedAgent:
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
            return commission_in_parts(self, X, y, timestamps, missing)
        budget = check_params(self)
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
        beliefs = campaign.beliefs(X)
        decided = campaign.decide(
            X, beliefs, times, available=np.zeros(X.shape[0], dtype=bool)
        )
        evpi, budget_state = decided.evpi, decided.budget_state

        store, owned = self._open_store()
        names = None if feature_names is None else [str(c) for c in feature_names]
        record = agent_record(
            self,
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
        return self

    @property
    def _dense(self) -> bool:
        """Whether the update rule reads every step (EM, smoothing)."""
        return self.semi_supervised is not None

    def _new_campaign(self, budget) -> Campaign:
        return Campaign(
            self.process,
            inspections=self.inspections,
            budget=budget,
            semi_supervised=self.semi_supervised,
            update=self.update,
            em_start=self.em_start,
            initial_state=self.initial_state,
            max_open_requests=self.max_open_requests,
            pending_value=self.pending_value,
            request_timeout=self.request_timeout,
        )

    def _start(self, store, owned, agent_id, campaign, lock=None):
        if lock is None:
            lock = store.lock_agent(agent_id, self.name)
        self.store_, self._owns_store, self._lock = store, owned, lock
        self.agent_id_ = agent_id
        self.budget_ = campaign.budget
        self._campaign = campaign
        self.classes_ = self.process.classes_
        self.n_features_in_ = campaign.steps.n_features

    @property
    def estimator_(self):
        """The current model."""
        return self._campaign.model

    @property
    def budget_state_(self) -> dict:
        """The budget policy's running state (JSON)."""
        return self._campaign.budget_state

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
        store : AgentStore, str or path-like
            The store (or its URL / SQLite path).
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
        owned, given = not isinstance(store, AgentStore), store
        store = AgentStore(store) if owned else store
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
                check_params(agent)
            agent._resume(store, owned, record, lock_timeout, expected_head)
        except BaseException:
            if owned:
                store.close()
            raise
        return agent

    def _resume(self, store, owned, record, lock_timeout, expected_head=None):
        budget = check_params(self)
        lock = store.lock_agent(record.agent_id, self.name, lock_timeout)
        try:
            if expected_head is not None:
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
    def _check_open(self):
        if not getattr(self, "_lock", None) or not self._lock.held:
            raise StoreError(
                f"agent {self.name!r} is not open: commission it with fit() or "
                "resume it with RiskBasedAgent.from_store()."
            )

    @property
    def n_steps_(self) -> int:
        """Steps so far, commissioning samples included."""
        return self._campaign.steps.n_steps

    def observe(self, X, timestamps=None, *, key: str | None = None) -> pd.DataFrame:
        """Decide for new observations, in order; request inspections.

        All rows are judged by the current model and the requests open when
        the call starts: a result recorded later only affects later calls,
        and (with ``pending_value='fantasy'``) a request made for one row of
        the call does not lower the value of the rows after it, as it would
        if they came in later calls.

        Parameters
        ----------
        X : array-like of shape (n_observations, n_features)
            The new observations, in temporal order.
        timestamps : array-like of shape (n_observations,), default=None
            Their times, seconds or datetimes, non-decreasing. Needed if and
            only if the commissioning samples had timestamps: without them
            the budget counts time in steps.
        key : str, default=None
            A client key making the call idempotent: a non-empty string (at
            most 200 characters, no NUL) unique among the agent's calls, say
            a batch's id. Retried with the same key and the same ``X`` and
            ``timestamps`` (after a crash or a lost answer, from this or
            another process), the call returns the decisions it returned the
            first time, rebuilt from the store, without deciding, writing or
            changing anything. A call with no rows stores nothing, and so
            does not use its key.

        Returns
        -------
        decisions : DataFrame
            One row per observation: ``step``, ``timestamp``,
            ``belief_<label>`` per state, ``evpi``, ``inspect`` (an inspection
            is requested: act after its result), ``request_id`` (``<NA>``
            without a request), with ``inspections`` the ``method`` of the
            request (its name, ``None`` without one), and ``action``, the
            optimal action under the belief, followed by ``action_name`` when
            the process names its actions. ``timestamp`` is as the times were
            given: seconds, or pandas datetimes for datetimes and ISO text
            (UTC; aware if they carried an offset), NaN without times.

        Raises
        ------
        IdempotencyKeyError
            When ``key`` was used by another call of the agent, or by an
            ``observe`` of other rows or times; nothing is changed.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> agent = RiskBasedAgent(estimator=GaussianNB(),
        ...                        process=synthetic_decision_process()).fit(
        ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
        >>> first = agent.observe([[12.5], [-5.0]], key="feed-0001")
        >>> again = agent.observe([[12.5], [-5.0]], key="feed-0001")  # a retry
        >>> again.equals(first), agent.n_steps_
        (True, 6)
        >>> agent.close()
        """
        self._check_open()
        key = check_key(key)
        X = check_features(self, X)
        if key is not None and X.shape[0]:
            stamps = None
            if timestamps is not None:
                stamps = as_seconds(timestamps, "timestamps", X.shape[0])
            key = client_key(
                key, "observe", X=array_digest(X), timestamps=array_digest(stamps)
            )
            done = stored_call(self, key)
            if done is not None:
                block = self.store_.load_block(self.agent_id_, done.step)
                return as_given(
                    stored_decisions(block, self.classes_, self.inspections),
                    timestamps,
                    self.process.action_names,
                )
        else:
            key = None
        n, first = X.shape[0], self.n_steps_
        clock, times, stamps = observation_times(
            first, n, timestamps, clock_then=self._clock, last_time=self._last_time
        )
        if n == 0:  # nothing to decide; a model may refuse an empty X
            nothing = ObserveCall(
                first,
                X,
                times,
                None,
                clock,
                np.zeros((0, self.classes_.size)),
                empty_decisions(),
                np.zeros(0, dtype=np.int64),
            )
            return as_given(
                decisions_frame(nothing, self.classes_, self.inspections),
                None,
                self.process.action_names,
            )
        self._expire_overdue(float(times[0]))
        campaign = self._campaign
        proba = campaign.beliefs(X)
        call = None

        def commit(decided):
            nonlocal call
            request_ids = np.zeros(n, dtype=np.int64)
            request_ids[decided.requested] = campaign.next_request_ids(decided)
            call = ObserveCall(
                first, X, times, stamps, clock, proba, decided, request_ids
            )
            self._commit_observe(call, key)

        decided = campaign.decide(X, proba, times, commit=commit)
        campaign.steps.extend(X, decided.action, keep=decided.requested.tolist())
        campaign.open_requests(first, decided, proba, times)
        self._clock = clock
        self._last_time, self.last_evpi_ = float(times[-1]), float(decided.evpi[-1])
        self._seq += 1
        self._report_stall(decided.n_blocked)
        return as_given(
            decisions_frame(call, self.classes_, self.inspections),
            timestamps,
            self.process.action_names,
        )

    def _expire_overdue(self, now: float) -> None:
        """Expire the open requests past ``request_timeout`` at time ``now``."""
        campaign = self._campaign
        overdue = campaign.overdue(now)
        if not overdue:
            return
        steps = campaign.requests.steps_of(overdue)
        made = [time_text(campaign.requests[i].time, self._clock) for i in overdue]
        self.store_.record_expire(self.agent_id_, self._seq, overdue, steps)
        campaign.expire(overdue)
        self._seq += 1
        dated = self._clock == "timestamp"
        asked = ", ".join(
            f"{i} (step {s}{f', at {t}' if dated else ''})"
            for i, s, t in zip(overdue, steps, made)
        )
        until = time_text(now, self._clock) if dated else f"step {now:g}"
        warnings.warn(
            f"agent {self.name!r}: request(s) {asked} waited "
            f"{duration_text(self.request_timeout, self._clock)} or more without "
            f"a result, to {until} (request_timeout): they "
            "expired and free their slots; a result that still comes is taken.",
            RequestExpiredWarning,
            stacklevel=caller_stacklevel(),
        )

    def _report_stall(self, n_blocked: int) -> None:
        """Warn that the cap on open requests blocked some: when the stall
        begins, then at a rising interval while it lasts (1, 3, 7, 15 blocked)."""
        campaign = self._campaign
        total = campaign.stall_report(n_blocked)
        if not total:
            return
        requests = campaign.requests
        oldest = requests.open_ids()[:3]
        named = ", ".join(f"{i} (step {requests[i].step})" for i in oldest)
        wanted = f"the budget wanted {n_blocked} inspection(s)"
        if total > n_blocked:
            wanted = (
                f"still stalled: the budget has wanted {total} inspection(s) "
                "since the stall began"
            )
        warnings.warn(
            f"agent {self.name!r}: {wanted} but all {self.max_open_requests} "
            f"allowed requests wait for results (oldest: {named}); nothing is "
            "requested until a result, a cancellation or request_timeout frees "
            "a slot (warned again each time the count more than doubles).",
            StalledRequestsWarning,
            stacklevel=caller_stacklevel(),
        )

    def _commit_observe(self, call: ObserveCall, key) -> None:
        decided = call.decided
        requests = tuple(
            RequestRecord(
                request_id=int(call.request_ids[i]),
                step=call.first + int(i),
                evpi=float(decided.evpi[i]),
                method=None if self.inspections is None else self.inspections[k].name,
            )
            for i, k in zip(decided.requested, decided.methods)
        )
        block = ObserveBlock(
            first_step=call.first,
            times=call.times,
            timestamps=call.stamps,
            features=call.X,
            belief=call.proba,
            evpi=decided.evpi,
            action=decided.action,
            request_ids=call.request_ids,
            requests=requests,
            budget_state=decided.budget_state,
            clock=call.clock,
            key=key,
        )
        self.store_.append_observe(self.agent_id_, self._seq, block)

    # ------------------------------------------------------------------ #
    # reading
    # ------------------------------------------------------------------ #
    def status(self) -> dict:
        """Counts, spend, open requests, labelled set and last EVPI.

        Returns
        -------
        status : dict
            See :meth:`AgentStore.status`.
        """
        self._check_open()
        return self.store_.status(self.name)

    def history(self) -> pd.DataFrame:
        """Every step so far; see :meth:`AgentStore.history`.

        Returns
        -------
        history : DataFrame
        """
        self._check_open()
        return self.store_.history(self.name)

    def close(self) -> None:
        """Release the agent's write lock (and the store, if the agent opened it)."""
        lock = getattr(self, "_lock", None)
        if lock is not None:
            lock.release()
            if self._owns_store:
                self.store_.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
