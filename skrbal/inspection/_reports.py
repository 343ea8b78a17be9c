"""Reports as data: drawing them from a confusion model, learning from them."""

from __future__ import annotations

import numpy as np
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import _num_samples

from skrbal._decision import DecisionProcess
from skrbal._labels import label_positions
from skrbal._validation import check_belief_sums
from skrbal.inspection._method import InspectionMethod

__all__ = ["simulate_reports", "weighted_copies"]


def simulate_reports(
    y_true, process: DecisionProcess, method: InspectionMethod, random_state=None
) -> np.ndarray:
    """Draw the report of each inspection from the method's confusion model.

    The simulated oracle of an imperfect inspection: for true state ``y`` the
    report is ``z`` with probability ``confusion[y, z]``. One uniform number
    is drawn per inspection, whatever the method, so a seeded run draws the
    same numbers whichever methods it uses.

    Parameters
    ----------
    y_true : array-like of shape (n_inspections,)
        True health state at each inspection, labels of ``process``.
    process : DecisionProcess
        The process whose states the confusion rows follow.
    method : InspectionMethod
        The method that inspects.
    random_state : int, RandomState instance or None, default=None
        The generator of the draws.

    Returns
    -------
    reports : ndarray of shape (n_inspections,)
        Labels from ``method.outcomes_``. A perfect method reports the true
        state.

    See Also
    --------
    report_posterior : The belief after a report.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import InspectionMethod, simulate_reports
    >>> process = synthetic_decision_process()
    >>> drone = InspectionMethod(
    ...     name="drone", cost=1.4,
    ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]],
    ...     outcomes=["no damage found", "damage found"])
    >>> simulate_reports([1, 4, 4], process, drone, random_state=0).tolist()
    ['no damage found', 'damage found', 'damage found']
    """
    if not isinstance(process, DecisionProcess):
        raise TypeError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )
    if not isinstance(method, InspectionMethod):
        raise TypeError(
            f"method must be an InspectionMethod, got {type(method).__name__}."
        )
    confusion = method._confusion_for(process)
    outcomes = method.outcomes_
    rows = label_positions(y_true, process.classes_, owner="the process's classes")
    uniform = check_random_state(random_state).random_sample(rows.shape[0])
    cumulative = np.cumsum(confusion[rows], axis=1)
    # The last column is 1 up to rounding; counting the thresholds below the
    # draw, capped at the last outcome, never picks an outcome of probability 0
    # past the last positive one.
    index = np.minimum((cumulative <= uniform[:, None]).sum(axis=1), len(outcomes) - 1)
    last_positive = confusion.shape[1] - 1 - np.argmax(confusion[:, ::-1] > 0, axis=1)
    index = np.minimum(index, last_positive[rows])
    return outcomes[index]


def weighted_copies(X, posterior, classes):
    """One weighted copy of each sample per state it may be in.

    Soft evidence for an estimator that accepts ``sample_weight``: a sample
    whose state is known only as a posterior ``p`` becomes one copy per state
    ``k`` with ``p[k] > 0``, labelled ``k`` and weighted ``p[k]``. For a
    conjugate model whose statistics are weighted sums (such as
    :class:`~skrbal.mixture.BayesianGMMClassifier`) this is exactly the
    update with fractional responsibilities ``p``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The samples (a DataFrame stays one).
    posterior : array-like of shape (n_samples, n_classes)
        Probability of each state for each sample; rows sum to one.
    classes : array-like of shape (n_classes,)
        Labels of the columns of ``posterior``.

    Returns
    -------
    X_copies : ndarray of shape (n_copies, n_features)
    y_copies : ndarray of shape (n_copies,)
    sample_weight : ndarray of shape (n_copies,)
        In the order of the samples, then of the states.

    Examples
    --------
    >>> from skrbal.inspection import weighted_copies
    >>> X, y, w = weighted_copies([[0.5]], [[0.25, 0.0, 0.75]], [1, 2, 3])
    >>> X.ravel().tolist(), y.tolist(), w.tolist()
    ([0.5, 0.5], [1, 3], [0.25, 0.75])
    """
    if not hasattr(X, "shape"):
        X = np.asarray(X)
    posterior = np.asarray(posterior, dtype=np.float64)
    classes = np.asarray(classes)
    n_samples = _num_samples(X)
    if posterior.ndim != 2 or posterior.shape != (n_samples, classes.shape[0]):
        raise ValueError(
            f"posterior must have shape (n_samples, n_classes) = ({n_samples}, "
            f"{classes.shape[0]}), got {posterior.shape}."
        )
    if not np.all(np.isfinite(posterior)) or np.any(posterior < 0):
        raise ValueError("posterior must hold finite, non-negative probabilities.")
    check_belief_sums(
        posterior.sum(axis=1),
        "posterior",
        "each row must be a probability distribution over the classes",
    )
    rows, columns = np.nonzero(posterior > 0)
    return _safe_indexing(X, rows), classes[columns], posterior[rows, columns]
