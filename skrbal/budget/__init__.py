"""Inspection budget policies: which decisions are worth an inspection.

A policy reads the EVPI of consecutive decisions and returns the first one to
inspect, carrying a JSON-serialisable running state between calls
(:meth:`BudgetPolicy.scan`). Policies compose with ``&`` (:class:`AllOf`):
``CostThreshold() & SpendCap(limit=..., period=...)`` keeps the paper's rule
within a money limit per period, first come, first served;
:class:`PacedBudget` spreads the money over the period. The stream learner
:class:`~skrbal.active.RiskBasedLearner` and the online agent use the same
policies.

Each policy is a rule (``_scan``, ``_rules``, ``_paced_rule``: the scan and
its state, numpy only) with scikit-learn's estimator API on top; the names
are imported when first used (PEP 562), so that a rule can be imported
without scikit-learn.
"""

from skrbal._lazy import lazy_attributes

_LAZY = {
    "AllOf": "skrbal.budget._base",
    "BudgetPolicy": "skrbal.budget._base",
    "BudgetStarvedError": "skrbal.exceptions",
    "BudgetStarvedWarning": "skrbal.exceptions",
    "CostThreshold": "skrbal.budget._policies",
    "MinimumGap": "skrbal.budget._policies",
    "PacedBudget": "skrbal.budget._paced",
    "QuantileThreshold": "skrbal.budget._quantile",
    "ScanRule": "skrbal.budget._scan",
    "SpendCap": "skrbal.budget._policies",
    "scan_rule": "skrbal.budget._described",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
