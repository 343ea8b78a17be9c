"""The fleet budget as each agent's budget policy: one price, one purse."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval

from skrbal.budget import BudgetPolicy
from skrbal.exceptions import BudgetStarvedError, FleetDrawError

__all__ = ["FleetBudget"]

_EPS = 1e-9


class FleetBudget(BudgetPolicy):
    """One budget for every structure of a fleet, paced over its period.

    The agents of one store share ``limit`` per ``period``: an inspection is
    granted where its value minus its cost exceeds the fleet's price of an
    inspection, ``EVPI - cost > lambda * cost``, and while the period's money
    lasts. The price is one for the whole fleet, so the money goes to the
    largest net values across the structures, wherever they arise. It is
    paced as :class:`~skrbal.budget.PacedBudget`'s: it rises by
    ``pacing_rate`` with each inspection granted anywhere in the fleet and
    falls by one ``pacing_rate`` per pro-rata interval (the time over which
    the period's money pays for one inspection), never below 0. A period's
    money is a hard cap that no draw of any agent can pass.

    The policy decides only within a draw of its fleet: the price and the
    money spent are the fleet's, read under the fleet's lock in the
    transaction that commits the agent's call (:class:`~skrbal.fleet.Fleet`
    runs each call so). The agent's own state is its copy of them.

    Parameters
    ----------
    limit : float
        Money per period for the whole fleet, > 0.
    period : float
        Length of a period, > 0, in the agents' time (seconds of their
        timestamps; steps without). Periods are
        ``[origin + j * period, origin + (j + 1) * period)``.
    origin : float, default=0.0
        Start of the period numbered 0.
    pacing_rate : float, default=2.0
        Rise of the price per inspection granted, > 0; decay per pro-rata
        interval.

    Raises
    ------
    FleetDrawError
        From :meth:`scan`, outside a draw of the fleet.
    BudgetStarvedError
        From :meth:`scan`, when ``limit`` is below the cost of one inspection.

    See Also
    --------
    skrbal.budget.PacedBudget : The same pacing for one structure.
    skrbal.fleet.Fleet : Runs each agent's call as a draw on this budget.

    Examples
    --------
    >>> from skrbal.fleet import FleetBudget
    >>> budget = FleetBudget(limit=10.0, period=30 * 86400.0)
    >>> budget.draw_snapshot({"seq": 3, "price": 0.0, "last_time": None,
    ...                       "spent": {}})
    >>> step, state = budget.scan([0.5, 2.0, 3.0], [0.0, 1.0, 2.0],
    ...                           [True, True, True], 1.0, budget.initial_state())
    >>> step, state["spent"]
    (1, {'0': 1.0})
    """

    _parameter_constraints: ClassVar[dict] = {
        "limit": [Interval(Real, 0, None, closed="neither")],
        "period": [Interval(Real, 0, None, closed="neither")],
        "origin": [Interval(Real, None, None, closed="neither")],
        "pacing_rate": [Interval(Real, 0, None, closed="neither")],
    }

    _state_schema: ClassVar[dict] = {
        "draw": ("int", False),
        "price": ("amount", False),
        "last_time": ("float", True),
    }

    def __init__(self, *, limit, period, origin=0.0, pacing_rate=2.0):
        self.limit = limit
        self.period = period
        self.origin = origin
        self.pacing_rate = pacing_rate

    # -------------------------------------------------------------- #
    # the draw this policy decides in
    # -------------------------------------------------------------- #
    def draw_snapshot(self, snapshot) -> None:
        """Decide within a fleet draw whose state is ``snapshot`` (None: none).

        Parameters
        ----------
        snapshot : dict or None
            The fleet's state read under its lock: ``seq`` (its last event,
            unique to the draw), ``price``, ``last_time`` and ``spent`` (money
            spent per period number, keys as strings).
        """
        self._snapshot = None if snapshot is None else dict(snapshot)

    def state_of(self, snapshot) -> dict:
        """The fleet's state as this policy's state, at the start of a draw.

        Parameters
        ----------
        snapshot : dict
            As for :meth:`draw_snapshot`.

        Returns
        -------
        state : dict
        """
        return {
            "draw": int(snapshot["seq"]),
            "price": float(snapshot["price"]),
            "last_time": snapshot["last_time"],
            "spent": {str(k): float(v) for k, v in snapshot["spent"].items()},
        }

    def _current(self, state) -> dict:
        snapshot = getattr(self, "_snapshot", None)
        if snapshot is None:
            raise FleetDrawError(
                "a FleetBudget decides only within a draw of its fleet: observe "
                "through skrbal.fleet.Fleet.observe, which reads the fleet's "
                "price and spend under its lock."
            )
        if state["draw"] != snapshot["seq"]:
            return self.state_of(snapshot)  # the first scan of this draw
        return state

    # -------------------------------------------------------------- #
    # BudgetPolicy
    # -------------------------------------------------------------- #
    def _initial_state(self) -> dict:
        return {"draw": -1, "price": 0.0, "last_time": None, "spent": {}}

    def _period_of(self, times) -> np.ndarray:
        return np.floor((np.asarray(times) - self.origin) / self.period)

    def _price_at(self, times, cost, state) -> np.ndarray:
        if state["last_time"] is None:
            return np.full(times.shape[0], state["price"])
        interval = self.period * cost / self.limit
        elapsed = np.maximum(times - state["last_time"], 0.0)
        return np.maximum(state["price"] - self.pacing_rate * elapsed / interval, 0.0)

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        if self.limit < cost:
            raise BudgetStarvedError(
                f"FleetBudget: the money of a period, {self.limit:g}, is below the "
                f"cost of one inspection, {cost:g}, so the fleet can never inspect."
                " Raise the limit or lengthen the period."
            )
        state = self._current(state)
        periods = self._period_of(times)
        unique, where = np.unique(periods, return_inverse=True)
        spent = np.array([state["spent"].get(str(int(q)), 0.0) for q in unique])
        spent = spent[where.reshape(-1)]
        price = self._price_at(times, cost, state)
        worth = evpi - cost > price * cost
        return worth & (spent + cost <= self.limit + _EPS * self.limit)

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        state = self._current(state)
        price = float(self._price_at(times[-1:], cost, state)[0])
        last = float(times[-1])
        if state["last_time"] is not None:
            last = max(last, float(state["last_time"]))
        spent = dict(state["spent"])
        if inspected:
            price += self.pacing_rate
            key = str(int(self._period_of(times[-1:])[0]))
            spent[key] = spent.get(key, 0.0) + cost
        return {
            "draw": state["draw"],
            "price": price,
            "last_time": last,
            "spent": spent,
        }
