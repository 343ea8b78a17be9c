"""The agent store's schema: every table, one place, one version number.

Tables are prefixed ``skrbal_`` so a shared PostgreSQL database can hold
them next to others. Numbers are double precision (``Float(53)``); labels
and configurations are JSON text written with Python's ``repr`` of floats,
which round-trips exactly.

The steps of one ``observe`` call are one row of ``skrbal_blocks``: each
per-step column is the exact bytes of a little-endian numpy array (``<f8``
for numbers, ``<i8`` for integers) of ``n_steps`` entries,
``n_steps * n_features`` for ``features`` and ``n_steps * n_states`` for
``belief`` (row-major), so a block of 1,000 steps is written with one
statement. What changes later about a step lives elsewhere: its request
(``skrbal_requests``, including the label a result reveals) and the action
the user records as taken (``skrbal_actions``). Commissioning steps stay one
row each in ``skrbal_observations``.

Versions
--------
``SCHEMA_VERSION`` is the version this code writes; ``skrbal_schema_version``
holds the version of a store. A store of another version is refused, never
written. No released skrbal wrote an earlier schema, so there are no
migrations: the development versions' 1 to 5 were squashed into this 1. Once
a store has been released, a change to the tables below comes with a bump of
``SCHEMA_VERSION`` and a migration (SQLAlchemy Core DDL, or alembic), applied
in the transaction that opens the store.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from skrbal.online._sql._version import MAX_KEY_LENGTH, SCHEMA_VERSION  # noqa: F401

metadata = MetaData()

schema_version = Table(
    "skrbal_schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Float(53), nullable=False),
)

agents = Table(
    "skrbal_agents",
    metadata,
    Column("agent_id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("created_at", Float(53), nullable=False),
    Column("skrbal_version", String(40), nullable=False),
    # Configuration: JSON of skrbal.online._config.encode_config.
    Column("process", Text, nullable=False),
    Column("estimator", Text, nullable=False),
    Column("estimator_fingerprint", String(64), nullable=False),
    Column("budget", Text, nullable=False),
    Column("budget_fingerprint", String(64), nullable=False),
    Column("settings", Text, nullable=False),
    Column("n_features", Integer, nullable=False),
    Column("feature_names", Text, nullable=True),
    # Running counters and state, updated in the transaction of every call.
    Column("clock", String(10), nullable=True),
    Column("n_steps", Integer, nullable=False),
    Column("n_requests", Integer, nullable=False),
    Column("last_seq", Integer, nullable=False),
    Column("budget_state", Text, nullable=False),
    Column("owner", Text, nullable=True),
)

# Commissioning steps. Their ``taken_action`` is in skrbal_actions, NULL
# here.
observations = Table(
    "skrbal_observations",
    metadata,
    Column("agent_id", Integer, ForeignKey("skrbal_agents.agent_id"), primary_key=True),
    Column("step", Integer, primary_key=True, autoincrement=False),
    Column("seq", Integer, nullable=False),
    Column("kind", String(20), nullable=False),  # commissioning | observation
    Column("timestamp", Float(53), nullable=True),
    Column("time", Float(53), nullable=True),  # what the budget policy saw
    Column("features", Text, nullable=False),
    Column("belief", Text, nullable=True),
    Column("evpi", Float(53), nullable=True),
    Column("action", Integer, nullable=False),  # recommended (belief or label)
    Column("label", Text, nullable=True),  # JSON label once known
    Column("taken_action", Integer, nullable=True),  # recorded by the user
    Column("request_id", Integer, nullable=True),
)

blocks = Table(
    "skrbal_blocks",
    metadata,
    Column("agent_id", Integer, ForeignKey("skrbal_agents.agent_id"), primary_key=True),
    Column("first_step", Integer, primary_key=True, autoincrement=False),
    Column("n_steps", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    # Little-endian arrays of n_steps entries (see the module's docstring).
    Column("timestamp", LargeBinary, nullable=True),  # <f8; NULL: none given
    Column("time", LargeBinary, nullable=False),  # <f8: what the budget saw
    Column("features", LargeBinary, nullable=False),  # <f8, n_steps x n_features
    Column("belief", LargeBinary, nullable=False),  # <f8, n_steps x n_states
    Column("evpi", LargeBinary, nullable=False),  # <f8
    Column("action", LargeBinary, nullable=False),  # <i8: recommended
    Column("request_id", LargeBinary, nullable=False),  # <i8: 0 without
)

# The action the user recorded as taken at a step (any step), the last one.
actions = Table(
    "skrbal_actions",
    metadata,
    Column("agent_id", Integer, ForeignKey("skrbal_agents.agent_id"), primary_key=True),
    Column("step", Integer, primary_key=True, autoincrement=False),
    Column("action", Integer, nullable=False),
)

requests = Table(
    "skrbal_requests",
    metadata,
    Column("agent_id", Integer, ForeignKey("skrbal_agents.agent_id"), primary_key=True),
    Column("request_id", Integer, primary_key=True, autoincrement=False),
    Column("step", Integer, nullable=False),
    Column("status", String(10), nullable=False),  # open | done | cancelled
    Column("evpi", Float(53), nullable=False),
    Column("opened_seq", Integer, nullable=False),
    Column("closed_seq", Integer, nullable=True),
    Column("label", Text, nullable=True),
    Column("action", Integer, nullable=True),  # optimal for the known state
    Column("result_timestamp", Float(53), nullable=True),
    Column("note", Text, nullable=True),
    # The inspection method's name (NULL: the process's
    # perfect inspection), the report (JSON outcome) and the posterior over
    # the states given the request's belief and the report (JSON list).
    Column("method", String(200), nullable=True),
    Column("report", Text, nullable=True),
    Column("posterior", Text, nullable=True),
    # NULL when the agent requested it, 'routine' for a
    # label recorded without a request (RiskBasedAgent.record_label).
    Column("origin", String(10), nullable=True),
    # No second request for the same step, enforced by the database too.
    UniqueConstraint("agent_id", "step", name="uq_skrbal_requests_step"),
)

events = Table(
    "skrbal_events",
    metadata,
    Column("agent_id", Integer, ForeignKey("skrbal_agents.agent_id"), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    # commission | observe | result | cancel | action
    Column("kind", String(20), nullable=False),
    Column("step", Integer, nullable=True),
    Column("request_id", Integer, nullable=True),
    Column("payload", Text, nullable=False),
    Column("created_at", Float(53), nullable=False),
    # sha256 chained to the previous event's (_chain.py).
    Column("hash", String(64), nullable=True),
    # The client's key of an idempotent call (unique per
    # agent) and the JSON digests of its inputs, both in the event's hash.
    Column("client_key", String(MAX_KEY_LENGTH), nullable=True),
    Column("key_digest", Text, nullable=True),
)

Index("ix_skrbal_requests_status", requests.c.agent_id, requests.c.status)
# NULL keys (calls without one) do not collide, in SQLite nor PostgreSQL.
client_key_index = Index(
    "uq_skrbal_events_client_key",
    events.c.agent_id,
    events.c.client_key,
    unique=True,
)
