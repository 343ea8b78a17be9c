"""Argument checks shared by the dataset generators, loaders and studies."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np


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
