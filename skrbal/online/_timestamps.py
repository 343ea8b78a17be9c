"""Observation times: numbers of seconds, or datetimes turned into them."""

from __future__ import annotations

import numpy as np
import pandas as pd


def as_seconds(values, name: str, n: int) -> np.ndarray:
    """Timestamps as float seconds, validated.

    Numbers are taken as seconds; datetimes (numpy, pandas, ``datetime`` or ISO
    strings; naive ones read as UTC) become seconds since 1970-01-01 UTC. They must be
    ``n`` finite, non-decreasing values; errors name ``name``.
    """
    array = np.asarray(values)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.dtype.kind in "MOUS":  # datetimes, or ISO 8601 strings
        try:
            stamps = pd.to_datetime(array.ravel(), utc=True)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must be numbers (seconds) or datetimes: {exc}"
            ) from exc
        epoch = pd.Timestamp(0, tz="UTC")
        array = np.asarray((stamps - epoch) / pd.Timedelta(seconds=1))
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numbers (seconds) or datetimes.")
    array = array.astype(np.float64)
    if array.shape != (n,):
        raise ValueError(f"{name} must hold {n} value(s), got shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite.")
    if n > 1 and np.any(np.diff(array) < 0):
        raise ValueError(f"{name} must be non-decreasing.")
    return array
