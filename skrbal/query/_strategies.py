"""Query strategies: EVPI sampling and the usual baselines, modAL-compatible.

Every strategy has modAL's signature ``strategy(classifier, X_pool,
n_instances=1, **kwargs)`` and returns ``(indices, scores)``: the indices into
``X_pool`` of the chosen instances, best first, and their scores. modAL 0.4
unpacks that pair in ``ActiveLearner.query``.

A large pool is scored in blocks of rows (one ``predict_proba`` call per
block), which assumes, as every scikit-learn classifier does, that a sample's
prediction does not depend on the other samples in the call.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from scipy.special import entr
from sklearn.base import BaseEstimator
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import _num_samples

from skrbal._decision import DecisionProcess
from skrbal.exceptions import (
    MissingStatesWarning,
    missing_states,
    missing_states_message,
)
from skrbal.inspection import choose_inspection

__all__ = [
    "EVPISampling",
    "entropy_sampling",
    "evpi_sampling",
    "evpi_scores",
    "least_confident_sampling",
    "random_sampling",
]


def evpi_scores(proba, process: DecisionProcess, classes=None) -> np.ndarray:
    """Expected value of perfect information of each belief.

    The pure function behind :func:`evpi_sampling`, usable on any
    ``predict_proba`` output.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_columns)
        Beliefs over the health states, e.g. a classifier's ``predict_proba``.
    process : DecisionProcess
        The decision the labels inform.
    classes : array-like of shape (n_columns,), default=None
        Labels of the columns of ``proba`` (a classifier's ``classes_``);
        ``None`` means the columns are the process's states in order.

    Returns
    -------
    scores : ndarray of shape (n_samples,)

    See Also
    --------
    skrbal.DecisionProcess.evpi : The same quantity, as a method.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.query import evpi_scores
    >>> evpi_scores([[0.5, 0.5], [1.0, 0.0]], synthetic_decision_process(),
    ...             classes=[1, 4])
    array([14.75,  0.  ])
    """
    if not isinstance(process, DecisionProcess):
        raise TypeError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )
    return process.evpi(proba, classes=classes)


def _classes_of(classifier):
    """Class labels of a fitted classifier, a Pipeline or a modAL learner."""
    for obj in (classifier, getattr(classifier, "estimator", None)):
        classes = getattr(obj, "classes_", None)
        if classes is not None:
            return np.asarray(classes)
    raise AttributeError(
        f"{type(classifier).__name__} has no classes_: fit it before querying."
    )


def _check_pool(X_pool, n_instances) -> int:
    n_pool = X_pool.shape[0] if hasattr(X_pool, "shape") else len(X_pool)
    if not isinstance(n_instances, Integral) or isinstance(n_instances, bool):
        raise TypeError(f"n_instances must be an integer, got {n_instances!r}.")
    if n_instances < 1:
        raise ValueError(f"n_instances must be >= 1, got {n_instances}.")
    if n_instances > n_pool:
        raise ValueError(
            f"n_instances={n_instances} is larger than the pool ({n_pool} samples)."
        )
    return n_pool


# Pool rows per predict_proba call. Over a large pool, the model's temporaries
# (a few n_samples x n_classes arrays) then stay in cache instead of being
# allocated and streamed through memory, so scoring the pool block by block
# costs markedly less than one predict_proba on all of it; predictions are
# made row by row, so the scores are the same.
_POOL_BLOCK = 65536


def _pool_scores(classifier, X_pool, score, predict_kwargs: dict) -> np.ndarray:
    """``score(classifier.predict_proba(X_pool))``, in blocks of pool rows.

    Keyword arguments for ``predict_proba`` might be aligned with the rows of
    the pool, so with any of them the pool is scored in one call.
    """
    n_pool = _num_samples(X_pool)
    if predict_kwargs or n_pool <= _POOL_BLOCK:
        return score(classifier.predict_proba(X_pool, **predict_kwargs))
    scores = np.empty(n_pool)
    for start in range(0, n_pool, _POOL_BLOCK):
        rows = slice(start, min(start + _POOL_BLOCK, n_pool))
        try:
            scores[rows] = score(classifier.predict_proba(_safe_indexing(X_pool, rows)))
        except ValueError as exc:
            raise ValueError(
                f"{exc} (row numbers count from pool row {start}, the first of "
                f"the block of rows {start} to {rows.stop - 1} being scored)"
            ) from exc
    return scores


def _top(scores: np.ndarray, n_instances: int, random_state):
    """Indices of the ``n_instances`` highest scores, best first.

    Ties are broken towards the lowest index when ``random_state`` is None and
    by a permutation drawn from ``random_state`` otherwise, so a seeded query
    is reproducible: the result is that of a stable sort of the negated
    scores in the permuted order, without sorting the whole pool.
    """
    scores = np.asarray(scores, dtype=float)
    # One reduction; a finite pool whose sum overflows is checked exactly.
    with np.errstate(over="ignore"):
        total = scores.sum()
    if not np.isfinite(total) and not np.isfinite(scores).all():
        raise ValueError("query scores contain NaN or infinite values.")
    if random_state is None:
        ranked = _top_lowest_index_first(scores, n_instances)
    else:
        order = check_random_state(random_state).permutation(scores.shape[0])
        ranked = order[_top_lowest_index_first(scores[order], n_instances)]
    return ranked, scores[ranked]


# Beyond this share of the pool, one full sort beats selection plus sorting.
_FULL_SORT_SHARE = 0.25


def _top_lowest_index_first(scores: np.ndarray, k: int) -> np.ndarray:
    """``np.argsort(-scores, kind="stable")[:k]`` without a full sort.

    Selection finds the k-th highest score ``t``; the scores above ``t``
    (fewer than k) are sorted, and the places left go to the scores equal to
    ``t`` in index order, which is where a stable sort puts them.
    """
    n = scores.shape[0]
    if k == 1:
        return np.array([np.argmax(scores)])  # the first of the maxima
    if k >= _FULL_SORT_SHARE * n:
        return np.argsort(-scores, kind="stable")[:k]
    threshold = np.partition(scores, n - k)[n - k]
    # One pass over the pool; the split into scores above and equal to the
    # threshold runs on the candidates only.
    candidates = np.flatnonzero(scores >= threshold)
    chosen = scores[candidates]
    is_above = chosen > threshold
    above = candidates[is_above]
    above = above[np.argsort(-chosen[is_above], kind="stable")]
    tied = candidates[~is_above][: k - above.shape[0]]
    return np.concatenate([above, tied])


def evpi_sampling(
    classifier,
    X_pool,
    n_instances: int = 1,
    *,
    process: DecisionProcess,
    inspections=None,
    random_state=None,
    **predict_kwargs,
):
    """Choose the pool instances whose labels are worth the most to a decision.

    Parameters
    ----------
    classifier : fitted classifier, Pipeline or modAL learner
        Must have ``predict_proba`` and ``classes_`` (directly or through an
        ``estimator`` attribute, as modAL's learners have).
    X_pool : array-like of shape (n_pool, n_features)
        Candidate instances.
    n_instances : int, default=1
        How many to choose.
    process : DecisionProcess
        The decision the labels inform.
    inspections : list of InspectionMethod, default=None
        Imperfect inspections to choose from. ``None`` scores each instance by
        its EVPI (a perfect inspection). With a list, the score is the
        largest net value ``EVSI - cost`` over the methods
        (:func:`~skrbal.inspection.choose_inspection`); an instance whose
        score is not positive is not worth inspecting, and
        :meth:`EVPISampling.choose` says with which method to inspect.
    random_state : int, RandomState instance or None, default=None
        Breaks ties between equal scores at random; ``None`` prefers the
        lowest index.
    **predict_kwargs : dict
        Passed to ``classifier.predict_proba``.

    Returns
    -------
    indices : ndarray of shape (n_instances,)
        Indices into ``X_pool``, highest score first.
    scores : ndarray of shape (n_instances,)
        Their EVPI, or with ``inspections`` their best net value.

    Warns
    -----
    MissingStatesWarning
        When the classifier has no class for some of the process's states:
        its beliefs give them probability 0, so EVPI treats them as
        impossible.

    See Also
    --------
    EVPISampling : The same strategy as an object bound to a process.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.query import evpi_sampling
    >>> X = np.array([[-5.0], [-4.8], [-0.7], [-0.5], [5.8], [6.0], [19.0], [19.2]])
    >>> clf = GaussianNB().fit(X, [1, 1, 2, 2, 3, 3, 4, 4])
    >>> idx, evpi = evpi_sampling(clf, np.array([[-4.9], [12.5], [19.1]]),
    ...                           process=synthetic_decision_process())
    >>> idx
    array([1])
    """
    _check_pool(X_pool, n_instances)
    classes = _classes_of(classifier)
    if isinstance(process, DecisionProcess):
        missing = missing_states(classes, process.classes_)
        if missing.size:
            warnings.warn(
                missing_states_message(
                    f"The classifier ({type(classifier).__name__})",
                    missing,
                    process.classes_,
                ),
                MissingStatesWarning,
                stacklevel=2,
            )
    if inspections is None:

        def score(proba):
            return evpi_scores(proba, process, classes=classes)

    else:

        def score(proba):
            net = choose_inspection(proba, process, inspections, classes=classes)[1]
            return net.max(axis=1)

    scores = _pool_scores(classifier, X_pool, score, predict_kwargs)
    return _top(scores, n_instances, random_state)


def entropy_sampling(
    classifier, X_pool, n_instances: int = 1, *, random_state=None, **predict_kwargs
):
    """Choose the instances whose predicted class distribution has most entropy.

    Parameters
    ----------
    classifier : fitted classifier, Pipeline or modAL learner
        Must have ``predict_proba``.
    X_pool : array-like of shape (n_pool, n_features)
        Candidate instances.
    n_instances : int, default=1
        How many to choose.
    random_state : int, RandomState instance or None, default=None
        Breaks ties at random; ``None`` prefers the lowest index.
    **predict_kwargs : dict
        Passed to ``classifier.predict_proba``.

    Returns
    -------
    indices : ndarray of shape (n_instances,)
    scores : ndarray of shape (n_instances,)
        Entropy in nats.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.query import entropy_sampling
    >>> clf = GaussianNB().fit([[0.0], [0.2], [4.0], [4.2]], [0, 0, 1, 1])
    >>> entropy_sampling(clf, np.array([[0.1], [2.1], [4.1]]))[0]
    array([1])
    """
    _check_pool(X_pool, n_instances)
    scores = _pool_scores(
        classifier,
        X_pool,
        lambda proba: entr(np.asarray(proba)).sum(axis=1),
        predict_kwargs,
    )
    return _top(scores, n_instances, random_state)


def least_confident_sampling(
    classifier, X_pool, n_instances: int = 1, *, random_state=None, **predict_kwargs
):
    """Choose the instances whose most probable class is least probable.

    Parameters
    ----------
    classifier : fitted classifier, Pipeline or modAL learner
        Must have ``predict_proba``.
    X_pool : array-like of shape (n_pool, n_features)
        Candidate instances.
    n_instances : int, default=1
        How many to choose.
    random_state : int, RandomState instance or None, default=None
        Breaks ties at random; ``None`` prefers the lowest index.
    **predict_kwargs : dict
        Passed to ``classifier.predict_proba``.

    Returns
    -------
    indices : ndarray of shape (n_instances,)
    scores : ndarray of shape (n_instances,)
        ``1 - max_k p(k | x)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.query import least_confident_sampling
    >>> clf = GaussianNB().fit([[0.0], [0.2], [4.0], [4.2]], [0, 0, 1, 1])
    >>> least_confident_sampling(clf, np.array([[0.1], [2.1], [4.1]]))[0]
    array([1])
    """
    _check_pool(X_pool, n_instances)
    scores = _pool_scores(
        classifier,
        X_pool,
        lambda proba: 1.0 - np.asarray(proba).max(axis=1),
        predict_kwargs,
    )
    return _top(scores, n_instances, random_state)


def random_sampling(
    classifier, X_pool, n_instances: int = 1, *, random_state=None, **kwargs
):
    """Choose instances uniformly at random, without replacement.

    The baseline every strategy must beat. ``classifier`` is not used.

    Parameters
    ----------
    classifier : object
        Ignored; present for the common signature.
    X_pool : array-like of shape (n_pool, n_features)
        Candidate instances.
    n_instances : int, default=1
        How many to choose.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for the draw.
    **kwargs : dict
        Ignored.

    Returns
    -------
    indices : ndarray of shape (n_instances,)
    scores : ndarray of shape (n_instances,)
        Zeros: every instance is worth the same to this strategy.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.query import random_sampling
    >>> idx, _ = random_sampling(None, np.zeros((10, 2)), n_instances=3,
    ...                          random_state=0)
    >>> len(set(idx.tolist()))
    3
    """
    n_pool = _check_pool(X_pool, n_instances)
    rng = check_random_state(random_state)
    indices = rng.choice(n_pool, size=n_instances, replace=False)
    return indices, np.zeros(n_instances)


class EVPISampling(BaseEstimator):
    """EVPI query strategy bound to a decision process, for modAL and skrbal.

    A callable with modAL's strategy signature, so
    ``ActiveLearner(estimator=..., query_strategy=EVPISampling(process=...))``
    queries the instances whose labels are worth the most. As a
    ``BaseEstimator`` it clones, prints and grid-searches like any other
    scikit-learn object.

    Parameters
    ----------
    process : DecisionProcess
        The decision the labels inform.
    inspections : list of InspectionMethod, default=None
        Imperfect inspections to choose from (see :func:`evpi_sampling`):
        ``None`` ranks by EVPI, a list by the best net value ``EVSI - cost``;
        :meth:`choose` then gives the method for each chosen instance, and
        :meth:`skrbal.active.ActiveLearner.teach_report` learns its report.
    random_state : int, RandomState instance or None, default=None
        Breaks ties between equal scores; ``None`` prefers the lowest index.
        An int gives the same choice at every call with the same scores.

    See Also
    --------
    evpi_sampling : The function this object calls.
    evpi_scores : The EVPI of each belief.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.query import EVPISampling
    >>> strategy = EVPISampling(process=synthetic_decision_process())
    >>> X = np.array([[-5.0], [-4.8], [-0.7], [-0.5], [5.8], [6.0], [19.0], [19.2]])
    >>> clf = GaussianNB().fit(X, [1, 1, 2, 2, 3, 3, 4, 4])
    >>> idx, evpi = strategy(clf, np.array([[-4.9], [12.5], [19.1]]), n_instances=2)
    >>> idx
    array([1, 0])
    """

    def __init__(
        self, *, process: DecisionProcess, inspections=None, random_state=None
    ):
        self.process = process
        self.inspections = inspections
        self.random_state = random_state

    def __call__(self, classifier, X_pool, n_instances: int = 1, **kwargs):
        """Choose ``n_instances`` instances of ``X_pool``; see `evpi_sampling`."""
        return evpi_sampling(
            classifier,
            X_pool,
            n_instances,
            process=self.process,
            inspections=self.inspections,
            random_state=self.random_state,
            **kwargs,
        )

    def choose(self, classifier, X):
        """The inspection method for each instance, by the largest net value.

        Parameters
        ----------
        classifier : fitted classifier, Pipeline or modAL learner
            Must have ``predict_proba`` and ``classes_``.
        X : array-like of shape (n_samples, n_features)
            The instances, e.g. those the strategy chose.

        Returns
        -------
        choice : ndarray of int of shape (n_samples,)
            Index into ``inspections`` (``[perfect_inspection(process)]``
            when ``inspections`` is None), ``-1`` where no method is worth
            its cost.
        net_value : ndarray of shape (n_samples, n_methods)
            ``EVSI - cost`` of each method.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.inspection import InspectionMethod, perfect_inspection
        >>> from skrbal.query import EVPISampling
        >>> process = synthetic_decision_process()
        >>> drone = InspectionMethod(
        ...     name="drone", cost=1.4,
        ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]])
        >>> strategy = EVPISampling(
        ...     process=process, inspections=[perfect_inspection(process), drone])
        >>> clf = GaussianNB().fit([[-5.0], [-4.0], [18.0], [19.0]], [1, 1, 4, 4])
        >>> choice, net = strategy.choose(clf, [[-4.5], [7.0]])
        >>> choice
        array([-1,  1])
        >>> net.round(2)
        array([[-7.  , -1.4 ],
               [ 7.75,  9.9 ]])
        """
        from skrbal.inspection import perfect_inspection

        methods = self.inspections
        if methods is None:
            methods = [perfect_inspection(self.process)]
        proba = classifier.predict_proba(X)
        return choose_inspection(
            proba, self.process, methods, classes=_classes_of(classifier)
        )
