"""What a live call reads of its agent: SQL text that any connection runs.

A call of a running agent reads its agent's row (configuration, counters,
the last event's number), a client key's earlier call, and the latest
snapshot of its model. These reads are plain SQL (with ``:name``
parameters), run by :class:`LiveReads` through a ``rows`` function: the
store's SQLAlchemy connection on any backend
(:class:`~skrbal.online.AgentStore`), and the standard library's ``sqlite3``
on a SQLite file (:class:`~._sqlite_store.SqliteStore`), as
:mod:`._summary` does for a status. One set of queries, two drivers; this
module imports no SQLAlchemy.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from skrbal.online._records import AgentRecord, ClientKey, EventRecord
from skrbal.online._sql._chain import event_hash, genesis_hash
from skrbal.online._sql._driver import AGENT_COLUMNS, AGENTS, EVENTS
from skrbal.online._storage import StoreError

__all__ = ["LiveReads", "agent_record", "damage_message"]

_AGENT = f"SELECT {', '.join(AGENT_COLUMNS)} FROM {AGENTS} WHERE name = :name"
_AGENT_BY_ID = (
    f"SELECT {', '.join(AGENT_COLUMNS)} FROM {AGENTS} WHERE agent_id = :agent"
)
_NAMES = f"SELECT name FROM {AGENTS} ORDER BY name"
_EVENT_COLUMNS = (
    "seq",
    "kind",
    "step",
    "request_id",
    "payload",
    "created_at",
    "client_key",
    "key_digest",
    "hash",
)
_KEYED = (
    f"SELECT {', '.join(_EVENT_COLUMNS)} FROM {EVENTS} "
    "WHERE agent_id = :agent AND client_key = :key"
)
# The events after which the agent's model is another one.
MODEL_EVENTS = ("commission", "result")
# Newest first: the events that change the model, and those whose payload
# may hold a snapshot (json.dumps writes the key so; a key inside a string
# is escaped, and each payload is read).
_SNAPSHOTS = (
    f"SELECT {', '.join(_EVENT_COLUMNS)} FROM {EVENTS} WHERE agent_id = :agent "
    f"AND (kind IN ({', '.join(repr(k) for k in MODEL_EVENTS)}) "
    "OR payload LIKE :snapshot) ORDER BY seq DESC"
)
_HASH_OF = f"SELECT hash FROM {EVENTS} WHERE agent_id = :agent AND seq = :seq"


def _decoded(row, column):
    """A JSON column of an agent's row, or a StoreError naming it."""
    try:
        return json.loads(getattr(row, column))
    except (TypeError, ValueError, RecursionError):
        raise StoreError(
            f"agent {row.name!r}: table {AGENTS}, row of agent "
            f"{row.agent_id}: column {column} is not JSON; the store is damaged "
            "or was edited: restore it from a backup."
        ) from None


def agent_record(row) -> AgentRecord:
    """The record of a row of ``skrbal_agents`` (JSON columns decoded)."""
    settings, state = _decoded(row, "settings"), _decoded(row, "budget_state")
    names = _decoded(row, "feature_names") if row.feature_names else None
    if not isinstance(settings, dict) or not (names is None or isinstance(names, list)):
        raise StoreError(
            f"agent {row.name!r}: table {AGENTS}, row of agent "
            f"{row.agent_id}: settings or feature_names has the wrong shape; the "
            "store is damaged or was edited: restore it from a backup."
        )
    return AgentRecord(
        name=row.name,
        process=row.process,
        estimator=row.estimator,
        estimator_fingerprint=row.estimator_fingerprint,
        budget=row.budget,
        budget_fingerprint=row.budget_fingerprint,
        settings=settings,
        n_features=row.n_features,
        feature_names=None if names is None else tuple(names),
        clock=row.clock,
        n_steps=row.n_steps,
        n_requests=row.n_requests,
        last_seq=row.last_seq,
        budget_state=state,
        created_at=row.created_at,
        skrbal_version=row.skrbal_version,
        agent_id=row.agent_id,
    )


def damage_message(display_url: str, name, exc) -> str:
    """What a database error on an agent's store says, in one line."""
    said = " ".join(str(getattr(exc, "orig", exc)).split())[:300]
    what = (
        f"store {display_url}"
        if name is None
        else (f"agent {name!r} in store {display_url}")
    )
    return (
        f"{what} cannot be read: {said}; "
        "the store is damaged (a dropped table, a corrupt file): restore it "
        "from a backup, and run 'skrbal agent verify' on the copy."
    )


