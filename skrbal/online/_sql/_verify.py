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

from skrbal._lazy import numpy as np  # imported when first used
from skrbal.online._records import SkippedRow
from skrbal.online._sql._chain import (
    BLOCK_COLUMNS,
    KEYED,
    add_column,
    block_hasher,
    commissioning_digest,
    event_hash,
    genesis_hash,
)
from skrbal.online._sql._driver import (
    ACTIONS,
    AGENTS,
    BLOCKS,
    EVENT_COLUMNS,
    EVENTS,
    OBSERVATIONS,
    REQUESTS,
)
from skrbal.online._sql._rows import as_rows, in_list
from skrbal.online._storage import StoreError

_EVENTS = (
    f"SELECT {', '.join(EVENT_COLUMNS)} FROM {EVENTS} "
    "WHERE agent_id = :agent ORDER BY seq"
)
# Observe events whose blocks are read in one query: at most this many, or
# more steps than _CHUNK_STEPS only when the last block alone has them.
_CHUNK_EVENTS = 200
_CHUNK_STEPS = 65_536


def _damaged(agent, table: str, where: str, what: str) -> StoreError:
    return StoreError(
        f"agent {agent.name!r}: table {table}, {where}: {what}; the store "
        "is damaged or was edited."
    )


class _Walk:
    """What the chain of events says, gathered while walking it."""

    def __init__(self, agent):
        self.agent = agent
        self.kinds = dict.fromkeys(
            ("commission", "observe", "result", "cancel", "expire"), 0
        )
        self.results = {}  # request_id -> (seq, step, label, origin, payload)
        self.cancels = {}  # request_id -> (seq, step, reason)
        self.expiries = {}  # request_id -> seq
        self.actions = {}  # step -> the last action recorded as taken
        # request_id -> (step, evpi, seq, methods) of the block that made it
        # (methods: the observe event's, None before they were logged).
        self.requested = {}
        self.pending = []  # observe events whose blocks are not checked yet
        self.pending_steps = 0
        self.n_observed = 0
        self.budget_state = None
        self.commission = None


def verify_agent(conn, agent, *, secret=None, heads=()) -> tuple[int, str]:
    """Raise :class:`StoreError` at the first sign of damage in an agent.

    Parameters
    ----------
    conn : sqlalchemy.engine.Connection or SqliteRows
        An open connection (one read transaction), of either driver
        (:func:`~._rows.as_rows`).
    agent : Row
        The agent's row of ``skrbal_agents``.
    secret : bytes, default=None
        The store's chain key: the chain must be an HMAC under it. Without
        one, a keyed chain cannot be checked and is refused.
    heads : sequence of (int, str), default=()
        Heads kept outside the database (:mod:`skrbal.online._anchor`):
        the chain must have each event ``seq`` with that ``hash``.

    Returns
    -------
    head : (int, str)
        The sequence number and hash of the agent's last event.
    """
    conn, ev = as_rows(conn), EVENTS
    walk, previous, expected = _Walk(agent), genesis_hash(agent, secret), 1
    heads = dict(heads)
    rows = conn.stream(_EVENTS, {"agent": agent.agent_id}, 1_000)
    for e in rows:
        where = f"event {e.seq} ({e.kind})"
        if e.seq != expected:
            raise _damaged(
                agent, ev, f"event {expected}", f"missing (the next is {e.seq})"
            )
        if e.seq == 1:
            _check_keyed(agent, e, secret)
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
            secret=secret,
        )
        if e.hash != previous:
            what = "its hash does not follow from the chain"
            if e.seq == 1:
                what += (
                    f" (which starts from the configuration in {AGENTS}: "
                    "process, estimator, budget, settings, n_features, "
                    "feature_names)"
                )
            raise _damaged(agent, ev, where, what)
        if e.seq in heads and heads.pop(e.seq) != e.hash:
            raise _rolled_back(
                agent,
                f"event {e.seq} of the store has another hash than the anchor's: "
                "the store was rewritten or rolled back to before it and written "
                "again",
            )
        _note(walk, e, where)
        if len(walk.pending) >= _CHUNK_EVENTS or walk.pending_steps >= _CHUNK_STEPS:
            _check_blocks(conn, walk)
        expected += 1
    _check_blocks(conn, walk)
    _count_blocks(conn, walk)
    if expected - 1 != agent.last_seq:
        raise _damaged(
            agent,
            AGENTS,
            f"row of agent {agent.agent_id}",
            f"last_seq is {agent.last_seq} but the log ends at event {expected - 1}",
        )
    if heads:
        seq = max(heads)
        raise _rolled_back(
            agent,
            f"the anchor names event {seq} but the log ends at event {expected - 1}",
        )
    _check_commissioning(conn, walk)
    _check_agent_record(walk)
    _check_requests(conn, walk)
    _check_actions(conn, walk)
    _check_counters(conn, walk)
    return expected - 1, previous


