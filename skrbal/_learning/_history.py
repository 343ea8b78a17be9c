"""The class prior from the labelled history, through the process (private).

A classifier's class weight (for the Bayesian mixture, ``(N_k + alpha) /
(N + K alpha)``) reads the labels the campaign chose to take as how often
each state occurs *now*. On a structure commissioned on healthy data the
labels are mostly the agent's own healthy picks, so a state that the
process says is likely by now (damage grows; nothing was repaired) keeps
the weight of a state never seen. The decision process knows better: its
transition model predicts the state at step ``t`` from the last step whose
state is known, under the actions taken since.

:class:`HistoryPrior` replaces the class weight ``w`` by the defensive
mixture ``s h_t + (1 - s) w``, where ``h_t`` is that prediction (the last
labelled step's state, one-hot, or an imperfect report's posterior,
propagated through ``transition[action]`` step by step, a repair resetting
as the process says) and ``s`` the ``history_prior`` share. The
observations since the label are *not* folded in (no filtering): each
step's features enter its own belief once, through the class-conditional
density, so correlated consecutive steps are never counted as independent
evidence. The belief is

    b_t(k)  oc  (s h_t(k) + (1 - s) w_k) p(x_t | k)
            oc  (s h_t(k) / w_k + 1 - s) predict_proba(x_t)_k,

so it needs only the model's beliefs and its class weights. With ``s < 1``
a state the history makes impossible (or merely unlikely) keeps the model's
own weight times ``1 - s``: it is never erased; with ``s = 0`` the beliefs
are the model's.

Within a block of steps, the action taken at a step (the optimal one under
its belief, as the decision kernel chooses it) moves the prediction to the
next step, so a block decided at once equals its steps decided one by one.

The prediction is carried through the process's transition model with the
idle action's rates of leaving each state *learnt* from the labelled history
(:class:`~skrbal._learning._hazard.LearntHazard`: a Beta posterior whose mean
is the stated rate, weighing one stated sojourn, updated by how long labels
of a state survive between inspections), so a process that overstates the
damage rate no longer drags the prediction towards damage over a healthy
record. At each step the rates use the steps known before it.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from skrbal._learning._hazard import LearntHazard
from skrbal._learning._repairs import in_process_order

__all__ = ["HistoryPrior", "check_history_prior", "class_weights"]


def check_history_prior(history_prior) -> None:
    """Name an invalid ``history_prior`` (a number in [0, 1])."""
    if (
        isinstance(history_prior, bool)
        or not isinstance(history_prior, Real)
        or not 0.0 <= float(history_prior) <= 1.0
    ):
        raise ValueError(
            "history_prior must be a number in [0, 1] (the share of the "
            "process's prediction from the labelled history in the class "
            f"prior; 0 is the model's own class weights), got {history_prior!r}."
        )


def class_weights(model, classes) -> np.ndarray:
    """The model's class weights, in the order of ``classes`` (the process's).

    ``weight_concentration_`` normalised (the Bayesian mixtures), else
    ``class_prior_`` (scikit-learn's naive Bayes); a Pipeline's final step's.

    Raises
    ------
    ValueError
        When the model exposes neither.
    """
    final = model[-1] if hasattr(model, "steps") else model
    weights = getattr(final, "weight_concentration_", None)
    if weights is None:
        weights = getattr(final, "class_prior_", None)
    if weights is None:
        raise ValueError(
            "history_prior > 0 replaces the model's class weights, so it needs "
            "an estimator that exposes them: weight_concentration_ (such as "
            "BayesianGMMClassifier) or class_prior_ (such as GaussianNB); "
            f"{type(final).__name__} has neither."
        )
    weights = np.asarray(weights, dtype=np.float64)
    return in_process_order(final, weights / weights.sum(), classes)


class HistoryPrior:
    """Beliefs whose class prior is the process's prediction from the labels.

    Parameters
    ----------
    process : DecisionProcess
        Its transition model predicts; its utilities choose the action that
        moves the prediction within a block (as the decision kernel does).
    share : float in (0, 1]
        The prediction's share in the class prior (``history_prior``); the
        rest is the model's own class weights.
    filtering : bool, default=False
        Carry the prediction from each step's *belief* rather than from the
        last labelled step alone (a forward filter of the stream through the
        transition model, ``history_filter``): a step is then judged against
        the steps before it, so a one-step outlier after healthy steps keeps
        the prior of healthy steps. The belief at the step before a block is
        the one this object gave it (a label there restarts the filter); a
        step it never gave a belief for falls back to the prediction from
        the last label.

    Attributes
    ----------
    block : tuple or None
        ``(beliefs, prior)`` of the last block predicted: the decision
        kernel's fantasies are reweighted by the same prior.
    """

    def __init__(self, process, share: float, filtering: bool = False):
        transition, utilities, classes, _ = process._validated()
        self.transition = transition
        self.utilities = utilities
        self.classes = classes
        self.share = float(share)
        self._position = {c: i for i, c in enumerate(classes.tolist())}
        #: The action a known state calls for, by its position.
        self.perfect = process.perfect_information_action(classes)
        self.hazard = LearntHazard(transition, process.action_utility)
        # (anchor step, anchor distribution, step reached, prediction there,
        # the actions it was propagated under): a walk extends it.
        self._cache = None
        self.block = None
        self.filtering = bool(filtering)
        # (first step, beliefs) of the last block, which the filter carries.
        self._filtered = None

    # -------------------------------------------------------------- #
    def _label(self, state, step: int) -> np.ndarray:
        """The one-hot distribution of the label at ``step``."""
        dist = np.zeros(self.classes.size)
        dist[self._position[np.asarray(state.y[[step]]).tolist()[0]]] = 1.0
        return dist

    def known_in(self, state, step: int, n: int) -> dict:
        """The steps of ``step .. step + n - 1`` already known: position ->
        (distribution, action taken there).

        A stream learner knows its initial labels from the start and an
        agent its commissioning steps: there the prediction restarts, under
        the action the state (or the report's posterior) calls for.
        """
        known = {}
        for reported, posterior in state.soft.items():
            if step <= reported < step + n:
                dist = np.asarray(posterior, dtype=np.float64)
                action = int(np.argmax(dist[None] @ self.utilities, axis=1)[0])
                known[reported - step] = (dist, action)
        labelled = np.asarray(state.labelled, dtype=np.int64)
        for s in labelled[(labelled >= step) & (labelled < step + n)].tolist():
            dist = self._label(state, s)
            known[s - step] = (dist, int(self.perfect[np.argmax(dist)]))
        return known

    def anchor(self, state, step: int):
        """The last step before ``step`` whose state is known, and its distribution.

        A label is one-hot; an imperfect report's posterior is its own
        (a label at the same step wins). ``None`` when nothing before
        ``step`` is known.
        """
        labelled = np.asarray(state.labelled, dtype=np.int64)
        before = labelled[labelled < step]
        best, dist = -1, None
        if before.size:
            best = int(before.max())
            dist = self._label(state, best)
        for reported, posterior in state.soft.items():
            if best < reported < step:
                best, dist = int(reported), np.asarray(posterior, dtype=np.float64)
        return None if dist is None else (best, dist)

    def predict(
        self, anchor_step: int, dist, step: int, actions, transition=None
    ) -> np.ndarray:
        """The distribution of the state at ``step`` from ``dist`` at ``anchor_step``.

        ``dist @ transition[actions[anchor_step]] @ ... @
        transition[actions[step - 1]]``, one step at a time (so that every
        driver gets the same bits), extending the last prediction when the
        anchor, the transition model and the actions since are unchanged.
        ``transition`` defaults to the process's.
        """
        if transition is None:
            transition = self.transition
        cache = self._cache
        a, t = dist, anchor_step
        if (
            cache is not None
            and cache[5] is transition
            and cache[0] == anchor_step
            and cache[2] <= step
            and np.array_equal(cache[1], dist)
            and np.array_equal(actions[anchor_step : cache[2]], cache[4])
        ):
            a, t = cache[3], cache[2]
        for d in np.asarray(actions[t:step]).tolist():
            a = a @ transition[d]
        self._cache = (
            anchor_step,
            np.array(dist),
            step,
            a,
            np.array(actions[anchor_step:step]),
            transition,
        )
        return a

    def known_before(self, state, step: int):
        """The steps known before ``step`` in increasing order, and their
        distributions (a label one-hot, a report its posterior; a label wins)."""
        labelled = np.asarray(state.labelled, dtype=np.int64)
        labelled = np.unique(labelled[labelled < step])
        soft = [s for s in state.soft if s < step]
        steps = np.union1d(labelled, np.asarray(soft, dtype=np.int64))
        dists = np.zeros((steps.size, self.classes.size))
        if soft:
            soft_steps = np.asarray(soft, dtype=np.int64)
            rows = np.searchsorted(steps, soft_steps)
            dists[rows] = np.asarray([state.soft[s] for s in soft], dtype=np.float64)
        if labelled.size:
            rows = np.searchsorted(steps, labelled)
            dists[rows] = 0.0
            labels = np.asarray(state.y[labelled]).tolist()
            dists[rows, [self._position[c] for c in labels]] = 1.0
        return steps, dists

    def learnt_transition(self, state, step: int, actions) -> np.ndarray:
        """The transition model with the rates learnt from the steps known
        before ``step`` (``actions``: those taken at every step before it)."""
        return self.hazard.learnt(*self.known_before(state, step), actions)

    def beliefs(self, proba, weights, state, step: int) -> np.ndarray:
        """The beliefs over a block whose first step is ``step``.

        ``proba`` are the model's beliefs (aligned with the process's
        states), ``weights`` its class weights (:func:`class_weights`; one
        row per step where they change within the block, as after a repair
        the campaign was told of), ``state`` the campaign's
        :class:`~skrbal._learning.StreamState`. Without a known step before
        ``step`` the model's beliefs are kept.
        """
        self.block = None
        n = proba.shape[0]
        known = self.known_in(state, step, n)
        anchor = self.anchor(state, step)
        if anchor is None and not known:
            return proba
        actions = state.exogenous_actions
        if actions is None:
            actions = state.action
        transition = None
        if anchor is not None:
            transition = self.learnt_transition(state, step, actions)
        a = None if anchor is None else self.predict(*anchor, step, actions, transition)
        if self.filtering and anchor is not None and anchor[0] < step - 1:
            carried = self._carried(step, actions, transition)
            if carried is not None:
                a = carried
        given = actions[step : step + n] if actions is state.exogenous_actions else None
        share, rest = self.share, 1.0 - self.share
        # One row of class weights for the block, or one per step.
        weights = np.broadcast_to(weights, proba.shape)
        scale = share / np.maximum(weights, np.finfo(np.float64).tiny)
        utilities = self.utilities
        taken = []
        out = np.empty_like(proba)
        prior = np.empty_like(proba)
        for i in range(n):
            if a is None:  # before the first known step: the model's
                out[i], prior[i] = proba[i], weights[i]
            else:
                prior[i] = a
                row = (scale[i] * a + rest) * proba[i]
                total = row.sum()
                # The history excludes every state the model finds possible
                # (share 1 only): the model's belief stands.
                out[i] = row / total if total > 0 else proba[i]
            if i in known:
                a, d = known[i]
                # The rates for the next step learn from this one too.
                before = np.concatenate(
                    [np.asarray(actions[:step]), np.asarray(taken, dtype=np.intp)]
                )
                transition = self.learnt_transition(state, step + i + 1, before)
            else:
                d = given[i] if given is not None and i < given.size else None
                if d is None:
                    d = int(np.argmax(out[i][None] @ utilities, axis=1)[0])
            taken.append(int(d))
            if a is not None:
                if self.filtering and i not in known:
                    a = out[i]  # the filter: this step's belief moves on
                a = a @ transition[d]
        self.block = (out, prior)
        if self.filtering:
            self._filtered = (step, out)
        return out

    def _carried(self, step: int, actions, transition):
        """The filter's prediction for ``step`` from the belief it gave the
        step before (``None`` when it gave none)."""
        if self._filtered is None:
            return None
        first, beliefs = self._filtered
        if not first <= step - 1 < first + beliefs.shape[0]:
            return None
        return beliefs[step - 1 - first] @ transition[int(actions[step - 1])]

    def reweight(self, fantasy_proba, fantasy_weights, rows) -> np.ndarray:
        """Fantasised beliefs at ``rows`` of the last block, under its prior.

        ``fantasy_proba`` (n_fantasies, n_rows, n_states) are the copies'
        own beliefs, ``fantasy_weights`` (n_fantasies, n_states) their class
        weights.
        """
        prior = self.block[1][rows]
        scale = self.share / np.maximum(fantasy_weights, np.finfo(np.float64).tiny)
        out = (scale[:, None, :] * prior[None] + (1.0 - self.share)) * fantasy_proba
        total = out.sum(axis=-1, keepdims=True)
        return np.where(total > 0, out / np.where(total > 0, total, 1.0), fantasy_proba)


class HistoryFantasies:
    """Fantasised beliefs of a block (:class:`~skrbal._learning.Fantasies`-like)
    under the history's prior: each copy's class weights replaced as the
    model's are.

    Parameters
    ----------
    inner : BlockFantasies
        The copies' own beliefs.
    class_weights : ndarray of shape (n_fantasies, n_states)
        The copies' class weights.
    history : HistoryPrior
        Holds the block's prior (:attr:`HistoryPrior.block`).
    """

    def __init__(self, inner, class_weights, history):
        self.weights = inner.weights
        self._inner = inner
        self._class_weights = class_weights
        self._history = history

    def at(self, rows) -> np.ndarray:
        """The beliefs at ``rows``: shape (n_fantasies, n_rows, n_states)."""
        return self._history.reweight(self._inner.at(rows), self._class_weights, rows)
