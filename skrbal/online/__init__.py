"""Live decision support: the online risk-based agent and its durable store.

:class:`RiskBasedAgent` runs risk-based active learning on a live monitoring
feed: one observation (or a batch) at a time, inspection results that come
back later or never, a budget policy, and an :class:`AgentStore` (SQLite file
or PostgreSQL) that records everything as it happens so the agent resumes
after a restart with identical decisions.

The life of an agent::

    agent = RiskBasedAgent(estimator=..., process=..., store="fleet.db",
                           name="bridge-7").commission(X_commissioning,
                                                       y_commissioning)
    decisions = agent.observe(X_new, timestamps=...)   # one row per observation
    action = agent.record_inspection(request_id, label)  # days later
    agent.cancel_request(other_id, reason="no access")
    agent.record_action(step, action_taken)            # for smoothing
    agent.status(); agent.history()
    agent.close()
    agent = RiskBasedAgent.from_store("fleet.db", "bridge-7")  # after a restart

The agent reaches its store only through the storage contract
:class:`AgentStorage` (create, lock, append an ``observe`` block, record a
result, a cancellation or an action, load) and its frozen records
(:class:`AgentRecord`, :class:`ObserveBlock`, ...); :class:`AgentStore` is
its SQL implementation.

Reading a store needs no agent and takes no lock: :meth:`AgentStore.status`,
:meth:`~AgentStore.history`, :meth:`~AgentStore.requests`,
:meth:`~AgentStore.events`, :meth:`~AgentStore.configuration` and
:meth:`~AgentStore.verify` (the agent's event chain and the tables against
it).
"""

try:
    import sqlalchemy  # noqa: F401
except ImportError as exc:  # pragma: no cover - the db extra is missing
    raise ImportError(
        "skrbal.online stores agents through SQLAlchemy, which is not installed: "
        "pip install 'skrbal[db]'."
    ) from exc

from skrbal.online._agent import IdempotencyKeyError, RequestError, RiskBasedAgent
from skrbal.online._config import ConfigurationError
from skrbal.online._lock import AgentLockedError
from skrbal.online._storage import (
    AgentRecord,
    AgentStorage,
    ClientKey,
    Commissioning,
    EventRecord,
    ObserveBlock,
    Replay,
    RequestRecord,
    ResultRecord,
    StoreError,
)
from skrbal.online._store import AgentStore

__all__ = [
    "AgentLockedError",
    "AgentRecord",
    "AgentStorage",
    "AgentStore",
    "ClientKey",
    "Commissioning",
    "ConfigurationError",
    "EventRecord",
    "IdempotencyKeyError",
    "ObserveBlock",
    "Replay",
    "RequestError",
    "RequestRecord",
    "ResultRecord",
    "RiskBasedAgent",
    "StoreError",
]
