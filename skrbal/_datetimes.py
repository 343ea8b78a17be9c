"""Date-times as given by users: ISO 8601 text (spelt as they like) or datetimes."""

from __future__ import annotations

import datetime
import re

import numpy as np
import pandas as pd

__all__ = ["parse_datetimes"]


# After the date and its separator, a time is digits, ':', '.' and ','; a 'Z',
# '+' or '-' there starts a UTC offset.
_UTC_OFFSET = re.compile(r"[T ][^Z+-]*[Z+-]", re.IGNORECASE)


def _has_utc_offset(value) -> bool:
    """Whether a datetime, or a string pandas read as ISO 8601, is aware."""
    if isinstance(value, str):
        return _UTC_OFFSET.search(value.strip()) is not None
    return getattr(value, "tzinfo", None) is not None  # datetime64: naive


def _one_kind(aware: set, name: str) -> None:
    if len(aware) > 1:
        raise ValueError(
            f"{name} mixes date-times with and without a UTC offset (such as "
            "'Z' or '+02:00', or a datetime's tzinfo): give one to all of them, "
            "or to none (read as UTC)."
        )


def parse_datetimes(items: np.ndarray, name: str) -> pd.DatetimeIndex:
    """Datetimes or ISO 8601 strings (naive ones as UTC) as UTC timestamps.

    The one reader of date-times for every input: a live agent's timestamps
    and a campaign file's time column. Errors name ``name``.

    Strings are read as ISO 8601 first: pandas would otherwise read all of them
    in the format it infers from the first one, refusing ISO 8601 spelt in
    several ways (fractions of a second on some values only, a date then a
    date-time), or fall back to dateutil with a warning. A naive time next to
    an aware one is refused, whether text or ``datetime`` objects (or a mix):
    is it UTC or the sensor's local time? Other text pandas can read (such as
    01/02/2024) is read as before.
    """
    # One rule for text and datetime objects alike.
    aware = {
        _has_utc_offset(v)
        for v in items
        if isinstance(v, (datetime.date, np.datetime64)) and not pd.isna(v)
    }
    iso_error = None
    if any(isinstance(v, str) for v in items):
        try:
            stamps = pd.to_datetime(items, utc=True, format="ISO8601")
        except (TypeError, ValueError) as exc:
            iso_error = exc
        else:
            missing = np.asarray(stamps.isna())
            _one_kind(aware | {_has_utc_offset(v) for v in items[~missing]}, name)
            return stamps
    _one_kind(aware, name)
    try:
        return pd.to_datetime(items, utc=True)
    except (TypeError, ValueError) as exc:
        reason = str(iso_error or exc).split(". You might want to try", 1)[0]
        raise ValueError(
            f"{name} must be numbers (seconds) or datetimes: {reason}"
        ) from exc
