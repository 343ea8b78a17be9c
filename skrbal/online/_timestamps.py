"""Observation times: numbers of seconds, or datetimes turned into them."""

from __future__ import annotations

from numbers import Real

import numpy as np

from skrbal._lazy import LazyModule

pd = LazyModule("pandas")  # for datetimes, imported when first given


def _is_bool(value) -> bool:
    return isinstance(value, bool | np.bool_)


def _numbers_of_objects(array: np.ndarray, name: str) -> np.ndarray | None:
    """An object array of numbers as floats; ``None`` if it holds no number.

    A pandas object column of numbers must still be seconds: ``pd.to_datetime``
    would read them as nanoseconds.
    """
    items = array.ravel()
    is_number = [isinstance(v, Real) and not _is_bool(v) for v in items]
    if not any(is_number):
        return None
    if not all(is_number):
        raise ValueError(
            f"{name} mixes numbers (seconds) with other values: give all of them "
            "as numbers or all as datetimes."
        )
    return np.array([float(v) for v in items]).reshape(array.shape)


def _epoch_seconds(stamps: pd.DatetimeIndex) -> np.ndarray:
    """Seconds since 1970-01-01 UTC, NaN for NaT, to the nearest float.

    Whole seconds and the fraction are converted apart: the count of ticks as one
    float is already rounded (2024 in nanoseconds is past 2**53), so 0.25 s came
    back as 0.2499998.
    """
    ticks = stamps.asi8
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[stamps.unit]
    whole, part = np.divmod(ticks, per_second)
    seconds = whole.astype(np.float64) + part / per_second
    seconds[np.asarray(stamps.isna())] = np.nan
    return seconds


def as_seconds(values, name: str, n: int) -> np.ndarray:
    """Timestamps as float seconds, validated.

    Numbers are taken as seconds; datetimes (numpy, pandas, ``datetime`` or ISO
    8601 strings, which may be spelt differently from one value to the next;
    naive ones read as UTC, but not next to aware strings) become seconds since
    1970-01-01 UTC. They must be
    ``n`` finite, non-decreasing values; errors name ``name``. Numbers held in an
    object array (a pandas object column) are seconds too; a bool is no time.
    """
    array = np.asarray(values)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.dtype.kind == "b" or (
        array.dtype.kind == "O" and any(_is_bool(v) for v in array.ravel())
    ):
        raise ValueError(f"{name} must be numbers (seconds) or datetimes, not bool.")
    if array.dtype.kind == "O":
        numbers = _numbers_of_objects(array, name)
        if numbers is not None:
            array = numbers
    if array.dtype.kind in "MOUS":  # datetimes, or ISO 8601 strings
        from skrbal._datetimes import parse_datetimes

        array = _epoch_seconds(parse_datetimes(array.ravel(), name))
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numbers (seconds) or datetimes.")
    array = array.astype(np.float64)
    if array.shape != (n,):
        raise ValueError(f"{name} must hold {n} value(s), got shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite.")
    if n > 1 and np.any(np.diff(array) < 0):
        row = int(np.flatnonzero(np.diff(array) < 0)[0]) + 1
        clock = "timestamp" if array.dtype.kind == "f" else "step"
        raise ValueError(
            f"{name} must be non-decreasing: row {row} of this call, "
            f"{time_text(array[row], clock)}, is before row {row - 1} of this call, "
            f"{time_text(array[row - 1], clock)}."
        )
    return array


def time_text(seconds: float, clock: str = "timestamp") -> str:
    """A time for a message: ISO 8601 (UTC) for a date, else the number.

    >>> time_text(879465600.0)
    '1997-11-14T00:00:00Z'
    >>> time_text(12.0, "step")
    '12'
    """
    value = float(seconds)
    if clock == "step" or not np.isfinite(value):
        return f"{value:g}"
    if value < _DATES_FROM:
        return f"{value:g} s"
    stamp = pd.Timestamp(value, unit="s", tz="UTC")
    text = stamp.isoformat().replace("+00:00", "Z")
    return text


def duration_text(length: float, clock: str = "timestamp") -> str:
    """A duration for a message: in days or hours on a clock of seconds.

    >>> duration_text(30 * 86400.0)
    '30 days'
    >>> duration_text(5400.0), duration_text(12.0, "step")
    ('1.5 hours', '12 observations')
    """
    value = float(length)
    if clock == "step":
        return f"{value:g} observations"
    for unit, seconds in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if value >= seconds:
            return f"{value / seconds:g} {unit}"
    return f"{value:g} s"


# Seconds since 1970 read as dates from 1973-03-03 on (1e8 s), as the
# agent's figure does; smaller numbers are durations from a user's origin.
_DATES_FROM = 1e8
