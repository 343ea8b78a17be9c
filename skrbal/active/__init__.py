"""Active learners: the pool form (modAL's interface) and the stream form."""

from skrbal.active._pool import ActiveLearner
from skrbal.active._stream import RiskBasedLearner

__all__ = ["ActiveLearner", "RiskBasedLearner"]
