"""Times shown as they were given: ISO 8601 in, ISO 8601 out; seconds stay seconds.

A store keeps times as seconds since 1970-01-01 UTC and, since the setting
exists, how the commissioning's times were given (``time_format``). The
commands that print or export times (``status``, ``export``, ``observe``)
show an agent given datetimes its times in ISO 8601 (UTC, with its offset),
and an agent given numbers (or stored before the setting) its seconds.
Standard library only: ``skrbal agent status`` imports no pandas.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

__all__ = ["agent_times_are_iso", "iso_time", "iso_times"]


def iso_time(seconds) -> str | None:
    """Seconds since 1970-01-01 UTC as ISO 8601 text in UTC; None if missing.

    >>> iso_time(1730851200.0)
    '2024-11-06T00:00:00+00:00'
    """
    if seconds is None:
        return None
    value = float(seconds)
    if math.isnan(value):
        return None
    return datetime.fromtimestamp(value, tz=timezone.utc).isoformat()


def iso_times(values) -> list:
    """:func:`iso_time` of each value (missing ones, None or NaN, as None)."""
    return [iso_time(v) for v in values]


def agent_times_are_iso(store, name: str) -> bool:
    """Whether the agent ``name`` of ``store`` was given its times as datetimes."""
    settings = store.configuration(name)["settings"]
    return settings.get("time_format") == "iso"
