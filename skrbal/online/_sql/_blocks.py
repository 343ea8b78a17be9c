"""The steps of one ``observe`` call as one row: exact little-endian arrays.

A block stores each per-step quantity as the bytes of a little-endian numpy
array (``<f8`` numbers, ``<i8`` integers; ``np.ndarray.tobytes`` and
``np.frombuffer``, never pickle). The number of steps is a column; the width
of ``features`` and ``belief`` follows from their length, and is checked
against the agent's number of features and states.
"""

from __future__ import annotations

import numpy as np

_F8 = np.dtype("<f8")
_I8 = np.dtype("<i8")


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
    return _view(blob, dtype, n, width, column, first).astype(dtype.newbyteorder("="))


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
    return values[np.asarray(offsets, dtype=np.intp)].astype(dtype.newbyteorder("="))
