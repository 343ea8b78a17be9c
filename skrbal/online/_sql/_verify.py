"""Checking an agent's records before they are trusted: chain, counts, state.

:func:`verify_agent` walks an agent's event chain (:mod:`skrbal.online._sql._chain`)
and checks the other tables against it: the commissioning rows and each block
against the digests their events hold, the requests against the results and
cancellations logged, and the counters and budget state of the agent's row
against the log. Blocks are read a few at a time, so the memory it takes is
that of one block; its time is linear in the agent's steps. Any mismatch is a
:class:`StoreError` naming the agent, the table and the event or row.
"""

from __future__ import annotations

import json
import math

from sqlalchemy import func, select

from skrbal.online._sql import _schema as schema
from skrbal.online._sql._chain import (
    BLOCK_COLUMNS,
    add_column,
    block_hasher,
    commissioning_digest,
    event_hash,
    genesis_hash,
)
from skrbal.online._storage import StoreError

# Observe events whose blocks are read in one query: at most this many, or
# more steps than _CHUNK_STEPS only when the last block alone has them.
_CHUNK_EVENTS = 200
_CHUNK_STEPS = 65_536


def _damaged(agent, table, where: str, what: str) -> StoreError:
    return StoreError(
        f"agent {agent.name!r}: table {table.name}, {where}: {what}; the store "
        "is damaged or was edited."
    )


class _Walk:
    """What the chain of events says, gathered while walking it."""

    def __init__(self, agent):
        self.agent = agent
        self.kinds = dict.fromkeys(
            ("commission", "observe", "result", "cancel", "expire"), 0
        )
        self.results = {}  # request_id -> (seq, step, label, origin)
        self.cancels = {}  # request_id -> (seq, step)
        self.expiries = {}  # request_id -> seq
        self.pending = []  # observe events whose blocks are not checked yet
        self.pending_steps = 0
        self.n_observed = 0
        self.budget_state = None
        self.commission = None


def verify_agent(conn, agent) -> None:
    """Raise :class:`StoreError` at the first sign of damage in an agent.

    Parameters
    ----------
    conn : sqlalchemy.engine.Connection
        An open connection (one read transaction).
    agent : Row
        The agent's row of ``skrbal_agents``.
    """
    ev = schema.events
    walk, previous, expected = _Walk(agent), genesis_hash(agent), 1
    rows = conn.execution_options(yield_per=1_000).execute(
        select(ev).where(ev.c.agent_id == agent.agent_id).order_by(ev.c.seq)
    )
    for e in rows:
        where = f"event {e.seq} ({e.kind})"
        if e.seq != expected:
            raise _damaged(
                agent, ev, f"event {expected}", f"missing (the next is {e.seq})"
            )
        previous = event_hash(
            previous,
            e.seq,
            e.kind,
            e.step,
            e.request_id,
            e.payload,
            e.created_at,
            e.client_key,
            e.key_digest,
        )
        if e.hash is not None and e.hash != previous:
            raise _damaged(agent, ev, where, "its hash does not follow from the chain")
        _note(walk, e, where)
        if len(walk.pending) >= _CHUNK_EVENTS or walk.pending_steps >= _CHUNK_STEPS:
            _check_blocks(conn, walk)
        expected += 1
    _check_blocks(conn, walk)
    _count_blocks(conn, walk)
    if expected - 1 != agent.last_seq:
        raise _damaged(
            agent,
            schema.agents,
            f"row of agent {agent.agent_id}",
            f"last_seq is {agent.last_seq} but the log ends at event {expected - 1}",
        )
    _check_commissioning(conn, walk)
    _check_requests(conn, walk)
    _check_counters(conn, walk)


def _note(walk, e, where) -> None:
    try:
        payload = json.loads(e.payload)
    except ValueError:
        raise _damaged(
            walk.agent, schema.events, where, "payload is not JSON"
        ) from None
    walk.kinds[e.kind] = walk.kinds.get(e.kind, 0) + 1
    if e.kind == "commission":
        walk.commission = (e.seq, payload)
    elif e.kind == "observe":
        walk.pending.append((e.seq, e.step, payload))
        walk.pending_steps += payload.get("n", 0)
        walk.n_observed += payload.get("n", 0)
        walk.budget_state = payload.get("budget_state")
    elif e.kind == "result":
        walk.results[e.request_id] = (
            e.seq,
            e.step,
            payload.get("label"),
            payload.get("origin"),
        )
    elif e.kind == "cancel":
        walk.cancels[e.request_id] = (e.seq, e.step)
    elif e.kind == "expire":
        for request_id in payload.get("request_ids", ()):
            walk.expiries[request_id] = e.seq


