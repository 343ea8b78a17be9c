"""The fleet budget's tables, beside the agents' in one store.

A store's agents draw on a fleet budget through two tables of their own
(prefixed ``skrbal_fleet_``), created on first use in the store's database:

- ``skrbal_fleet_budgets``: one row per named budget, its configuration (the
  JSON of its :class:`~skrbal.fleet.FleetBudget`), its running state (the
  window of competing values and the money spent per period) and its last
  event's number. Drawing locks this row (``SELECT ... FOR UPDATE`` on
  PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` locks the whole database).
- ``skrbal_fleet_events``: each draw, one row, hash-chained to the previous
  one from a genesis hash of the configuration: which agent drew, from which
  step, what was granted and the state after (its window by its SHA-256).

The tables are independent of the agent store's schema version: they only
add to it, and an agent store without them is an agent store without a fleet
budget.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

budgets = Table(
    "skrbal_fleet_budgets",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("config", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("last_seq", Integer, nullable=False),
    Column("created_at", Float(53), nullable=False),
)

events = Table(
    "skrbal_fleet_events",
    metadata,
    Column(
        "budget",
        String(200),
        ForeignKey("skrbal_fleet_budgets.name"),
        primary_key=True,
    ),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("kind", String(16), nullable=False),
    Column("agent", String(200), nullable=True),
    Column("first_step", Integer, nullable=True),
    Column("payload", Text, nullable=False),
    Column("created_at", Float(53), nullable=False),
    Column("hash", String(64), nullable=False),
)
