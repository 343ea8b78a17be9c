"""Fantasised results of the pending requests, bounded and kept between calls.

A request's value counts the results still pending (``pending_value=
'fantasy'``) as batch Bayesian optimisation counts pending evaluations: the
model learns each likely joint outcome of the pending requests (a copy each,
by ``partial_fit``), and the block is predicted again by every copy.

Two rules bound the work of a call, whatever the number of open requests:

* at most :data:`MAX_FANTASISED` pending results are fantasised: those of the
  *oldest* open requests, whose results are due first (a result arrives
  after those requested before it, as a rule), so they are the ones the model
  will most likely know when a new request's result comes back;
* at most :data:`MAX_OUTCOMES` joint outcomes (the most probable) are learnt.

The copies depend only on the model and on the fantasised requests, so
:class:`PendingFantasies` keeps them while both stay the same: a call then
only predicts its block with each copy. Once more than ``MAX_FANTASISED``
requests are open, a new request does not change the fantasised set, and a
call costs the same at 33 or at 10^5 open requests.

The copies predict a block together where the model's kind allows it
(:func:`stacked_predictor`): scikit-learn's ``GaussianNB``, and any estimator
whose class defines ``stacked_predictor(models)`` (the mixture
classifiers of :mod:`skrbal.mixture`). The beliefs are those of each copy's
``predict_proba``, bit for bit, so the decisions are the same; the cost of a
one-row block is that of about one prediction instead of 32.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MAX_FANTASISED",
    "MAX_OUTCOMES",
    "BlockFantasies",
    "Fantasies",
    "PendingFantasies",
    "stacked_predictor",
    "top_combinations",
]

#: Pending results a fantasy counts at most: those of the oldest open requests.
MAX_FANTASISED = 32
#: Joint outcomes of the pending requests a fantasy averages over (the most
#: probable ones; their weights are renormalised).
MAX_OUTCOMES = 32
# Values held at once by a stacked prediction's largest intermediate.
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Fantasies:
    """Beliefs over a block after fantasised results of the pending requests.

    Attributes
    ----------
    weights : ndarray of shape (n_fantasies,)
        Probability of each joint outcome of the pending requests, summing
        to 1.
    proba : ndarray of shape (n_fantasies, n_steps, n_states)
        The block's beliefs after the model learns each joint outcome.
    """

    weights: np.ndarray
    proba: np.ndarray

    def at(self, rows) -> np.ndarray:
        """The beliefs at ``rows``: shape (n_fantasies, n_rows, n_states)."""
        return self.proba[:, rows]


class BlockFantasies:
    """Beliefs over a block after fantasised results, predicted when asked for.

    The decision kernel asks only for the rows whose value the pending
    results can change (a value already 0 stays 0), so most rows of a calm
    stream are never predicted by the copies.

    Attributes
    ----------
    weights : ndarray of shape (n_fantasies,)
        Probability of each joint outcome of the pending requests, summing
        to 1.
    """

    def __init__(self, weights, models, X, process, stacked=None):
        self.weights = weights
        self._models = models
        self._X = X
        self._process = process
        self._stacked = stacked

    def at(self, rows) -> np.ndarray:
        """The beliefs at ``rows``: shape (n_fantasies, n_rows, n_states)."""
        X = self._X[rows]
        classes = self._process.classes_
        if self._stacked is not None:
            # The copies share the process's states (PendingFantasies.learn):
            # the beliefs are validated once, in one array.
            proba = self._stacked(X)
            self._process.align_proba(proba.reshape(-1, classes.size))
            return proba
        proba = np.empty((len(self._models), X.shape[0], classes.size))
        for i, fantasy in enumerate(self._models):
            proba[i] = self._process.align_proba(
                fantasy.predict_proba(X), fantasy.classes_
            )
        return proba


class _StackedGaussianNB:
    """``GaussianNB.predict_proba`` of several models, in one vectorised pass.

    The joint log-likelihood is scikit-learn's, term by term and in the same
    order (each model's and class's sums run over the same contiguous
    features), normalised by ``scipy.special.logsumexp`` over the classes:
    the beliefs equal each model's ``predict_proba`` bit for bit (checked in
    the tests against the installed scikit-learn). The parameters are
    stacked once; the models must not change while this is used.
    """

    def __init__(self, models):
        self.models = models
        var = np.stack([m.var_ for m in models])
        self.theta = np.stack([m.theta_ for m in models])[:, :, None, :]
        self.joint = np.log(np.stack([m.class_prior_ for m in models]))[..., None]
        self.norm = (-0.5 * np.sum(np.log(2.0 * np.pi * var), axis=-1))[..., None]
        self.var = var[:, :, None, :]

    def __call__(self, X) -> np.ndarray:
        from scipy.special import logsumexp
        from sklearn.utils.validation import validate_data

        X = validate_data(self.models[0], X, reset=False)
        n_models, n_classes = self.joint.shape[:2]
        proba = np.empty((n_models, X.shape[0], n_classes))
        # Rows in chunks: the squares hold models x classes x rows x features.
        step = max(1, _CHUNK // (n_models * n_classes * max(X.shape[1], 1)))
        for start in range(0, X.shape[0], step):
            rows = X[start : start + step]
            squares = ((rows[None, None] - self.theta) ** 2) / self.var
            jll = self.joint + (self.norm - 0.5 * np.sum(squares, axis=-1))
            jll = jll.transpose(0, 2, 1)
            proba[:, start : start + step] = np.exp(
                jll - logsumexp(jll, axis=-1)[..., None]
            )
        return proba


def stacked_predictor(models):
    """A function ``X -> proba`` predicting all ``models`` at once, or ``None``.

    ``proba`` has shape (n_models, n_samples, n_classes) and equals the
    models' ``predict_proba`` stacked, bit for bit. Available when every
    model is of one kind that allows it: scikit-learn's ``GaussianNB``
    (exactly that class: a subclass may predict otherwise), or a class that
    defines ``stacked_predictor(models)`` (a function of ``X``).
    """
    kind = type(models[0]) if models else None
    if kind is None or any(type(m) is not kind for m in models):
        return None
    if kind.__module__.startswith("sklearn.naive_bayes") and kind.__name__ == (
        "GaussianNB"
    ):
        return _StackedGaussianNB(models)
    stacked = getattr(kind, "stacked_predictor", None)
    return None if stacked is None else stacked(models)


def top_combinations(proba, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` most probable joint outcomes of independent categoricals.

    ``proba`` has one row per variable. A beam that keeps the ``limit`` best
    partial combinations is exact: extending two prefixes by the same
    suffix keeps their order. Returns the combinations (state indices, one
    row each) and their probabilities, most probable first.
    """
    combos = np.zeros((1, 0), dtype=np.intp)
    probs = np.ones(1)
    for row in np.asarray(proba, dtype=float):
        support = np.flatnonzero(row > 0)
        joint = probs[:, None] * row[support][None, :]
        order = np.argsort(-joint, axis=None, kind="stable")[:limit]
        prefix, choice = np.unravel_index(order, joint.shape)
        combos = np.column_stack([combos[prefix], support[choice]])
        probs = joint[prefix, choice]
    return combos, probs


