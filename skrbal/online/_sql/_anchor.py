"""Anchors outside the database: what a chain inside it cannot see.

An agent's event chain (:mod:`skrbal.online._chain`) shows any edit of its
events and rows, but not its own truncation: deleting the newest events with
their rows and setting the counters back leaves a shorter chain that is
whole. Only something kept elsewhere can tell, the *head* of the chain as it
was: the sequence number and hash of the agent's last event.

- ``expected_head`` (:meth:`AgentStore.verify`,
  :meth:`RiskBasedAgent.from_store`, ``skrbal agent verify --expected-head``):
  a head the deployment kept (from an earlier ``verify`` or ``status``).
- :class:`AnchorFile`: a sidecar file the store appends each agent's new
  head to after every commit, and checks on every ``verify`` and resume.

A head ``(seq, hash)`` is met when the chain has an event ``seq`` whose hash
is ``hash``: the store was not rolled back to before ``seq``, and nothing up
to ``seq`` was rewritten (the hash at ``seq`` commits to every event and row
before it, even with every hash recomputed).
"""

from __future__ import annotations

import json
import os
import re

from skrbal.online._storage import StoreError

__all__ = ["AnchorFile", "parse_head"]

_HEAD = re.compile(r"^(?P<seq>[0-9]+):(?P<hash>[0-9a-f]{64})$")


def parse_head(head) -> tuple[int, str]:
    """``(seq, hash)`` of a head given as a dict, a pair or ``'SEQ:HASH'``."""
    if isinstance(head, str):
        match = _HEAD.match(head.strip())
        if match is None:
            raise ValueError(
                f"expected_head must be 'SEQ:HASH' (an event number, a colon and "
                f"64 hexadecimal digits, as verify and status show), got {head!r}."
            )
        return int(match["seq"]), match["hash"]
    if isinstance(head, dict):
        head = (head.get("seq"), head.get("hash"))
    try:
        seq, digest = head
    except (TypeError, ValueError):
        raise ValueError(
            "expected_head must be a dict with 'seq' and 'hash', a (seq, hash) "
            f"pair or 'SEQ:HASH', got {head!r}."
        ) from None
    return parse_head(f"{seq}:{digest}")


class AnchorFile:
    """A sidecar file of agents' heads, appended after every commit.

    One JSON line per call (``{"agent": name, "seq": seq, "hash": hash}``;
    a fleet budget's draws, ``{"fleet": name, ...}``) appended with
    ``O_APPEND``, so writers of different agents never
    overwrite each other's lines; the anchor of an agent is its line of
    the largest ``seq``. Written after the commit: a crash in between leaves
    the anchor one call behind (less strict, never a false alarm). It is
    only as good as its place: keep it where the writers of the database
    cannot rewrite it (another volume, another account, a log shipped away).

    Parameters
    ----------
    path : str or os.PathLike
        The file; created when first written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import AgentStore, RiskBasedAgent
    >>> heads = pathlib.Path(tempfile.mkdtemp()) / "heads.jsonl"
    >>> store = AgentStore(":memory:", anchor_file=heads)
    >>> RiskBasedAgent(estimator=GaussianNB(), store=store,
    ...                process=synthetic_decision_process()).fit(
    ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4]).close()
    >>> store.anchor.expected("agent")[0]
    1
    >>> store.verify("agent")["seq"]
    1
    >>> store.close()
    """

    def __init__(self, path):
        self.path = os.fspath(path)

    def record(self, store, agent_id: int) -> None:
        """Append the head of an agent, as committed."""
        # An AgentStore, or the database its writer holds: either driver's.
        database = getattr(store, "database", store)
        head = database.head(agent_id)
        if head is None:
            return
        self.record_head("agent", *head)

    def record_head(self, kind: str, name: str, seq: int, digest: str) -> None:
        """Append the head ``(seq, digest)`` of chain ``name`` of ``kind``
        (``"agent"``, or ``"fleet"`` for a fleet budget's ledger)."""
        line = json.dumps({kind: name, "seq": int(seq), "hash": digest})
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)

    def expected(self, name: str, *, kind: str = "agent"):
        """The head of chain ``name`` of ``kind`` (``"agent"`` or ``"fleet"``)
        the file holds, None if it has none."""
        try:
            with open(self.path, encoding="utf-8") as file:
                lines = list(file)
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(
                f"anchor file {self.path}: cannot be read ({exc}); without it "
                "a rollback of the store cannot be ruled out."
            ) from None
        best = None
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
                if ("agent" in entry) == ("fleet" in entry):
                    raise KeyError("agent")  # one kind of chain per line
                if entry.get(kind) != name:
                    continue
                head = parse_head((entry["seq"], entry["hash"]))
            except (ValueError, KeyError, TypeError):
                if number == len(lines) and not line.endswith("\n"):
                    continue  # a line cut short by a crash: the one before holds
                raise StoreError(
                    f"anchor file {self.path}, line {number}: not a head "
                    '({"agent": ..., "seq": ..., "hash": ...}); the file is '
                    "damaged or was edited."
                ) from None
            if best is None or head[0] > best[0]:
                best = head
        return best
