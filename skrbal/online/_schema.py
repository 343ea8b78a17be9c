"""The agent store's schema: every table, one place, one version number.

Tables are prefixed ``skrbal_`` so a shared PostgreSQL database can hold
them next to others. Numbers are double precision (``Float(53)``); labels
and configurations are JSON text written with Python's ``repr`` of floats,
which round-trips exactly.

The steps of one ``observe`` call are one row of ``skrbal_blocks`` (since
version 3): each per-step column is the exact bytes of a little-endian numpy
array (``<f8`` for numbers, ``<i8`` for integers) of ``n_steps`` entries,
``n_steps * n_features`` for ``features`` and ``n_steps * n_states`` for
``belief`` (row-major), so a block of 1,000 steps is written with one
statement. What changes later about a step lives elsewhere: its request
(``skrbal_requests``, including the label a result reveals) and the action
the user records as taken (``skrbal_actions``). Commissioning steps stay one
row each in ``skrbal_observations``.

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
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    select,
    text,
)

from skrbal.online._blocks import rows_to_block
from skrbal.online._chain import event_hash, genesis_hash

SCHEMA_VERSION = 5

# Longest client key of an idempotent call (skrbal_events.client_key).
MAX_KEY_LENGTH = 200

# Observation rows read at a time by the migration from version 2.
_MIGRATION_CHUNK = 10_000


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


def _observations_to_blocks(conn) -> None:
    """Version 2 -> 3: the observation rows of each ``observe`` call, one block.

    The rows of kind ``observation`` with the same ``seq`` (one call) become
    one row of ``skrbal_blocks``; every recorded ``taken_action`` moves to
    ``skrbal_actions``; the labels of observed steps are those of their
    requests already. Commissioning rows stay.
    """
    blocks.create(conn)
    actions.create(conn)
    old = observations
    taken = conn.execute(
        select(old.c.agent_id, old.c.step, old.c.taken_action.label("action")).where(
            old.c.taken_action.is_not(None)
        )
    ).all()
    if taken:
        conn.execute(actions.insert(), [row._asdict() for row in taken])
    for agent_id, n_features in conn.execute(
        select(agents.c.agent_id, agents.c.n_features)
    ).all():
        # In chunks of steps, so a long stream is never all in memory.
        call, start = [], -1
        while True:
            chunk = conn.execute(
                select(old)
                .where(
                    (old.c.agent_id == agent_id)
                    & (old.c.kind == "observation")
                    & (old.c.step > start)
                )
                .order_by(old.c.step)
                .limit(_MIGRATION_CHUNK)
            ).all()
            new = []
            for row in chunk:
                if call and row.seq != call[0].seq:  # a call ends
                    new.append(rows_to_block(agent_id, n_features, call))
                    call = []
                call.append(row)
            if not chunk and call:
                new.append(rows_to_block(agent_id, n_features, call))
            if new:
                conn.execute(blocks.insert(), new)
            if not chunk:
                break
            start = chunk[-1].step
    conn.execute(old.delete().where(old.c.kind == "observation"))
    conn.execute(old.update().values(taken_action=None))


def _chain_events(conn) -> None:
    """Version 3 -> 4: each event carries a hash chained to the previous one.

    Column ``hash`` of ``skrbal_events``, computed for the events already
    there (see :mod:`skrbal.online._chain`); their ``observe`` payloads keep
    no block digest, so only later blocks are checked byte for byte.
    """
    conn.execute(text("ALTER TABLE skrbal_events ADD COLUMN hash VARCHAR(64)"))
    ev = events
    set_hash = (
        ev.update()
        .where((ev.c.agent_id == bindparam("a_id")) & (ev.c.seq == bindparam("a_seq")))
        .values(hash=bindparam("a_hash"))
    )
    for agent in conn.execute(select(agents)).all():
        previous, start = genesis_hash(agent), 0
        while True:
            # The columns of version 3 only (later ones do not exist yet).
            chunk = conn.execute(
                select(
                    ev.c.seq,
                    ev.c.kind,
                    ev.c.step,
                    ev.c.request_id,
                    ev.c.payload,
                    ev.c.created_at,
                )
                .where((ev.c.agent_id == agent.agent_id) & (ev.c.seq > start))
                .order_by(ev.c.seq)
                .limit(_MIGRATION_CHUNK)
            ).all()
            if not chunk:
                break
            hashes = []
            for e in chunk:
                previous = event_hash(
                    previous,
                    e.seq,
                    e.kind,
                    e.step,
                    e.request_id,
                    e.payload,
                    e.created_at,
                )
                hashes.append(
                    {"a_id": agent.agent_id, "a_seq": e.seq, "a_hash": previous}
                )
            conn.execute(set_hash, hashes)
            start = chunk[-1].seq


def _client_keys_and_origins(conn) -> None:
    """Version 4 -> 5: client keys of idempotent calls, origins of requests.

    Columns ``client_key`` and ``key_digest`` of ``skrbal_events`` (NULL for
    the events already there: no call was keyed) with a unique index per
    agent, and ``origin`` of ``skrbal_requests`` (NULL: the agent requested
    it; ``'routine'``: a label the agent did not request). Existing hashes
    stay valid: an event without a key hashes as before.
    """
    conn.execute(
        text(
            f"ALTER TABLE skrbal_events ADD COLUMN client_key VARCHAR({MAX_KEY_LENGTH})"
        )
    )
    conn.execute(text("ALTER TABLE skrbal_events ADD COLUMN key_digest TEXT"))
    conn.execute(text("ALTER TABLE skrbal_requests ADD COLUMN origin VARCHAR(10)"))
    client_key_index.create(conn)


# Upgrades from version v to v + 1.
MIGRATIONS: dict = {
    1: _add_report_columns,
    2: _observations_to_blocks,
    3: _chain_events,
    4: _client_keys_and_origins,
}

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

# Commissioning steps (since version 3; every step before). Their
# ``taken_action`` is in skrbal_actions since version 3, NULL here.
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
    # Since version 2: the inspection method's name (NULL: the process's
    # perfect inspection), the report (JSON outcome) and the posterior over
    # the states given the request's belief and the report (JSON list).
    Column("method", String(200), nullable=True),
    Column("report", Text, nullable=True),
    Column("posterior", Text, nullable=True),
    # Since version 5: NULL when the agent requested it, 'routine' for a
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
    # Since version 4: sha256 chained to the previous event's (_chain.py).
    Column("hash", String(64), nullable=True),
    # Since version 5: the client's key of an idempotent call (unique per
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
