"""Idempotent calls: a client key makes a retried call return the stored answer.

A caller killed after a call committed but before it got the answer cannot
tell whether the call happened. Like the idempotency keys of payment APIs,
an optional client key per call solves it: the call is stored with its key
and a digest of its inputs (:class:`~skrbal.online.ClientKey`); the same
call retried with the same key finds it and returns what it returned, from
the store, without deciding, learning or writing again. The same key with
other inputs raises :class:`~skrbal.exceptions.IdempotencyKeyError`.

The digests are SHA-256 of the inputs as the agent validated them (features
as float64, times as seconds, labels as the process's values), so a retry
that passes a list where the first call passed an array is the same call.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from skrbal._labels import states_of
from skrbal.exceptions import IdempotencyKeyError
from skrbal.online._records import ClientKey, EventRecord
from skrbal.online._sql._version import MAX_KEY_LENGTH

__all__ = ["CallKeys", "array_digest", "check_key", "client_key", "value_digest"]

# The event kind each keyed call writes.
_KINDS = {
    "observe": "observe",
    "record_inspection": "result",
    "record_label": "result",
    "cancel_request": "cancel",
    "record_action": "action",
}


def check_key(key) -> str | None:
    """A client key as given, checked: a non-empty str, bounded, without NUL."""
    if key is None:
        return None
    if not isinstance(key, str):
        raise IdempotencyKeyError(
            f"key must be None or a string, got {type(key).__name__} {key!r}; "
            "nothing was done."
        )
    if not key or len(key) > MAX_KEY_LENGTH or "\x00" in key:
        raise IdempotencyKeyError(
            f"key must be a non-empty string of at most {MAX_KEY_LENGTH} "
            f"characters without NUL, got {key[:40]!r}"
            + ("..." if len(key) > 40 else "")
            + f" ({len(key)} characters); nothing was done."
        )
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise IdempotencyKeyError(
            f"key must be text a database can store (UTF-8), got {key[:40]!r}: "
            f"character {exc.start} is a lone surrogate; nothing was done."
        ) from None
    return key


def array_digest(values) -> str:
    """SHA-256 of an array's shape and little-endian float64 bytes (None: '-')."""
    if values is None:
        return "-"
    array = np.ascontiguousarray(values, dtype="<f8")
    hasher = hashlib.sha256(repr(array.shape).encode())
    hasher.update(array.tobytes())
    return hasher.hexdigest()


def value_digest(value) -> str:
    """SHA-256 of a JSON value (numpy scalars as Python values)."""
    if hasattr(value, "item"):
        value = value.item()
    text = json.dumps(value, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def label_digest(classes, label) -> str:
    """SHA-256 of a label as the agent's process knows it.

    So that ``1`` and ``np.int64(1)`` are one input; a label the process
    refuses is digested as given (the call then refuses it with its own
    message).
    """
    if label is not None:
        try:
            label = states_of([label], classes, name="label")[0]
        except ValueError:
            pass
    return value_digest(label)


def client_key(key: str | None, call: str, **inputs) -> ClientKey | None:
    """The :class:`ClientKey` of a call: its key and the digest of each input.

    ``inputs`` are digests already (of :func:`array_digest` or
    :func:`value_digest`); ``call`` (the method's name) is kept as is.
    """
    if key is None:
        return None
    return ClientKey(key, {"call": call, **inputs})


class CallKeys:
    """The client keys of one agent's calls, as its storage keeps them.

    Parameters
    ----------
    storage : AgentStorage
        The agent's store.
    agent_id : int
        The agent's key in it.
    name : str
        The agent's name (for messages).
    """

    def __init__(self, storage, agent_id: int, name: str):
        self.storage, self.agent_id, self.name = storage, agent_id, name

    def stored(self, key: ClientKey | None) -> EventRecord | None:
        """The stored event of the same call made with ``key`` before, if any.

        Raises
        ------
        IdempotencyKeyError
            When the key was used by another call, or by this call with other
            inputs: naming the agent, the key, the event and what differs.
        """
        if key is None:
            return None
        event = self.storage.find_key(self.agent_id, key.key)
        if event is None:
            return None
        given, stored = dict(key.digest), dict(event.key.digest)
        call = given.pop("call")
        before = stored.pop("call", _KINDS.get(event.kind, event.kind))
        where = (
            f"agent {self.name!r}: client key {key.key!r} was used by {before} "
            f"(event {event.seq}"
            + ("" if event.step is None else f", step {event.step}")
            + ")"
        )
        if before != call:
            raise IdempotencyKeyError(
                f"{where}, not by {call}; nothing was done. Use a new key for a "
                "new call."
            )
        differ = sorted(
            n for n in given.keys() | stored.keys() if given.get(n) != stored.get(n)
        )
        if differ:
            raise IdempotencyKeyError(
                f"{where} with another {', '.join(differ)}; nothing was done. A "
                "retry must repeat the call exactly; use a new key for a new call."
            )
        return event
