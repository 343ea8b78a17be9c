"""Budget policies whose state changes only at inspections."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

from sklearn.utils._param_validation import Interval

from skrbal.budget._base import BudgetPolicy
from skrbal.budget._rules import CostThresholdRule, MinimumGapRule, SpendCapRule

__all__ = ["CostThreshold", "MinimumGap", "SpendCap"]


# Parameters of the money-per-period budgets (SpendCap, PacedBudget).
PERIODIC_BUDGET_CONSTRAINTS = {
    "limit": [Interval(Real, 0, None, closed="left")],
    "period": [Interval(Real, 0, None, closed="neither")],
    "origin": [Interval(Real, None, None, closed="neither")],
    "allow_starved": ["boolean"],
}


class CostThreshold(CostThresholdRule, BudgetPolicy):
    """The paper's rule: inspect when the EVPI exceeds the inspection cost.

    Stateless and unlimited: every available step with ``evpi > cost`` is
    inspected. Compose it with a budget (``CostThreshold() & SpendCap(...)``)
    to keep the rule and bound the spend.

    See Also
    --------
    skrbal.DecisionProcess.should_inspect : The same rule on beliefs.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget import CostThreshold
    >>> policy = CostThreshold()
    >>> evpi = np.array([2.0, 7.0, 7.5])
    >>> available = np.array([True, False, True])
    >>> policy.scan(evpi, np.arange(3.0), available, 7.0, policy.initial_state())
    (2, {})
    """


class SpendCap(SpendCapRule, BudgetPolicy):
    """At most ``limit`` of inspection spend in each period of time.

    Time is cut into periods ``[origin + j * period, origin + (j + 1) *
    period)``; a step may be inspected while the spend of its period plus the
    cost stays within ``limit`` (no tolerance: ``spend + cost <= limit``).
    Alone it inspects the first available steps of each period until the
    money runs out; compose it with a rule that says which steps are worth it,
    e.g. ``CostThreshold() & SpendCap(limit=..., period=...)``.

    ``CostThreshold() & SpendCap(...)`` is **first come, first served**: it
    spends the period's money on the first steps whose EVPI exceeds the cost,
    which, while the model is young, are most steps. On a record whose damage
    comes late it has nothing left when the damage comes (on the Z24 bridge
    record at a quarter of the unconstrained rule's spend, its last
    inspection fell at step 140 of 1,966 and no damaged state was ever
    inspected in 200 runs). Prefer :class:`PacedBudget`, which spreads the
    money over the period; keep this composition where early labels are
    known to pay most.

    Parameters
    ----------
    limit : float
        Money available per period, >= 0.
    period : float
        Length of a period, > 0, in the unit of ``times`` (stream steps
        offline, seconds of the timestamps online).
    origin : float, default=0.0
        Start of the period numbered 0.
    allow_starved : bool, default=False
        Accept a ``limit`` below the cost of one inspection (a budget that
        never inspects), with a :class:`~skrbal.exceptions.BudgetStarvedWarning`
        once, instead of the error.

    Raises
    ------
    BudgetStarvedError
        From :meth:`scan`, when ``limit`` is below the inspection cost and
        ``allow_starved`` is False.

    See Also
    --------
    PacedBudget : Spreads the money over the period (recommended).
    QuantileThreshold : Spends a rate on the highest-EVPI steps.

    Notes
    -----
    The state (``period``: index of the period of the last inspection,
    ``spent``: its spend, ``last_time``) changes only at inspections, apart
    from the time check, so a block is decided without a loop over its steps.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget import CostThreshold, SpendCap
    >>> policy = CostThreshold() & SpendCap(limit=10.0, period=5.0)
    >>> evpi = np.array([9.0, 9.0, 9.0, 1.0, 9.0, 9.0])
    >>> state, found, start = policy.initial_state(), [], 0
    >>> while True:
    ...     k, state = policy.scan(evpi[start:], np.arange(start, 6.0),
    ...                            np.ones(6 - start, bool), 4.0, state)
    ...     if k < 0:
    ...         break
    ...     found.append(start + k)
    ...     start += k + 1
    >>> found
    [0, 1, 5]
    """

    _parameter_constraints: ClassVar[dict] = PERIODIC_BUDGET_CONSTRAINTS


class MinimumGap(MinimumGapRule, BudgetPolicy):
    """At least ``gap`` of time between two inspections.

    A step may be inspected when it comes ``gap`` or more after the previous
    inspection (``t - t_last >= gap``). Compose it with a rule, e.g.
    ``CostThreshold() & MinimumGap(gap=...)``.

    Parameters
    ----------
    gap : float
        Minimum time between inspections, >= 0, in the unit of ``times``.

    See Also
    --------
    SpendCap : A money limit per period.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget import MinimumGap
    >>> policy = MinimumGap(gap=3.0)
    >>> state = {"last_inspection": 1.0, "last_time": 1.0}
    >>> policy.scan(np.zeros(4), np.arange(2.0, 6.0), np.ones(4, bool), 0.0, state)
    (2, {'last_inspection': 4.0, 'last_time': 4.0})
    """

    _parameter_constraints: ClassVar[dict] = {
        "gap": [Interval(Real, 0, None, closed="left")],
    }
