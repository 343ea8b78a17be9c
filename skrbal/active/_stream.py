"""Risk-based active learning on a stream: inspect when EVPI exceeds the cost."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from skrbal._decision import DecisionProcess
from skrbal._labels import check_labels
from skrbal._learning import CampaignParams
from skrbal._validation import check_int
from skrbal.active._walk import StreamWalk
from skrbal.budget import BudgetPolicy
from skrbal.exceptions import caller_stacklevel

__all__ = ["RiskBasedLearner"]

_STRATEGIES = ("evpi", "random")
_HISTORIES = ("full", "queries")


class RiskBasedLearner(BaseEstimator):
    """Walk a data stream, inspecting when a label is worth its cost.

    At each step the current model's belief about the health state gives the
    EVPI of the label; when the query policy says so, the label is inspected
    (read from the oracle), added to the labelled set and the model updated.
    The agent then takes the optimal action: for the true state when it was
    inspected (or labelled before), for its belief otherwise.

    Parameters
    ----------
    estimator : classifier
        Any scikit-learn classifier with ``predict_proba`` (Pipelines
        included). It is cloned; every ``classes`` parameter left at
        ``None``, its own or a nested one (a Pipeline's final step), is given
        the process's labels. A model that cannot be told the labels and
        lacks some state after a fit gets a
        :class:`~skrbal.exceptions.MissingStatesWarning`.
    process : DecisionProcess
        The maintenance decision and its inspection cost.
    strategy : {'evpi', 'random'} or callable, default='evpi'
        Where to inspect. ``'evpi'``: where the value of the inspection is
        worth it, as ``budget`` decides; ``'random'``: ``n_queries`` stream
        positions drawn uniformly (the paper's baseline); a callable
        ``strategy(evpi, proba, process) -> bool array`` decides for a block
        of consecutive steps from each step's own EVPI and belief (it must
        not look across steps).
    budget : BudgetPolicy, default=None
        With ``strategy='evpi'``, which inspections to make, from
        :mod:`skrbal.budget`, as :class:`~skrbal.online.RiskBasedAgent`'s
        ``budget``: ``None`` is :class:`~skrbal.budget.CostThreshold`,
        inspect when the EVPI exceeds the inspection cost (the paper). Its
        ``times`` are the stream step indices, so periods and gaps count
        steps.
    n_queries : int or dict, default=None
        Number of inspections for ``strategy='random'``; with several
        ``inspections``, a dict ``{method name: number}`` (the same spend as
        another run: :meth:`random_baseline`).
    inspections : list of InspectionMethod, default=None
        The inspection methods to choose from (:mod:`skrbal.inspection`).
        ``None`` is one perfect inspection at ``process.inspection_cost``,
        the paper's setting, learnt exactly as before. With a list, the EVPI
        rule becomes :func:`~skrbal.inspection.choose_inspection` (the method
        of largest EVSI less cost, when positive); the simulated oracle
        draws each report from the method's confusion model with the
        generator of ``random_state``; the agent acts on the posterior
        (:func:`~skrbal.inspection.report_posterior`), and the model learns
        it as soft evidence (see Notes). A budget policy then sees, at each
        step, the EVSI of the method of largest net value and that method's
        cost, as :class:`~skrbal.online.RiskBasedAgent` does.
    follow_up : bool, default=False
        With ``inspections`` that hold a perfect method and an imperfect one:
        value each imperfect method as "it, then the cheapest perfect method
        if its report warrants one" (:func:`~skrbal.inspection.evsi` with
        ``follow_up=True``), and inspect the step again with that perfect
        method wherever the report's posterior has an EVPI above its cost,
        learning the state it reveals instead of the report. The
        follow-up's cost counts in the spend (``history_.totals``,
        ``n_follow_ups``) but is not charged to the budget policy's state.
        Not yet an option of :class:`~skrbal.online.RiskBasedAgent`.
    update : {'auto', 'partial_fit', 'refit'}, default='auto'
        How the model learns an inspected label: ``'partial_fit'`` on the new
        sample, ``'refit'`` on all labelled samples; ``'auto'`` uses
        ``partial_fit`` when the model has it and already knows the label.
    semi_supervised : {None, 'em', 'smoothing'}, default=None
        The paper's remedies for the sampling bias of risk-based querying.
        ``'em'``: after each inspection, refit by expectation-maximisation over
        every observation so far, labelled or not (a
        :class:`~skrbal.mixture.BayesianGMMClassifier` becomes the
        :class:`~skrbal.mixture.SemiSupervisedGMMClassifier` with the same
        priors; other estimators must accept ``-1`` for unlabelled samples).
        ``'smoothing'``: after each inspection, smooth the latent health states
        since the previous known label by forward-backward (anchored at both
        known labels, transitions chosen by the actions in between) and learn
        their most probable states as pseudo-labels; needs an estimator with
        ``class_log_density``.
    em_start : {'labelled', 'previous'}, default='labelled'
        With ``semi_supervised='em'``, where each refit's EM starts:
        ``'labelled'`` from the supervised model of the labelled samples, as
        in the paper; ``'previous'`` from the previous MAP solution (warm
        start: fewer EM iterations, but a state absent from the labelled set
        can be locked out for good, since a class with (almost) no weight in
        the previous solution gets no responsibility back; on the synthetic
        case a few percent of runs then never learn a state and inspect
        hundreds of times).
    initial_state : label, default=None
        With ``semi_supervised='smoothing'``, the state assumed one step before
        the stream starts (the paper: undamaged). Defaults to the process's
        first state.
    result_delay : int, default=0
        Steps an inspection's result takes to come back: the result of an
        inspection at step ``t`` is learnt before step ``t + 1 +
        result_delay`` is decided (0: at once, the paper's setting), and the
        action at step ``t`` is the one its result calls for. Meanwhile the
        request is open, as in :class:`~skrbal.online.RiskBasedAgent` fed one
        observation per call with each result recorded ``result_delay``
        observations later (it then decides identically). Results still on
        their way when the stream ends are learnt last.
    max_open_requests : int, default=None
        At most this many requests wait for a result at once; while the cap
        is reached nothing is inspected, and ``history_.totals["n_blocked"]``
        counts the steps the query wanted to inspect meanwhile. ``None``: no
        cap.
    pending_value : {'fantasy', 'ignore'}, default='fantasy'
        How the value of a new request counts the results still pending
        (with ``result_delay``): ``'fantasy'`` averages it over the pending
        results' joint outcomes, taught to copies of the model by
        ``partial_fit`` (as batch Bayesian optimisation fantasises pending
        evaluations), and keeps the smaller of that and the plain value, so
        a step like a pending one loses value; ``'ignore'`` uses the plain
        value. Models without ``partial_fit`` use the plain value. Nothing
        changes while no result is pending. The work is bounded: at most
        the 32 oldest open requests (whose results are due first) and their
        32 most probable joint outcomes are fantasised, and the copies are
        kept until the model learns or one of those requests closes, so a
        step costs the same with 33 or 10^5 open requests.
    request_timeout : float, default=None
        How many steps a request may wait for its result (with
        ``result_delay``): a request still open that many steps after its
        own expires before the next step is decided, as
        :class:`~skrbal.online.RiskBasedAgent`'s do. It frees its slot of
        ``max_open_requests`` and its pending result is no longer
        fantasised; the result is still learnt when it arrives.
        ``history_.totals["n_expired"]`` counts them. ``None``: requests
        wait for ever.
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
    history_filter : bool, default=False
        With ``history_prior``, carry the process's prediction from each
        step's belief rather than from the last labelled step alone: a
        forward filter of the stream through the transition model, so a
        step is judged against the steps before it (a one-step outlier
        after healthy steps keeps their prior). Each step's features then
        count in the beliefs after it too. Needs ``history_prior > 0``; the
        stream learner's option, not yet the agent's.
    block_size : int, default=256
        Steps predicted at once while no inspection happens; the block doubles
        (up to 64 times) after each block without one. Only speed depends on
        it.
    history : {'full', 'queries'}, default='full'
        What ``history_`` keeps: ``'full'`` one row per stream step
        (``history_.steps``) as well as one per inspection; ``'queries'``
        only the per-inspection records and the totals (``history_.steps``
        is ``None``), so a long stream costs a few bytes per step during the
        fit (which steps are known and inspected, their states, the actions
        taken) and nothing after it. The decisions, inspections and totals
        are the same. Not available with ``inspections``.
    random_state : int, RandomState instance or None, default=None
        Draws the positions of ``strategy='random'`` and, with
        ``inspections``, the reports (one draw per inspection).
    query : {'evpi', 'random'}, BudgetPolicy or callable
        Deprecated: a budget policy is ``budget``, anything else
        ``strategy``. Still read, with a :class:`FutureWarning`.

    Attributes
    ----------
    estimator_ : classifier
        The final model.
    classes_ : ndarray of shape (n_classes,)
        The final model's classes, the columns of :meth:`predict_proba`.
    n_features_in_ : int
        Number of features of the stream.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the stream's features, when ``X`` has string column names
        (a DataFrame reaches the estimator as a DataFrame, so a
        ``ColumnTransformer`` can select its columns by name).
    pseudo_labelled_indices_ : ndarray of int
        With ``semi_supervised='smoothing'``, the stream steps given a
        pseudo-label (empty otherwise).
    pseudo_labels_ : ndarray
        Their pseudo-labels.
    n_skipped_segments_ : int
        With ``semi_supervised='smoothing'``, segments the transition model
        could not explain, left without pseudo-labels.
    labelled_indices_ : ndarray of int
        Stream indices of the labelled samples, in the order they were
        labelled (the initial ones first).
    history_ : Bunch
        ``steps`` (DataFrame, one row per stream step, or ``None`` with
        ``history='queries'``: ``evpi``, ``inspected``,
        ``known`` (label known before the step), ``action``,
        ``perfect_action``, ``utility``), ``queries`` (DataFrame, one row for
        the initial model and one per inspection: ``query``, ``step``,
        ``label``, ``n_labelled``, ``n_missing_states`` (process states
        the updated model has no class for), the class proportions of the
        labelled set
        ``proportion_<label>``, with a semi-supervised update the effective
        proportions of labelled plus pseudo-labelled samples
        ``effective_proportion_<label>``, and, with a test set,
        ``decision_accuracy`` and ``f1_macro`` after the update, and with a
        budget policy its state after the inspection, ``budget_state``) and
        ``totals`` (dict, :func:`skrbal.metrics.campaign_summary` over the
        stream: ``n_decisions``, ``n_inspections``, ``inspection_spend``,
        ``utility``, ``perfect_information_utility``, ``regret``,
        ``net_utility``, ``decision_accuracy``, and ``n_warnings``),
        ``warnings`` (list of str: the warnings raised during the fit, such
        as :class:`~skrbal.exceptions.MissingStatesWarning`, one entry each)
        and, with a budget policy, ``budget_state`` (dict, the policy's final
        state). With ``inspections``: ``steps`` has ``method`` (name of the
        method used, ``None`` where none was), ``queries`` has ``method``,
        ``report`` and the posterior ``posterior_<label>`` (``label`` stays
        the true state, which the learner does not see) and ``totals`` has
        ``n_inspections_by_method`` and ``spend_by_method``.

    See Also
    --------
    ActiveLearner : The pool form, with modAL's interface.
    skrbal.query.evpi_scores : The EVPI of a batch of beliefs.

    Notes
    -----
    Learning from a report (``inspections``): a report whose posterior is
    one-hot on the true state (a perfect method) is a label, learnt exactly as
    without ``inspections``. Any other posterior is soft evidence: an
    estimator whose ``partial_fit`` (or, for a refit, ``fit``; a Pipeline's
    final step) takes ``sample_weight`` is given one copy of the sample per
    state, weighted by its posterior
    (:func:`~skrbal.inspection.weighted_copies`), which for
    :class:`~skrbal.mixture.BayesianGMMClassifier` and
    :class:`~skrbal.mixture.SemiSupervisedGMMClassifier` is the conjugate
    update with fractional responsibilities; any other estimator learns the
    most probable state. ``semi_supervised='em'`` keeps the posterior as the
    fixed responsibilities of the reported sample; ``'smoothing'`` needs
    known labels as anchors and rejects imperfect reports. A report the
    model's belief gives probability zero (a perfect method finding a state
    the model has no class for) is trusted alone: the posterior is the
    method's likelihood of the report, normalised.

    The model is called once per inspection (plus once per block without
    one), on all the steps up to the next inspection at once; the result is
    the same as deciding step by step. Beyond the model's own work (its
    updates and predictions), a walk costs about 0.05 ms per inspection with
    :class:`~skrbal.mixture.BayesianGMMClassifier`, whose ``predict_proba``
    skips re-validating arrays that are already valid
    (``benchmarks/bench_stream_overhead.py``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.active import RiskBasedLearner
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile(np.repeat([1, 2, 3, 4], 50), 3)
    >>> X = rng.normal(np.array([-5.0, -0.7, 5.8, 19.0])[y - 1], 1.0)[:, None]
    >>> learner = RiskBasedLearner(estimator=GaussianNB(),
    ...                            process=synthetic_decision_process())
    >>> learner = learner.fit(X, y, initial=[0, 60, 120, 180])
    >>> learner.history_.totals["n_inspections"] < 20
    True
    """

    def __init__(
        self,
        *,
        estimator,
        process: DecisionProcess,
        strategy="evpi",
        budget=None,
        n_queries: int | dict | None = None,
        inspections=None,
        follow_up: bool = False,
        update: str = "auto",
        semi_supervised: str | None = None,
        em_start: str = "labelled",
        initial_state=None,
        result_delay: int = 0,
        max_open_requests: int | None = None,
        pending_value: str = "fantasy",
        request_timeout: float | None = None,
        history_prior: float = 0.0,
        history_filter: bool = False,
        block_size: int = 256,
        history: str = "full",
        random_state=None,
        query="deprecated",
    ):
        self.estimator = estimator
        self.process = process
        self.strategy = strategy
        self.budget = budget
        self.n_queries = n_queries
        self.inspections = inspections
        self.follow_up = follow_up
        self.update = update
        self.semi_supervised = semi_supervised
        self.em_start = em_start
        self.initial_state = initial_state
        self.result_delay = result_delay
        self.max_open_requests = max_open_requests
        self.pending_value = pending_value
        self.request_timeout = request_timeout
        self.history_prior = history_prior
        self.history_filter = history_filter
        self.block_size = block_size
        self.history = history
        self.random_state = random_state
        self.query = query

    # -------------------------------------------------------------- #
    def _strategy_and_budget(self):
        """The strategy and budget policy in use (``query`` read if given)."""
        query = self.query
        if isinstance(query, str) and query == "deprecated":
            return self.strategy, self.budget
        warnings.warn(
            "RiskBasedLearner's query is deprecated: pass a BudgetPolicy as "
            "budget=..., and 'evpi', 'random' or a callable as strategy=..., "
            "the names RiskBasedAgent uses too.",
            FutureWarning,
            stacklevel=caller_stacklevel(),
        )
        if isinstance(query, BudgetPolicy):
            return "evpi", query
        return query, None

    def _check_params(self):
        """Name any invalid parameter; return the strategy and budget in use."""
        strategy, budget = self._strategy_and_budget()
        if isinstance(strategy, BudgetPolicy) or not (
            callable(strategy) or strategy in _STRATEGIES
        ):
            raise ValueError(
                f"strategy must be one of {_STRATEGIES} or a callable, got "
                f"{strategy!r}; a BudgetPolicy is budget=..."
            )
        if budget is not None and not isinstance(budget, BudgetPolicy):
            raise TypeError(
                "budget must be None or a skrbal.budget.BudgetPolicy, such as "
                f"CostThreshold() & SpendCap(...); got {budget!r}."
            )
        if budget is not None and strategy != "evpi":
            raise ValueError(
                f"budget decides for strategy='evpi', not for strategy="
                f"{strategy!r}; leave budget=None."
            )
        CampaignParams.of(self, budget=budget).check()
        if not isinstance(self.history_filter, bool | np.bool_):
            raise ValueError(
                f"history_filter must be a bool, got {self.history_filter!r}."
            )
        if self.history_filter and not self.history_prior:
            raise ValueError(
                "history_filter carries the prediction of history_prior from "
                "step to step; set history_prior > 0 (e.g. 0.5) to use it."
            )
        if not isinstance(self.follow_up, bool | np.bool_):
            raise ValueError(f"follow_up must be a bool, got {self.follow_up!r}.")
        if self.follow_up:
            # Names the missing methods (no perfect one, or no inspections).
            CampaignParams.of(self, budget=budget).campaign(follow_up=True)
        if self.inspections is not None:
            self._check_inspections(strategy)
        elif strategy == "random" and (
            not isinstance(self.n_queries, Integral) or self.n_queries < 0
        ):
            raise ValueError(
                "strategy='random' needs n_queries, a non-negative integer, got "
                f"{self.n_queries!r}."
            )
        if self.history not in _HISTORIES:
            raise ValueError(
                f"history must be one of {_HISTORIES}, got {self.history!r}."
            )
        if self.history == "queries" and self.inspections is not None:
            raise ValueError(
                "history='queries' does not support inspections yet (the totals "
                "by method need each step's method); use history='full'."
            )
        check_int(self.result_delay, "result_delay", minimum=0)
        if not isinstance(self.block_size, Integral) or self.block_size < 1:
            raise ValueError(
                f"block_size must be a positive integer, got {self.block_size!r}."
            )
        return strategy, budget

    def _check_inspections(self, strategy):
        """Check ``inspections`` with ``strategy`` and ``n_queries``."""
        if callable(strategy):
            raise ValueError(
                "a callable strategy decides whether to inspect but not with "
                "which method: use strategy='evpi' or 'random' with inspections."
            )
        if strategy != "random":
            return
        names = [method.name for method in self.inspections]
        counts = self.n_queries
        if isinstance(counts, Integral) and len(names) == 1:
            counts = {names[0]: counts}
        if not isinstance(counts, dict) or set(counts) - set(names):
            raise ValueError(
                "strategy='random' with inspections needs n_queries as a dict "
                f"{{method name: number of inspections}} over {names} (an int "
                f"only for a single method), got {self.n_queries!r}."
            )
        for name, count in counts.items():
            if not isinstance(count, Integral) or count < 0:
                raise ValueError(
                    f"n_queries[{name!r}] must be a non-negative integer, got "
                    f"{count!r}."
                )

    def _random_plan(self, known, rng):
        """Positions of ``strategy='random'``, the method index at each (-1: none)."""
        candidates = np.flatnonzero(~known)
        if self.inspections is None:
            counts = [self.n_queries]
        else:
            names = [method.name for method in self.inspections]
            given = (
                self.n_queries
                if isinstance(self.n_queries, dict)
                else {names[0]: self.n_queries}
            )
            counts = [int(given.get(name, 0)) for name in names]
        total = sum(counts)
        if total > candidates.size:
            raise ValueError(
                f"n_queries={self.n_queries} exceeds the {candidates.size} "
                "stream steps without a known label."
            )
        planned = np.full(known.shape[0], -1, dtype=np.intp)
        positions = rng.choice(candidates, size=total, replace=False)
        if self.inspections is None:
            planned[positions] = 0
        else:
            planned[positions] = rng.permutation(
                np.repeat(np.arange(len(counts)), counts)
            )
        return planned

    def _check_stream(self, X, y, initial, X_test, y_test):
        # A DataFrame goes to the estimator as it is (a ColumnTransformer may
        # select its columns by name, some of them not numeric); anything else
        # becomes the validated array the estimator would make of it.
        X = _checked_features(X, "X")
        validate_data(self, X, skip_check_array=True, reset=True)
        y = check_labels(y, "y")
        if y.shape != (X.shape[0],):
            raise ValueError(
                f"y must hold one label per stream step: X has {X.shape[0]} rows, "
                f"y has shape {y.shape}."
            )
        initial = np.asarray([] if initial is None else initial)
        if initial.size == 0:
            raise ValueError(
                "initial must index at least one labelled stream step: a "
                "classifier cannot be fitted on nothing."
            )
        if not np.issubdtype(initial.dtype, np.integer) or initial.ndim != 1:
            raise ValueError("initial must be a 1-d array of integer stream indices.")
        if initial.min() < 0 or initial.max() >= X.shape[0]:
            raise ValueError(
                f"initial indices must lie in [0, {X.shape[0]}), got "
                f"[{initial.min()}, {initial.max()}]."
            )
        initial = np.unique(initial)
        if (X_test is None) != (y_test is None):
            raise ValueError("X_test and y_test must be given together.")
        if X_test is not None:
            X_test = _checked_features(X_test, "X_test")
            y_test = check_labels(y_test, "y_test")
            if y_test.shape != (X_test.shape[0],):
                raise ValueError("y_test must hold one label per row of X_test.")
        return X, y, initial, X_test, y_test

    # -------------------------------------------------------------- #
    def _plan(self, strategy, planned, start, stop):
        """The fixed method choice of a block, or None where a policy decides.

        ``strategy='random'`` follows its drawn plan; a callable decides
        whether to inspect each step (with the one method, 0) from the
        block's EVPI and beliefs.
        """
        if strategy == "random":
            return lambda evpi, proba: planned[start:stop]
        if strategy == "evpi":
            return None

        def ask(evpi, proba):
            want = np.asarray(strategy(evpi, proba, self.process), dtype=bool)
            if want.shape != evpi.shape:
                raise ValueError(
                    f"the strategy callable returned shape {want.shape}, "
                    f"expected {evpi.shape}."
                )
            return np.where(want, 0, -1)

        return ask

    # -------------------------------------------------------------- #
    def fit(
        self, X, y, *, initial, X_test=None, y_test=None, actions=None, routine=None
    ):
        """Walk the stream in order, inspecting and learning as it goes.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_steps, n_features)
            The stream, in temporal order. A DataFrame reaches the estimator
            as a DataFrame (rows taken by position), so a Pipeline that
            selects columns by name works.
        y : array-like of shape (n_steps,)
            The oracle: the true label of every step, read only where the
            learner inspects (or where ``initial`` says it is known), and
            otherwise used only to score the decisions.
        initial : array-like of int
            Stream indices whose labels are known from the start (the initial
            labelled set; the paper uses about 0.2 % of the stream).
        X_test : array-like of shape (n_test, n_features), default=None
            Held-out data on which the model is scored after every inspection.
        y_test : array-like of shape (n_test,), default=None
            Its labels.
        actions : array-like of int of shape (n_steps,), default=None
            The actions the record itself shows between each step and the next
            (e.g. the repairs of :func:`~skrbal.datasets.make_degradation_stream`,
            as :func:`~skrbal.datasets.stream_test_split` aggregates them).
            ``semi_supervised='smoothing'`` and ``history_prior`` take their
            transitions from them (the agent's own actions are used when
            ``None``); and after a repair (an action other than the idle
            one) the labels taken before it count in the class weights as
            the repair left their state (the transition under that action),
            so a structure's damage labels no longer make its healthy steps
            after the repair look damaged.
        routine : array-like of int, default=None
            Stream indices labelled by routine inspections: inspections made
            anyway (a scheduled visit), not requested by the learner. Each
            label is learnt right after its step is decided, as a request's
            result is (the same update rule), unless the learner inspected
            that step or knew its label; it is not charged to the budget.
            ``history_.queries`` then has a ``routine`` column and
            ``history_.totals`` an ``n_routine`` count. As
            :meth:`RiskBasedAgent.record_label
            <skrbal.online.RiskBasedAgent.record_label>` called right after
            the step is observed.

        Returns
        -------
        self : RiskBasedLearner
        """
        strategy, budget = self._check_params()
        X, y, initial, X_test, y_test = self._check_stream(
            X, y, initial, X_test, y_test
        )
        rng = check_random_state(self.random_state)
        planned = None
        if strategy == "random":
            known = np.zeros(X.shape[0], dtype=bool)
            known[initial] = True
            planned = self._random_plan(known, rng)
        if actions is not None:
            actions = self._check_actions(actions, X.shape[0])
        if routine is not None:
            routine = _checked_steps(routine, X.shape[0], "routine")
        walk = StreamWalk(
            self,
            X,
            y,
            initial,
            X_test,
            y_test,
            actions,
            rng,
            (strategy, budget, planned),
            routine,
        ).run()
        self.estimator_ = model = walk.model
        self.classes_ = np.asarray(model.classes_)
        self.labelled_indices_ = np.asarray(walk.state.labelled, dtype=np.intp)
        self.n_skipped_segments_ = getattr(walk.update, "n_skipped_segments", 0)
        pseudo = getattr(walk.update, "pseudo", {})
        self.pseudo_labelled_indices_ = np.fromiter(
            pseudo, dtype=np.intp, count=len(pseudo)
        )
        self.pseudo_labels_ = np.array(list(pseudo.values()), dtype=y.dtype)
        self.history_ = walk.history()
        return self

    def _check_actions(self, actions, n_steps):
        """The record's actions as integer indices into the process's actions."""
        actions = np.asarray(actions)
        if actions.shape != (n_steps,):
            raise ValueError(
                f"actions must hold one action index per stream step ({n_steps}), "
                f"got shape {actions.shape}."
            )
        if not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(
                "actions must be integer action indices, got dtype "
                f"{actions.dtype}; convert them, e.g. actions.astype(int), after "
                "checking they hold whole numbers."
            )
        n_actions = self.process.n_actions
        if actions.size and (actions.min() < 0 or actions.max() >= n_actions):
            raise ValueError(
                f"actions must index the process's {n_actions} actions (0 to "
                f"{n_actions - 1}), got values from {actions.min()} to "
                f"{actions.max()}."
            )
        return actions

    # -------------------------------------------------------------- #
    def random_baseline(self, random_state=None) -> RiskBasedLearner:
        """An unfitted learner that inspects as often as this run, at random.

        The paper's baseline: the same number of inspections as a fitted EVPI
        run, at uniformly random stream positions. With ``inspections``, the
        same number with each method (the same spend), in random order.

        Parameters
        ----------
        random_state : int, RandomState instance or None, default=None
            Draws the positions.

        Returns
        -------
        learner : RiskBasedLearner
        """
        if self.inspections is None:
            n_inspections = self.history_.totals["n_inspections"]
        else:
            n_inspections = dict(self.history_.totals["n_inspections_by_method"])
        return clone(self).set_params(
            strategy="random",
            budget=None,
            query="deprecated",
            n_queries=n_inspections,
            random_state=random_state,
        )

    def predict(self, X):
        """Labels predicted by the final model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        validate_data(self, X, skip_check_array=True, reset=False)
        return self.estimator_.predict(X)

    def predict_proba(self, X):
        """Class probabilities of the final model (columns: its ``classes_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        validate_data(self, X, skip_check_array=True, reset=False)
        return self.estimator_.predict_proba(X)


def _checked_steps(steps, n_steps: int, name: str) -> np.ndarray:
    """Stream indices: a 1-d integer array within the stream, sorted, unique."""
    steps = np.asarray(steps)
    if steps.ndim != 1 or (steps.size and not np.issubdtype(steps.dtype, np.integer)):
        raise ValueError(f"{name} must be a 1-d array of integer stream indices.")
    if steps.size and (steps.min() < 0 or steps.max() >= n_steps):
        raise ValueError(
            f"{name} indices must lie in [0, {n_steps}), got "
            f"[{steps.min()}, {steps.max()}]."
        )
    return np.unique(steps).astype(np.intp)


def _checked_features(X, name: str):
    """``X`` checked as a 2-d sample matrix; a DataFrame is returned as it is."""
    if hasattr(X, "iloc"):
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"{name} must be a non-empty 2-d table, got {X.shape}.")
        return X
    return check_array(X, dtype="numeric", input_name=name)
