"""Scores computed where their inputs are already checked (shared, private)."""

from __future__ import annotations

import numpy as np

__all__ = ["macro_f1"]


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
    true, pred = codes[:n], codes[n:]
    k = labels.shape[0]
    tp = np.bincount(true[true == pred], minlength=k).astype(float)
    denom = np.bincount(true, minlength=k).astype(float)
    denom += np.bincount(pred, minlength=k)
    return float(np.mean(2.0 * tp / denom))
