"""Decision-based performance measures for risk-based active learning.

A classifier for structural health monitoring is judged here by the
maintenance decisions its beliefs lead to: how often they match those of an
agent with perfect information (:func:`decision_accuracy`), what the mistakes
cost (:func:`utility_regret`), and what a whole monitoring campaign earned and
spent (:func:`campaign_summary`). :func:`make_decision_scorer` brings the first
two to scikit-learn's model selection.
"""

from skrbal.metrics._decision_metrics import (
    campaign_summary,
    class_proportions,
    decision_accuracy,
    utility_regret,
)
from skrbal.metrics._scorer import make_decision_scorer

__all__ = [
    "campaign_summary",
    "class_proportions",
    "decision_accuracy",
    "make_decision_scorer",
    "utility_regret",
]
