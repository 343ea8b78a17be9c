"""The rules of the built-in budget policies, without scikit-learn.

Each public policy of :mod:`skrbal.budget` is its rule here (its state, its
candidates and how its state advances) with scikit-learn's estimator API and
parameter validation on top (:mod:`skrbal.budget._scan`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from skrbal.budget._scan import ScanRule, check_not_starved

__all__ = [
    "MAX_WINDOW",
    "CostThresholdRule",
    "MinimumGapRule",
    "QuantileRule",
    "SpendCapRule",
    "check_time_continues",
    "last_time",
]

# The largest window of QuantileThreshold: see its ``window`` parameter for why.
MAX_WINDOW = 10_000


def check_time_continues(times, state) -> None:
    last = state["last_time"]
    if last is not None and times.size and times[0] < last:
        raise ValueError(
            f"times must continue from the previous scan: got {times[0]!r} after "
            f"{last!r}."
        )


def last_time(times, state):
    return float(times[-1]) if times.size else state["last_time"]


class CostThresholdRule(ScanRule):
    """The rule of :class:`~skrbal.budget.CostThreshold`: EVPI > cost."""

    def __init__(self):
        pass

    def _initial_state(self) -> dict:
        return {}

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        return evpi > cost

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        return {}


class SpendCapRule(ScanRule):
    """The rule of :class:`~skrbal.budget.SpendCap`: a spend cap per period."""

    _state_schema: ClassVar[dict] = {
        "period": ("int", True),
        "spent": ("amount", False),
        "last_time": ("float", True),
    }

    def __init__(self, *, limit, period, origin=0.0, allow_starved=False):
        self.limit = limit
        self.period = period
        self.origin = origin
        self.allow_starved = allow_starved

    def _initial_state(self) -> dict:
        return {"period": None, "spent": 0.0, "last_time": None}

    def _period_of(self, times) -> np.ndarray:
        return np.floor((times - self.origin) / self.period)

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        check_time_continues(times, state)
        check_not_starved(
            self,
            self.limit,
            cost,
            "Raise the limit, lengthen the period, or use PacedBudget with "
            "carry_over=True to save up.",
        )
        if state["period"] is None:
            return np.full(times.shape[0], cost <= self.limit)
        spent = np.where(self._period_of(times) == state["period"], state["spent"], 0.0)
        return spent + cost <= self.limit

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        new = dict(state, last_time=last_time(times, state))
        if inspected:
            period = int(self._period_of(times[-1:])[0])
            spent = state["spent"] if period == state["period"] else 0.0
            new.update(period=period, spent=spent + cost)
        return new


class MinimumGapRule(ScanRule):
    """The rule of :class:`~skrbal.budget.MinimumGap`: a gap between inspections."""

    _state_schema: ClassVar[dict] = {
        "last_inspection": ("float", True),
        "last_time": ("float", True),
    }

    def __init__(self, *, gap):
        self.gap = gap

    def _initial_state(self) -> dict:
        return {"last_inspection": None, "last_time": None}

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        check_time_continues(times, state)
        last = state["last_inspection"]
        if last is None:
            return np.ones(times.shape[0], dtype=bool)
        return times - last >= self.gap

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        new = dict(state, last_time=last_time(times, state))
        if inspected:
            new["last_inspection"] = float(times[-1])
        return new


class QuantileRule(ScanRule):
    """The rule of :class:`~skrbal.budget.QuantileThreshold`: a top share of EVPIs."""

    _state_schema: ClassVar[dict] = {
        "recent": ("floats", False),
        "n_seen": ("count", False),
        "n_inspected": ("count", False),
    }

    def __init__(self, *, rate, window=100, tolerance=50):
        self.rate = rate
        self.window = window
        self.tolerance = tolerance

    @property
    def _chunk_size(self):
        # The rank compares each step with ``window`` values at once.
        return max(64, 2**22 // self.window)

    def _initial_state(self) -> dict:
        return {"recent": [], "n_seen": 0, "n_inspected": 0}

    def _check_state(self, state) -> None:
        super()._check_state(state)
        if len(state["recent"]) > min(self.window, state["n_seen"]):
            raise ValueError(
                f"state['recent'] must hold at most window={self.window} EVPIs, "
                "and no more than n_seen."
            )
        if state["n_inspected"] > state["n_seen"]:
            raise ValueError("state['n_inspected'] cannot exceed state['n_seen'].")

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        n, window = evpi.shape[0], self.window
        recent = np.asarray(state["recent"], dtype=float)
        # The window moves at every step, but given no inspection earlier in
        # the block (what a candidate means) step i's decision depends only on
        # the EVPIs before it and on counts that move by one per step, so the
        # block needs no loop. Step i is ranked against the ``window`` values
        # before it; -inf pads the start and is never above a finite EVPI.
        padded = np.concatenate([np.full(window - recent.size, -np.inf), recent, evpi])
        before = sliding_window_view(padded, window)[:n]
        above = np.count_nonzero(before > evpi[:, None], axis=1)
        n_compared = np.minimum(window, recent.size + np.arange(n))
        n_seen = state["n_seen"] + np.arange(n)
        owed = self.rate * n_seen - state["n_inspected"]
        share = np.clip(self.rate + owed / self.tolerance, 0.0, 1.0)
        return above < share * (n_compared + 1)

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        recent = state["recent"] + evpi[-self.window :].tolist()
        return {
            "recent": recent[-self.window :],
            "n_seen": state["n_seen"] + int(evpi.shape[0]),
            "n_inspected": state["n_inspected"] + int(inspected),
        }