def _rolled_back(agent, what) -> StoreError:
    return StoreError(
        f"agent {agent.name!r}: table {EVENTS}: {what}. The store "
        "was rolled back (restored from an older copy, or its newest events "
        "deleted) or rewritten; do not resume it before finding out why."
    )


def _check_keyed(agent, e, secret) -> None:
    """A keyed chain needs the key; a store with a key, a keyed chain."""
    try:
        keyed = json.loads(e.payload).get("chain") == KEYED
    except (ValueError, AttributeError):
        keyed = False  # the hash check names the damage
    if keyed and secret is None:
        raise StoreError(
            f"agent {agent.name!r}: its event chain is signed (an HMAC under a "
            "secret key), which this store was opened without: give the key "
            "(AgentStore(..., chain_key=...), or the SKRBAL_CHAIN_KEY_FILE or "
            "SKRBAL_CHAIN_KEY environment variable) to verify, resume or write it."
        )
    if secret is not None and not keyed:
        raise _damaged(
            agent,
            EVENTS,
            "event 1 (commission)",
            "the chain is not signed, but the store was opened with a chain "
            "key: the agent was created without the key, or rewritten by "
            "someone who does not have it",
        )


def _note(walk, e, where) -> None:
    try:
        payload = json.loads(e.payload)
    except ValueError:
        raise _damaged(walk.agent, EVENTS, where, "payload is not JSON") from None
    if not isinstance(payload, dict):
        raise _damaged(walk.agent, EVENTS, where, "payload is not an object")
    walk.kinds[e.kind] = walk.kinds.get(e.kind, 0) + 1
    if e.kind == "commission":
        walk.commission = (e.seq, payload)
    elif e.kind == "observe":
        try:
            SkippedRow.from_payload(payload.get("skipped", []))
        except ValueError as exc:
            raise _damaged(walk.agent, EVENTS, where, str(exc)) from None
        walk.pending.append((e.seq, e.step, payload))
        walk.pending_steps += payload.get("n", 0)
        walk.n_observed += payload.get("n", 0)
        walk.budget_state = payload.get("budget_state")
    elif e.kind == "skip":  # rows skipped after the last decided row (28.21)
        try:
            if not SkippedRow.from_payload(payload.get("skipped")):
                raise ValueError("a skip event lists no skipped row")
        except ValueError as exc:
            raise _damaged(walk.agent, EVENTS, where, str(exc)) from None
    elif e.kind == "result":
        walk.results[e.request_id] = (
            e.seq,
            e.step,
            payload.get("label"),
            payload.get("origin"),
            payload,
        )
    elif e.kind == "cancel":
        walk.cancels[e.request_id] = (e.seq, e.step, payload.get("reason"))
    elif e.kind == "action":
        walk.actions[e.step] = payload.get("action")
    elif e.kind == "expire":
        for request_id in payload.get("request_ids", ()):
            walk.expiries[request_id] = e.seq


