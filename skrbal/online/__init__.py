"""Live decision support: the online risk-based agent and its durable store.

:class:`RiskBasedAgent` runs risk-based active learning on a live monitoring
feed: one observation (or a batch) at a time, inspection results that come
back later or never, a budget policy, and an :class:`AgentStore` (SQLite file
or PostgreSQL) that records everything as it happens so the agent resumes
after a restart with identical decisions.
"""

try:
    import sqlalchemy  # noqa: F401
except ImportError as exc:  # pragma: no cover - the db extra is missing
    raise ImportError(
        "skrbal.online stores agents through SQLAlchemy, which is not installed: "
        "pip install 'skrbal[db]'."
    ) from exc

from skrbal.online._agent import RequestError, RiskBasedAgent
from skrbal.online._config import ConfigurationError
from skrbal.online._lock import AgentLockedError
from skrbal.online._store import AgentStore, StoreError

__all__ = [
    "AgentLockedError",
    "AgentStore",
    "ConfigurationError",
    "RequestError",
    "RiskBasedAgent",
    "StoreError",
]
