"""skrbal: risk-based active learning for scikit-learn.

Query a label only when its expected value of perfect information (EVPI), taken
from a maintenance decision process, exceeds the cost of the inspection that
reveals it.

The names below are imported when first used (PEP 562), so that ``import
skrbal`` (and the ``skrbal`` command's start-up) does not pay for
scikit-learn until it is needed.
"""

from skrbal._lazy import lazy_attributes

__version__ = "0.1.0.dev0"

# Public name -> the module that defines it.
_LAZY = {
    "BayesianGMMClassifier": "skrbal.mixture",
    "DecisionProcess": "skrbal._decision",
    "synthetic_decision_process": "skrbal._decision",
    "z24_decision_process": "skrbal._decision",
}

__all__ = [
    "BayesianGMMClassifier",
    "DecisionProcess",
    "__version__",
    "synthetic_decision_process",
    "z24_decision_process",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