def _check_blocks(conn, walk) -> None:
    """The blocks of the observe events walked since the last check.

    Each is present, of the logged size, and (events since version 4) of the
    logged bytes; read one query per chunk of events, a block at a time.
    """
    b, agent = BLOCKS, walk.agent
    logged = {step: (seq, payload) for seq, step, payload in walk.pending}
    walk.pending, walk.pending_steps = [], 0
    if not logged:
        return
    steps, params = in_list("s", logged)
    params["agent"] = agent.agent_id
    mine = f"FROM {b} WHERE agent_id = :agent AND first_step IN {steps}"
    hashers, sizes = {}, {}
    for row in conn.all(f"SELECT first_step, n_steps, seq {mine}", params):
        seq, payload = logged[row.first_step]
        where = f"block of step {row.first_step} (event {seq})"
        if row.n_steps != payload.get("n"):
            raise _damaged(agent, b, where, f"{row.n_steps} steps, logged otherwise")
        if row.seq != seq:
            raise _damaged(agent, b, where, f"seq is {row.seq}, not {seq}")
        hashers[row.first_step] = block_hasher(row.first_step, row.n_steps)
        sizes[row.first_step] = row.n_steps
    for step, (seq, _) in logged.items():
        if step not in hashers:
            raise _damaged(agent, b, f"block of step {step} (event {seq})", "missing")
    # One block in memory at a time; of the EVPI and request ids, what the
    # requests are checked against.
    kept = {"evpi": {}, "request_id": {}}
    # A block at a time, its columns in the hash's order. The raw values, so
    # that text where bytes belong is named by _block_bytes (SQLAlchemy
    # 2.0.0's LargeBinary raised TypeError on it).
    columns = ", ".join(BLOCK_COLUMNS)
    for first_step, *values in conn.stream(
        f"SELECT first_step, {columns} {mine}", params, 1
    ):
        for column, value in zip(BLOCK_COLUMNS, values):
            value = _block_bytes(walk, first_step, column, value)
            add_column(hashers[first_step], value)
            if column in kept:
                kept[column][first_step] = value
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
        for column, values in kept.items():
            _check_size(walk, step, column, values[step], sizes[step])
        ids = np.frombuffer(kept["request_id"][step], dtype="<i8")
        evpi = np.frombuffer(kept["evpi"][step], dtype="<f8")
        methods = payload.get("methods")
        for offset in np.flatnonzero(ids).tolist():
            walk.requested[int(ids[offset])] = (
                step + offset,
                float(evpi[offset]),
                seq,
                methods,
            )


def _block_bytes(walk, first_step, column, value):
    """A block's column as bytes, or damage."""
    if value is None and column == "timestamp":
        return None
    where = f"block of step {first_step}"
    if isinstance(value, memoryview):
        value = value.tobytes()
    if not isinstance(value, (bytes, bytearray)):
        raise _damaged(
            walk.agent,
            BLOCKS,
            where,
            f"column {column} holds {type(value).__name__}, not the bytes of an "
            "array; restore the block from a backup",
        )
    return value


def _check_size(walk, first_step, column, value, n) -> None:
    """A block's column of the size its ``n`` steps make (after the digest
    check, which names an edit first: this catches those of old blocks)."""
    width = walk.agent.n_features if column == "features" else 1
    if value is not None and len(value) != 8 * n * width:
        raise _damaged(
            walk.agent,
            BLOCKS,
            f"block of step {first_step}",
            f"column {column} holds {len(value)} bytes, not an array of its "
            f"{n} steps; restore the block from a backup",
        )


def _count_blocks(conn, walk) -> None:
    b, agent = BLOCKS, walk.agent
    n_blocks = conn.scalar(
        f"SELECT count(*) FROM {b} WHERE agent_id = :agent",
        {"agent": agent.agent_id},
    )
    if n_blocks != walk.kinds["observe"]:
        raise _damaged(
            agent,
            b,
            f"{n_blocks} blocks",
            f"the log has {walk.kinds['observe']} observe events",
        )


