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

from skrbal._lazy import numpy as np  # imported when first used
from skrbal.online._records import (
    AgentRecord,
    ClientKey,
    EventRecord,
    ObserveBlock,
    RequestRecord,
)
from skrbal.online._sql._anchor import parse_head
from skrbal.online._sql._blocks import int_columns, read_steps, unpack_blocks
from skrbal.online._sql._driver import (
    AGENT_COLUMNS,
    AGENTS,
    BLOCKS,
    EVENT_COLUMNS,
    EVENTS,
    OBSERVATIONS,
    REQUESTS,
)
from skrbal.online._sql._rows import as_rows, in_list
from skrbal.online._sql._summary import cost_and_classes, last_of_block
from skrbal.online._sql._verify import verify_agent
from skrbal.online._storage import StoreError

__all__ = [
    "LiveReads",
    "agent_record",
    "block_of",
    "damage_message",
    "last_observation",
    "observed_steps",
    "requests_of",
]

_AGENT = f"SELECT {', '.join(AGENT_COLUMNS)} FROM {AGENTS} WHERE name = :name"
_AGENT_BY_ID = (
    f"SELECT {', '.join(AGENT_COLUMNS)} FROM {AGENTS} WHERE agent_id = :agent"
)
_NAMES = f"SELECT name FROM {AGENTS} ORDER BY name"
_EVENT_COLUMNS = EVENT_COLUMNS[1:]  # an agent's events: all but agent_id
_KEYED = (
    f"SELECT {', '.join(_EVENT_COLUMNS)} FROM {EVENTS} "
    "WHERE agent_id = :agent AND client_key = :key"
)
# The events after which the agent's model is another one.
MODEL_EVENTS = ("commission", "result")
# Newest first: the events that change the model, and those whose payload
# may hold a snapshot (json.dumps writes the key so; a key inside a string
# is escaped, and each payload is read).
_ACTED = f"SELECT seq FROM {EVENTS} WHERE agent_id = :agent AND kind = 'action' LIMIT 1"
_SNAPSHOTS = (
    f"SELECT {', '.join(_EVENT_COLUMNS)} FROM {EVENTS} WHERE agent_id = :agent "
    f"AND (kind IN ({', '.join(repr(k) for k in MODEL_EVENTS)}) "
    "OR payload LIKE :snapshot) ORDER BY seq DESC"
)


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
    conn : sqlalchemy.engine.Connection or SqliteRows
        The connection, of either driver (:func:`~._rows.as_rows`).
    display_url : str
        The store's URL, password hidden (for messages).

    Examples
    --------
    >>> import sqlite3
    >>> from skrbal.online._sql._live import LiveReads
    >>> conn = sqlite3.connect(":memory:")
    >>> _ = conn.execute("CREATE TABLE skrbal_agents (name TEXT)")
    >>> from skrbal.online._sql._rows import SqliteRows
    >>> reads = LiveReads(SqliteRows(conn), "memory")
    >>> reads.agent_names()
    []
    """

    def __init__(self, conn, display_url: str):
        self._conn, self.display_url = as_rows(conn), display_url
        self._rows = self._conn.all

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

    def snapshot_of(self, agent) -> EventRecord | None:
        """The latest event holding the snapshot of the model of ``agent``
        (its row), None when the model changed after the last snapshot or
        the agent has none. Verify the chain first (:meth:`verified`).

        None too for an agent whose owner recorded an action
        (``record_action``): a recorded repair may weigh in the beliefs of
        every later step (the class weights of the labels before it), which
        the model's snapshot does not hold, so such an agent is always
        decided by its model.
        """
        if self._rows(_ACTED, {"agent": agent.agent_id}):
            return None
        # Newest first: the events that change the model, and those whose
        # payload may hold a snapshot (json.dumps writes the key so; a key
        # inside a string is escaped, and each payload is read).
        params = {"agent": agent.agent_id, "snapshot": '%"snapshot": {%'}
        for values in self._rows(_SNAPSHOTS, params):
            row = SimpleNamespace(**dict(zip(_EVENT_COLUMNS, values)))
            payload = json.loads(row.payload)
            if isinstance(payload.get("snapshot"), dict):
                return EventRecord(row.seq, row.kind, row.step, row.request_id, payload)
            if row.kind in MODEL_EVENTS:  # the model changed without one
                return None
        return None

    def verified(self, agent, secret, heads) -> tuple[int, str]:
        """:func:`~._verify.verify_agent` of ``agent`` (its row) against
        ``heads``, the (seq, hash) its chain must meet (an expected head,
        the anchor file's); two of one event must agree."""
        by_seq = {}
        for seq, digest in heads:
            if by_seq.setdefault(seq, digest) != digest:
                raise StoreError(
                    f"agent {agent.name!r}: the expected head and the anchor "
                    f"file disagree on event {seq}'s hash; one of them is wrong."
                )
        return verify_agent(self._conn, agent, secret=secret, heads=set(heads))

    def live(self, agent) -> dict:
        """What a call decides from, besides the model, of ``agent`` (its
        row): ``n_commissioning``, ``requests`` (as :func:`requests_of`),
        ``last_time``, ``last_evpi`` and ``snapshot`` (:meth:`snapshot_of`).
        Verify the chain first (:meth:`verified`)."""
        aid = agent.agent_id
        n_commissioning = self._conn.scalar(
            f"SELECT count(*) FROM {OBSERVATIONS} WHERE agent_id = :agent",
            {"agent": aid},
        )
        last_time, last_evpi = last_observation(self._conn, aid)
        return {
            "n_commissioning": int(n_commissioning),
            "requests": requests_of(self._conn, agent, n_states(agent)),
            "last_time": last_time,
            "last_evpi": last_evpi,
            "snapshot": self.snapshot_of(agent),
        }

    def agent_by_id(self, agent_id: int) -> SimpleNamespace:
        """The row of the agent of key ``agent_id``."""
        got = self._rows(_AGENT_BY_ID, {"agent": agent_id})
        if not got:
            raise StoreError(f"store {self.display_url} has no agent {agent_id}.")
        return SimpleNamespace(**dict(zip(AGENT_COLUMNS, got[0])))


def heads(anchor, name, expected_head=None) -> list:
    """The heads an agent's chain must meet: given, and of the anchor file."""
    found = [] if expected_head is None else [parse_head(expected_head)]
    if anchor is not None:
        kept = anchor.expected(name)
        if kept is not None:
            found.append(kept)
    return found


def n_states(agent) -> int:
    """The number of states of an agent's process (its row), read from the
    stored JSON without building the process."""
    return len(cost_and_classes(agent)[1])


def observed_steps(conn, agent, every_step: bool) -> np.ndarray:
    """Every observed step, or those with a request not cancelled (sorted)."""
    params = {"agent": agent.agent_id}
    if not every_step:
        live = (
            f"SELECT step FROM {REQUESTS} WHERE agent_id = :agent "
            "AND status != 'cancelled'"
        )
        return np.sort(int_columns(conn, live, params, 1)[0])
    firsts, sizes = int_columns(
        conn,
        f"SELECT first_step, n_steps FROM {BLOCKS} WHERE agent_id = :agent "
        "ORDER BY first_step",
        params,
        2,
    )
    if not firsts.size:
        return np.empty(0, np.int64)
    return np.concatenate([np.arange(f, f + n) for f, n in zip(firsts, sizes)])


def last_observation(conn, agent_id: int):
    """The time of the last step and the EVPI of the last observation."""
    rows = as_rows(conn)
    last = last_of_block(rows.all, agent_id, ("time", "evpi"))
    if last is not None:
        return last
    time_ = rows.scalar(
        f"SELECT time FROM {OBSERVATIONS} WHERE agent_id = :agent "
        "ORDER BY step DESC LIMIT 1",
        {"agent": agent_id},
    )
    return time_, None


def requests_of(conn, agent, n_states: int) -> tuple:
    """Every request (by id), open ones with their belief, read by block."""
    rows = as_rows(conn)
    got = rows.all(
        f"SELECT request_id, step, evpi, status, method FROM {REQUESTS} "
        "WHERE agent_id = :agent ORDER BY step",
        {"agent": agent.agent_id},
    )
    opened = [r for r in got if r.status in ("open", "expired")]
    read = read_steps(
        rows, agent, [r.step for r in opened], ("belief", "time"), n_states
    )
    belief_of = {r.request_id: b for r, b in zip(opened, read["belief"])}
    time_of = {r.request_id: float(t) for r, t in zip(opened, read["time"])}
    return tuple(
        RequestRecord(
            request_id=r.request_id,
            step=r.step,
            evpi=r.evpi,
            method=r.method,
            status=r.status,
            belief=belief_of.get(r.request_id),
            time=time_of.get(r.request_id),
        )
        for r in sorted(got, key=lambda r: r.request_id)
    )


def block_of(conn, agent, first_step: int, n_states: int) -> ObserveBlock:
    """The steps of one stored ``observe`` call of ``agent`` (its row)."""
    rows, agent_id = as_rows(conn), agent.agent_id
    got = rows.all(
        f"SELECT * FROM {BLOCKS} WHERE agent_id = :agent AND first_step = :first",
        {"agent": agent_id, "first": first_step},
    )
    if not got:
        raise StoreError(
            f"agent {agent.name!r}: table {BLOCKS} has no block of step "
            f"{first_step}; the store is damaged."
        )
    row = got[0]
    event = rows.scalar(
        f"SELECT payload FROM {EVENTS} WHERE agent_id = :agent AND seq = :seq",
        {"agent": agent_id, "seq": row.seq},
    )
    try:
        steps = unpack_blocks([row], agent.n_features, n_states)
    except ValueError as exc:
        raise StoreError(f"agent {agent.name!r}, table {BLOCKS}: {exc}") from None
    ids = steps["request_id"]
    methods = {}
    if (ids > 0).any():
        ids_in, params = in_list("r", ids[ids > 0].tolist())
        params["agent"] = agent_id
        methods = dict(
            rows.all(
                f"SELECT request_id, method FROM {REQUESTS} "
                f"WHERE agent_id = :agent AND request_id IN {ids_in}",
                params,
            )
        )
    requests = tuple(
        RequestRecord(
            request_id=int(i),
            step=int(s),
            evpi=float(e),
            method=methods.get(int(i)),
        )
        for i, s, e in zip(ids, steps["step"], steps["evpi"])
        if i > 0
    )
    return ObserveBlock(
        first_step=int(row.first_step),
        times=steps["time"],
        timestamps=steps["timestamp"] if row.timestamp is not None else None,
        features=steps["features"],
        belief=steps["belief"],
        evpi=steps["evpi"],
        action=steps["action"],
        request_ids=ids,
        requests=requests,
        budget_state=json.loads(event)["budget_state"] if event else {},
        clock=agent.clock,
    )
