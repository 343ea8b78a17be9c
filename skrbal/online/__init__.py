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
    decisions = agent.observe(X_new, timestamps=..., key="batch-17")  # key: safe retry
    action = agent.record_inspection(request_id, label)  # days later
    agent.record_label(step, label)          # a routine inspection it did not ask
    agent.cancel_request(other_id, reason="no access")
    agent.record_action(step, action_taken)            # for smoothing
    agent.status(); agent.history_.steps
    agent.close()
    agent = RiskBasedAgent.from_store("fleet.db", "bridge-7")  # after a restart

The agent reaches its store only through the storage contract
:class:`AgentStorage` (create, lock, append an ``observe`` block, record a
result, a cancellation or an action, load) and its frozen records
(:class:`AgentRecord`, :class:`ObserveBlock`, ...); :class:`AgentStore` is
its SQL implementation and :class:`InMemoryAgentStore` one in memory (the
default: nothing durable).

Reading a store needs no agent and takes no lock: :meth:`AgentStore.status`,
:meth:`~AgentStore.history`, :meth:`~AgentStore.requests`,
:meth:`~AgentStore.events`, :meth:`~AgentStore.configuration` and
:meth:`~AgentStore.verify` (the agent's event chain and the tables against
it). :func:`sqlite_summary` reads the status and configuration of an agent
in a SQLite store with the standard library alone (no SQLAlchemy);
:func:`open_sqlite_store` opens a SQLite store so for one live call (the
store's writer and reads, through the standard library's ``sqlite3``).
"""

import importlib.util

from skrbal._lazy import lazy_attributes

if importlib.util.find_spec("sqlalchemy") is None:  # pragma: no cover
    raise ImportError(
        "skrbal.online stores agents through SQLAlchemy, a dependency of skrbal "
        "that is not installed: pip install 'sqlalchemy>=2.0'."
    )

# Public name -> the module that defines it. The names are imported when first
# used (PEP 562): reading a store (``skrbal agent status``) needs SQLAlchemy
# and numpy, not the agent's scikit-learn and pandas.
_LAZY = {
    "AgentLockedError": "skrbal.exceptions",
    "AgentRecord": "skrbal.online._records",
    "AgentStorage": "skrbal.online._storage",
    "AgentStore": "skrbal.online._sql._store",
    "ClientKey": "skrbal.online._records",
    "Commissioning": "skrbal.online._records",
    "ConfigurationError": "skrbal.exceptions",
    "EventRecord": "skrbal.online._records",
    "IdempotencyKeyError": "skrbal.exceptions",
    "InMemoryAgentStore": "skrbal.online._memory",
    "LiveState": "skrbal.online._records",
    "NeedsModel": "skrbal.exceptions",
    "SnapshotAgent": "skrbal.online._snapshot_agent",
    "ObserveBlock": "skrbal.online._records",
    "Replay": "skrbal.online._records",
    "RequestError": "skrbal.exceptions",
    "RequestRecord": "skrbal.online._records",
    "ResultRecord": "skrbal.online._records",
    "RiskBasedAgent": "skrbal.online._agent",
    "SkippedRow": "skrbal.online._records",
    "StoreError": "skrbal.exceptions",
    "open_sqlite_store": "skrbal.online._connect",
    "snapshot_agent": "skrbal.online._snapshot_agent",
    "sqlite_summary": "skrbal.online._sql._summary",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
