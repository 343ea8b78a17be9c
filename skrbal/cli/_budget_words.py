"""An agent's budget in words, from its stored JSON and state.

``20 per 30 days from 1997-11-11T00:00Z, paced; this period (to
1997-12-11T00:00Z): 5 of 20 spent``, and ``budget exhausted until
1997-12-11T00:00Z`` when what is left of the period pays for no inspection.
``init``, ``status`` and ``report`` print these lines; ``--json`` keeps the
machine form. Standard library only: ``skrbal agent status`` imports no pandas.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

__all__ = ["budget_lines", "budget_words", "duration_words"]

_DAY = 86400.0
_UNITS = ((365.25 * _DAY, "year"), (7 * _DAY, "week"), (_DAY, "day"), (3600.0, "hour"))


def _number(value: float) -> str:
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}"


def _duration(length: float, clock: str) -> str:
    """``30 days``, ``2 weeks``, ``90 minutes``, ``12 steps``."""
    if clock == "step":
        return f"{_number(length)} step{'' if length == 1 else 's'}"
    for size, unit in _UNITS:
        count = length / size
        if count >= 1 and abs(count - round(count)) < 1e-9:
            count = round(count)
            return f"{count} {unit}{'' if count == 1 else 's'}"
    if length >= 60 and length % 60 == 0:
        return f"{_number(length / 60)} minutes"
    return f"{_number(length)} s"


def duration_words(length: float, clock: str = "timestamp") -> str:
    """A duration of the agent's clock in words.

    >>> duration_words(2592000.0), duration_words(12.0, "step")
    ('30 days', '12 steps')
    """
    return _duration(length, clock)


def _when(value: float, clock: str, iso: bool) -> str:
    """A point of the agent's clock: a date for dated agents, else a number."""
    if clock == "step":
        return f"step {_number(value)}"
    if not iso or not math.isfinite(value):
        return f"{_number(value)} s"
    stamp = datetime.fromtimestamp(value, tz=timezone.utc)
    return stamp.strftime(
        "%Y-%m-%dT%H:%MZ" if stamp.second == 0 else "%Y-%m-%dT%H:%M:%SZ"
    )


def _policies(config: dict) -> list[tuple[str, dict]]:
    """``(class name, params)`` of each policy of a stored budget (AllOf flattened)."""
    if not isinstance(config, dict) or "__estimator__" not in config:
        return []
    name = str(config["__estimator__"]).rsplit(".", 1)[-1]
    params = config.get("params") or {}
    if name == "AllOf":
        return [p for sub in params.get("policies", []) for p in _policies(sub)]
    return [(name, params)]


def _states(config: dict, state: dict) -> list[dict]:
    """The state of each policy, in the order of :func:`_policies`."""
    if isinstance(config, dict) and str(config.get("__estimator__", "")).endswith(
        "AllOf"
    ):
        subs = (config.get("params") or {}).get("policies", [])
        found = []
        for sub, sub_state in zip(subs, (state or {}).get("policies", [])):
            found.extend(_states(sub, sub_state))
        return found
    return [state or {}]


def carried_from(config, state) -> int | None:
    """The first period of a paced budget whose unspent money carries over.

    ``None`` when the budget has no such policy (or has seen no step): each
    period then has its ``limit``. With one, period ``k`` has ``limit * (k -
    first + 1)`` less what the periods before it charged.

    >>> carried_from({"__estimator__": "skrbal.budget.PacedBudget",
    ...               "params": {"limit": 20.0, "period": 30.0}},
    ...              {"first_period": 3})
    3
    """
    for (name, params), policy_state in zip(
        _policies(config), _states(config, state), strict=False
    ):
        if name == "PacedBudget" and params.get("carry_over", True):
            first = policy_state.get("first_period")
            return None if first is None else int(first)
    return None


def budget_words(config, clock: str = "timestamp", iso: bool = True) -> str:
    """The budget policy in words: what it allows, not its ``repr``.

    >>> budget_words({"__estimator__": "skrbal.budget.PacedBudget",
    ...               "params": {"limit": 20.0, "period": 2592000.0,
    ...                          "origin": 879206400.0, "carry_over": False}})
    '20 per 30 days from 1997-11-11T00:00Z, paced over each period'
    """
    if config is None:
        return "EVPI > inspection cost"
    words = []
    for name, params in _policies(config):
        if name in ("PacedBudget", "SpendCap"):
            text = (
                f"{_number(params['limit'])} per "
                f"{_duration(params['period'], clock)} from "
                f"{_when(params.get('origin', 0.0), clock, iso)}"
            )
            if name == "SpendCap":
                text += ", first come, first served"
            elif params.get("carry_over", True):
                text += ", paced over each period; unspent money carries over"
            else:
                text += ", paced over each period"
            words.append(text)
        elif name == "MinimumGap":
            gap = _duration(params["gap"], clock)
            words.append(f"at least {gap} between two inspections")
        elif name == "QuantileThreshold":
            rate = float(params.get("rate", float("nan")))
            words.append(f"inspect the {rate:.3g} share of highest EVPI")
        elif name == "CostThreshold":
            words.append("EVPI > inspection cost")
        else:
            words.append(name)
    return "; ".join(words) or "EVPI > inspection cost"


def budget_lines(
    config, state, cost: float, clock: str = "timestamp", iso: bool = True
) -> list[str]:
    """The budget in words, then each periodic policy's period and what is left.

    ``budget exhausted until <date>`` when the money left in the current
    period pays for no inspection of ``cost`` (with carried-over money
    counted, for a paced budget that carries it).
    """
    lines = [f"budget: {budget_words(config, clock, iso)}"]
    if config is None:
        return lines
    for (name, params), policy_state in zip(
        _policies(config), _states(config, state), strict=False
    ):
        if name not in ("PacedBudget", "SpendCap"):
            continue
        period = policy_state.get("period")
        if period is None:
            lines.append(f"  {name}: nothing spent yet")
            continue
        limit, length = float(params["limit"]), float(params["period"])
        origin = float(params.get("origin", 0.0))
        spent = float(policy_state.get("spent", 0.0))
        last = policy_state.get("last_time")
        if last is not None:
            # The period of the last observation: its spend starts at 0.
            now = math.floor((float(last) - origin) / length)
            spent, period = (spent if now == period else 0.0), now
        money, carried = limit, 0.0
        first = policy_state.get("first_period")
        if (
            name == "PacedBudget"
            and params.get("carry_over", True)
            and first is not None
        ):
            total = float(policy_state.get("total_spent", spent))
            money = limit * (period - first + 1) - (total - spent)
            carried = money - limit
        end = origin + (period + 1) * length
        text = (
            f"  this period ({_when(origin + period * length, clock, iso)} to "
            f"{_when(end, clock, iso)}): {_number(spent)} of {_number(money)} spent"
        )
        if carried:
            what = "carried over" if carried > 0 else "spent ahead before it"
            text += f" (its own {_number(limit)}, {_number(abs(carried))} {what})"
        if money - spent < cost:
            text += f"; budget exhausted until {_when(end, clock, iso)}"
        lines.append(text)
    return lines
