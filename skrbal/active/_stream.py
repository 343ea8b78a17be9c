"""Risk-based active learning on a stream: inspect when EVPI exceeds the cost."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import f1_score
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_array

from skrbal._decision import DecisionProcess
from skrbal._labels import label_positions
from skrbal.active._semi import (
    _EM_STARTS,
    StreamState,
    check_labels,
    clone_for,
    make_update,
)
from skrbal.budget import BudgetPolicy
from skrbal.exceptions import (
    MissingStatesWarning,
    missing_states,
    missing_states_message,
)
from skrbal.metrics import campaign_summary, class_proportions, decision_accuracy

__all__ = ["RiskBasedLearner"]

_QUERIES = ("evpi", "random")
_UPDATES = ("auto", "partial_fit", "refit")


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
    n_queries : int, default=None
        Number of inspections for ``query='random'``.
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
    block_size : int, default=256
        Steps predicted at once while no inspection happens; the block doubles
        (up to 64 times) after each block without one. Only speed depends on
        it.
    random_state : int, RandomState instance or None, default=None
        Draws the positions of ``query='random'``.

    Attributes
    ----------
    estimator_ : classifier
        The final model.
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
        ``steps`` (DataFrame, one row per stream step: ``evpi``, ``inspected``,
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
        state).

    See Also
    --------
    ActiveLearner : The pool form, with modAL's interface.
    skrbal.query.evpi_scores : The EVPI of a batch of beliefs.

    Notes
    -----
    The model is called once per inspection (plus once per block without
    one), on all the steps up to the next inspection at once; the result is
    the same as deciding step by step.

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
        n_queries: int | None = None,
        update: str = "auto",
        semi_supervised: str | None = None,
        em_start: str = "labelled",
        initial_state=None,
        block_size: int = 256,
        random_state=None,
    ):
        self.estimator = estimator
        self.process = process
        self.query = query
        self.n_queries = n_queries
        self.update = update
        self.semi_supervised = semi_supervised
        self.em_start = em_start
        self.initial_state = initial_state
        self.block_size = block_size
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
        if self.query == "random" and (
            not isinstance(self.n_queries, Integral) or self.n_queries < 0
        ):
            raise ValueError(
                "query='random' needs n_queries, a non-negative integer, got "
                f"{self.n_queries!r}."
            )
        if self.update not in _UPDATES:
            raise ValueError(f"update must be one of {_UPDATES}, got {self.update!r}.")
        if self.em_start not in _EM_STARTS:
            raise ValueError(
                f"em_start must be one of {_EM_STARTS}, got {self.em_start!r}."
            )
        if not isinstance(self.block_size, Integral) or self.block_size < 1:
            raise ValueError(
                f"block_size must be a positive integer, got {self.block_size!r}."
            )

    def _check_stream(self, X, y, initial, X_test, y_test):
        X = check_array(X, dtype=None if hasattr(X, "iloc") else "numeric")
        y = check_labels(y, "y")
        if y.shape != (X.shape[0],):
            raise ValueError(
                f"y must hold one label per stream step: X has {X.shape[0]} rows, "
                f"y has shape {y.shape}."
            )
        self.process.perfect_information_action(y)  # names any unknown label
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
            X_test = check_array(X_test)
            y_test = check_labels(y_test, "y_test")
            if y_test.shape != (X_test.shape[0],):
                raise ValueError("y_test must hold one label per row of X_test.")
        return X, y, initial, X_test, y_test

    # -------------------------------------------------------------- #
    def _beliefs(self, model, X):
        proba = model.predict_proba(X)
        return self.process.align_proba(proba, classes=model.classes_)

    def _wanted(self, evpi, proba, start, stop, known, planned):
        if self.query == "evpi":
            want = evpi > self.process.inspection_cost
        elif self.query == "random":
            want = planned[start:stop]
        else:
            want = np.asarray(self.query(evpi, proba, self.process), dtype=bool)
            if want.shape != evpi.shape:
                raise ValueError(
                    f"the query callable returned shape {want.shape}, expected "
                    f"{evpi.shape}."
                )
        return want & ~known[start:stop]

    def _evaluate(self, model, X_test, y_test):
        proba = model.predict_proba(X_test)
        accuracy = decision_accuracy(
            y_test, proba, self.process, classes=model.classes_
        )
        predicted = np.asarray(model.classes_)[np.argmax(proba, axis=1)]
        f1 = f1_score(y_test, predicted, average="macro", zero_division=0)
        return {"decision_accuracy": accuracy, "f1_macro": f1}

    def _check_coverage(self, model, step, warned):
        """Number of process states ``model`` lacks; warn the first time in a fit."""
        missing = missing_states(getattr(model, "classes_", None), self._classes)
        if missing.size and not warned:
            where = "initial model" if step < 0 else f"model after step {step}"
            message = missing_states_message(
                f"The {where} ({type(model).__name__})", missing, self.process.classes_
            )
            warnings.warn(message, MissingStatesWarning, stacklevel=3)
            warned.append(message)
        return int(missing.size)

    def _query_record(
        self, number, step, state, update, model, X_test, y_test, n_missing, counts
    ):
        """One row of ``history_.queries``; ``counts`` are the labelled set's."""
        classes = self._classes
        n_labelled = int(counts.sum())
        record = {
            "query": number,
            "step": step,
            "label": state.y[step] if step >= 0 else None,
            "n_labelled": n_labelled,
            "n_missing_states": n_missing,
        }
        proportions = counts / n_labelled
        record.update({f"proportion_{c}": p for c, p in zip(classes, proportions)})
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
        X : array-like of shape (n_steps, n_features)
            The stream, in temporal order.
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
        n_steps = X.shape[0]
        known = np.zeros(n_steps, dtype=bool)
        known[initial] = True
        planned = np.zeros(n_steps, dtype=bool)
        if self.query == "random":
            candidates = np.flatnonzero(~known)
            if self.n_queries > candidates.size:
                raise ValueError(
                    f"n_queries={self.n_queries} exceeds the {candidates.size} "
                    "stream steps without a known label."
                )
            rng = check_random_state(self.random_state)
            planned[rng.choice(candidates, size=self.n_queries, replace=False)] = True

        if actions is not None:
            actions = self._check_actions(actions, n_steps)
        state = StreamState(
            X=X,
            y=y,
            known=known,
            labelled=list(initial),
            action=np.zeros(n_steps, dtype=np.intp),
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
        label_index = label_positions(y, classes, owner="the process's classes")
        counts = np.bincount(label_index[initial], minlength=len(classes))

        evpi = np.empty(n_steps)
        inspected = np.zeros(n_steps, dtype=bool)
        perfect = process.perfect_information_action(y)
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
        policy = self.query if isinstance(self.query, BudgetPolicy) else None
        if policy is not None:
            budget_state = policy.initial_state()
            queries[0]["budget_state"] = budget_state

        start, block = 0, self.block_size
        while start < n_steps:
            stop = min(n_steps, start + block)
            proba = self._beliefs(model, X[start:stop])
            block_evpi = process.evpi(proba)
            if policy is not None:
                # The policy's state absorbs the steps up to its first
                # inspection, which is where this block ends.
                hit, budget_state = policy.scan(
                    block_evpi,
                    np.arange(start, stop, dtype=float),
                    ~known[start:stop],
                    process.inspection_cost,
                    budget_state,
                )
                hits = np.array([hit] if hit >= 0 else [], dtype=np.intp)
            else:
                hits = np.flatnonzero(
                    self._wanted(block_evpi, proba, start, stop, known, planned)
                )
            decided = hits[0] + 1 if hits.size else stop - start
            end = start + decided
            evpi[start:end] = block_evpi[:decided]
            if hits.size:
                inspected[end - 1] = known[end - 1] = True
            # The agent acts on the true state wherever it knows it.
            state.action[start:end] = np.where(
                known[start:end],
                perfect[start:end],
                process.optimal_action(proba[:decided]),
            )
            if hits.size:
                step = end - 1
                state.labelled.append(step)
                counts[label_index[step]] += 1
                model = update.learn(model, state, step)
                queries.append(
                    self._query_record(
                        len(queries),
                        step,
                        state,
                        update,
                        model,
                        X_test,
                        y_test,
                        self._check_coverage(model, step, warned),
                        counts,
                    )
                )
                if policy is not None:
                    queries[-1]["budget_state"] = budget_state
                block = self.block_size
            else:
                block = min(2 * block, 64 * self.block_size)
            start = end

        self.estimator_ = model
        self.labelled_indices_ = np.asarray(state.labelled, dtype=np.intp)
        self.n_skipped_segments_ = getattr(update, "n_skipped_segments", 0)
        pseudo = getattr(update, "pseudo", {})
        self.pseudo_labelled_indices_ = np.fromiter(
            pseudo, dtype=np.intp, count=len(pseudo)
        )
        self.pseudo_labels_ = np.array(list(pseudo.values()), dtype=y.dtype)
        self.history_ = self._history(
            y, evpi, state.action, perfect, inspected, initial
        )
        self.history_.queries = pd.DataFrame(queries)
        self.history_.warnings = warned
        self.history_.totals["n_warnings"] = len(warned)
        if policy is not None:
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

    def _history(self, y, evpi, action, perfect, inspected, initial):
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
        totals = dict(campaign_summary(y, action, self.process, inspected=inspected))
        return Bunch(steps=steps, queries=None, totals=totals)

    # -------------------------------------------------------------- #
    def random_baseline(self, random_state=None) -> RiskBasedLearner:
        """An unfitted learner that inspects as often as this run, at random.

        The paper's baseline: the same number of inspections as a fitted EVPI
        run, at uniformly random stream positions.

        Parameters
        ----------
        random_state : int, RandomState instance or None, default=None
            Draws the positions.

        Returns
        -------
        learner : RiskBasedLearner
        """
        n_inspections = self.history_.totals["n_inspections"]
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
        return self.estimator_.predict_proba(X)
