"""skrbal: risk-based active learning for scikit-learn.

Query a label only when its expected value of perfect information (EVPI), taken
from a maintenance decision process, exceeds the cost of the inspection that
reveals it.
"""

from skrbal._decision import (
    DecisionProcess,
    synthetic_decision_process,
    z24_decision_process,
)
from skrbal.mixture import BayesianGMMClassifier

__version__ = "0.1.0.dev0"

__all__ = [
    "BayesianGMMClassifier",
    "DecisionProcess",
    "__version__",
    "synthetic_decision_process",
    "z24_decision_process",
]