class PendingFantasies:
    """Model copies that learnt the likeliest outcomes of the pending results.

    Parameters
    ----------
    process : DecisionProcess
        The decision, whose states the copies learn and predict.

    Attributes
    ----------
    key : hashable or None
        What the copies were built for (the driver's model version and the
        fantasised requests); ``None`` before the first :meth:`learn`.
    n_fits : int
        Copies fitted so far (``partial_fit`` calls), for a driver's tests.
    """

    def __init__(self, process):
        self.process = process
        self.classes = process.classes_
        self.key = None
        self.n_fits = 0
        self._weights = None
        self._models = ()
        self._stacked = None

    def learn(self, model, X_pending, key=None) -> bool:
        """Fantasise the results of the pending rows ``X_pending`` for ``model``.

        Each joint outcome of the pending requests (the most probable, at
        most :data:`MAX_OUTCOMES`, weighted by the model's current beliefs at
        their rows) is taught to a copy of the model by ``partial_fit``.
        Returns whether there are fantasies: not when nothing is pending or
        the model cannot learn one label incrementally (no ``partial_fit``,
        or a state it has no class for); the value then ignores the pending
        results.
        """
        self.key, self._weights, self._models = key, None, ()
        self._stacked = None
        if X_pending is None or X_pending.shape[0] == 0:
            return False
        if not hasattr(model, "partial_fit"):
            return False
        classes = getattr(model, "classes_", None)
        if classes is None or not np.array_equal(classes, self.classes):
            return False
        belief = self.process.align_proba(model.predict_proba(X_pending), classes)
        combos, weights = top_combinations(belief, MAX_OUTCOMES)
        models = []
        for combo in combos:
            fantasy = copy.deepcopy(model).partial_fit(X_pending, self.classes[combo])
            self.n_fits += 1
            models.append(fantasy)
        self._weights, self._models = weights / weights.sum(), tuple(models)
        self._stacked = stacked_predictor(self._models)
        return True

    def adopt(self, other: PendingFantasies, key) -> None:
        """Take the copies ``other`` learnt, as if learnt here for ``key``."""
        self.key, self._weights, self._models = key, other._weights, other._models
        self._stacked = other._stacked
        self.n_fits += other.n_fits

    @property
    def models(self) -> tuple:
        """The copies, one per fantasised joint outcome (empty: none)."""
        return self._models

    def snapshot(self) -> dict | None:
        """The fantasies as JSON-ready values, or ``None`` if they have none.

        ``{"weights": [...], "predictive": text}``: the joint outcomes'
        weights and the copies' stacked
        :class:`~skrbal._predictive.StudentTPredictive` as JSON, from which
        :meth:`predict` is computed bit for bit; ``{"weights": None}`` when
        nothing is fantasised (the value ignores the pending results). Copies
        whose beliefs are not such a predictive (another kind of model, a
        class with a directed prior) have no snapshot: ``None``.
        """
        if not self._models:
            return {"weights": None}
        predictive = getattr(self._stacked, "predictive", None)
        if predictive is None or getattr(self._stacked, "directed", True):
            return None
        return {"weights": self._weights.tolist(), "predictive": predictive.to_json()}

    def predict(self, X) -> BlockFantasies | None:
        """The beliefs over ``X`` after the fantasised results (``None``: none).

        They are predicted when the decision kernel asks for them
        (:meth:`BlockFantasies.at`).
        """
        if not self._models:
            return None
        return BlockFantasies(
            self._weights, self._models, X, self.process, self._stacked
        )
