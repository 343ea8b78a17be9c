"""Times and durations as the agent commands read them.

A time (``--origin``, an ``inspect --timestamp``) is a number (a step, or
seconds) or an ISO 8601 date-time; a duration (``--period``, ``--min-gap``,
``--request-timeout``) is a number with an optional unit, refused for an
agent that counts time in steps.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

__all__ = ["duration", "time_point", "timestamps"]

# Seconds of a unit of --period, --min-gap: y is the Julian year, 365.25 d.
_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_UNITS["y"] = 365.25 * 86400.0


def timestamps(column):
    """Seconds as floats when the cells are numbers; else the text (ISO dates)."""
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.notna().all():
        return numbers.to_numpy(dtype=np.float64)
    return column.astype(str).to_numpy(dtype=object)


def time_point(text: str, option: str) -> float:
    """A number (step or seconds) or an ISO 8601 date-time, in seconds."""
    try:
        value = float(text)
    except ValueError:
        from skrbal._datetimes import parse_datetimes

        try:
            # ISO 8601 only: 01/02/1998 is day-first in some places.
            stamp = parse_datetimes(np.array([text], dtype=object), option)[0]
        except (TypeError, ValueError):
            stamp = None
        if stamp is None or pd.isna(stamp):
            raise ValueError(
                f"{option} must be a number or an ISO 8601 date-time such as "
                f"2025-01-01T00:00, got {text!r}"
            ) from None
        value = (stamp - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    if not math.isfinite(value):
        raise ValueError(f"{option} must be finite, got {text!r}")
    return float(value)


def duration(text: str, option: str, steps: bool = False) -> float:
    """A number, or a number with a unit (s, min, h, d, w, y) in seconds.

    ``steps``: the agent counts time in steps (no time column), where a unit
    has no meaning: ``2w`` would be 1,209,600 steps, so it is refused.
    """
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-z]*)\s*", text)
    if match:
        number, unit = match.groups()
        if steps and unit in _UNITS:
            raise ValueError(
                f"{option} {text}: the agent has no time column, so it counts "
                "time in observations (steps) and a unit of time has no meaning "
                f"({text} would be {_number_words(number, unit)} steps); give a "
                "number of steps, or commission with a time column"
            )
        try:
            value = float(number) * (_UNITS[unit] if unit else 1.0)
        except (KeyError, ValueError):
            value = None
        if value is not None and math.isfinite(value):
            return value
    raise ValueError(
        f"{option} must be a number, or a number with a unit "
        f"({', '.join(_UNITS)}), got {text!r}"
    )


def _number_words(number: str, unit: str) -> str:
    try:
        return f"{float(number) * _UNITS[unit]:,.0f}"
    except ValueError:
        return "a number of"
