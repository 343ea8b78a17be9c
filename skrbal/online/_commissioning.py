"""Commissioning from a campaign whose later rows are not all labelled.

A campaign file often holds a few labelled rows (the commissioning
inspections) and then monitoring rows, most without a label, some with the
label of an inspection made anyway. :meth:`RiskBasedAgent.commission` commissions
the agent with the leading labelled rows, then observes every later row in
order, as :meth:`~skrbal.online.RiskBasedAgent.observe` would (decisions
taken, requests made), and teaches each later label as the inspection of its
step: the result of the agent's request when it requested that step, else a
routine inspection (:meth:`~skrbal.online.RiskBasedAgent.record_label`).

A ``'data'`` prior of a Gaussian mixture is about the features' scale, which
every commissioning row shows, labelled or not: it is computed from all of
them and pinned in the agent's estimator (so that one labelled row is enough
to start, and a resume rebuilds the same prior).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone

from skrbal._labels import states_of

__all__ = [
    "checked_labels",
    "data_prior_pinned",
    "leading",
    "missing_labels",
    "rows_of",
]


def missing_labels(y) -> np.ndarray | None:
    """Which labels are missing (None, NaN or ''); None when none is."""
    values = np.asarray(y, dtype=object)
    if values.ndim != 1 or values.size == 0:
        return None
    missing = np.fromiter(
        (
            v is None or (isinstance(v, str) and not v.strip()) or _is_nan(v)
            for v in values
        ),
        dtype=bool,
        count=values.size,
    )
    return missing if missing.any() else None


def _is_nan(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def rows_of(X, start: int, stop: int):
    """Rows ``start:stop`` of an array-like, a DataFrame keeping its columns."""
    if hasattr(X, "iloc"):
        return X.iloc[start:stop]
    return np.asarray(X, dtype=np.float64)[start:stop]


def leading(values, stop: int):
    """The first ``stop`` values of an array-like, of their own kind."""
    if hasattr(values, "iloc"):
        return values.iloc[:stop]
    if isinstance(values, np.ndarray | pd.Index):
        return values[:stop]
    return np.asarray(values)[:stop]


def checked_labels(classes, values, rows) -> list:
    """The labels at ``rows`` as states of the process, a bad one named."""
    if len(values) == 0:
        # An empty array is float: it would be refused against text states.
        return []
    try:
        # Of the labels' own kind, not object (the array held None too).
        return list(states_of(np.asarray(list(values)), classes, name="y"))
    except ValueError:
        for row, value in zip(rows, values):
            try:
                states_of([value], classes, name="y")
            except ValueError:
                raise ValueError(
                    f"y: row {row} (counted from 0) holds {value!r}, not a state "
                    f"of the process (its states are "
                    f"{classes.tolist()})."
                ) from None
        raise


_PRIOR_MOMENTS = ("mean_prior", "covariance_prior")


def data_prior_pinned(estimator, X):
    """``estimator`` with its ``'data'`` prior computed from every row of ``X``.

    Only an estimator that takes the features as given has its prior pinned
    (a Pipeline's mixture sees transformed features); the moments are those a
    ``'data'`` prior takes (the mean, and the diagonal of the population
    variance). A feature constant over ``X`` keeps ``'data'``, whose fit
    names it. ``None`` when nothing is to pin.
    """
    params = estimator.get_params(deep=False)
    if not all(params.get(name) == "data" for name in _PRIOR_MOMENTS):
        return None
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2 or not np.all(np.isfinite(X)):
        return None
    variance = X.var(axis=0)
    if not np.all(variance > 0):
        return None
    return clone(estimator).set_params(
        mean_prior=X.mean(axis=0), covariance_prior=np.diag(variance)
    )