def _check_commissioning(conn, walk) -> None:
    obs, agent = OBSERVATIONS, walk.agent
    rows = conn.all(
        f"SELECT * FROM {obs} WHERE agent_id = :agent ORDER BY step",
        {"agent": agent.agent_id},
    )
    if walk.commission is None:
        raise _damaged(agent, EVENTS, "event 1", "no commission event")
    seq, payload = walk.commission
    digest = payload.get("rows_sha256")
    if len(rows) != payload.get("n") or (
        digest is not None and commissioning_digest(rows) != digest
    ):
        raise _damaged(
            agent, obs, "commissioning rows", f"they differ from event {seq}'s record"
        )
    for row in rows:
        # The belief (kept since 28.22, else None) is under the digest; a
        # store without a digest predates it.
        fixed = {
            "seq": 1,
            "kind": "commissioning",
            "taken_action": None,
            "request_id": None,
            **({"belief": None} if digest is None else {}),
        }
        for column, value in fixed.items():
            if getattr(row, column) != value:
                raise _damaged(
                    agent,
                    obs,
                    f"commissioning step {row.step}",
                    f"{column} is {getattr(row, column)!r}, not {value!r}",
                )
    # The budget's clock is fixed at commissioning: timestamps or steps.
    timed = {row.timestamp is not None for row in rows}
    clock = "timestamp" if timed == {True} else "step" if timed == {False} else None
    if agent.clock != clock:
        raise _damaged(
            agent,
            AGENTS,
            f"row of agent {agent.agent_id}",
            f"clock is {agent.clock!r} but the commissioning steps (event {seq}) "
            + ("mix timestamps and none" if clock is None else f"make it {clock!r}")
            + "; restore the clock column from a backup",
        )


_NOT_JSON = object()


