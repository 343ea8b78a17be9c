"""Commissioning from a campaign whose later rows are not all labelled.

A campaign file often holds a few labelled rows (the commissioning
inspections) and then monitoring rows, most without a label, some with the
label of an inspection made anyway. :func:`commission_in_parts` commissions
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
from skrbal.online._timestamps import as_seconds

__all__ = ["commission_in_parts", "missing_labels"]


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


def _rows(X, start: int, stop: int):
    """Rows ``start:stop`` of an array-like, a DataFrame keeping its columns."""
    if hasattr(X, "iloc"):
        return X.iloc[start:stop]
    return np.asarray(X, dtype=np.float64)[start:stop]


def _leading(values, stop: int):
    """The first ``stop`` values of an array-like, of their own kind."""
    if hasattr(values, "iloc"):
        return values.iloc[:stop]
    if isinstance(values, np.ndarray | pd.Index):
        return values[:stop]
    return np.asarray(values)[:stop]


def _checked_labels(agent, values, rows) -> list:
    """The labels at ``rows`` as states of the process, a bad one named."""
    if len(values) == 0:
        # An empty array is float: it would be refused against text states.
        return []
    classes = agent.process.classes_
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
                    f"{agent.process.classes_.tolist()})."
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


def commission_in_parts(agent, X, y, timestamps, missing: np.ndarray):
    """See :meth:`RiskBasedAgent.commission`: labelled rows, then the stream."""
    n = missing.size
    n_rows = len(X) if hasattr(X, "iloc") else np.asarray(X).shape[0]
    if n_rows != n:
        raise ValueError(
            f"y must hold one label per row of X: X has {n_rows} rows, y has {n}."
        )
    if missing[0]:
        raise ValueError(
            "y: row 0 (counted from 0) has no label: the commissioning rows, "
            "labelled, come first; the rows after the first unlabelled one are "
            "observed."
        )
    n0 = int(np.argmax(missing))
    values = np.asarray(y, dtype=object)
    later = np.flatnonzero(~missing[n0:]) + n0
    labels = _checked_labels(agent, values[later], later)
    stamps = None if timestamps is None else as_seconds(timestamps, "timestamps", n)
    given, pinned = agent.estimator, data_prior_pinned(agent.estimator, X)
    if pinned is not None:
        agent.estimator = pinned
    try:
        agent.commission(
            _rows(X, 0, n0),
            _checked_labels(agent, values[:n0], range(n0)),
            # As given, not as seconds: the agent keeps how times were given
            # (ISO comes back ISO) and whether they carried a UTC offset.
            timestamps=None if stamps is None else _leading(timestamps, n0),
        )
    except BaseException:
        agent.estimator = given
        raise
    start = n0
    for row, label in zip(later.tolist(), labels):
        decided = agent.observe(
            _rows(X, start, row + 1),
            timestamps=None if stamps is None else stamps[start : row + 1],
        )
        start = row + 1
        at = None if stamps is None else float(stamps[row])
        request = decided["request_id"].iloc[-1]
        if pd.isna(request):
            agent.record_label(row, label, timestamp=at)
        else:  # the agent asked for this very inspection
            agent.record_inspection(int(request), label, timestamp=at)
    if start < n:
        agent.observe(
            _rows(X, start, n), timestamps=None if stamps is None else stamps[start:]
        )
    return agent
