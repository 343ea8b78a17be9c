"""A budget paced over its period: a price on inspections that tracks the spend."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from skrbal.budget._base import BudgetPolicy, check_not_starved
from skrbal.budget._policies import (
    PERIODIC_BUDGET_CONSTRAINTS,
    _check_time_continues,
    _last_time,
)

__all__ = ["PacedBudget"]


class PacedBudget(BudgetPolicy):
    """Spend a budget over its whole period: inspect when EVPI > cost x (1 + price).

    Budget pacing as in online advertising (dual descent on the budget
    constraint, Balseiro and Gur 2019): the price ``lambda`` of an inspection
    rises by ``pacing_rate`` with each inspection and falls, at the same
    rate, by one ``pacing_rate`` per pro-rata interval (the time over which
    the period's money pays for one inspection), never below 0. A step is
    inspected when its EVPI exceeds ``cost * (1 + lambda)``: while the spend
    runs ahead of the pro-rata budget only the most valuable steps are
    inspected, and when it lags, the paper's rule ``EVPI > cost`` applies
    again. Within that, the period's money is a hard cap.

    Two exceptions let it spend early where early labels pay, and on damage,
    both read from the sequence of values alone:

    - *exploration*: while the total spend is below ``explore * limit`` (the
      model is young), every step with ``EVPI > cost`` is inspected, first
      come, first served, reserve included. With ``explore="auto"`` the
      share is the online-knapsack threshold of Zhou, Chakrabarty and Lukose
      [2]_, ``1 / (1 + ln(U / L))``, with ``U / L`` the highest EVPI seen so
      far over the cost: values all alike (``U / L`` near 1) give no reason
      to wait for better ones, and it spends first come, first served;
      values that vary widely argue for saving;
    - *persistence*: a step whose EVPI has exceeded the cost for a run of
      consecutive steps (itself included) is inspected whatever the price: a
      new state (damage) stands out by persisting, noise by not, and its
      labels pay now rather than at the pace. It may spend the reserve only
      one inspection ahead of the pace (at the cost plus the price less one
      ``pacing_rate``), so a benign change that persists (a frosty winter)
      does not take the money kept for damage. The count restarts after each
      inspection, so a long run is inspected once every ``persistence``
      steps, within the period's money. With
      ``persistence="auto"`` the run must stand out: at the rate of steps
      above the cost seen so far, chance gives a run that long less than
      once a period.

    The reserve is held back until the steps worth their cost, at the rate
    seen so far, promise no more chances to spend it than the inspections it
    pays for (``release="demand"``: use it or lose it), or until the last
    ``reserve`` share of the period (``release="time"``).

    Parameters
    ----------
    limit : float
        Money per period, >= 0.
    period : float
        Length of a period, > 0, in the unit of ``times`` (stream steps
        offline, seconds of the timestamps online). Periods are
        ``[origin + j * period, origin + (j + 1) * period)``.
    origin : float, default=0.0
        Start of the period numbered 0.
    carry_over : bool, default=True
        Unspent money moves to the next period (from the period of the first
        step seen); otherwise each period has ``limit``.
    reserve : float, default=0.3
        Share, in [0, 1), of a period's money held back for EVPI that
        persists (and a young model), until ``release``.
    pacing_rate : float, default=2.0
        Rise of the price per inspection, > 0 (the step size of the dual
        update); larger spreads the spend more evenly.
    explore : float or "auto", default="auto"
        Share of ``limit``, in [0, 1], spent first come, first served at the
        start of the stream; ``"auto"``: ``1 / (1 + ln(peak / cost))`` with
        ``peak`` the highest EVPI seen so far (1 while no EVPI exceeds the
        cost).
    persistence : int, "auto" or None, default="auto"
        Consecutive steps with ``EVPI > cost`` that trigger an inspection
        whatever the price of the pace; ``"auto"``: at least 2, and as
        many as make the run unlikely by chance within a period (``n *
        rate ** run < 1``, with ``rate`` the share of steps above the cost
        seen so far and ``n`` the steps of a period at the pace seen so
        far); ``None`` disables the trigger.
    release : {"demand", "time"}, default="demand"
        When the reserve becomes money like the rest: ``"demand"`` once the
        expected number of steps above the cost left in the period (their
        rate so far times the time left) is at most the number of
        inspections the reserve pays; ``"time"`` in the last ``reserve``
        share of the period.
    allow_starved : bool, default=False
        Accept a budget that can never inspect (``limit`` below the cost
        without ``carry_over``, or ``limit=0``), with a
        :class:`~skrbal.exceptions.BudgetStarvedWarning` once, instead of the
        error.

    Raises
    ------
    BudgetStarvedError
        From :meth:`scan`, when the budget can never pay for an inspection
        and ``allow_starved`` is False.

    See Also
    --------
    SpendCap : A hard limit per period; with ``CostThreshold()``, first come,
        first served.
    QuantileThreshold : Spends a rate on the highest-EVPI steps.

    Notes
    -----
    With ``m_q`` the money of period ``q`` (``limit``, plus what earlier
    periods left when ``carry_over``) and ``tau = period * cost / m_q`` the
    pro-rata interval, the price at time ``t`` after an inspection at
    ``t_k`` is ``max(0, lambda_k - pacing_rate * (t - t_k) / tau)`` and
    becomes that plus ``pacing_rate`` after an inspection at ``t``. This is
    the multiplier update of Balseiro and Gur [1]_, ``lambda <- max(0,
    lambda + eta * (z - rho))`` with ``z`` the spend of a step and ``rho``
    the pro-rata spend, in units of the cost and in continuous time. The
    price starts at 0 in each period.

    The defaults come from ``benchmarks/bench_budget.py`` (issue 20's study:
    budgets of 25 % and 50 % of the unconstrained rule's spend over one, two
    or four periods, on the synthetic case and on the Z24-like case, with
    late or no damage as variants), chosen on 20 splits and reported on 100
    others; ``benchmarks/results/budget.md`` has every cell, including those
    where first come, first served does better.

    The state changes only at inspections, apart from running counts (time,
    steps seen, steps above the cost, the current run, the highest EVPI),
    and every quantity is a closed form of it, so scanning a block or its
    pieces gives the same decisions and the state resumes exactly from JSON.
    Its entries: ``first_period``, ``period`` (of the last inspection),
    ``spent`` (in that period), ``total_spent``, ``price`` and
    ``price_time`` (the price just after the last inspection, and its time),
    ``run``, ``last_time``, ``peak`` (the highest EVPI seen), ``n_above``
    and ``n_seen`` (steps above the cost, and steps, seen) and
    ``first_time`` (of the first step seen).

    References
    ----------
    .. [1] S. R. Balseiro and Y. Gur, "Learning in repeated auctions with
       budgets: regret minimization and equilibrium", Management Science
       65(9), 3952-3968, 2019.
    .. [2] Y. Zhou, D. Chakrabarty and R. Lukose, "Budget constrained
       bidding in keyword auctions and online knapsack problems", WINE 2008,
       LNCS 5385, 566-576.

    Examples
    --------
    Ten steps of high EVPI and money for three inspections: first come, first
    served would take steps 0, 1 and 2; the paced budget spreads them.

    >>> import numpy as np
    >>> from skrbal.budget import PacedBudget
    >>> policy = PacedBudget(limit=21.0, period=10.0, reserve=0.0, explore=0.0,
    ...                      pacing_rate=1.0,
    ...                      persistence=None, carry_over=False)
    >>> evpi, times, available = np.full(10, 8.0), np.arange(10.0), np.ones(10, bool)
    >>> k, state = policy.scan(evpi, times, available, 7.0, policy.initial_state())
    >>> k, state["price"]
    (0, 1.0)
    >>> k, state = policy.scan(evpi[1:], times[1:], available[1:], 7.0, state)
    >>> 1 + k  # the price fell below 1/7 by step 3
    3
    >>> k, state = policy.scan(evpi[4:], times[4:], available[4:], 7.0, state)
    >>> 4 + k
    7
    >>> state["total_spent"]
    21.0
    """

    _parameter_constraints: ClassVar[dict] = {
        **PERIODIC_BUDGET_CONSTRAINTS,
        "carry_over": ["boolean"],
        "reserve": [Interval(Real, 0, 1, closed="left")],
        "pacing_rate": [Interval(Real, 0, None, closed="neither")],
        "explore": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
        "persistence": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
            None,
        ],
        "release": [StrOptions({"demand", "time"})],
    }

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
        _check_time_continues(times, state)
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
            last_time=_last_time(times, state),
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
