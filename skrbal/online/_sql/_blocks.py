"""The steps of one ``observe`` call as one row: exact little-endian arrays.

A block stores each per-step quantity as the bytes of a little-endian numpy
array (``<f8`` numbers, ``<i8`` integers; ``np.ndarray.tobytes`` and
``np.frombuffer``, never pickle). The number of steps is a column; the width
of ``features`` and ``belief`` follows from their length, and is checked
against the agent's number of features and states. The readers at the end
read only the blocks (and columns) holding some steps, a chunk at a time,
as SQL text that either driver runs (:mod:`._rows`).
"""

from __future__ import annotations

import json

from skrbal._lazy import numpy as np  # imported when first used
from skrbal.online._sql._rows import as_rows, in_list
from skrbal.online._storage import StoreError

# The table (its columns are the per-step ones below, after agent_id,
# first_step, n_steps and seq).
BLOCKS = "skrbal_blocks"
# numpy's names of the stored types (little-endian); "=" + code[1:] is native.
_F8, _I8 = "<f8", "<i8"


def _pack(values, dtype) -> bytes:
    return np.ascontiguousarray(values, dtype=dtype).tobytes()


def _view(blob, dtype, n, width, column, first) -> np.ndarray:
    """The bytes of one column as an ``(n,)`` or ``(n, width)`` array (a view)."""
    values = np.frombuffer(blob, dtype=dtype)
    if values.size != n * (width or 1):
        raise ValueError(
            f"the block of steps {first}.. holds {values.size} values in "
            f"{column!r}, not {n} x {width or 1}: the store is damaged."
        )
    return values if width is None else values.reshape(n, width)


def _unpack(blob, dtype, n, width, column, first) -> np.ndarray:
    # Native byte order, and a writable copy independent of the row.
    return _view(blob, dtype, n, width, column, first).astype("=" + dtype[1:])


def make_block(
    agent_id, first, seq, stamps, times, X, proba, evpi, action, request_ids
) -> dict:
    """The row of ``skrbal_blocks`` for steps ``first, first + 1, ...``."""
    return {
        "agent_id": agent_id,
        "first_step": int(first),
        "n_steps": int(X.shape[0]),
        "seq": int(seq),
        "timestamp": None if stamps is None else _pack(stamps, _F8),
        "time": _pack(times, _F8),
        "features": _pack(X, _F8),
        "belief": _pack(proba, _F8),
        "evpi": _pack(evpi, _F8),
        "action": _pack(action, _I8),
        "request_id": _pack(request_ids, _I8),
    }


def unpack_blocks(rows, n_features: int, n_states: int) -> dict:
    """The steps of block rows (in step order), concatenated.

    Returns a dict of arrays: ``step``, ``timestamp`` (NaN where none was
    given), ``stamped`` (whether one was), ``time``, ``features`` of shape
    ``(n, n_features)``, ``belief`` of shape ``(n, n_states)``, ``evpi``,
    ``action`` and ``request_id`` (0 without a request).
    """
    parts = {key: [] for key in ("step", "stamped", *STEP_COLUMNS)}
    for r in rows:
        n, first = r.n_steps, r.first_step
        parts["step"].append(np.arange(first, first + n, dtype=np.int64))
        if r.timestamp is None:
            parts["timestamp"].append(np.full(n, np.nan))
            parts["stamped"].append(np.zeros(n, dtype=bool))
        else:
            parts["timestamp"].append(
                _unpack(r.timestamp, _F8, n, None, "timestamp", first)
            )
            parts["stamped"].append(np.ones(n, dtype=bool))
        for key, dtype, width in (
            ("time", _F8, None),
            ("features", _F8, n_features),
            ("belief", _F8, n_states),
            ("evpi", _F8, None),
            ("action", _I8, None),
            ("request_id", _I8, None),
        ):
            parts[key].append(_unpack(getattr(r, key), dtype, n, width, key, first))
    out = {}
    for key, values in parts.items():
        if values:
            out[key] = np.concatenate(values)
        elif key == "features":
            out[key] = np.empty((0, n_features))
        elif key == "belief":
            out[key] = np.empty((0, n_states))
        else:
            out[key] = np.empty(0, dtype=bool if key == "stamped" else None)
    out["step"] = out["step"].astype(np.int64)
    out["action"] = out["action"].astype(np.int64)
    out["request_id"] = out["request_id"].astype(np.int64)
    return out


# Which dtype and width (None: one value per step) each per-step column has;
# "features" and "belief" are as wide as the agent's features and states.
_COLUMNS = {
    "timestamp": (_F8, None),
    "time": (_F8, None),
    "features": (_F8, "features"),
    "belief": (_F8, "states"),
    "evpi": (_F8, None),
    "action": (_I8, None),
    "request_id": (_I8, None),
}
# The per-step columns of a block, in the table's order.
STEP_COLUMNS = tuple(_COLUMNS)


