"""How a stream learner updates its model after an inspection.

Three policies share one interface: learn the inspected label alone
(supervised), refit by EM over everything observed so far, or smooth the
latent health states since the previous known label and learn their
pseudo-labels too (Hughes et al., section 4.1).

The interface: ``make_update(...)`` returns an update object with
``prepare(model)``, ``initial_fit(model, state)``, ``learn(model, state,
step)`` and ``effective_labels(model, state)``, all over a
:class:`StreamState`; :func:`clone_for` gives a fresh estimator the process's
labels (through a Pipeline and nested estimators too) and
:func:`check_state_coverage` says which states a fitted model lacks.
``make_update`` takes a keyword ``em_start`` (``'labelled'``, the default, or
``'previous'``): EM restarts from the labelled data at every refit unless
told to warm-start.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from inspect import signature

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import has_fit_parameter

from skrbal._decision import DecisionProcess
from skrbal.exceptions import (
    UnlabelledStateSmoothingWarning,
    caller_stacklevel,
    missing_states,
)
from skrbal.inspection import weighted_copies
from skrbal.smoothing import ImpossibleEvidenceError, smooth_segment

#: How a model learns a result (the learners' ``update`` parameter).
UPDATE_MODES = ("auto", "partial_fit", "refit")
#: The remedies for the sampling bias (``semi_supervised``).
SEMI_SUPERVISED = (None, "em", "smoothing")
#: Where an EM refit starts (``em_start``).
EM_STARTS = ("labelled", "previous")


def check_learning_params(semi_supervised, update, em_start) -> None:
    """Name any invalid ``semi_supervised``, ``update`` or ``em_start``.

    The one check of the learning parameters that
    :class:`~skrbal.active.RiskBasedLearner`,
    :class:`~skrbal.active.ActiveLearner` and
    :class:`~skrbal.online.RiskBasedAgent` share.
    """
    if semi_supervised not in SEMI_SUPERVISED:
        raise ValueError(
            f"semi_supervised must be None, 'em' or 'smoothing', got "
            f"{semi_supervised!r}."
        )
    if not isinstance(update, str) or update not in UPDATE_MODES:
        raise ValueError(f"update must be one of {UPDATE_MODES}, got {update!r}.")
    if not isinstance(em_start, str) or em_start not in EM_STARTS:
        raise ValueError(f"em_start must be one of {EM_STARTS}, got {em_start!r}.")


def can_partial_fit(model, y_new, mode: str) -> bool:
    """Whether to teach ``model`` the labels ``y_new`` by ``partial_fit``.

    ``mode`` is a learner's ``update``: ``'refit'`` never, ``'partial_fit'``
    whenever possible (and the model must have the method), ``'auto'`` when
    the model has it. Either way the model must be fitted already and know
    every label, since ``partial_fit`` cannot add a class.
    """
    if mode == "refit":
        return False
    has_partial = hasattr(model, "partial_fit")
    if mode == "partial_fit" and not has_partial:
        raise ValueError(
            f"update='partial_fit' but {type(model).__name__} has no partial_fit."
        )
    known = getattr(model, "classes_", None)
    if not has_partial or known is None:
        return False
    # Sets, not np.isin: y_new is an inspection or two, and isin's set-up
    # costs more than the rest of the update's bookkeeping.
    return set(np.asarray(y_new).tolist()) <= set(np.asarray(known).tolist())


def take_rows(X, rows):
    """Rows of the stream: an array indexed directly, a DataFrame by position.

    A DataFrame stays one, so a ColumnTransformer can still select its
    columns by name (``sklearn.utils._safe_indexing``).
    """
    if type(X) is np.ndarray:
        return X[rows]
    return _safe_indexing(X, rows)


def stack_rows(a, b):
    """The rows of ``a`` followed by those of ``b`` (``b`` alone if ``a`` is None).

    Two DataFrames stay one, so a ColumnTransformer can still select its
    columns by name; anything else becomes an array.
    """
    if a is None:
        return b
    if hasattr(a, "iloc") and hasattr(b, "iloc"):
        return pd.concat([a, b], axis=0, ignore_index=True)
    if hasattr(a, "iloc"):
        a = a.to_numpy()
    if hasattr(b, "iloc"):
        b = b.to_numpy()
    return np.concatenate([np.asarray(a), np.asarray(b)], axis=0)


@dataclass
class StreamState:
    """What the learner knows while it walks the stream."""

    X: np.ndarray  # or a DataFrame, kept as one
    y: np.ndarray  # the oracle; read only where ``known``
    known: np.ndarray  # bool per step: label inspected or given initially
    labelled: list  # stream indices of known labels, in the order learned
    action: np.ndarray  # action taken at each decided step
    exogenous_actions: np.ndarray | None  # the record's actions, if given
    # Steps known only through an imperfect report: step -> posterior over
    # the process's states (in their order), in the order reported.
    soft: dict = field(default_factory=dict)
    # Actions the owner recorded as taken (an agent's record_action):
    # step -> action index; the learner's are ``exogenous_actions``.
    told: dict = field(default_factory=dict)


def _weight_keyword(model, method: str = "fit"):
    """The keyword that passes ``sample_weight`` to ``model``'s ``method``.

    ``'sample_weight'`` when the method takes it, ``'<step>__sample_weight'``
    for a Pipeline whose final step's ``fit`` takes it (a Pipeline routes
    ``step__param`` to that step), ``None`` when the model takes no weights.
    """
    steps = getattr(model, "steps", None)
    if steps:
        if method != "fit":
            return None
        name, last = steps[-1]
        inner = _weight_keyword(last, "fit")
        return None if inner is None else f"{name}__{inner}"
    if not hasattr(model, method):
        return None
    if method == "fit":
        takes = has_fit_parameter(model, "sample_weight")
    else:
        takes = "sample_weight" in signature(getattr(model, method)).parameters
    return "sample_weight" if takes else None


def soft_rows(model, X, posterior, classes, method: str = "fit"):
    """Training rows for samples known only through a posterior over states.

    The rule for learning from an imperfect report (soft evidence):

    - a row whose posterior is one-hot is its state's label, unweighted, so
      a perfect report gives exactly the update of a label;
    - otherwise, when ``model.<method>`` takes ``sample_weight`` (a
      Pipeline's ``fit`` through its final step), one copy per state of
      positive posterior, weighted by it (:func:`skrbal.inspection.
      weighted_copies`): for the Bayesian and semi-supervised GMMs this is
      the conjugate update with fractional responsibilities, or, to update a
      fitted model with ``mean_precision_posterior_``, the weights that give
      each class's exact posterior mean (``mean_precision`` there);
    - otherwise the most probable state (ties: the first in ``classes``).

    Returns ``(X_rows, y_rows, weight)``, ``weight`` None when every row is
    an unweighted label, and the keyword passing ``weight`` to ``method``.
    """
    posterior = np.asarray(posterior, dtype=np.float64)
    classes = np.asarray(classes)
    one_hot = posterior.max(axis=1) == 1.0
    keyword = _weight_keyword(model, method)
    if one_hot.all() or keyword is None:
        return X, classes[np.argmax(posterior, axis=1)], None, keyword
    kappa = _mean_precision(model, classes) if method == "partial_fit" else None
    return (*weighted_copies(X, posterior, classes, mean_precision=kappa), keyword)


def _mean_precision(model, classes):
    """A fitted model's ``kappa`` per class of ``classes``, or None."""
    kappa = getattr(model, "mean_precision_posterior_", None)
    fitted = getattr(model, "classes_", None)
    if kappa is None or fitted is None or not np.array_equal(fitted, classes):
        return None
    return np.asarray(kappa, dtype=np.float64)


class SupervisedUpdate:
    """Learn the inspected label: ``partial_fit`` when possible, else refit."""

    def __init__(self, process: DecisionProcess, mode: str):
        self.process = process
        self.mode = mode

    def prepare(self, model):
        """Adapt the cloned estimator before the initial fit."""
        return model

    def initial_fit(self, model, state: StreamState):
        return model.fit(*self._labelled_set(state))

    def _add(self, model, state: StreamState, X_new, y_new, training_set):
        """Teach ``X_new, y_new``; refit on ``training_set()`` when needed.

        ``training_set`` returns ``(X_all, y_all, weight, keyword)`` (see
        :func:`_fit_weighted`); it is called only for a refit, so a
        ``partial_fit`` never gathers the whole labelled set.
        """
        if can_partial_fit(model, y_new, self.mode):
            return model.partial_fit(X_new, y_new)
        return _fit_weighted(model, *training_set())

    def _labelled_set(self, state: StreamState):
        idx = np.asarray(state.labelled)
        return take_rows(state.X, idx), state.y[idx]

    def learn(self, model, state: StreamState, step: int):
        return self._add(
            model,
            state,
            take_rows(state.X, [step]),
            state.y[[step]],
            lambda: self._soft_training_set(model, state),
        )

    def learn_report(self, model, state: StreamState, step: int, posterior):
        """Learn the report of ``step``, known as a posterior over the states.

        ``posterior`` (shape ``(n_states,)``, the process's order) is kept in
        ``state.soft``; see :func:`soft_rows` for how it is taught. An
        incremental update needs ``partial_fit`` to take ``sample_weight``
        when the posterior is not one-hot; otherwise the model is refitted.
        """
        state.soft[step] = posterior
        classes = self.process.classes_
        X_new, y_new, weight, keyword = soft_rows(
            model,
            take_rows(state.X, [step]),
            posterior[None, :],
            classes,
            "partial_fit",
        )
        if (weight is None or keyword is not None) and can_partial_fit(
            model, y_new, self.mode
        ):
            extra = {} if weight is None else {keyword: weight}
            return model.partial_fit(X_new, y_new, **extra)
        return _fit_weighted(model, *self._soft_training_set(model, state))

    def _soft_training_set(self, model, state: StreamState):
        """Labelled rows plus the reported steps' rows: ``(X, y, w, keyword)``."""
        X_known, y_known = self._labelled_set(state)
        return _with_soft_rows(model, state, X_known, y_known, self.process)

    def effective_labels(self, model, state: StreamState):
        """Labels the model is trained on, pseudo-labels included."""
        return None


class EMUpdate(SupervisedUpdate):
    """Refit by EM over all labelled and unlabelled observations so far.

    A :class:`~skrbal.mixture.BayesianGMMClassifier` (alone or as the final
    step of a Pipeline) is turned into the
    :class:`~skrbal.mixture.SemiSupervisedGMMClassifier` with the same priors;
    any other estimator must accept ``-1`` for unlabelled samples in ``fit``.
    With numeric labels the unlabelled samples are marked with the integer
    ``-1``; with any other labels (strings) ``y`` becomes an object array
    holding ``-1`` there, as :mod:`sklearn.semi_supervised` expects, so ``-1``
    can never be confused with a state.

    ``em_start='labelled'`` (the paper's behaviour) restarts EM from the
    supervised model of the labelled samples at every refit;
    ``'previous'`` warm-starts from the previous MAP solution, which is faster
    but can lock a class out for good: a state with no labelled sample yet
    may have had (nearly) zero weight in the previous solution, and EM started
    there never gives it responsibility back.
    """

    def __init__(self, process: DecisionProcess, mode: str, em_start="labelled"):
        super().__init__(process, mode)
        if em_start not in EM_STARTS:
            raise ValueError(f"em_start must be one of {EM_STARTS}, got {em_start!r}.")
        if _numeric(process.classes_) and np.any(process.classes_ == -1):
            raise ValueError(
                "semi_supervised='em' marks unlabelled samples with -1, which is "
                f"one of the process's states {process.classes_.tolist()}; "
                "relabel the states."
            )
        self.em_start = em_start

    def prepare(self, model):
        return _semi_supervised_version(model, self.em_start == "previous")

    def learn(self, model, state: StreamState, step: int):
        mask = (np.arange(state.X.shape[0]) <= step) | state.known
        if state.soft:
            # Reported steps enter with their posterior, not as unlabelled.
            mask[list(state.soft)] = False
        idx = np.flatnonzero(mask)
        X, y = take_rows(state.X, idx), _with_unlabelled(state.y[idx], state.known[idx])
        if not state.soft:
            return model.fit(X, y)
        return _fit_weighted(model, *_with_soft_rows(model, state, X, y, self.process))

    def learn_report(self, model, state: StreamState, step: int, posterior):
        """Refit by EM with the report of ``step`` as fixed responsibilities."""
        state.soft[step] = posterior
        return self.learn(model, state, step)

    def effective_labels(self, model, state: StreamState):
        return getattr(_final_step(model), "transduction_", None)


def _with_soft_rows(model, state: StreamState, X, y, process):
    """``X, y`` followed by the rows of the reported steps (:func:`soft_rows`).

    Returns ``(X, y, weight, keyword)``, ``weight`` None when every row is an
    unweighted label (then ``X, y`` are what a label-only learner would fit).
    """
    if not state.soft:
        return X, y, None, None
    steps = np.fromiter(state.soft, dtype=np.intp, count=len(state.soft))
    posterior = np.stack(list(state.soft.values()))
    X_soft, y_soft, weight, keyword = soft_rows(
        model, take_rows(state.X, steps), posterior, process.classes_, "fit"
    )
    labels = np.concatenate([y, y_soft.astype(y.dtype, copy=False)])
    if weight is not None:
        weight = np.concatenate([np.ones(y.shape[0]), weight])
    return stack_rows(X, X_soft), labels, weight, keyword


def _fit_weighted(model, X, y, weight, keyword):
    """``model.fit(X, y)``, with ``weight`` through ``keyword`` when given."""
    if weight is None:
        return model.fit(X, y)
    return model.fit(X, y, **{keyword: weight})


def _numeric(labels) -> bool:
    return np.asarray(labels).dtype.kind in "biuf"


def _with_unlabelled(y: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``y`` with ``-1`` where the label is not known, in a dtype that holds both.

    ``np.where(known, y, -1)`` would turn string labels into the string
    ``'-1'``; an object array keeps every label and the integer marker.
    """
    if _numeric(y):
        return np.where(known, y, -1)
    labels = y.astype(object)
    labels[~known] = -1
    return labels


def _final_step(model):
    """The estimator at the end of a Pipeline (the model itself otherwise)."""
    steps = getattr(model, "steps", None)
    return _final_step(steps[-1][1]) if steps else model


def _semi_supervised_version(model, warm_start: bool):
    """``model`` with its Bayesian GMM (possibly a Pipeline's last step) made
    semi-supervised, with the same priors and the requested EM start."""
    from skrbal.mixture import BayesianGMMClassifier, SemiSupervisedGMMClassifier

    steps = getattr(model, "steps", None)
    if steps:
        name, last = steps[-1]
        return model.set_params(**{name: _semi_supervised_version(last, warm_start)})
    if isinstance(model, SemiSupervisedGMMClassifier):
        return model.set_params(warm_start=warm_start)
    if isinstance(model, BayesianGMMClassifier):
        return SemiSupervisedGMMClassifier(**model.get_params(), warm_start=warm_start)
    return model


class SmoothingUpdate(SupervisedUpdate):
    """Pseudo-label the states between known labels by forward-backward.

    After each inspection the segments since the previous known label are
    smoothed once, with the model of the moment, anchored at both ends by the
    known labels; before the first known label the structure is assumed to
    start in ``initial_state``. The actions between the anchors are the
    record's (``actions`` given to ``fit``) or else the agent's own. A
    segment the transition model cannot explain (say, a repair the actions do
    not show) is left unlabelled and counted in ``n_skipped_segments``.

    The first segment smoothed while some state of the process has no
    labelled example raises
    :class:`~skrbal.exceptions.UnlabelledStateSmoothingWarning` (once per fit;
    its message is kept in ``warnings``): a pseudo-label can name such a state
    only through the model's prior density, and the pseudo-labels of the
    other states can keep the EVPI too low to ever inspect it.
    """

    def __init__(self, process, mode, initial_state):
        super().__init__(process, mode)
        self.initial_state = initial_state
        self.last_anchor = -1
        self.pseudo = {}
        self.n_skipped_segments = 0
        self.warnings = []

    def prepare(self, model):
        if not hasattr(model, "class_log_density"):
            raise ValueError(
                "semi_supervised='smoothing' needs an estimator with "
                f"class_log_density(X), such as BayesianGMMClassifier; "
                f"{type(model).__name__} has none."
            )
        return model

    def _segment(self, model, state, start, end):
        """Pseudo-labels of steps start+1 .. end-1 (start=-1: before any label)."""
        hidden = np.arange(start + 1, end)
        actions = (
            state.exogenous_actions
            if state.exogenous_actions is not None
            else state.action
        )
        # The transition into step 0 leaves an assumed state with "do nothing".
        into = actions[start:end] if start >= 0 else np.r_[0, actions[:end]]
        if not self.warnings:
            self._check_unlabelled_states(state, start, end)
        result = smooth_segment(
            model,
            take_rows(state.X, hidden),
            self.process,
            into.astype(np.intp),
            start_label=state.y[start] if start >= 0 else None,
            end_label=state.y[end],
            initial_state=self.initial_state,
        )
        return hidden, result.pseudo_labels

    def _check_unlabelled_states(self, state, start, end):
        """Warn if a state has no labelled example yet (once per fit)."""
        classes = self.process.classes_
        unlabelled = classes[~np.isin(classes, state.y[np.asarray(state.labelled)])]
        if unlabelled.size == 0:
            return
        message = (
            f"semi_supervised='smoothing' pseudo-labelled stream steps {start + 1} "
            f"to {end - 1} while no labelled example shows the process's state(s) "
            f"{unlabelled.tolist()}. A pseudo-label can name such a state only "
            "through the model's prior density, so its steps get another "
            "state's pseudo-label, and the pseudo-labels make the model "
            "confident about the states it has: the EVPI can stay below the "
            "inspection cost where the unlabelled state lies, and no inspection "
            "then reveals it. Label an example of every state in the initial "
            "set, or use semi_supervised=None."
        )
        warnings.warn(
            message, UnlabelledStateSmoothingWarning, stacklevel=caller_stacklevel()
        )
        self.warnings.append(message)

    def learn(self, model, state: StreamState, step: int):
        if step < self.last_anchor:
            return self._learn_late(model, state, step)
        anchors = np.flatnonzero(state.known[self.last_anchor + 1 : step + 1])
        anchors = anchors + self.last_anchor + 1
        new_steps, new_labels = [], []
        previous = self.last_anchor
        for anchor in anchors:
            if anchor - previous > 1:
                try:
                    hidden, labels = self._segment(model, state, previous, anchor)
                except ImpossibleEvidenceError:
                    self.n_skipped_segments += 1
                else:
                    self.pseudo.update(zip(hidden.tolist(), labels.tolist()))
                    new_steps.append(hidden)
                    new_labels.append(labels)
            previous = anchor
        self.last_anchor = step
        new_steps.append(np.array([step]))
        new_labels.append(state.y[[step]])
        X_new = take_rows(state.X, np.concatenate(new_steps))
        y_new = np.concatenate(new_labels)

        def training_set():
            steps_all, labels_all = self._training_set(state)
            return take_rows(state.X, steps_all), labels_all, None, None

        return self._add(model, state, X_new, y_new, training_set)

    def _learn_late(self, model, state: StreamState, step: int):
        """A label older than the last anchor (a delayed inspection result).

        Its segment was smoothed already: the true label replaces the step's
        pseudo-label, by a refit when there was one (``partial_fit`` cannot
        unlearn it), and the segment is not smoothed again.
        """
        had_pseudo_label = self.pseudo.pop(step, None) is not None
        y_new = state.y[[step]]
        if not had_pseudo_label and can_partial_fit(model, y_new, self.mode):
            return model.partial_fit(take_rows(state.X, [step]), y_new)
        steps_all, labels_all = self._training_set(state)
        return model.fit(take_rows(state.X, steps_all), labels_all)

    def learn_report(self, model, state: StreamState, step: int, posterior):
        raise ValueError(
            "semi_supervised='smoothing' anchors the smoothed segments at known "
            "labels and cannot use an imperfect report (a posterior that is not "
            "one-hot); use perfect inspections, or semi_supervised='em' or None."
        )

    def _training_set(self, state):
        labelled = np.asarray(state.labelled)
        pseudo_steps = np.fromiter(self.pseudo, dtype=np.intp, count=len(self.pseudo))
        pseudo_labels = np.array(list(self.pseudo.values()), dtype=state.y.dtype)
        return (
            np.concatenate([labelled, pseudo_steps]),
            np.concatenate([state.y[labelled], pseudo_labels]),
        )

    def effective_labels(self, model, state: StreamState):
        return self._training_set(state)[1]


def make_update(semi_supervised, process, mode, initial_state, *, em_start="labelled"):
    """The update policy for a learner's ``semi_supervised`` parameter."""
    if semi_supervised is None:
        return SupervisedUpdate(process, mode)
    if semi_supervised == "em":
        return EMUpdate(process, mode, em_start)
    if semi_supervised == "smoothing":
        if initial_state is None:
            initial_state = process.classes_[0]
        return SmoothingUpdate(process, mode, initial_state)
    raise ValueError(
        f"semi_supervised must be None, 'em' or 'smoothing', got {semi_supervised!r}."
    )


def clone_for(estimator, process):
    """Clone ``estimator``; give it every state's label where it takes ``classes``.

    Every ``classes`` parameter left at ``None``, at the top level or nested
    (the final step of a Pipeline, the base estimator of a wrapper: any key
    of ``get_params(deep=True)`` that is ``classes`` or ends in
    ``__classes``), is set to the process's states. A model told all labels
    up front returns a column for each state even when the initial labelled
    set lacks some of them, and can be updated with ``partial_fit`` when a
    new state is first inspected.
    """
    model = clone(estimator)
    return give_classes(model, process.classes_)


def give_classes(model, classes):
    """Set every ``classes`` parameter of ``model`` left at ``None`` to ``classes``.

    Returns ``model`` (changed in place).
    """
    params = model.get_params(deep=True) if hasattr(model, "get_params") else {}
    wanted = {
        key: classes
        for key, value in params.items()
        if (key == "classes" or key.endswith("__classes")) and value is None
    }
    if wanted:
        model.set_params(**wanted)
    return model


def check_learnable(model, process, who: str) -> None:
    """Refuse a fitted model that knows only one of the process's states.

    Its every belief is certain, so the EVPI is 0 at every step: no inspection
    would ever be made and the model would never learn a second state (a
    campaign that silently does nothing). ``who`` names the model.
    """
    states = process.classes_
    if states.size < 2 or getattr(model, "classes_", None) is None:
        return
    known = np.setdiff1d(states, missing_states(model.classes_, states))
    if known.size < 2:
        raise ValueError(
            f"{who} ({type(model).__name__}) knows only state(s) "
            f"{known.tolist()} of the process's states {states.tolist()}: every "
            "belief is certain, so the EVPI is 0 at every step and no inspection "
            "would ever be made. Label at least two states initially, or use an "
            "estimator that can be told every state (a classes parameter, as "
            "BayesianGMMClassifier has)."
        )


def check_state_coverage(model, process) -> np.ndarray:
    """The process's states for which the fitted ``model`` has no class."""
    return missing_states(getattr(model, "classes_", None), process.classes_)
