"""The numpy-only rule of a budget policy as a store keeps it (its JSON)."""

from __future__ import annotations

from skrbal.budget._paced_rule import PacedRule
from skrbal.budget._rules import CostThresholdRule, MinimumGapRule, SpendCapRule

__all__ = ["scan_rule"]

# A policy's class name -> its rule: the scan and its state, without the
# scikit-learn estimator around it.
_RULES = {
    "CostThreshold": CostThresholdRule,
    "SpendCap": SpendCapRule,
    "MinimumGap": MinimumGapRule,
    "PacedBudget": PacedRule,
}


def scan_rule(description):
    """The rule that scans for a stored budget policy, without scikit-learn.

    A store keeps an agent's budget policy as JSON (``{"__estimator__":
    name, "params": {...}}``); a process that only decides (``skrbal agent
    observe`` from the model's snapshot) needs its rule, not the estimator.

    Parameters
    ----------
    description : dict or None
        The policy's stored description; ``None`` is the default policy
        (:class:`CostThreshold`).

    Returns
    -------
    rule : ScanRule or None
        The rule of a :class:`CostThreshold`, :class:`SpendCap`,
        :class:`MinimumGap` or :class:`PacedBudget`; ``None`` for any other
        policy (a composition, a quantile threshold) or a description that
        is not one: decide with the policy itself.

    Examples
    --------
    >>> from skrbal.budget import scan_rule
    >>> rule = scan_rule({"__estimator__": "SpendCap",
    ...                   "params": {"limit": 20.0, "period": 30.0}})
    >>> type(rule).__name__
    'SpendCapRule'
    >>> scan_rule({"__estimator__": "QuantileThreshold", "params": {}}) is None
    True
    """
    if description is None:
        description = {"__estimator__": "CostThreshold", "params": {}}
    if not isinstance(description, dict) or set(description) != {
        "__estimator__",
        "params",
    }:
        return None
    path = str(description["__estimator__"])
    name = path.rsplit(".", 1)[-1]
    if name not in _RULES or not (path == name or path.startswith("skrbal.budget.")):
        return None
    return _RULES[name](**description["params"])
