"""Times shown as they were given: ISO 8601 in, ISO 8601 out; seconds stay seconds.

A store keeps times as seconds since 1970-01-01 UTC and, since the setting
exists, how the commissioning's times were given (``time_format``). The
commands that print or export times (``status``, ``export``, ``observe``)
show an agent given datetimes its times in ISO 8601 (UTC, written ``Z``),
and an agent given numbers (or stored before the setting) its seconds.
Standard library only: ``skrbal agent status`` imports no pandas.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

__all__ = ["agent_times_are_iso", "iso_time", "iso_times"]


def iso_time(seconds) -> str | None:
    """A time as ISO 8601 text in UTC, written with ``Z``; None if missing.

    ``seconds`` are seconds since 1970-01-01 UTC, or a datetime (a naive one
    is UTC). UTC is written ``Z``, as the budget's words and the agent's
    messages write it, so that a time given as ``...Z`` comes back so.

    >>> iso_time(1730851200.0)
    '2024-11-06T00:00:00Z'
    """
    if seconds is None:
        return None
    if isinstance(seconds, datetime):  # pandas' Timestamp too
        if seconds != seconds:  # NaT
            return None
        stamp = seconds if seconds.tzinfo else seconds.replace(tzinfo=timezone.utc)
        text = stamp.astimezone(timezone.utc).isoformat()
    else:
        value = float(seconds)
        if math.isnan(value):
            return None
        text = datetime.fromtimestamp(value, tz=timezone.utc).isoformat()
    return text.removesuffix("+00:00") + "Z"


def iso_times(values) -> list:
    """:func:`iso_time` of each value (missing ones, None or NaN, as None)."""
    return [iso_time(v) for v in values]


def agent_times_are_iso(store, name: str) -> bool:
    """Whether the agent ``name`` of ``store`` was given its times as datetimes."""
    settings = store.configuration(name)["settings"]
    return settings.get("time_format") == "iso"
