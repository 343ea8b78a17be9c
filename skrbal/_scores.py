"""Scores computed where their inputs are already checked (shared, private)."""

from __future__ import annotations

import numpy as np

__all__ = ["HeldOutScores", "macro_f1"]


def macro_f1(y_true, y_pred) -> float:
    """Macro-averaged F1 score over the labels in ``y_true`` or ``y_pred``.

    The number :func:`sklearn.metrics.f1_score` gives with
    ``average="macro"`` and ``zero_division=0``, bit for bit: per label
    ``2 tp / (n_true + n_predicted)``, averaged over the labels that occur
    in either array. It skips scikit-learn's input checks (several
    milliseconds per call), which a learner that scores its held-out set
    after every query has already made.

    Parameters
    ----------
    y_true : ndarray of shape (n_samples,)
        True labels.
    y_pred : ndarray of shape (n_samples,)
        Predicted labels, of a type comparable with ``y_true``.

    Returns
    -------
    f1 : float
        NaN for empty arrays.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    n = y_true.shape[0]
    if n == 0:
        return float("nan")
    labels, codes = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    codes = codes.reshape(-1)
    return _macro_f1_of_codes(codes[:n], codes[n:], labels.shape[0])


def _macro_f1_of_codes(true, pred, k) -> float:
    """Macro-F1 of label codes ``0..k-1``, in sorted label order.

    Averages over the codes that occur in either array, in code order: with
    codes that follow the sorted labels, the same terms in the same order as
    :func:`macro_f1`, so the same bits.
    """
    tp = np.bincount(true[true == pred], minlength=k).astype(float)
    denom = np.bincount(true, minlength=k).astype(float)
    denom += np.bincount(pred, minlength=k)
    present = denom > 0
    return float(np.mean(2.0 * tp[present] / denom[present]))


class HeldOutScores:
    """Decision accuracy and macro-F1 of successive models on one held-out set.

    A learner scores its held-out set after every query: the true states'
    perfect-information actions and label codes do not change, so they are
    worked out once here rather than at every call. Each call gives what
    :func:`~skrbal.metrics.decision_accuracy` and :func:`macro_f1` give,
    bit for bit.

    Parameters
    ----------
    y_true : ndarray of shape (n_samples,)
        True states of the held-out set (checked by the caller), states of
        ``process``.
    process : DecisionProcess
    """

    def __init__(self, y_true, process):
        y_true = np.asarray(y_true)
        self.process = process
        self.perfect = process.perfect_information_action(y_true)
        self.labels = np.unique(np.concatenate([y_true, np.asarray(process.classes_)]))
        self.true = np.searchsorted(self.labels, y_true)
        self._seen = (None, None)

    def __call__(self, proba, classes) -> tuple[float, float]:
        """``(decision accuracy, macro-F1)`` of beliefs ``proba`` over ``classes``."""
        chosen = self.process.optimal_action(proba, classes)
        accuracy = float(np.average(chosen == self.perfect))
        column = np.argmax(proba, axis=1)
        seen, codes = self._seen
        if classes is not seen:
            codes = None
            known = np.asarray(classes)
            position = np.searchsorted(self.labels, known)
            if np.all(position < self.labels.size) and np.array_equal(
                self.labels[position], known
            ):
                codes = position
            self._seen = (classes, codes)
        if codes is None:  # a class outside the process's states
            predicted = np.asarray(classes)[column]
            return accuracy, macro_f1(self.labels[self.true], predicted)
        return accuracy, _macro_f1_of_codes(self.true, codes[column], self.labels.size)
