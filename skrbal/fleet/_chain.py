"""The hash chain of a fleet budget's draws, signed and anchored as its store's.

A fleet budget's ledger (``skrbal_fleet_events``) is a hash chain from a
genesis hash of the budget's configuration, as an agent's log is, and it has
the agent chain's three modes (see :class:`~skrbal.online.AgentStore`):

- plain SHA-256: any edit, deletion, insertion or reordering of draws, and a
  budget row other than its draws'; not an edit by someone who recomputes
  every hash, and not a rollback (the newest draws deleted and the row set
  back: a truncated chain is whole);
- with the store's ``chain_key``: every hash is an HMAC-SHA256 under the key
  and the configuration says so (``"chain": "hmac-sha256"``), so edits with
  every hash recomputed by anyone without the key are caught too, and so is
  the removal of the mark; a keyed ledger is refused by a store opened
  without its key, an unkeyed one by a store opened with a key;
- with an anchor (``expected_head`` of :meth:`FleetLedger.verify`, or the
  store's ``anchor_file``, to which each draw appends
  ``{"fleet": name, "seq": n, "hash": h}`` after its commit): also a
  rollback to before the anchored draw, and any rewrite of the draws up to
  it; not one of the draws after it, nor one by someone who can rewrite the
  anchor too.
"""

from __future__ import annotations

import hashlib
import json

from skrbal.exceptions import StoreError

__all__ = ["FleetChain"]

# The configuration's mark of a ledger whose chain is keyed.
KEYED = "hmac-sha256"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hash(
    previous: str,
    seq: int,
    kind: str,
    agent,
    first_step,
    payload: str,
    at: float,
    digest=_sha256,
) -> str:
    """The hash of a draw (``digest``: SHA-256, or the store's HMAC)."""
    text_ = json.dumps(
        [previous, seq, kind, agent, first_step, payload, repr(at)],
        separators=(",", ":"),
    )
    return digest(text_.encode())


def _genesis(name: str, config: str, digest=_sha256) -> str:
    """The hash the chain of budget ``name`` starts from (its config's)."""
    return digest(json.dumps(["skrbal-fleet-budget", name, config]).encode())


def parse_fleet_head(head) -> tuple[int, str]:
    """``(n_draws, hash)`` of a head: a dict (as :meth:`FleetLedger.verify`
    returns, or with ``seq``), a pair, or ``'SEQ:HASH'``."""
    if isinstance(head, dict) and "n_draws" in head:
        head = (head.get("n_draws"), head.get("hash"))
    if isinstance(head, dict):
        head = (head.get("seq"), head.get("hash"))
    if isinstance(head, str):
        head = head.strip().split(":", 1) if ":" in head else (None, head)
    try:
        seq, digest = head
        seq = int(seq)
    except (TypeError, ValueError):
        seq, digest = -1, None
    if (
        seq < 1
        or not isinstance(digest, str)
        or len(digest) != 64
        or any(c not in "0123456789abcdef" for c in digest)
    ):
        raise ValueError(
            "expected_head must be the head verify returned ({'n_draws': n, "
            "'hash': h}), a (seq, hash) pair or 'SEQ:HASH' (a draw number from 1 "
            f"and 64 hexadecimal digits), got {head!r}."
        )
    return seq, digest


class FleetChain:
    """The chain mode and the anchors of fleet budget ``name`` of ``store``.

    Parameters
    ----------
    store : AgentStore
        The store: its chain key signs the ledger, its anchor file keeps
        the ledger's heads.
    name : str
        The budget's name.
    """

    def __init__(self, store, name: str):
        self.store, self.name = store, name

    @property
    def keyed(self) -> bool:
        """Whether a ledger created now is signed (the store has a key)."""
        return self.store.chain_keyed

    def mark(self, config: dict) -> dict:
        """``config`` with the chain's mark when the store signs."""
        return {**config, "chain": KEYED} if self.keyed else dict(config)

    def digest_for(self, config: dict, where: str):
        """The digest function of a ledger of ``config`` (its mark checked
        against the store's key)."""
        keyed = config.get("chain") == KEYED
        if keyed and not self.keyed:
            raise StoreError(
                f"{where}: its draws are signed (an HMAC under a secret key), "
                "which this store was opened without: give the key "
                "(AgentStore(..., chain_key=...), or the SKRBAL_CHAIN_KEY_FILE "
                "or SKRBAL_CHAIN_KEY environment variable) to verify or draw."
            )
        if self.keyed and not keyed:
            raise StoreError(
                f"{where}: its chain is not signed, but the store was opened "
                "with a chain key: the budget was created without the key (a "
                "ledger of an older version: create the fleet anew with the "
                "key), or rewritten by someone who does not have it."
            )
        return self.store.chain_digest if keyed else _sha256

    def record_head(self, seq: int, digest: str) -> None:
        """Append the ledger's head to the store's anchor file, if it has one
        (after the draw commits: an anchor behind is only less strict)."""
        if self.store.anchor is not None:
            self.store.anchor.record_head("fleet", self.name, seq, digest)

    def heads(self, expected_head=None) -> list[tuple[int, str, str]]:
        """The heads the chain must meet: given, and of the anchor file.

        Returns
        -------
        heads : list of (int, str, str)
            ``(n_draws, hash, where it was kept)``.
        """
        found = []
        if expected_head is not None:
            found.append((*parse_fleet_head(expected_head), "the expected head"))
        if self.store.anchor is not None:
            kept = self.store.anchor.expected(self.name, kind="fleet")
            if kept is not None:
                found.append((*kept, f"anchor file {self.store.anchor.path}"))
        return found

    def check_heads(self, heads, hash_at, n_draws: int, where: str) -> None:
        """Each head met: the ledger reaches its draw, with its hash.

        Parameters
        ----------
        heads : list
            From :meth:`heads`.
        hash_at : callable
            The stored hash of draw ``seq`` (``seq <= n_draws``).
        n_draws : int
            The ledger's last draw.
        where : str
            The budget, for messages.
        """
        for seq, digest, kept in heads:
            if seq > n_draws:
                what = f"{kept} names draw {seq} but the ledger ends at draw {n_draws}"
            elif hash_at(seq) != digest:
                what = f"draw {seq} has another hash than {kept}'s"
            else:
                continue
            raise StoreError(
                f"{where}: {what}. The ledger was rolled back (restored from an "
                "older copy, or its newest draws deleted) or rewritten; do not "
                "draw on it before finding out why."
            )
