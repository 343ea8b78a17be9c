"""A budget paced over its period: a price on inspections that tracks the spend."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

from sklearn.utils._param_validation import Interval, StrOptions

from skrbal.budget._base import BudgetPolicy
from skrbal.budget._paced_rule import PacedRule
from skrbal.budget._policies import PERIODIC_BUDGET_CONSTRAINTS

__all__ = ["PacedBudget"]


class PacedBudget(PacedRule, BudgetPolicy):
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