def _json(text):
    """JSON text decoded; None stays None; anything else is ``_NOT_JSON``."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return _NOT_JSON


def _logged_request(walk, r) -> dict:
    """What the log says every column of request ``r`` holds."""
    rid = r.request_id
    result, cancel = walk.results.get(rid), walk.cancels.get(rid)
    expired = walk.expiries.get(rid)
    # A late result closes an expired request: it is done.
    status = (
        "done"
        if result
        else "cancelled"
        if cancel
        else "expired"
        if expired is not None
        else "open"
    )
    closed = result or cancel
    source = (
        f"result event {result[0]}"
        if result
        else f"cancel event {cancel[0]}"
        if cancel
        else f"expire event {expired}"
        if expired is not None
        else "the log"
    )
    expected = {
        "status": status,
        "closed_seq": closed[0] if closed else expired,
        "note": cancel[2] if cancel else None,
        "label": None,
        "action": None,
        "report": None,
        "posterior": None,
        "origin": None,
    }
    if result is not None:
        seq, step, label, origin, payload = result
        expected.update(step=step, label=label, origin=origin)
        if "action" in payload:
            expected["action"] = payload["action"]
        else:
            expected.pop("action")  # a result logged before actions were
        if "timestamp" in payload:
            expected["result_timestamp"] = payload["timestamp"]
        if "posterior" in payload:
            expected["report"] = payload.get("report")
            expected["posterior"] = payload["posterior"]
        if origin is not None:
            expected.update(opened_seq=seq, method=payload.get("method"))
    else:
        expected["result_timestamp"] = None
    made = walk.requested.get(rid)
    if made is not None and expected["origin"] is None:
        step, evpi, seq, methods = made
        expected.update(step=step, evpi=evpi, opened_seq=seq)
        if methods is not None:
            expected["method"] = methods.get(str(rid))
        made = f"observe event {seq}"
    else:
        made = source
    sources = dict.fromkeys(expected, source)
    sources.update(dict.fromkeys(("step", "evpi", "opened_seq", "method"), made))
    return expected, sources


def _check_requests(conn, walk) -> None:
    req, agent = REQUESTS, walk.agent
    rows = conn.all(
        f"SELECT * FROM {req} WHERE agent_id = :agent ORDER BY request_id",
        {"agent": agent.agent_id},
    )
    ids = [r.request_id for r in rows]
    if ids != list(range(1, agent.n_requests + 1)):
        missing = sorted(set(range(1, agent.n_requests + 1)) - set(ids))
        what = f"request {missing[0]} is missing" if missing else "unexpected rows"
        raise _damaged(agent, req, f"{len(ids)} of {agent.n_requests} requests", what)
    methods = _method_names(agent)
    for r in rows:
        where = f"request {r.request_id} (step {r.step})"
        if r.method not in methods:
            raise _damaged(
                agent,
                req,
                where,
                f"method {r.method!r} is not one of the agent's inspection "
                f"methods {sorted(m for m in methods if m is not None)}",
            )
        expected, sources = _logged_request(walk, r)
        if expected["origin"] is None and r.request_id not in walk.requested:
            raise _damaged(agent, req, where, "no observed step made it")
        if expected["origin"] is not None:
            expected["evpi"] = _evpi_at(conn, walk, r.step, where)
        for column, value in expected.items():
            stored = getattr(r, column)
            if column in ("label", "report", "posterior"):
                stored = _json(stored)
            if stored != value:
                what = (
                    f"status {stored!r}, the log says {value!r}"
                    if column == "status"
                    else f"column {column} ({stored!r}) differs from "
                    f"{sources.get(column, 'its block')} ({value!r})"
                )
                raise _damaged(agent, req, where, what)
    if len(walk.results) + len(walk.cancels) > len(rows):
        raise _damaged(agent, req, "requests", "the log has results of no request")


def _method_names(agent) -> set:
    """The method names a request of the agent may hold (None: perfect)."""
    try:
        config = json.loads(agent.settings).get("inspections")
        names = {m["name"] for m in config or ()}
    except (ValueError, AttributeError, TypeError, KeyError):
        raise _damaged(
            agent,
            AGENTS,
            f"row of agent {agent.agent_id}",
            "settings do not hold the inspection methods as stored",
        ) from None
    return names | {None}


def _evpi_at(conn, walk, step, where):
    """The EVPI of an observed step, from its block (routine labels)."""
    got = conn.all(
        f"SELECT first_step, evpi FROM {BLOCKS} WHERE agent_id = :agent "
        "AND first_step <= :step AND first_step + n_steps > :step",
        {"agent": walk.agent.agent_id, "step": step},
    )
    row = got[0] if got else None
    if row is None:
        raise _damaged(walk.agent, REQUESTS, where, "its step was not observed")
    return float(np.frombuffer(row.evpi, dtype="<f8")[step - row.first_step])


def _check_actions(conn, walk) -> None:
    act, agent = ACTIONS, walk.agent
    rows = conn.all(
        f"SELECT step, action FROM {act} WHERE agent_id = :agent ORDER BY step",
        {"agent": agent.agent_id},
    )
    stored = {row.step: row.action for row in rows}
    if stored != walk.actions:
        step = min(
            set(stored) ^ set(walk.actions)
            or {k for k in stored if stored[k] != walk.actions[k]}
        )
        raise _damaged(
            agent,
            act,
            f"step {step}",
            f"action {stored.get(step)!r}, the log says {walk.actions.get(step)!r}",
        )


def _check_agent_record(walk) -> None:
    """The agent's columns its commission event logged (since they are)."""
    agent = walk.agent
    logged = walk.commission[1].get("agent")
    if not isinstance(logged, dict):
        return
    for column, value in logged.items():
        if getattr(agent, column, value) != value:
            raise _damaged(
                agent,
                AGENTS,
                f"row of agent {agent.agent_id}",
                f"{column} is {getattr(agent, column)!r}, the commission event "
                f"says {value!r}",
            )


def _check_counters(conn, walk) -> None:
    agent, table = walk.agent, AGENTS
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
