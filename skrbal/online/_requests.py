"""The inspection requests of a live agent: open, done, cancelled, expired.

A :class:`RequestBook` keeps, per request, its step, status, inspection
method, the belief at its step (a report's posterior is computed from it)
and the time the budget saw at its step (its age decides when it expires).
It answers which requests are open (they hold the slots of
``max_open_requests`` and their pending results are fantasised), which are
past the agent's ``request_timeout``, and whether the agent is stalled: the
budget wanted to inspect, but every allowed request was waiting.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from skrbal.exceptions import RequestError

__all__ = ["Request", "RequestBook"]


@dataclass
class Request:
    """One request, as the agent keeps it in memory."""

    step: int
    status: str  # open, done, cancelled or expired
    method: int  # index into the agent's inspection methods; -1 without
    belief: np.ndarray | None  # kept while a result may come
    time: float | None  # the budget's time at its step, kept while open


class RequestBook:
    """The agent's requests, by id (1, 2, ... in the order they were made).

    Parameters
    ----------
    n_requests : int, default=0
        Requests made so far (the ids in use).
    """

    def __init__(self, n_requests: int = 0):
        self.n_requests = n_requests
        self._requests: dict[int, Request] = {}
        # Whether the current stall was reported (reset when a slot frees).
        self.stall_reported = False

    def __len__(self) -> int:
        return len(self._requests)

    def load(self, request_id: int, request: Request) -> None:
        """Add a request read back from the store."""
        self._requests[int(request_id)] = request

    def open(self, steps, methods, beliefs, times) -> np.ndarray:
        """Open one request per step; return their ids."""
        ids = np.arange(1, len(steps) + 1, dtype=np.int64) + self.n_requests
        for request_id, step, k, belief, time in zip(
            ids, steps, methods, beliefs, times
        ):
            self._requests[int(request_id)] = Request(
                int(step), "open", int(k), np.array(belief), float(time)
            )
        self.n_requests += len(steps)
        return ids

    def open_ids(self) -> list[int]:
        """Ids of the open requests, oldest first."""
        return [i for i, r in self._requests.items() if r.status == "open"]

    def steps_of(self, ids) -> list[int]:
        return [self._requests[i].step for i in ids]

    def __getitem__(self, request_id: int) -> Request:
        return self._requests[request_id]

    def check(self, request_id, verb: str, agent: str) -> tuple[int, int, bool]:
        """The request that may take a result (or a cancellation).

        Returns ``(request_id, step, late)``: ``late`` for an expired request,
        whose result is still taken (late results are data).

        Raises
        ------
        RequestError
            For an unknown request, a cancelled one or one with a result; an
            expired one cannot be cancelled.
        """
        if (
            not isinstance(request_id, Integral)
            or isinstance(request_id, bool)
            or int(request_id) not in self._requests
        ):
            raise RequestError(
                f"request_id {request_id!r} is not a request of agent {agent!r}: "
                f"its requests are numbered 1 to {self.n_requests}; nothing was "
                f"{verb}."
            )
        request_id = int(request_id)
        request = self._requests[request_id]
        late = request.status == "expired" and verb == "recorded"
        if request.status != "open" and not late:
            why = {
                "cancelled": "was cancelled",
                "done": "already has a result",
                "expired": "expired (its slot is free; a late result is still taken)",
            }[request.status]
            raise RequestError(
                f"request {request_id} (step {request.step}) {why}; nothing was {verb}."
            )
        return request_id, request.step, late

    def close(self, request_id: int, status: str) -> None:
        """Mark a request done or cancelled; a slot frees, a stall ends."""
        request = self._requests[request_id]
        if request.status == "open":
            self.stall_reported = False
        request.status, request.belief, request.time = status, None, None

    def overdue(self, now: float, timeout) -> list[int]:
        """Open requests whose age at ``now`` reaches ``timeout`` (None: none)."""
        if timeout is None:
            return []
        return [
            i
            for i, r in self._requests.items()
            if r.status == "open" and now - r.time >= timeout
        ]

    def expire(self, ids) -> None:
        """Mark requests expired: their slots free, a late result is taken."""
        for request_id in ids:
            request = self._requests[request_id]
            request.status, request.time = "expired", None
        if ids:
            self.stall_reported = False