def _check_blocks(conn, walk) -> None:
    """The blocks of the observe events walked since the last check.

    Each is present, of the logged size, and (events since version 4) of the
    logged bytes; read one query per chunk of events, a block at a time.
    """
    b, agent = schema.blocks, walk.agent
    logged = {step: (seq, payload) for seq, step, payload in walk.pending}
    walk.pending, walk.pending_steps = [], 0
    if not logged:
        return
    mine = (b.c.agent_id == agent.agent_id) & b.c.first_step.in_(list(logged))
    hashers = {}
    for row in conn.execute(select(b.c.first_step, b.c.n_steps).where(mine)):
        seq, payload = logged[row.first_step]
        if row.n_steps != payload.get("n"):
            raise _damaged(
                agent,
                b,
                f"block of step {row.first_step} (event {seq})",
                f"{row.n_steps} steps, logged otherwise",
            )
        hashers[row.first_step] = block_hasher(row.first_step, row.n_steps)
    for step, (seq, _) in logged.items():
        if step not in hashers:
            raise _damaged(agent, b, f"block of step {step} (event {seq})", "missing")
    # Column by column, one block's column in memory at a time.
    for column in BLOCK_COLUMNS:
        rows = conn.execution_options(yield_per=1).execute(
            select(b.c.first_step, b.c[column]).where(mine)
        )
        for first_step, value in rows:
            add_column(hashers[first_step], value)
    for step, hasher in hashers.items():
        seq, payload = logged[step]
        digest = payload.get("block_sha256")
        if digest is not None and hasher.hexdigest() != digest:
            raise _damaged(
                agent,
                b,
                f"block of step {step} (event {seq})",
                "its bytes differ from the logged",
            )


def _count_blocks(conn, walk) -> None:
    b, agent = schema.blocks, walk.agent
    n_blocks = conn.execute(
        select(func.count()).select_from(b).where(b.c.agent_id == agent.agent_id)
    ).scalar()
    if n_blocks != walk.kinds["observe"]:
        raise _damaged(
            agent,
            b,
            f"{n_blocks} blocks",
            f"the log has {walk.kinds['observe']} observe events",
        )


def _check_commissioning(conn, walk) -> None:
    obs, agent = schema.observations, walk.agent
    rows = conn.execute(
        select(obs).where(obs.c.agent_id == agent.agent_id).order_by(obs.c.step)
    ).all()
    if walk.commission is None:
        raise _damaged(agent, schema.events, "event 1", "no commission event")
    seq, payload = walk.commission
    digest = payload.get("rows_sha256")
    if len(rows) != payload.get("n") or (
        digest is not None and commissioning_digest(rows) != digest
    ):
        raise _damaged(
            agent, obs, "commissioning rows", f"they differ from event {seq}'s record"
        )


def _check_requests(conn, walk) -> None:
    req, agent = schema.requests, walk.agent
    rows = conn.execute(
        select(req.c.request_id, req.c.step, req.c.status, req.c.label, req.c.origin)
        .where(req.c.agent_id == agent.agent_id)
        .order_by(req.c.request_id)
    ).all()
    ids = [r.request_id for r in rows]
    if ids != list(range(1, agent.n_requests + 1)):
        missing = sorted(set(range(1, agent.n_requests + 1)) - set(ids))
        what = f"request {missing[0]} is missing" if missing else "unexpected rows"
        raise _damaged(agent, req, f"{len(ids)} of {agent.n_requests} requests", what)
    for r in rows:
        where = f"request {r.request_id} (step {r.step})"
        result, cancel = walk.results.get(r.request_id), walk.cancels.get(r.request_id)
        # A late result closes an expired request: it is done.
        logged = (
            "done"
            if result
            else "cancelled"
            if cancel
            else "expired"
            if r.request_id in walk.expiries
            else "open"
        )
        if r.status != logged:
            raise _damaged(
                agent, req, where, f"status {r.status!r}, the log says {logged!r}"
            )
        if result is not None:
            label = None if r.label is None else json.loads(r.label)
            if result[1] != r.step or label != result[2] or r.origin != result[3]:
                raise _damaged(
                    agent, req, where, f"it differs from result event {result[0]}"
                )
    if len(walk.results) + len(walk.cancels) > len(rows):
        raise _damaged(agent, req, "requests", "the log has results of no request")


def _check_counters(conn, walk) -> None:
    agent, table = walk.agent, schema.agents
    where = f"row of agent {agent.agent_id}"
    n_commissioning = walk.commission[1].get("n", 0)
    if agent.n_steps != n_commissioning + walk.n_observed:
        raise _damaged(
            agent, table, where, f"n_steps {agent.n_steps} disagrees with the log"
        )
    try:
        state = json.loads(agent.budget_state)
    except ValueError:
        raise _damaged(agent, table, where, "budget_state is not JSON") from None
    if walk.budget_state is not None and state != walk.budget_state:
        raise _damaged(
            agent, table, where, "budget_state differs from the last observe event's"
        )
    bad = _bad_number(state)
    if bad is not None:
        raise _damaged(agent, table, where, f"budget_state has {bad}")


def _bad_number(state, key="state"):
    """A non-finite number, or a negative count or spend, in a budget state."""
    if isinstance(state, dict):
        for k, v in state.items():
            bad = _bad_number(v, k)
            if bad is not None:
                return bad
    elif isinstance(state, list):
        for v in state:
            bad = _bad_number(v, key)
            if bad is not None:
                return bad
    elif isinstance(state, (int, float)) and not isinstance(state, bool):
        if not math.isfinite(state):
            return f"{key}={state!r}"
        if key in ("spent", "seen", "count", "n") and state < 0:
            return f"a negative {key} ({state!r})"
    return None
