"""Argument checks shared by the dataset generators, loaders and studies."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

# Tolerance on the sum of a row of probabilities (a transition row, a
# confusion row).
ROW_SUM_TOL = 1e-8
# Tolerance on the sum of a belief (a row of predict_proba, a posterior):
# classifiers normalise in floating point, some in single precision.
BELIEF_TOL = 1e-6


def check_int(value, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    return int(value)


def check_positive_real(value, name: str, *, above: float = 0.0) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, Real)
        or np.isnan(value)
        or value <= above
    ):
        raise ValueError(f"{name} must be a number > {above}, got {value!r}.")
    return float(value)


def as_finite_array(value, name: str, ndim: int) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        if "inhomogeneous" in str(exc):
            raise ValueError(
                f"{name} is ragged: its nested lists must have equal lengths, got "
                f"{value!r}."
            ) from exc
        raise ValueError(f"{name} must be numeric, got {value!r}.") from exc
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array, got shape {array.shape}.")
    bad = ~np.isfinite(array)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} has a non-finite value at index {where}.")
    return array


def check_probability_rows(array, entry, row, kind: str, law: str) -> None:
    """Check that each row along the last axis of ``array`` is a distribution.

    ``entry(index)`` and ``row(index)`` name the offending entry and row in the
    error message, ``kind`` says what the probabilities are and ``law`` the
    conditional distribution each row holds.
    """
    negative = np.argwhere(array < 0)
    if negative.size:
        index = tuple(int(v) for v in negative[0])
        raise ValueError(
            f"{entry(*index)} = {float(array[index]):.10g} is negative: {kind} "
            "probabilities must be non-negative."
        )
    row_sums = array.sum(axis=-1)
    off = np.argwhere(np.abs(row_sums - 1.0) > ROW_SUM_TOL)
    if off.size:
        index = tuple(int(v) for v in off[0])
        raise ValueError(
            f"{row(*index)} sums to {float(row_sums[index]):.10g}, not 1: each row "
            f"{law} must be a probability distribution."
        )


def check_cost(value, what: str) -> float:
    """``value`` as a float if it is a finite number ``>= 0``; ``what`` names it."""
    if (
        not isinstance(value, Real)
        or isinstance(value, bool)
        or not np.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{what} must be a finite number >= 0, got {value!r}.")
    return float(value)


def check_belief_sums(sums, name: str, meaning: str, first_row: int = 0) -> None:
    """Raise unless every row sum of a belief is one within ``BELIEF_TOL``.

    The message names the row of ``name`` (numbered from ``first_row``) and
    says what its rows must be (``meaning``).
    """
    off = np.abs(sums - 1.0) > BELIEF_TOL
    if off.any():
        row = int(np.argmax(off))
        raise ValueError(
            f"{name} row {first_row + row} sums to {float(sums[row]):.10g}, not 1: "
            f"{meaning}."
        )
