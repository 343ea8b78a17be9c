"""The rule of the paced budget, without scikit-learn (:mod:`skrbal.budget._scan`)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from skrbal.budget._rules import check_time_continues, last_time
from skrbal.budget._scan import ScanRule, check_not_starved

__all__ = ["PacedRule"]


class PacedRule(ScanRule):
    """The rule of :class:`~skrbal.budget.PacedBudget`: a price that paces the spend."""

    _state_schema: ClassVar[dict] = {
        "first_period": ("int", True),
        "period": ("int", True),
        "spent": ("amount", False),
        "total_spent": ("amount", False),
        "price": ("amount", False),
        "price_time": ("float", True),
        "run": ("count", False),
        "last_time": ("float", True),
        "peak": ("float", True),
        "n_above": ("count", False),
        "n_seen": ("count", False),
        "first_time": ("float", True),
    }

    def __init__(
        self,
        *,
        limit,
        period,
        origin=0.0,
        carry_over=True,
        reserve=0.3,
        pacing_rate=2.0,
        explore="auto",
        persistence="auto",
        release="demand",
        allow_starved=False,
    ):
        self.limit = limit
        self.period = period
        self.origin = origin
        self.carry_over = carry_over
        self.reserve = reserve
        self.pacing_rate = pacing_rate
        self.explore = explore
        self.persistence = persistence
        self.release = release
        self.allow_starved = allow_starved

    def _initial_state(self) -> dict:
        return {
            "first_period": None,
            "period": None,
            "spent": 0.0,
            "total_spent": 0.0,
            "price": 0.0,
            "price_time": None,
            "run": 0,
            "last_time": None,
            "peak": None,
            "n_above": 0,
            "n_seen": 0,
            "first_time": None,
        }

    def _check_state(self, state) -> None:
        super()._check_state(state)
        if state["spent"] > state["total_spent"]:
            raise ValueError(
                f"state['spent'] of PacedBudget ({state['spent']!r}) cannot exceed "
                f"state['total_spent'] ({state['total_spent']!r})."
            )
        if (state["period"] is None) != (state["price_time"] is None):
            raise ValueError(
                "state['period'] and state['price_time'] of PacedBudget are set "
                "together, at the first inspection: one of them is None."
            )

    def _period_of(self, times) -> np.ndarray:
        return np.floor((times - self.origin) / self.period)

    def _runs(self, above, state) -> np.ndarray:
        """Consecutive steps above the cost, ending at each step."""
        index = np.arange(above.shape[0])
        last_below = np.maximum.accumulate(np.where(above, -1, index))
        since = np.where(last_below < 0, state["run"] + index + 1, index - last_below)
        return np.where(above, since, 0)

    def _holds_reserve(self, evpi, times, end, reserve, cost, state) -> np.ndarray:
        """Whether the reserve is still held back at each step."""
        if self.release == "time":
            return times < end - self.reserve * self.period
        if cost <= 0:
            return np.zeros(times.shape, dtype=bool)
        # Use it or lose it: hold the reserve while the steps worth their
        # cost, at the rate seen so far, promise more chances to spend it
        # than the inspections it pays for.
        seen = state["n_above"] + np.cumsum(evpi > cost)
        first = times[0] if state["first_time"] is None else state["first_time"]
        elapsed = times - first
        with np.errstate(divide="ignore", invalid="ignore"):
            chances = np.where(elapsed > 0, seen * (end - times) / elapsed, np.inf)
        return chances > reserve / cost

    def _run_needed(self, above, times, state):
        """Steps above the cost in a row that count as persisting, at each step."""
        if self.persistence != "auto":
            return self.persistence
        # A run stands out when, at the rate of steps above the cost seen so
        # far, chance would give one that long less than once a period:
        # n * rate**run < 1, with n the observations of a period.
        seen = state["n_seen"] + np.arange(1, above.shape[0] + 1)
        rate = (state["n_above"] + np.cumsum(above)) / seen
        first = times[0] if state["first_time"] is None else state["first_time"]
        elapsed = times - first
        with np.errstate(divide="ignore", invalid="ignore"):
            per_period = np.where(elapsed > 0, seen * self.period / elapsed, np.inf)
            needed = np.log(per_period) / -np.log(rate)
        return np.maximum(
            2, np.where(rate < 1, np.nan_to_num(needed, nan=np.inf), np.inf)
        )

    def _money(self, evpi, times, cost, state):
        """Period spend, period money, money held back and price at each step."""
        period = self._period_of(times)
        first = state["first_period"]
        if first is None:
            first = period[0] if times.size else 0
        current = np.zeros(times.shape, dtype=bool)
        if state["period"] is not None:
            current = period == state["period"]
        spent = np.where(current, state["spent"], 0.0)
        money = np.full(times.shape, float(self.limit))
        if self.carry_over:
            money = self.limit * (period - first + 1) - (state["total_spent"] - spent)
        end = self.origin + (period + 1) * self.period
        reserve = self.reserve * money
        held = np.where(
            self._holds_reserve(evpi, times, end, reserve, cost, state), reserve, 0.0
        )
        price = np.zeros(times.shape)
        if cost > 0 and state["price_time"] is not None:
            # One pacing_rate per pro-rata interval period * cost / money.
            decay = self.pacing_rate * money / (self.period * cost)
            since = times - state["price_time"]
            price = np.where(
                current, np.maximum(0.0, state["price"] - decay * since), 0.0
            )
        return period, spent, money, held, price

    def _starved(self, cost) -> bool:
        if self.carry_over and self.limit > 0:
            return False  # the money adds up until it pays for an inspection
        return check_not_starved(
            self,
            self.limit,
            cost,
            "Raise the limit, lengthen the period or let unspent money carry "
            "over (carry_over=True).",
        )

    @staticmethod
    def _peaks(evpi, state) -> np.ndarray:
        """The highest EVPI seen so far, at each step (itself included)."""
        peaks = np.maximum.accumulate(evpi)
        if state["peak"] is not None:
            peaks = np.maximum(peaks, state["peak"])
        return peaks

    def _explore_share(self, evpi, cost, state):
        """Share of ``limit`` spent first come, first served, at each step."""
        if self.explore != "auto":
            return self.explore
        if cost <= 0:
            return 1.0
        # Zhou, Chakrabarty and Lukose's online-knapsack threshold: accept
        # anything worth its cost up to 1 / (1 + ln(U / L)) of the budget,
        # with U / L the spread of the values (here: the peak seen so far
        # over the cost).
        spread = np.maximum(self._peaks(evpi, state) / cost, 1.0)
        return 1.0 / (1.0 + np.log(spread))

    def _young(self, evpi, cost, state):
        """Whether each step is still in the exploration allowance."""
        share = self._explore_share(evpi, cost, state)
        return state["total_spent"] < share * self.limit

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        check_time_continues(times, state)
        if self._starved(cost):
            return np.zeros(evpi.shape[0], dtype=bool)
        _, spent, money, held, price = self._money(evpi, times, cost, state)
        above = evpi > cost
        persistent = np.zeros(evpi.shape[0], dtype=bool)
        if self.persistence is not None:
            needed = self._run_needed(above, times, state)
            # A persisting run is inspected whatever the price of the pace:
            # a new state (damage) stands out by persisting, and its labels
            # pay now, not at the pro-rata rate. It may spend the reserve
            # only one inspection ahead of the pace: a persisting benign
            # change (a frosty winter) must not take the money kept for
            # damage.
            persistent = self._runs(above, state) >= needed
        ahead = persistent & (evpi > cost * (1.0 + price - self.pacing_rate))
        young = self._young(evpi, cost, state)
        worth = above & (young | persistent | (evpi > cost * (1.0 + price)))
        # The reserve is there for what persists, and for a young model.
        free = ahead | young
        return worth & (spent + cost <= money - np.where(free, 0.0, held))

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        if not times.size:
            return dict(state)
        if state["first_period"] is None:
            state = dict(state, first_period=int(self._period_of(times[:1])[0]))
        if state["first_time"] is None:
            state = dict(state, first_time=float(times[0]))
        runs = self._runs(evpi > cost, state)
        new = dict(
            state,
            last_time=last_time(times, state),
            run=0 if inspected else int(runs[-1]),
            peak=float(self._peaks(evpi, state)[-1]),
            n_above=state["n_above"] + int(np.count_nonzero(evpi > cost)),
            n_seen=state["n_seen"] + int(evpi.shape[0]),
        )
        if inspected:
            period, spent, _, _, price = self._money(evpi[-1:], times[-1:], cost, state)
            new.update(
                period=int(period[0]),
                spent=float(spent[0]) + cost,
                total_spent=state["total_spent"] + cost,
                price=float(price[0]) + self.pacing_rate,
                price_time=float(times[-1]),
            )
        return new
