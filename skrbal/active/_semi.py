"""How a stream learner updates its model after an inspection.

Three policies share one interface: learn the inspected label alone
(supervised), refit by EM over everything observed so far, or smooth the
latent health states since the previous known label and learn their
pseudo-labels too (Hughes et al., section 4.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from skrbal._decision import DecisionProcess
from skrbal.smoothing import ImpossibleEvidenceError, smooth_segment


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
    return has_partial and known is not None and bool(np.isin(y_new, known).all())


@dataclass
class StreamState:
    """What the learner knows while it walks the stream."""

    X: np.ndarray
    y: np.ndarray  # the oracle; read only where ``known``
    known: np.ndarray  # bool per step: label inspected or given initially
    labelled: list  # stream indices of known labels, in the order learned
    action: np.ndarray  # action taken at each decided step
    exogenous_actions: np.ndarray | None  # the record's actions, if given


class SupervisedUpdate:
    """Learn the inspected label: ``partial_fit`` when possible, else refit."""

    def __init__(self, process: DecisionProcess, mode: str):
        self.process = process
        self.mode = mode

    def prepare(self, model):
        """Adapt the cloned estimator before the initial fit."""
        return model

    def initial_fit(self, model, state: StreamState):
        idx = np.asarray(state.labelled)
        return model.fit(state.X[idx], state.y[idx])

    def _add(self, model, state: StreamState, X_new, y_new, X_all, y_all):
        """Teach ``X_new, y_new``; refit on ``X_all, y_all`` when needed."""
        if can_partial_fit(model, y_new, self.mode):
            return model.partial_fit(X_new, y_new)
        return model.fit(X_all, y_all)

    def learn(self, model, state: StreamState, step: int):
        idx = np.asarray(state.labelled)
        return self._add(
            model, state, state.X[[step]], state.y[[step]], state.X[idx], state.y[idx]
        )

    def effective_labels(self, model, state: StreamState):
        """Labels the model is trained on, pseudo-labels included."""
        return None


class EMUpdate(SupervisedUpdate):
    """Refit by EM over all labelled and unlabelled observations so far.

    A :class:`~skrbal.mixture.BayesianGMMClassifier` is turned into the
    :class:`~skrbal.mixture.SemiSupervisedGMMClassifier` with the same priors;
    any other estimator must accept ``-1`` for unlabelled samples in ``fit``.
    EM warm-starts from the previous solution when the estimator supports it.
    """

    def prepare(self, model):
        from skrbal.mixture import BayesianGMMClassifier, SemiSupervisedGMMClassifier

        if isinstance(model, SemiSupervisedGMMClassifier):
            return model.set_params(warm_start=True)
        if isinstance(model, BayesianGMMClassifier):
            return SemiSupervisedGMMClassifier(**model.get_params(), warm_start=True)
        return model

    def learn(self, model, state: StreamState, step: int):
        seen = np.arange(state.X.shape[0]) <= step
        idx = np.flatnonzero(seen | state.known)
        labels = np.where(state.known[idx], state.y[idx], -1)
        return model.fit(state.X[idx], labels)

    def effective_labels(self, model, state: StreamState):
        return getattr(model, "transduction_", None)


class SmoothingUpdate(SupervisedUpdate):
    """Pseudo-label the states between known labels by forward-backward.

    After each inspection the segments since the previous known label are
    smoothed once, with the model of the moment, anchored at both ends by the
    known labels; before the first known label the structure is assumed to
    start in ``initial_state``. The actions between the anchors are the
    record's (``actions`` given to ``fit``) or else the agent's own. A
    segment the transition model cannot explain (say, a repair the actions do
    not show) is left unlabelled and counted in ``n_skipped_segments``.
    """

    def __init__(self, process, mode, initial_state):
        super().__init__(process, mode)
        self.initial_state = initial_state
        self.last_anchor = -1
        self.pseudo = {}
        self.n_skipped_segments = 0

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
        result = smooth_segment(
            model,
            state.X[hidden],
            self.process,
            into.astype(np.intp),
            start_label=state.y[start] if start >= 0 else None,
            end_label=state.y[end],
            initial_state=self.initial_state,
        )
        return hidden, result.pseudo_labels

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
        X_new = state.X[np.concatenate(new_steps)]
        y_new = np.concatenate(new_labels)
        steps_all, labels_all = self._training_set(state)
        return self._add(model, state, X_new, y_new, state.X[steps_all], labels_all)

    def _learn_late(self, model, state: StreamState, step: int):
        """A label older than the last anchor (a delayed inspection result).

        Its segment was smoothed already: the true label replaces the step's
        pseudo-label, by a refit when there was one (``partial_fit`` cannot
        unlearn it), and the segment is not smoothed again.
        """
        had_pseudo_label = self.pseudo.pop(step, None) is not None
        y_new = state.y[[step]]
        if not had_pseudo_label and can_partial_fit(model, y_new, self.mode):
            return model.partial_fit(state.X[[step]], y_new)
        steps_all, labels_all = self._training_set(state)
        return model.fit(state.X[steps_all], labels_all)

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


def make_update(semi_supervised, process, mode, initial_state):
    """The update policy for a learner's ``semi_supervised`` parameter."""
    if semi_supervised is None:
        return SupervisedUpdate(process, mode)
    if semi_supervised == "em":
        return EMUpdate(process, mode)
    if semi_supervised == "smoothing":
        if initial_state is None:
            initial_state = process.classes_[0]
        return SmoothingUpdate(process, mode, initial_state)
    raise ValueError(
        f"semi_supervised must be None, 'em' or 'smoothing', got {semi_supervised!r}."
    )


def clone_for(estimator, process):
    """Clone ``estimator``; give it every state's label if it takes ``classes``.

    A model told all labels up front returns a column for each state even when
    the initial labelled set lacks some of them, and can be updated with
    ``partial_fit`` when a new state is first inspected.
    """
    model = clone(estimator)
    params = model.get_params(deep=False)
    if "classes" in params and params["classes"] is None:
        model.set_params(classes=process.classes_)
    return model
