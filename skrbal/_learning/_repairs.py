"""Class weights of a structure after the repairs it was given (private).

A classifier's class weight (for the Bayesian mixtures, the Dirichlet
concentration ``alpha_k + N_k``) reads the labels taken so far as how often
each state occurs now. Labels taken before a repair describe a structure
that the repair has changed: the damage labels of a structure since repaired
keep the damage states' weight high, so every healthy step after the repair
looks a few percent damaged, which is worth an inspection. Their features
still describe what each state looks like; only their count is out of date.

:class:`RepairedClassWeights` moves each such label's count to where the
decision process takes its state under the repairs made since (the row of
``transition[a]`` for each action ``a`` other than the idle one, taken at or
after the labelled step and before the step decided): a damage label before
a repair counts as the process's post-repair state. The belief is

    b_t(k)  oc  (c'_k(t) / c_k) predict_proba(x_t)_k,

with ``c`` the model's concentration and ``c'(t)`` the same with the labels'
counts moved; rows of a transition sum to one, so ``sum c' = sum c``. Only
repairs the campaign was *told* of count: the record's actions given to the
stream learner's ``fit``, or those an agent's owner recorded
(``record_action``). A repair the agent merely recommends changes nothing,
since nobody said it was done. Without such a repair before a step, the
model's beliefs stand unchanged.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RepairedClassWeights", "concentration", "in_process_order"]


def in_process_order(model, values, classes) -> np.ndarray:
    """``values``, one per class of ``model`` (in its ``classes_`` order), in
    the order of ``classes`` (the process's); 0 for a class the model lacks."""
    position = {c: i for i, c in enumerate(np.asarray(model.classes_).tolist())}
    aligned = np.zeros(len(classes))
    for j, c in enumerate(np.asarray(classes).tolist()):
        if c in position:
            aligned[j] = values[position[c]]
    return aligned


def concentration(model, classes) -> np.ndarray | None:
    """The model's class-weight concentration in the order of ``classes``.

    ``weight_concentration_`` (the Bayesian mixtures), else ``class_count_``
    (scikit-learn's naive Bayes, whose class prior is its counts); a
    Pipeline's final step's. ``None`` for a model with neither (its beliefs
    are then kept).
    """
    final = model[-1] if hasattr(model, "steps") else model
    weights = getattr(final, "weight_concentration_", None)
    if weights is None:
        weights = getattr(final, "class_count_", None)
    if weights is None:
        return None
    return in_process_order(final, np.asarray(weights, dtype=np.float64), classes)


class RepairedClassWeights:
    """Beliefs whose class weights count pre-repair labels as repaired.

    Parameters
    ----------
    process : DecisionProcess
        Its transition model moves the labels' counts; its idle action (the
        one of highest utility) moves nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from skrbal import z24_decision_process
    >>> from skrbal._learning._repairs import RepairedClassWeights
    >>> repaired = RepairedClassWeights(z24_decision_process())
    >>> state = SimpleNamespace(  # ten damage labels, then a repair at step 10
    ...     y=np.array([4] * 10 + [1] * 10), labelled=list(range(10)),
    ...     exogenous_actions=np.r_[np.zeros(10, int), 1, np.zeros(9, int)])
    >>> proba = np.full((2, 4), 0.25)
    >>> concentration = np.array([1.0, 1.0, 1.0, 11.0])
    >>> repaired.beliefs(proba, concentration, state, 10).round(2)  # at 10, 11
    array([[0.25, 0.25, 0.25, 0.25],
           [0.54, 0.38, 0.08, 0.01]])
    """

    def __init__(self, process):
        self.transition = np.asarray(process.transition, dtype=np.float64)
        self.classes = classes = np.asarray(process.classes_)
        self.idle = int(np.argmax(np.asarray(process.action_utility)))
        self._position = {c: i for i, c in enumerate(classes.tolist())}

    def repairs(self, state, stop: int):
        """The steps before ``stop`` whose taken action was not the idle one,
        and those actions.

        Taken: the record's actions given to a stream learner
        (``exogenous_actions``), else those an agent's owner recorded
        (``told``).
        """
        actions = state.exogenous_actions
        if actions is not None:
            steps = np.flatnonzero(np.asarray(actions[:stop]) != self.idle)
            return steps, np.asarray(actions)[steps]
        told = sorted((s, a) for s, a in getattr(state, "told", {}).items() if s < stop)
        told = [(s, a) for s, a in told if a != self.idle]
        steps = np.array([s for s, _ in told], dtype=np.intp)
        return steps, np.array([a for _, a in told], dtype=np.intp)

    def moved_counts(self, state, step: int, repairs):
        """Label counts before ``step``, as they are and as the repairs moved them.

        ``repairs``: the steps and actions of :meth:`repairs`.
        """
        repairs, actions = repairs
        labelled = np.asarray(state.labelled, dtype=np.intp)
        labelled = labelled[labelled < step]
        n_states = self.classes.size
        if not labelled.size:
            return np.zeros(n_states), np.zeros(n_states)
        y = np.asarray(state.y[labelled]).tolist()
        onehot = np.zeros((labelled.size, n_states))
        onehot[np.arange(labelled.size), [self._position[c] for c in y]] = 1.0
        before = repairs < step
        repairs, actions = repairs[before], actions[before]
        # suffix[j]: the product of the transitions of repairs j, j+1, ...
        suffix = [np.eye(n_states)]
        for a in actions[::-1].tolist():
            suffix.append(self.transition[a] @ suffix[-1])
        suffix = suffix[::-1]
        # A label at step l is moved by every repair r >= l before ``step``.
        first = np.searchsorted(repairs, labelled, side="left")
        moved = np.zeros(n_states)
        for j in np.unique(first).tolist():
            moved += onehot[first == j].sum(axis=0) @ suffix[j]
        return onehot.sum(axis=0), moved

    def weights(self, concentration, state, step: int, n: int):
        """The repaired concentration of each step of a block, or ``None``.

        Shape (n, n_states): row ``i`` is the model's ``concentration`` with
        the labels before step ``step + i`` moved by the repairs before it.
        ``None`` when no repair the campaign was told of comes before the
        block's last step (or the model has no class weights).
        """
        repairs = self.repairs(state, step + n - 1)
        if not repairs[0].size or concentration is None:
            return None
        out = np.tile(np.asarray(concentration, dtype=np.float64), (n, 1))
        tiny = np.finfo(np.float64).tiny
        # The weights change only after a repair: one epoch per repair.
        edges = np.unique(np.clip(repairs[0] + 1, step, step + n))
        bounds = np.r_[edges, step + n]
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            if lo < hi:
                counts, moved = self.moved_counts(state, lo, repairs)
                out[lo - step : hi - step] = np.maximum(
                    concentration - counts + moved, tiny
                )
        return out

    def beliefs(self, proba, concentration, state, step: int) -> np.ndarray:
        """The beliefs over a block of steps from ``step`` on.

        ``proba`` are the model's beliefs (aligned with the process's
        states), ``concentration`` its class-weight concentration
        (:func:`concentration`), ``state`` the campaign's
        :class:`~skrbal._learning.StreamState`.
        """
        repaired = self.weights(concentration, state, step, proba.shape[0])
        if repaired is None:
            return proba
        scale = repaired / np.maximum(concentration, np.finfo(np.float64).tiny)
        rows = proba * scale
        total = rows.sum(axis=1, keepdims=True)
        return np.where(total > 0, rows / np.where(total > 0, total, 1.0), proba)
