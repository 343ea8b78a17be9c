"""Split a monitoring record into a test set and a stream, as in the paper."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, _safe_indexing, check_random_state
from sklearn.utils.validation import check_consistent_length

__all__ = ["stream_test_split"]


def _n_from_size(size, n_total: int, name: str, *, minimum: int, maximum: int) -> int:
    """Number of samples a float share or int count of ``n_total`` asks for."""
    if isinstance(size, bool) or not isinstance(size, Real):
        raise ValueError(f"{name} must be a float in (0, 1) or an int, got {size!r}.")
    if isinstance(size, Integral):
        count = int(size)
    elif 0.0 < size < 1.0:
        # Round up, as scikit-learn does for test sizes, so a small share of a
        # small set still gives at least one sample.
        count = int(np.ceil(size * n_total))
    else:
        raise ValueError(f"{name} as a float must be in (0, 1), got {size!r}.")
    if not minimum <= count <= maximum:
        raise ValueError(
            f"{name}={size!r} gives {count} of {n_total} samples; it must give "
            f"between {minimum} and {maximum}."
        )
    return count


def _aggregate_actions(actions: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Action in force between consecutive kept observations.

    ``actions[t]`` acts between observations ``t`` and ``t + 1``. Between kept
    observations ``kept[k]`` and ``kept[k + 1]`` the original sequence took
    the actions ``actions[kept[k]:kept[k + 1]]``; the aggregate is the last
    non-zero one of them (the latest intervention, e.g. a repair), or 0 when
    nothing was done. The last kept observation aggregates to the end.
    """
    positions = np.arange(actions.shape[0])
    last_intervention = np.where(actions != 0, positions, -1)
    latest = np.maximum.reduceat(last_intervention, kept)
    return np.where(latest >= 0, actions[np.maximum(latest, 0)], 0)


def _check_actions(actions, n_samples: int) -> np.ndarray:
    actions = np.asarray(actions)
    if actions.shape != (n_samples,):
        raise ValueError(
            f"actions has shape {actions.shape}; expected ({n_samples},), one "
            "action per observation."
        )
    if not np.issubdtype(actions.dtype, np.integer) or (actions < 0).any():
        raise ValueError(
            "actions must hold non-negative integer action indices, got "
            f"dtype {actions.dtype} with values {np.unique(actions)[:5].tolist()}."
        )
    return actions


def stream_test_split(
    X,
    y,
    actions=None,
    *,
    test_size: float | int = 0.5,
    initial_size: float | int = 0.002,
    random_state=None,
) -> Bunch:
    """Split a temporally ordered record into a test set and a stream.

    Follows the protocol of the paper's experiments: a random share of the
    observations becomes an independent test set; the rest, kept in temporal
    order, is the stream a risk-based active learner works through; a small
    random subset of the stream is the initial labelled set.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features in temporal order (arrays and pandas DataFrames are kept as
        such).
    y : array-like of shape (n_samples,)
        Health states.
    actions : array-like of int of shape (n_samples,), default=None
        Action index taken after each observation (``actions[t]`` acts
        between observations ``t`` and ``t + 1``), e.g. from
        :func:`make_degradation_stream`; 0 must mean "do nothing".
    test_size : float or int, default=0.5
        Share of the observations (float in ``(0, 1)``, rounded up) or number
        of observations (int) in the test set. At least two observations must
        be left for the stream.
    initial_size : float or int, default=0.002
        Share of the stream (float, rounded up, at least one) or number of
        stream observations (int) in the initial labelled set. At least one
        stream observation must remain outside it.
    random_state : int, RandomState instance or None, default=None
        Seed of both random draws; pass an int for reproducible splits.

    Returns
    -------
    split : :class:`~sklearn.utils.Bunch`
        With the keys

        - ``X_stream``, ``y_stream``: the stream, in temporal order.
        - ``actions_stream``: ndarray of int, the action in force between each
          stream observation and the next (see Notes); ``None`` when
          ``actions`` is ``None``.
        - ``stream_indices``: ndarray of int, increasing, the positions of the
          stream observations in ``X``.
        - ``X_test``, ``y_test``: the test set, in temporal order.
        - ``test_indices``: ndarray of int, increasing, the positions of the
          test observations in ``X``.
        - ``initial_indices``: ndarray of int, increasing, positions *within
          the stream* of the initial labelled set. Being a small random
          draw, it may miss some classes entirely.

    See Also
    --------
    make_degradation_stream : A stream to split.
    make_z24_like : A Z24-like record to split.

    Notes
    -----
    Dropping observations merges several steps of the original sequence into
    one step of the stream, and the actions are merged with them: the action
    between stream observations ``k`` and ``k + 1`` is the last non-zero
    action taken between them in the original sequence, or 0. For the binary
    processes of the paper this means "a repair happened in between"; the
    last stream observation aggregates the actions up to the end of the
    record. For degradation data the merged steps remain consistent with the
    one-step transition model as long as a repair is followed by at least one
    kept class-1 observation, which a random half keeps unless a whole class-1
    segment falls in the test set.

    The initial labelled set stays in the stream arrays; whether a learner
    skips those observations when it walks the stream is its own choice.

    Examples
    --------
    >>> from skrbal.datasets import make_degradation_stream, stream_test_split
    >>> X, y, actions = make_degradation_stream(
    ...     n_cycles=2, n_per_cycle=500, random_state=0
    ... )
    >>> split = stream_test_split(X, y, actions, random_state=0)
    >>> split.X_stream.shape, split.X_test.shape, split.initial_indices.shape
    ((500, 2), (500, 2), (1,))
    >>> int(split.actions_stream.sum())
    1
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y.shape}.")
    check_consistent_length(X, y)
    n_samples = y.shape[0]
    if n_samples < 3:
        raise ValueError(
            f"need at least 3 observations (test, initial and stream), got {n_samples}."
        )
    if actions is not None:
        actions = _check_actions(actions, n_samples)
    n_test = _n_from_size(
        test_size, n_samples, "test_size", minimum=1, maximum=n_samples - 2
    )
    n_stream = n_samples - n_test
    n_initial = _n_from_size(
        initial_size, n_stream, "initial_size", minimum=1, maximum=n_stream - 1
    )

    rng = check_random_state(random_state)
    permutation = rng.permutation(n_samples)
    test_indices = np.sort(permutation[:n_test])
    stream_indices = np.sort(permutation[n_test:])
    initial_indices = np.sort(rng.choice(n_stream, size=n_initial, replace=False))

    return Bunch(
        X_stream=_safe_indexing(X, stream_indices),
        y_stream=y[stream_indices],
        actions_stream=(
            None if actions is None else _aggregate_actions(actions, stream_indices)
        ),
        stream_indices=stream_indices,
        X_test=_safe_indexing(X, test_indices),
        y_test=y[test_indices],
        test_indices=test_indices,
        initial_indices=initial_indices,
    )