class LiveReads:
    """The reads of a live call, as SQL text run by ``rows``.

    Parameters
    ----------
    rows : callable
        ``rows(sql, parameters)`` returns the rows (tuples) of one SQL text
        with ``:name`` parameters.
    display_url : str
        The store's URL, password hidden (for messages).

    Examples
    --------
    >>> import sqlite3
    >>> from skrbal.online._sql._live import LiveReads
    >>> conn = sqlite3.connect(":memory:")
    >>> _ = conn.execute("CREATE TABLE skrbal_agents (name TEXT)")
    >>> reads = LiveReads(lambda sql, p: conn.execute(sql, p).fetchall(), "memory")
    >>> reads.agent_names()
    []
    """

    def __init__(self, rows, display_url: str):
        self._rows, self.display_url = rows, display_url

    def agent_names(self) -> list[str]:
        """Names of the agents in the store, sorted."""
        return [name for (name,) in self._rows(_NAMES, {})]

    def agent_row(self, name: str) -> SimpleNamespace:
        """The row of agent ``name``: every column of ``skrbal_agents``."""
        # A name no agent can have (see check_params) is not sent to the
        # database: PostgreSQL would refuse a NUL in text with its own error.
        usable = isinstance(name, str) and "\x00" not in name
        got = self._rows(_AGENT, {"name": name}) if usable else []
        if not got:
            raise StoreError(
                f"store {self.display_url} has no agent named {name!r}; "
                f"it holds {self.agent_names()}."
            )
        return SimpleNamespace(**dict(zip(AGENT_COLUMNS, got[0])))

    def load_agent(self, name: str) -> AgentRecord:
        """See :meth:`~skrbal.online.AgentStore.load_agent`."""
        return agent_record(self.agent_row(name))

    def find_key(self, agent_id: int, key: str) -> EventRecord | None:
        """See :meth:`~skrbal.online.AgentStore.find_key`."""
        got = self._rows(_KEYED, {"agent": agent_id, "key": key})
        if not got:
            return None
        row = SimpleNamespace(**dict(zip(_EVENT_COLUMNS, got[0])))
        try:
            payload, digest = json.loads(row.payload), json.loads(row.key_digest)
        except (TypeError, ValueError):
            raise StoreError(
                f"agent {agent_id}: table {EVENTS}, event {row.seq}: the payload or "
                "key digest is not JSON; the store is damaged."
            ) from None
        return EventRecord(
            row.seq,
            row.kind,
            row.step,
            row.request_id,
            payload,
            ClientKey(row.client_key, digest),
        )

    def load_snapshot(self, name: str, secret=None) -> EventRecord | None:
        """The latest event holding the snapshot of the agent's current model.

        The event's hash is checked against the event before it (under the
        chain's ``secret``), so an edited snapshot is refused; the rest of
        the chain is not walked (:meth:`~skrbal.online.AgentStore.verify`
        does that).

        Returns
        -------
        event : EventRecord or None
            ``None`` when the model changed after the last snapshot, or the
            agent has none.
        """
        agent = self.agent_row(name)
        params = {"agent": agent.agent_id, "snapshot": '%"snapshot": {%'}
        for values in self._rows(_SNAPSHOTS, params):
            row = SimpleNamespace(**dict(zip(_EVENT_COLUMNS, values)))
            try:
                payload = json.loads(row.payload)
            except (TypeError, ValueError, RecursionError):
                payload = None
            if isinstance(payload, dict) and isinstance(payload.get("snapshot"), dict):
                self._check_hash(agent, row, secret)
                return EventRecord(row.seq, row.kind, row.step, row.request_id, payload)
            if row.kind in MODEL_EVENTS:  # the model changed without one
                return None
        return None

    def _check_hash(self, agent, row, secret) -> None:
        """Refuse an event whose hash does not follow from its predecessor's."""
        if row.seq == 1:
            previous = genesis_hash(agent, secret)
        else:
            got = self._rows(_HASH_OF, {"agent": agent.agent_id, "seq": row.seq - 1})
            previous = got[0][0] if got else None
        expected = (
            None
            if previous is None
            else event_hash(
                previous,
                row.seq,
                row.kind,
                row.step,
                row.request_id,
                row.payload,
                row.created_at,
                row.client_key,
                row.key_digest,
                secret=secret,
            )
        )
        if expected is None or expected != row.hash:
            raise StoreError(
                f"agent {agent.name!r}: table {EVENTS}, event {row.seq}: its hash "
                "does not follow from the event before it; the store is damaged "
                "or was edited: run 'skrbal agent verify'."
            )
