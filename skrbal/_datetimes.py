"""Date-times as given by users: ISO 8601 text (spelt as they like) or datetimes."""

from __future__ import annotations

import datetime
import re

import numpy as np
import pandas as pd

__all__ = ["carry_utc_offsets", "parse_datetimes"]


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


def parse_datetimes(
    items: np.ndarray, name: str, *, date_format: str | None = None, where=None
) -> pd.DatetimeIndex:
    """Datetimes or ISO 8601 strings (naive ones as UTC) as UTC timestamps.

    The one reader of date-times for every input: a live agent's timestamps
    and a campaign file's time column. Errors name ``name``, and the value at
    fault by ``where(i)`` (its position ``i`` by default).

    Strings are read as ISO 8601 first: pandas would otherwise read all of them
    in the format it infers from the first one, refusing ISO 8601 spelt in
    several ways (fractions of a second on some values only, a date then a
    date-time), or fall back to dateutil with a warning. A naive time next to
    an aware one is refused, whether text or ``datetime`` objects (or a mix):
    is it UTC or the sensor's local time? Any other text is refused unless
    ``date_format`` (a ``strftime`` form such as ``'%d/%m/%Y %H:%M'``) says how
    to read it: ``01/02/1998`` is 1 February in most of the world and 2 January
    in the rest, and pandas guessed.
    """
    where = where or (lambda i: f"value {i}")
    if date_format is not None:
        return _formatted(items, name, date_format, where)
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
        position = _first_not_iso(items)
        if position is not None:
            raise ValueError(
                f"{name} must be numbers (seconds) or datetimes: {where(position)} "
                f"holds {str(items[position])!r}, which is neither ISO 8601 (such as "
                "1998-02-01T00:00Z) nor seconds; a date "
                "such as 01/02/1998 reads day-first in some places and month-first "
                "in others. Write the times in ISO 8601, or give their form with "
                "--date-format (date_format=), such as '%d/%m/%Y %H:%M'."
            )
    _one_kind(aware, name)
    try:
        return pd.to_datetime(items, utc=True)
    except (TypeError, ValueError) as exc:
        reason = str(iso_error or exc).split(". You might want to try", 1)[0]
        raise ValueError(
            f"{name} must be numbers (seconds) or datetimes: {reason}"
        ) from exc


def _first_not_iso(items: np.ndarray) -> int | None:
    """The position of the first string that is not ISO 8601 (None: none)."""
    for position, value in enumerate(items):
        if not isinstance(value, str):
            continue
        try:
            pd.to_datetime([value], utc=True, format="ISO8601")
        except (TypeError, ValueError):
            return position
    return None


def _formatted(items: np.ndarray, name: str, date_format: str, where):
    """Date-times in the user's ``strftime`` form, naive ones as UTC."""
    try:
        return pd.to_datetime(items, utc=True, format=date_format)
    except (TypeError, ValueError):
        pass
    for position, value in enumerate(items):
        try:
            pd.to_datetime([value], utc=True, format=date_format)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name}: {where(position)} holds {str(value)!r}, which does not have "
                f"the form {date_format!r} (--date-format)."
            ) from None
    raise ValueError(f"{name} does not have the form {date_format!r}.")


def carry_utc_offsets(values) -> bool:
    """Whether date-times carry a UTC offset (``Z``, ``+01:00``, a tz-aware value).

    For the rule of an agent's times: one commissioned with zoned times refuses
    naive ones later, which would be read as UTC (a sensor's local clock is
    not). Numbers (seconds) and ``None`` carry none.
    """
    if values is None:
        return False
    if getattr(getattr(values, "dtype", None), "tz", None) is not None:
        return True  # a tz-aware pandas index or column
    items = np.asarray(values, dtype=object).ravel()
    return any(isinstance(v, str) or hasattr(v, "tzinfo") for v in items) and any(
        _has_utc_offset(v) for v in items if v is not None
    )
