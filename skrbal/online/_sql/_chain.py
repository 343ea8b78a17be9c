"""Tamper evidence: each event's hash chains to the previous one.

An agent's log (``skrbal_events``) is a hash chain: event ``seq`` stores
``sha256(previous hash, seq, kind, step, request_id, payload, created_at)``
(and, for a call made with a client key, the key and its inputs' digest),
and the chain starts from a hash of the agent's configuration (process,
estimator, budget, settings, features). An ``observe`` event's payload holds
the SHA-256 of its block's bytes, so the steps are chained too. Deleting,
editing or reordering an event, or editing a block, breaks the chain where
it happened.

Without a key the chain is evidence, not a signature: someone who can write
the store and knows this scheme can recompute every hash. It catches
damage, mistaken edits and naive tampering. With a secret key (an agent
created by a store given ``chain_key``), every hash is an HMAC-SHA256 under
the key, from the genesis on, and the commission event says so
(``"chain": "hmac-sha256"``): a writer without the key cannot make a chain
that verifies. Neither kind sees its own truncation to an earlier, genuine
state (a rollback); that takes an anchor kept outside the database (see
:mod:`skrbal.online._anchor`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os

from skrbal.online._sql._blocks import STEP_COLUMNS as BLOCK_COLUMNS

# The commission payload's mark of an agent whose chain is keyed.
KEYED = "hmac-sha256"


def _sha256(value, secret: bytes | None = None) -> str:
    text = json.dumps(value, separators=(",", ":"), allow_nan=False).encode()
    if secret is not None:
        return hmac.new(secret, text, hashlib.sha256).hexdigest()
    return hashlib.sha256(text).hexdigest()


def _getter(row):
    return row.get if isinstance(row, dict) else lambda name: getattr(row, name)


def genesis_hash(agent, secret: bytes | None = None) -> str:
    """The hash an agent's chain starts from (a row of ``skrbal_agents``).

    Under a ``secret`` key, an HMAC-SHA256 (as every hash of the chain).
    """
    get = _getter(agent)
    return _sha256(
        [
            "skrbal-agent",
            *(
                get(name)
                for name in (
                    "process",
                    "estimator",
                    "budget",
                    "settings",
                    "n_features",
                    "feature_names",
                )
            ),
        ],
        secret,
    )


def event_hash(
    previous: str,
    seq,
    kind,
    step,
    request_id,
    payload: str,
    at,
    key=None,
    digest=None,
    secret: bytes | None = None,
) -> str:
    """The hash of an event (``payload`` as stored JSON text).

    A keyed call's client ``key`` and its inputs' ``digest`` (JSON text) are
    hashed too; an event without a key (every event before schema version 5)
    hashes as it always did. Under a ``secret`` key, an HMAC-SHA256.
    """
    fields = [previous, seq, kind, step, request_id, payload, at]
    if key is not None or digest is not None:
        fields += [key, digest]
    return _sha256(fields, secret)


def block_hasher(first_step, n_steps):
    """A SHA-256 to feed a block's columns to, in ``BLOCK_COLUMNS`` order."""
    return hashlib.sha256(f"{first_step}:{n_steps};".encode())


def add_column(hasher, value) -> None:
    """Feed one column (bytes, or None for an absent one) to a block's hash."""
    if value is None:
        hasher.update(b"-")
        return
    # A length prefix keeps (b"ab", b"c") and (b"a", b"bc") apart.
    hasher.update(len(value).to_bytes(8, "little"))
    hasher.update(value)


def block_digest(block: dict) -> str:
    """SHA-256 of the bytes of a new block (the dict of ``make_block``)."""
    hasher = block_hasher(block["first_step"], block["n_steps"])
    for column in BLOCK_COLUMNS:
        add_column(hasher, block[column])
    return hasher.hexdigest()


# The columns of a commissioning row (skrbal_observations), as hashed.
_COMMISSIONING_COLUMNS = ("step", "timestamp", "time", "features", "evpi", "action")


def commissioning_digest(rows) -> str:
    """SHA-256 of an agent's commissioning rows (dicts or rows, by step)."""
    return _sha256([_commissioning_row(_getter(row)) for row in rows])


def _commissioning_row(get) -> list:
    """A commissioning row as hashed; its belief only when it has one (stores
    made before commissioning beliefs were kept hash as they did)."""
    values = [get(c) for c in _COMMISSIONING_COLUMNS] + [get("label")]
    return values if get("belief") is None else [*values, get("belief")]


# Where a deployment gives the chain key and the anchor file without code.
KEY_FILE_ENV = "SKRBAL_CHAIN_KEY_FILE"
KEY_ENV = "SKRBAL_CHAIN_KEY"
ANCHOR_ENV = "SKRBAL_ANCHOR_FILE"


def chain_secret(chain_key) -> bytes | None:
    """The chain's secret key: given (bytes, or a file), else from the
    environment (a file named by SKRBAL_CHAIN_KEY_FILE, or SKRBAL_CHAIN_KEY)."""
    if chain_key is None:
        if os.environ.get(KEY_FILE_ENV):
            chain_key = os.environ[KEY_FILE_ENV]
        elif os.environ.get(KEY_ENV):
            return os.environ[KEY_ENV].encode()
        else:
            return None
    if isinstance(chain_key, (bytes, bytearray)):
        key = bytes(chain_key)
    else:
        try:
            with open(chain_key, "rb") as file:
                key = file.read().strip()
        except (OSError, TypeError) as exc:
            raise ValueError(
                "chain_key: bytes (the key) or the path of a file holding it; "
                f"the file cannot be read ({type(exc).__name__})."
            ) from None
    if len(key) < 16:
        raise ValueError(
            f"chain_key: a key of at least 16 bytes, got {len(key)} (make one "
            "with `python -c 'import secrets; print(secrets.token_hex(32))'`)."
        )
    return key
