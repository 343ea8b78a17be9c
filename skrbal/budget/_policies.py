"""Budget policies whose state changes only at inspections."""

from __future__ import annotations

import numpy as np

from skrbal.budget._base import BudgetPolicy

__all__ = ["CostThreshold"]


class CostThreshold(BudgetPolicy):
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

    def __init__(self):
        pass

    def _initial_state(self) -> dict:
        return {}

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        return evpi > cost

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        return {}