def rows_of_block(row, column: str, offsets, n_features: int, n_states: int):
    """Steps ``first_step + offsets`` of one column of a block row (a copy).

    Only the rows asked for are copied out of the block's bytes, so reading a
    few steps of a large block costs the block once, not a copy per step.
    """
    dtype, width = _COLUMNS[column]
    width = {"features": n_features, "states": n_states}.get(width)
    values = _view(
        getattr(row, column), dtype, row.n_steps, width, column, row.first_step
    )
    return values[np.asarray(offsets, dtype=np.intp)].astype("=" + dtype[1:])


def commissioning_arrays(rows, n_features: int):
    """Step, features and recommended action arrays of commissioning rows."""
    step = np.array([r.step for r in rows], dtype=np.int64)
    features = np.array([json.loads(r.features) for r in rows], dtype=np.float64)
    action = np.array([r.action for r in rows], dtype=np.int64)
    return step, features.reshape(len(rows), n_features), action


# Steps of small blocks read in one query; a larger block is read alone.
_CHUNK_STEPS = 65_536
_CHUNK_BLOCKS = 500


def int_columns(conn, sql: str, params: dict, n_columns: int) -> list:
    """The integer columns of a query (SQL text) as arrays, read in chunks."""
    parts = [[] for _ in range(n_columns)]
    chunk = []
    for row in as_rows(conn).stream(sql, params, 10_000):
        chunk.append(tuple(row))
        if len(chunk) == 10_000:
            _add_ints(parts, chunk)
            chunk = []
    _add_ints(parts, chunk)
    return [np.concatenate(p) if p else np.empty(0, np.int64) for p in parts]


def _add_ints(parts, chunk) -> None:
    for j, values in enumerate(zip(*chunk)):
        parts[j].append(np.asarray(values, dtype=np.int64))


def read_steps(conn, agent, steps, columns, n_states: int) -> dict:
    """Per-step columns of some observed steps, reading one block at a time.

    ``steps`` (ascending) must be observed steps (not commissioning ones);
    the result maps each of ``columns`` to the values of those steps, in
    that order. Only the asked columns of the blocks holding those steps are
    read, a block (or a chunk of small blocks) at a time, so the memory it
    takes is that of the result and one block, however many steps a block
    holds.
    """
    conn, b = as_rows(conn), BLOCKS
    steps = np.asarray(steps, dtype=np.int64)
    out = {column: [] for column in columns}
    for column in columns:
        if column not in _COLUMNS:
            raise ValueError(f"no per-step column {column!r} in a block")
    firsts, sizes = int_columns(
        conn,
        f"SELECT first_step, n_steps FROM {b} WHERE agent_id = :agent "
        "ORDER BY first_step",
        {"agent": agent.agent_id},
        2,
    )
    at = np.searchsorted(firsts, steps, side="right") - 1
    lost = (at < 0) | (steps >= firsts[at] + sizes[at]) if firsts.size else steps >= 0
    if lost.any():
        raise StoreError(
            f"agent {agent.name!r}: step {int(steps[lost][0])} is in no block of "
            f"table {b}; the store is damaged."
        )
    wanted = np.unique(at)
    start = 0
    while start < wanted.size:
        stop = start + 1
        total = sizes[wanted[start]]
        while (
            stop < wanted.size
            and stop - start < _CHUNK_BLOCKS
            and total + sizes[wanted[stop]] <= _CHUNK_STEPS
        ):
            total += sizes[wanted[stop]]
            stop += 1
        firsts_in, params = in_list("f", firsts[wanted[start:stop]].tolist())
        params["agent"] = agent.agent_id
        rows = conn.all(
            f"SELECT first_step, n_steps, {', '.join(columns)} FROM {b} "
            f"WHERE agent_id = :agent AND first_step IN {firsts_in} "
            "ORDER BY first_step",
            params,
        )
        for row in rows:
            k = np.searchsorted(firsts, row.first_step)
            lo, hi = np.searchsorted(at, [k, k + 1])
            offsets = steps[lo:hi] - row.first_step
            for column in columns:
                if getattr(row, column) is None:  # a block without timestamps
                    out[column].append(np.full(offsets.size, np.nan))
                    continue
                try:
                    values = rows_of_block(
                        row, column, offsets, agent.n_features, n_states
                    )
                except ValueError as exc:
                    raise StoreError(
                        f"agent {agent.name!r}, table {b}: {exc}"
                    ) from None
                out[column].append(values)
        start = stop
    empty = {"features": (0, agent.n_features), "belief": (0, n_states)}
    return {
        column: (
            np.concatenate(parts)
            if parts
            else np.empty(
                empty.get(column, 0),
                dtype=np.int64 if column in ("action", "request_id") else np.float64,
            )
        )
        for column, parts in out.items()
    }
