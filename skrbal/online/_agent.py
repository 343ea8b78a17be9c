"""The live risk-based agent: observe, request inspections, learn their results."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils import Bunch

from skrbal._decision import DecisionProcess
from skrbal._labels import states_of
from skrbal.exceptions import IdempotencyKeyError, RequestError
from skrbal.online._agent_calls import RecordCalls
from skrbal.online._agent_observe import ObserveCalls
from skrbal.online._agent_start import StartCalls
from skrbal.online._connect import store_parameter
from skrbal.online._storage import StoreError

__all__ = ["IdempotencyKeyError", "RequestError", "RiskBasedAgent"]


class RiskBasedAgent(StartCalls, ObserveCalls, RecordCalls, BaseEstimator):
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
        value); ``'ignore'`` uses the plain value. At most the 32 oldest
        open requests are fantasised, so a call's cost does not grow with
        the open requests. Agents stored before this option existed resume
        with ``'ignore'``, as they decided.
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
    history_prior : float, default=0.0
        The share, in [0, 1], of the process's own prediction in the prior
        over each step's state. That prediction is the state of the last
        labelled step before it (one-hot, or an imperfect report's
        posterior) carried through the process's ``transition`` under the
        actions taken since (a repair resets as the process says), with
        the rates of leaving each state when nothing is done learnt from
        how long the labelled states lasted (the process's rates are the
        prior, weighing one stated stay); the rest
        is the estimator's class weights, which read the labels taken so
        far as how often each state occurs now. A state the process
        predicts (damage grows while nothing is repaired) is then believed
        though it was never labelled; with a share below 1, a state the
        history rules out keeps part of its weight. Each step's features
        count once (no filtering through the correlated steps since the
        label). Needs an estimator with ``weight_concentration_`` (the
        Bayesian mixtures) or ``class_prior_`` (naive Bayes). 0: the
        estimator's beliefs, as before. See the user guide, "Commissioning
        a new structure".
        The agent then keeps every observation (as with ``semi_supervised``).
    store : AgentStorage, str or path-like, default=None
        Where the agent lives: an :class:`AgentStore` or its URL / SQLite
        path (durable), or any other object of the storage contract
        :class:`AgentStorage`. ``None``: a private
        :class:`InMemoryAgentStore` (nothing durable).
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
    history_ : Bunch
        What the agent did so far, read from the store: ``steps``,
        ``queries``, ``totals`` and ``budget_state``, as
        :class:`~skrbal.active.RiskBasedLearner`'s ``history_``.
    last_evpi_ : float or None
        EVPI of the last observation.
    store_ : AgentStorage
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
        history_prior: float = 0.0,
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
        self.history_prior = history_prior
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

    def _check_labels(self, y, name: str) -> np.ndarray:
        """Labels as the process's own values; a clear error for others."""
        return states_of(y, self.process.classes_, name=name)

    # ------------------------------------------------------------------ #
    # starting: commissioning or resume
    # ------------------------------------------------------------------ #
    @property
    def estimator_(self):
        """The current model."""
        return self._campaign.model

    @property
    def budget_state_(self) -> dict:
        """The budget policy's running state (JSON)."""
        return self._campaign.budget_state

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

    @property
    def history_(self) -> Bunch:
        """What the agent did so far, as :class:`~skrbal.active.RiskBasedLearner`'s
        ``history_`` tells it: ``steps``, ``queries``, ``totals``, ``budget_state``.

        Read from the store at each access: ``steps`` (DataFrame, one row per
        step, commissioning first: see :meth:`AgentStore.history`),
        ``queries`` (DataFrame, one row per inspection request: see
        :meth:`AgentStore.requests`), ``totals`` (dict: the counts and spend
        of :meth:`status`) and ``budget_state`` (dict).

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> agent = RiskBasedAgent(estimator=GaussianNB(),
        ...                        process=synthetic_decision_process()).fit(
        ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
        >>> _ = agent.observe([[12.5], [-5.0]])
        >>> history = agent.history_
        >>> len(history.steps), history.totals["n_observations"]
        (6, 2)
        >>> agent.close()
        """
        self._check_open()
        totals = self.store_.status(self.name)
        return Bunch(
            steps=self.store_.history(self.name),
            queries=self.store_.requests(self.name),
            totals=totals,
            budget_state=totals["budget_state"],
        )

    def history(self) -> pd.DataFrame:
        """Every step so far: deprecated, use ``history_.steps``.

        Returns
        -------
        history : DataFrame
            ``history_.steps``.
        """
        warnings.warn(
            "RiskBasedAgent.history() is deprecated and will be removed: use "
            "agent.history_.steps (history_ is a Bunch as RiskBasedLearner's, "
            "with queries and totals too).",
            FutureWarning,
            stacklevel=2,
        )
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
