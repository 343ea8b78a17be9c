"""A fleet budget's row as stored: its configuration and its state, checked."""

from __future__ import annotations

import hashlib
import json
import math

from skrbal.exceptions import ConfigurationError, StoreError
from skrbal.fleet import _schema as schema
from skrbal.fleet._chain import KEYED
from skrbal.fleet._policy import FleetBudget

__all__ = ["budget_of", "config_of", "config_text", "recorded", "state_of"]


def _finite_numbers(value) -> bool:
    """Every number in ``value`` (nested lists and dicts) finite, none a bool."""
    if isinstance(value, dict):
        return all(_finite_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_numbers(v) for v in value)
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    return value is None or isinstance(value, str)


def damaged_row(row, where: str, what: str, text_) -> StoreError:
    """The error naming a budget row's part that is not the fleet's."""
    shown = text_ if len(str(text_)) <= 120 else f"{str(text_)[:120]}..."
    return StoreError(
        f"{where}: fleet budget {row.name!r}, table {schema.budgets.name}: its "
        f"{what} {shown!r} is not the fleet's (the row was edited or damaged); "
        "restore it from a backup."
    )


def config_of(row, where: str) -> dict:
    """The row's configuration as a dict (its chain mark included), checked
    to be JSON of finite numbers."""
    try:
        config = json.loads(row.config)
    except (TypeError, ValueError):
        config = None
    if (
        not isinstance(config, dict)
        or not _finite_numbers(config)
        or config.get("chain", KEYED) != KEYED
    ):
        raise damaged_row(row, where, "config", row.config)
    return config


def budget_of(row, where: str) -> FleetBudget:
    """The row's budget policy; a config of an older version is named."""
    config = config_of(row, where)
    params = {k: v for k, v in config.items() if k != "chain"}
    try:
        budget = FleetBudget(**params)
    except TypeError:
        if "pacing_rate" not in config:
            raise damaged_row(row, where, "config", row.config) from None
        raise ConfigurationError(
            f"{where}: fleet budget {row.name!r} is {row.config}, which this "
            "version of skrbal does not read (a budget of an older version, "
            "priced by a pacing rate); create the fleet anew."
        ) from None
    try:
        budget.initial_state()  # checks the parameters
    except ValueError:
        raise damaged_row(row, where, "config", row.config) from None
    return budget


_STATE_KEYS = ("first_time", "clock", "cost", "recent_times", "recent_values", "spent")


def state_of(row, where: str) -> dict:
    """The budget row's state, checked: a row edited to something else (no
    JSON, NaN, a negative spend) is named, never drawn on."""
    try:
        state = json.loads(row.state)
    except (TypeError, ValueError):
        state = None
    good = (
        isinstance(state, dict)
        and all(k in state for k in _STATE_KEYS)
        and _finite_numbers(state)
        and isinstance(state["spent"], dict)
        and all(isinstance(v, (int, float)) and v >= 0 for v in state["spent"].values())
        and all(k.lstrip("-").isdigit() and k.isascii() for k in state["spent"])
        and isinstance(state["recent_times"], list)
        and isinstance(state["recent_values"], list)
        and len(state["recent_times"]) == len(state["recent_values"])
        and isinstance(state.get("recent_agents", []), list)
        and len(state.get("recent_agents", state["recent_values"]))
        == len(state["recent_values"])
    )
    if not good:
        raise damaged_row(row, where, "state", row.state)
    return state


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def recorded(state: dict, *, whole_spend: bool = False) -> dict:
    """A fleet state as a draw records it: the window and the spend by digest.

    The window (up to ``FleetBudget.n_recent`` values) and the spend of the
    periods still open (up to ``FleetBudget.n_periods``) live in the
    budget's row; each draw's event holds their SHA-256, so the chain still
    vouches for them at the size of two hashes, whatever the history.
    ``whole_spend``: as the draws of earlier versions recorded it, the spend
    dict whole.
    """
    window = [state["recent_times"], state["recent_values"]]
    if "recent_agents" in state:  # not in the windows of earlier versions
        window.append(state["recent_agents"])
    window = json.dumps(window)
    kept = {k: v for k, v in state.items() if not k.startswith("recent_")}
    kept["window"] = hashlib.sha256(window.encode()).hexdigest()
    if not whole_spend:
        kept["spent"] = _digest({str(k): float(v) for k, v in state["spent"].items()})
    return kept


def config_text(budget: FleetBudget, mark: dict | None = None) -> str:
    """The stored configuration of ``budget`` (with a chain ``mark``)."""
    params = budget.get_params()
    config = {k: float(params[k]) for k in ("limit", "period", "origin")}
    memory = None if params["memory"] is None else float(params["memory"])
    config.update(
        memory=memory,
        n_recent=int(params["n_recent"]),
        n_periods=int(params["n_periods"]),
        **(mark or {}),
    )
    return json.dumps(config, sort_keys=True)
