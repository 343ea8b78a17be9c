"""The agent store's schema: every table, one place, one version number.

Tables are prefixed ``skrbal_`` so a shared PostgreSQL database can hold
them next to others. Numbers are double precision (``Float(53)``); features,
beliefs, labels and configurations are JSON text written with Python's
``repr`` of floats, which round-trips exactly.

Migration path
--------------
``SCHEMA_VERSION`` is the version this code writes; ``skrbal_schema_version``
holds the version of a store. Opening a store of an older version applies
``MIGRATIONS[v]`` (a function ``(connection) -> None`` upgrading ``v`` to
``v + 1``) for each version in turn, in one transaction, then records the new
version. A change to the tables below therefore comes with a bump of
``SCHEMA_VERSION`` and one migration function (plain SQLAlchemy Core DDL, or
an alembic script for larger changes). A store of a newer version than the
code is refused, never written.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

SCHEMA_VERSION = 2


def _add_report_columns(conn) -> None:
    """Version 1 -> 2: requests record their inspection method and report.

    Columns ``method``, ``report`` and ``posterior`` of ``skrbal_requests``
    (all NULL for the requests of a version-1 store: perfect inspections,
    whose result is the ``label``).
    """
    for name, kind in (
        ("method", "VARCHAR(200)"),
        ("report", "TEXT"),
        ("posterior", "TEXT"),
    ):
        conn.execute(text(f"ALTER TABLE skrbal_requests ADD COLUMN {name} {kind}"))


# Upgrades from version v to v + 1.
MIGRATIONS: dict = {1: _add_report_columns}

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
    # Since version 2: the inspection method's name (NULL: the process's
    # perfect inspection), the report (JSON outcome) and the posterior over
    # the states given the request's belief and the report (JSON list).
    Column("method", String(200), nullable=True),
    Column("report", Text, nullable=True),
    Column("posterior", Text, nullable=True),
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
)

Index("ix_skrbal_requests_status", requests.c.agent_id, requests.c.status)
