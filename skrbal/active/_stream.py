"""Risk-based active learning on a stream: inspect when EVPI exceeds the cost."""

from __future__ import annotations

import warnings
from collections import deque
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from skrbal._decision import DecisionProcess
from skrbal._labels import label_positions
from skrbal._learning import (
    PENDING_VALUES,
    DecisionKernel,
    StreamState,
    check_anchor_methods,
    check_labels,
    check_learning_params,
    clone_for,
    make_update,
    take_rows,
)
from skrbal.budget import BudgetPolicy
from skrbal.exceptions import (
    MissingStatesWarning,
    missing_states,
    missing_states_message,
)
from skrbal.inspection._value import _confusions
from skrbal.metrics import campaign_summary, class_proportions, decision_accuracy
from skrbal.metrics._decision_metrics import macro_f1

__all__ = ["RiskBasedLearner"]

_QUERIES = ("evpi", "random")
_HISTORIES = ("full", "queries")
# Steps per chunk when the totals are summed without a per-step history.
_TOTALS_CHUNK = 65536


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
    query : {'evpi', 'random'}, BudgetPolicy or callable, default='evpi'
        ``'evpi'`` inspects when EVPI exceeds the inspection cost;
        ``'random'`` inspects ``n_queries`` stream positions drawn uniformly
        (the paper's baseline); a :class:`~skrbal.budget.BudgetPolicy`
        decides from the EVPI under a budget (its ``times`` are the stream
        step indices, so periods and gaps count steps); a callable
        ``query(evpi, proba, process) -> bool array`` decides for a block of
        consecutive steps from each step's own EVPI and belief (it must not
        look across steps).
    n_queries : int or dict, default=None
        Number of inspections for ``query='random'``; with several
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
        it as soft evidence (see Notes).
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
        is reached nothing is inspected. ``None``: no cap.
    pending_value : {'fantasy', 'ignore'}, default='fantasy'
        How the value of a new request counts the results still pending
        (with ``result_delay``): ``'fantasy'`` averages it over the pending
        results' joint outcomes, taught to copies of the model by
        ``partial_fit`` (as batch Bayesian optimisation fantasises pending
        evaluations), and keeps the smaller of that and the plain value, so
        a step like a pending one loses value; ``'ignore'`` uses the plain
        value. Models without ``partial_fit`` use the plain value. Nothing
        changes while no result is pending.
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
        Draws the positions of ``query='random'`` and, with ``inspections``,
        the reports (one draw per inspection).

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
        query="evpi",
        n_queries: int | dict | None = None,
        inspections=None,
        update: str = "auto",
        semi_supervised: str | None = None,
        em_start: str = "labelled",
        initial_state=None,
        result_delay: int = 0,
        max_open_requests: int | None = None,
        pending_value: str = "fantasy",
        block_size: int = 256,
        history: str = "full",
        random_state=None,
    ):
        self.estimator = estimator
        self.process = process
        self.query = query
        self.n_queries = n_queries
        self.inspections = inspections
        self.update = update
        self.semi_supervised = semi_supervised
        self.em_start = em_start
        self.initial_state = initial_state
        self.result_delay = result_delay
        self.max_open_requests = max_open_requests
        self.pending_value = pending_value
        self.block_size = block_size
        self.history = history
        self.random_state = random_state

    # -------------------------------------------------------------- #
    def _check_params(self):
        if not isinstance(self.process, DecisionProcess):
            raise TypeError(
                f"process must be a DecisionProcess, got {type(self.process).__name__}."
            )
        if isinstance(self.query, BudgetPolicy):
            self.query.initial_state()  # names any invalid policy parameter
        elif not (callable(self.query) or self.query in _QUERIES):
            raise ValueError(
                f"query must be one of {_QUERIES}, a BudgetPolicy or a callable, "
                f"got {self.query!r}."
            )
        if self.inspections is not None:
            self._check_inspections()
        elif self.query == "random" and (
            not isinstance(self.n_queries, Integral) or self.n_queries < 0
        ):
            raise ValueError(
                "query='random' needs n_queries, a non-negative integer, got "
                f"{self.n_queries!r}."
            )
        check_learning_params(self.semi_supervised, self.update, self.em_start)
        if self.pending_value not in PENDING_VALUES:
            raise ValueError(
                f"pending_value must be one of {PENDING_VALUES}, got "
                f"{self.pending_value!r}."
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
        _check_count(self.result_delay, "result_delay", minimum=0)
        if self.max_open_requests is not None:
            _check_count(self.max_open_requests, "max_open_requests", minimum=1)
        if not isinstance(self.block_size, Integral) or self.block_size < 1:
            raise ValueError(
                f"block_size must be a positive integer, got {self.block_size!r}."
            )

    def _check_inspections(self):
        """Check ``inspections`` with ``query`` and ``n_queries``."""
        _confusions(self.inspections, self.process)
        if callable(self.query) and not isinstance(self.query, BudgetPolicy):
            raise ValueError(
                "a callable query decides whether to inspect but not with which "
                "method: use query='evpi' or 'random' with inspections."
            )
        if self.query != "random":
            return
        names = [method.name for method in self.inspections]
        counts = self.n_queries
        if isinstance(counts, Integral) and len(names) == 1:
            counts = {names[0]: counts}
        if not isinstance(counts, dict) or set(counts) - set(names):
            raise ValueError(
                "query='random' with inspections needs n_queries as a dict "
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
        """Positions of ``query='random'`` and the method index at each (-1: none)."""
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
    def _plan(self, planned, start, stop):
        """The fixed method choice of a block, or None where a policy decides.

        ``query='random'`` follows its drawn plan; a callable decides whether
        to inspect each step (with the one method, 0) from the block's EVPI
        and beliefs.
        """
        if self.query == "random":
            return lambda evpi, proba: planned[start:stop]
        if isinstance(self.query, BudgetPolicy) or self.query == "evpi":
            return None

        def ask(evpi, proba):
            want = np.asarray(self.query(evpi, proba, self.process), dtype=bool)
            if want.shape != evpi.shape:
                raise ValueError(
                    f"the query callable returned shape {want.shape}, expected "
                    f"{evpi.shape}."
                )
            return np.where(want, 0, -1)

        return ask

    def _evaluate(self, model, X_test, y_test):
        proba = model.predict_proba(X_test)
        accuracy = decision_accuracy(
            y_test, proba, self.process, classes=model.classes_
        )
        predicted = np.asarray(model.classes_)[np.argmax(proba, axis=1)]
        f1 = macro_f1(y_test, predicted)
        return {"decision_accuracy": accuracy, "f1_macro": f1}

    def _check_coverage(self, model, step, warned):
        """Number of process states ``model`` lacks; warn the first time in a fit."""
        classes = getattr(model, "classes_", None)
        seen, n_missing = self._seen_coverage
        if classes is seen and classes is not None:
            return n_missing  # the same classes_ array: the same answer
        missing = missing_states(classes, self._classes)
        self._seen_coverage = (classes, int(missing.size))
        if missing.size and not warned:
            where = "initial model" if step < 0 else f"model after step {step}"
            message = missing_states_message(
                f"The {where} ({type(model).__name__})", missing, self.process.classes_
            )
            warnings.warn(message, MissingStatesWarning, stacklevel=3)
            warned.append(message)
        return int(missing.size)

    def _query_record(
        self,
        number,
        step,
        state,
        update,
        model,
        X_test,
        y_test,
        n_missing,
        counts,
        report=None,
    ):
        """One row of ``history_.queries``; ``counts`` are the labelled set's.

        ``report``: the method, report and posterior columns of an inspection
        with ``inspections``. ``counts`` are fractional then (posteriors).
        """
        classes = self._classes
        n_labelled = round(float(counts.sum()))
        record = {
            "query": number,
            "step": step,
            "label": state.y[step] if step >= 0 else None,
            **(report or {}),
            "n_labelled": n_labelled,
            "n_missing_states": n_missing,
        }
        record.update(zip(self._proportion_keys, (counts / n_labelled).tolist()))
        effective = update.effective_labels(model, state)
        if effective is not None:
            proportions = class_proportions(effective, classes)
            record.update(
                {f"effective_proportion_{c}": p for c, p in zip(classes, proportions)}
            )
        if X_test is not None:
            record.update(self._evaluate(model, X_test, y_test))
        return record

    # -------------------------------------------------------------- #
    def fit(self, X, y, *, initial, X_test=None, y_test=None, actions=None):
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
            as :func:`~skrbal.datasets.stream_test_split` aggregates them). Used
            only by ``semi_supervised='smoothing'``, whose transitions they
            choose; the agent's own actions are used when ``None``.

        Returns
        -------
        self : RiskBasedLearner
        """
        self._check_params()
        X, y, initial, X_test, y_test = self._check_stream(
            X, y, initial, X_test, y_test
        )
        process = self.process
        # The process's states, validated once for the whole walk.
        self._classes = classes = process.classes_
        # Each step's state as a position in the process's states (naming any
        # unknown label), in the smallest integer type that holds them.
        label_index = label_positions(y, classes, owner="the process's classes")
        label_index = label_index.astype(np.min_scalar_type(len(classes) - 1))
        self._proportion_keys = [f"proportion_{c}" for c in classes]
        self._seen_coverage = (None, None)
        full = self.history == "full"
        n_steps = X.shape[0]
        known = np.zeros(n_steps, dtype=bool)
        known[initial] = True
        planned = None
        rng = check_random_state(self.random_state)
        if self.query == "random":
            planned = self._random_plan(known, rng)
        if self.inspections is not None and self.semi_supervised == "smoothing":
            check_anchor_methods(self.inspections, process)
        budget = self.query if isinstance(self.query, BudgetPolicy) else None
        kernel = DecisionKernel(
            process, self.inspections, budget, self.max_open_requests
        )

        if actions is not None:
            actions = self._check_actions(actions, n_steps)
        state = StreamState(
            X=X,
            y=y,
            known=known,
            labelled=list(initial),
            action=np.zeros(
                n_steps,
                dtype=np.intp if full else np.min_scalar_type(process.n_actions - 1),
            ),
            exogenous_actions=actions,
        )
        update = make_update(
            self.semi_supervised,
            process,
            self.update,
            self.initial_state,
            em_start=self.em_start,
        )
        model = update.prepare(clone_for(self.estimator, process))
        model = update.initial_fit(model, state)
        warned = []
        # Running count of the labelled set's states, for the query records.
        counts = np.bincount(label_index[initial], minlength=len(classes))
        if self.inspections is not None:
            counts = counts.astype(np.float64)
        # The inspection method of each inspected step, for the full history.
        method_used = np.full(n_steps, -1, dtype=np.intp) if full else None
        evpi = np.empty(n_steps) if full else None
        inspected = np.zeros(n_steps, dtype=bool)
        # The perfect-information action of a known step, by its state.
        perfect_of_state = process.perfect_information_action(classes)
        queries = [
            self._query_record(
                0,
                -1,
                state,
                update,
                model,
                X_test,
                y_test,
                self._check_coverage(model, -1, warned),
                counts,
            )
        ]
        budget_state = None
        if budget is not None:
            budget_state = budget.initial_state()
            queries[0]["budget_state"] = budget_state
        elif self.query == "evpi":
            budget_state = kernel.budget.initial_state()

        walk = _Walk(
            kernel=kernel,
            update=update,
            model=model,
            state=state,
            label_index=label_index,
            counts=counts,
            queries=queries,
            warned=warned,
            rng=rng,
            budget=budget,
            budget_state=budget_state,
            X_test=X_test,
            y_test=y_test,
        )
        start, block = 0, self.block_size
        while start < n_steps:
            # Results due by this step are learnt before it is decided.
            while walk.pending and walk.pending[0].arrival <= start:
                self._learn_result(walk, walk.pending.popleft())
            stop = min(n_steps, start + block)
            if walk.pending:
                stop = min(stop, walk.pending[0].arrival)
            rows = take_rows(X, slice(start, stop))
            proba = kernel.beliefs(walk.model, rows)
            plan = self._plan(planned, start, stop)
            fantasies = None
            if walk.pending and plan is None and self.pending_value == "fantasy":
                steps = [request.step for request in walk.pending]
                fantasies = kernel.fantasise(walk.model, rows, take_rows(X, steps))
            # A block ends at its first request: the model does not change
            # until that request's result arrives, so this only splits the
            # work, and keeps one request (and its method) per block.
            decided = kernel.decide(
                proba,
                np.arange(start, stop, dtype=float),
                walk.budget_state,
                available=~known[start:stop],
                n_open=len(walk.pending),
                first_only=True,
                plan=plan,
                fantasies=fantasies,
            )
            walk.budget_state = decided.budget_state
            end = start + decided.n_decided
            if full:
                evpi[start:end] = decided.evpi
            # The agent acts on the true state wherever it knows it (the
            # initially known steps); an inspected step's action is set when
            # its result arrives.
            chosen = decided.action
            now_known = known[start:end]
            chosen[now_known] = perfect_of_state[label_index[start:end][now_known]]
            state.action[start:end] = chosen
            if decided.requested.size:
                step, method = end - 1, int(decided.methods[0])
                inspected[step] = True
                if full:
                    method_used[step] = method
                walk.pending.append(
                    _Request(
                        arrival=step + 1 + self.result_delay,
                        step=step,
                        method=method,
                        belief=proba[step - start],
                    )
                )
                block = self.block_size
            else:
                block = min(2 * block, 64 * self.block_size)
            start = end
        # Results still on their way when the stream ends are learnt last.
        while walk.pending:
            self._learn_result(walk, walk.pending.popleft())
        model, budget_state = walk.model, walk.budget_state

        self.estimator_ = model
        self.classes_ = np.asarray(model.classes_)
        self.labelled_indices_ = np.asarray(state.labelled, dtype=np.intp)
        self.n_skipped_segments_ = getattr(update, "n_skipped_segments", 0)
        pseudo = getattr(update, "pseudo", {})
        self.pseudo_labelled_indices_ = np.fromiter(
            pseudo, dtype=np.intp, count=len(pseudo)
        )
        self.pseudo_labels_ = np.array(list(pseudo.values()), dtype=y.dtype)
        if full:
            perfect = perfect_of_state[label_index]
            self.history_ = self._history(
                y, evpi, state.action, perfect, inspected, initial, method_used
            )
        else:
            self.history_ = Bunch(
                steps=None,
                queries=None,
                totals=self._chunked_totals(y, state.action, inspected),
            )
        self.history_.queries = pd.DataFrame(queries)
        # The update rule's own warnings (smoothing with an unlabelled state).
        warned.extend(getattr(update, "warnings", ()))
        self.history_.warnings = warned
        self.history_.totals["n_warnings"] = len(warned)
        if budget is not None:
            self.history_.budget_state = budget_state
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

    def _learn_result(self, walk, request):
        """Read a request's result from the oracle and teach it to the model."""
        kernel, state, step = walk.kernel, walk.state, request.step
        true_state = state.y[step]
        result = kernel.simulate_result(
            request.method, request.belief, true_state, walk.rng
        )
        # The action at an inspected step waits for its result.
        state.action[step] = result.action
        if result.label is not None:
            state.known[step] = True
            state.labelled.append(step)
            walk.counts[walk.label_index[step]] += 1
            walk.model = walk.update.learn(walk.model, state, step)
        else:
            walk.counts += result.posterior
            walk.model = walk.update.learn_report(
                walk.model, state, step, result.posterior
            )
        walk.queries.append(
            self._query_record(
                len(walk.queries),
                step,
                state,
                walk.update,
                walk.model,
                walk.X_test,
                walk.y_test,
                self._check_coverage(walk.model, step, walk.warned),
                walk.counts,
                self._report_columns(request.method, result),
            )
        )
        if walk.budget is not None:
            walk.queries[-1]["budget_state"] = walk.budget_state

    def _report_columns(self, k, result):
        """The query record's columns of a report (None without methods)."""
        if self.inspections is None:
            return None
        columns = {"method": self.inspections[k].name, "report": result.report}
        columns.update(
            {f"posterior_{c}": p for c, p in zip(self._classes, result.posterior)}
        )
        return columns

    def _chunked_totals(self, y, action, inspected):
        """The totals of :func:`campaign_summary`, a chunk of steps at a time.

        For ``history='queries'``: the per-step temporaries then stay a chunk
        long; the sums are added up and the decision accuracy weighted by
        each chunk's decisions.
        """
        parts = [
            campaign_summary(
                y[start : start + _TOTALS_CHUNK],
                action[start : start + _TOTALS_CHUNK],
                self.process,
                inspected=inspected[start : start + _TOTALS_CHUNK],
            )
            for start in range(0, len(y), _TOTALS_CHUNK)
        ]
        totals = {key: sum(part[key] for part in parts) for key in parts[0]}
        totals["decision_accuracy"] = (
            sum(part["decision_accuracy"] * part["n_decisions"] for part in parts)
            / totals["n_decisions"]
        )
        return totals

    def _history(self, y, evpi, action, perfect, inspected, initial, method_used):
        known_before = np.zeros(y.shape[0], dtype=bool)
        known_before[initial] = True
        steps = pd.DataFrame(
            {
                "evpi": evpi,
                "inspected": inspected,
                "known": known_before,
                "action": action,
                "perfect_action": perfect,
                "utility": self.process.realised_utility(y, action),
            }
        )
        if self.inspections is None:
            summary = campaign_summary(y, action, self.process, inspected=inspected)
        else:
            names = np.array([m.name for m in self.inspections] + [None], dtype=object)
            steps["method"] = names[method_used]
            summary = campaign_summary(
                y,
                action,
                self.process,
                inspected=method_used,
                methods=self.inspections,
            )
        return Bunch(steps=steps, queries=None, totals=dict(summary))

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
            query="random", n_queries=n_inspections, random_state=random_state
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


@dataclass
class _Request:
    """An inspection on its way: its result is learnt before step ``arrival``."""

    arrival: int
    step: int
    method: int
    belief: np.ndarray  # when requested, for a report's posterior


@dataclass
class _Walk:
    """The running state of one walk of the stream."""

    kernel: DecisionKernel
    update: object
    model: object
    state: StreamState
    label_index: np.ndarray
    counts: np.ndarray
    queries: list
    warned: list
    rng: np.random.RandomState
    budget: BudgetPolicy | None
    budget_state: dict | None
    X_test: object
    y_test: object
    pending: deque = field(default_factory=deque)


def _check_count(value, name: str, minimum: int) -> None:
    """Name ``value`` unless it is an integer (not a bool) >= ``minimum``."""
    if not isinstance(value, Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")


def _checked_features(X, name: str):
    """``X`` checked as a 2-d sample matrix; a DataFrame is returned as it is."""
    if hasattr(X, "iloc"):
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"{name} must be a non-empty 2-d table, got {X.shape}.")
        return X
    return check_array(X, dtype="numeric", input_name=name)
