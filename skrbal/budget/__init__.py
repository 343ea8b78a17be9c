"""Inspection budget policies: which decisions are worth an inspection.

A policy reads the EVPI of consecutive decisions and returns the first one to
inspect, carrying a JSON-serialisable running state between calls
(:meth:`BudgetPolicy.scan`). Policies compose with ``&`` (:class:`AllOf`):
``CostThreshold() & SpendCap(limit=..., period=...)`` keeps the paper's rule
within a money limit per period, first come, first served;
:class:`PacedBudget` spreads the money over the period. The stream learner
:class:`~skrbal.active.RiskBasedLearner` and the online agent use the same
policies.
"""

from skrbal.budget._base import AllOf, BudgetPolicy
from skrbal.budget._paced import PacedBudget
from skrbal.budget._policies import CostThreshold, MinimumGap, SpendCap
from skrbal.budget._quantile import QuantileThreshold
from skrbal.exceptions import BudgetStarvedError, BudgetStarvedWarning

__all__ = [
    "AllOf",
    "BudgetPolicy",
    "BudgetStarvedError",
    "BudgetStarvedWarning",
    "CostThreshold",
    "MinimumGap",
    "PacedBudget",
    "QuantileThreshold",
    "SpendCap",
]
