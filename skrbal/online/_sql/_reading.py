"""Reading an agent store in bounded memory: records, replay data and status.

The observed steps of an agent are stored as blocks (one per ``observe``
call, see :mod:`skrbal.online._sql._blocks`). Everything here reads them a block
at a time, and only the columns and steps it needs, so resuming an agent or
reading its status takes the memory of its result and one block, however
many requests a block holds.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

from sqlalchemy import select, text
from sqlalchemy.exc import DatabaseError

from skrbal._lazy import numpy as np  # imported when first used
from skrbal.online._records import (
    AgentRecord,
    EventRecord,
    LiveState,
    ObserveBlock,
    Replay,
)
from skrbal.online._sql import _schema as schema
from skrbal.online._sql._blocks import (
    commissioning_arrays,
    read_steps,
)
from skrbal.online._sql._live import (
    LiveReads,
    agent_record,
    block_of,
    damage_message,
    heads,
    n_states,
)
from skrbal.online._sql._live import last_observation as _last_observation
from skrbal.online._sql._live import observed_steps as _observed_steps
from skrbal.online._sql._live import requests_of as _requests_of
from skrbal.online._sql._summary import AgentSummary
from skrbal.online._storage import StoreError


def sql_rows(conn):
    """A SQLAlchemy connection as the ``rows`` an :class:`AgentSummary` runs."""
    return lambda sql, parameters: conn.execute(text(sql), parameters).all()


def process_of(row):
    """The decision process of an agent row."""
    from skrbal.online._config import process_from_json

    return process_from_json(row.process)


def process_classes(row) -> np.ndarray:
    return process_of(row).classes_


class StoreReader:
    """The readings of an :class:`~skrbal.online.AgentStore`, taking no lock.

    Parameters
    ----------
    database : Database
        The store's database.
    chain_key : bytes or None
        The secret of the event chain (None: plain SHA-256).
    anchor : AnchorFile or None
        The sidecar of the agents' heads, checked by :meth:`verify`.
    """

    def __init__(self, database, chain_key, anchor):
        self.database, self.chain_key, self.anchor = database, chain_key, anchor

    def agent_names(self) -> list[str]:
        """Names of the agents in the store, sorted."""
        with self.database.engine.connect() as conn:
            rows = conn.execute(select(schema.agents.c.name).order_by("name"))
            return [row.name for row in rows]

    def agent_row(self, conn, name):
        # A name no agent can have (see check_params) is not sent to the
        # database: PostgreSQL would refuse a NUL in text with its own error.
        usable = isinstance(name, str) and "\x00" not in name
        row = (
            conn.execute(
                select(schema.agents).where(schema.agents.c.name == name)
            ).first()
            if usable
            else None
        )
        if row is None:
            known = self.agent_names()
            raise StoreError(
                f"store {self.database.display_url} has no agent named {name!r}; "
                f"it holds {known}."
            )
        return row

    def status(self, name: str) -> dict:
        """See :meth:`~skrbal.online.AgentStore.status`."""
        with self.database.engine.connect() as conn:
            return AgentSummary(sql_rows(conn), self.database.display_url).status(name)

    @contextmanager
    def summary(self):
        """See :meth:`~skrbal.online.AgentStore.summary`."""
        with self.database.engine.connect() as conn:
            yield AgentSummary(sql_rows(conn), self.database.display_url)

    def _name_of(self, agent_id: int) -> str:
        """An agent's name for a message, if the store can still tell it."""
        try:
            with self.database.engine.connect() as conn:
                name = conn.execute(
                    select(schema.agents.c.name).where(
                        schema.agents.c.agent_id == agent_id
                    )
                ).scalar()
        except DatabaseError:
            name = None
        return name if name is not None else f"of id {agent_id}"

    @contextmanager
    def _reading_agent(self, name):
        """A connection whose database errors (a dropped table, a corrupt page)
        become a :class:`StoreError` naming the agent (``name``, or its id) and
        the driver's message."""
        try:
            with self.database.engine.connect() as conn:
                yield conn
        except DatabaseError as exc:
            if not isinstance(name, str):
                name = self._name_of(name)
            raise StoreError(self.damage_message(name, exc)) from None

    def damage_message(self, name, exc) -> str:
        """What a database error on an agent's store says, in one line."""
        return damage_message(self.database.display_url, name, exc)

    def _heads(self, name, expected_head=None) -> list:
        """The heads an agent's chain must meet: given, and of the anchor file."""
        return heads(self.anchor, name, expected_head)

    def _verified(self, conn, agent, expected_head=None):
        reads = LiveReads(conn, self.database.display_url)
        return reads.verified(
            agent, self.chain_key, self._heads(agent.name, expected_head)
        )

    def verify(self, name: str, expected_head=None) -> dict:
        """See :meth:`~skrbal.online.AgentStore.verify`."""
        with self._reading_agent(name) as conn:
            seq, digest = self._verified(
                conn, self.agent_row(conn, name), expected_head
            )
        return {"seq": seq, "hash": digest}

    def load_agent(self, name: str) -> AgentRecord:
        """See :meth:`~skrbal.online.AgentStore.load_agent`."""
        with self.database.engine.connect() as conn:
            return LiveReads(conn, self.database.display_url).load_agent(name)

    def load_replay(self, name: str, every_step: bool) -> Replay:
        """See :meth:`~skrbal.online.AgentStore.load_replay`."""
        obs, ev = schema.observations, schema.events
        with self._reading_agent(name) as conn:
            agent = self.agent_row(conn, name)
            self._verified(conn, agent)
            aid = agent.agent_id
            com = conn.execute(
                select(obs.c.step, obs.c.features, obs.c.label, obs.c.action)
                .where(obs.c.agent_id == aid)
                .order_by(obs.c.step)
            ).all()
            steps = _observed_steps(conn, agent, every_step)
            k = n_states(agent)
            seen = read_steps(conn, agent, steps, ("features", "action"), k)
            # Only the events that change the model: one per result or action.
            events = tuple(
                EventRecord(e.seq, e.kind, e.step, e.request_id, json.loads(e.payload))
                for e in conn.execute(
                    select(
                        ev.c.seq, ev.c.kind, ev.c.step, ev.c.request_id, ev.c.payload
                    )
                    .where((ev.c.agent_id == aid) & ev.c.kind.in_(("result", "action")))
                    .order_by(ev.c.seq)
                )
            )
            requests = _requests_of(conn, agent, k)
            last_time, last_evpi = _last_observation(conn, aid)
        c_step, c_features, c_action = commissioning_arrays(com, agent.n_features)
        return Replay(
            agent=agent_record(agent),
            steps=np.concatenate([c_step, steps]),
            n_commissioning=len(com),
            features=np.vstack([c_features, seen["features"]]),
            actions=np.concatenate([c_action, seen["action"]]),
            labels=[json.loads(r.label) for r in com],
            events=events,
            requests=requests,
            last_time=last_time,
            last_evpi=last_evpi,
        )

    def load_snapshot(self, name: str) -> EventRecord | None:
        """See :meth:`~skrbal.online.AgentStore.load_snapshot`."""
        with self._reading_agent(name) as conn:
            agent = self.agent_row(conn, name)
            self._verified(conn, agent)
            return LiveReads(conn, self.database.display_url).snapshot_of(agent)

    def load_live(self, name: str) -> LiveState:
        """See :meth:`~skrbal.online.AgentStore.load_live`."""
        with self._reading_agent(name) as conn:
            agent = self.agent_row(conn, name)
            self._verified(conn, agent)
            fields = LiveReads(conn, self.database.display_url).live(agent)
        return LiveState(agent=agent_record(agent), **fields)

    def _agent_by_id(self, conn, agent_id: int):
        row = conn.execute(
            select(schema.agents).where(schema.agents.c.agent_id == agent_id)
        ).first()
        if row is None:
            raise StoreError(
                f"store {self.database.display_url} has no agent {agent_id}."
            )
        return row

    def find_key(self, agent_id: int, key: str) -> EventRecord | None:
        """See :meth:`~skrbal.online.AgentStore.find_key`."""
        with self._reading_agent(agent_id) as conn:
            reads = LiveReads(conn, self.database.display_url)
            return reads.find_key(agent_id, key)

    def load_block(self, agent_id: int, first_step: int) -> ObserveBlock:
        """See :meth:`~skrbal.online.AgentStore.load_block`."""
        with self._reading_agent(agent_id) as conn:
            agent = self._agent_by_id(conn, agent_id)
            return block_of(conn, agent, first_step, n_states(agent))

    def load_steps(self, agent_id: int, steps, columns) -> dict:
        """See :meth:`~skrbal.online.AgentStore.load_steps`."""
        with self._reading_agent(agent_id) as conn:
            agent = self._agent_by_id(conn, agent_id)
            return read_steps(conn, agent, steps, columns, n_states(agent))
