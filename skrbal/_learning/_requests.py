"""The requests of one campaign: open, answered, cancelled, expired (numpy only).

A :class:`RequestBook` numbers the requests of a campaign (1, 2, ... in the
order they were made), keeps the open ones oldest first, checks that a result
or a cancellation may be taken, and finds the requests past their timeout. It
imports nothing of scikit-learn, so that the command line's decision step can
hold one (issue 28.25); :class:`~skrbal._learning.Campaign` holds one too.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from skrbal.exceptions import RequestError

__all__ = ["Request", "RequestBook"]


@dataclass
class Request:
    """One inspection request, as a campaign keeps it."""

    step: int
    status: str  # open, done, cancelled or expired
    # The decision kernel's method index (0 without inspection methods);
    # None for a routine label taken without one of the methods.
    method: int | None
    belief: np.ndarray | None  # kept while a result may come
    time: float | None  # the budget's time at its step, while a result may come


class RequestBook:
    """A campaign's requests, by id (1, 2, ... in the order they were made).

    Parameters
    ----------
    n_requests : int, default=0
        Requests made so far (the ids in use).
    """

    def __init__(self, n_requests: int = 0):
        self.n_requests = n_requests
        self._requests: dict[int, Request] = {}
        # The open ones, oldest first (a dict keeps their order): a walk asks
        # for them at every block, and most requests are closed.
        self._open: dict[int, None] = {}
        # Inspections the budget wanted but the cap blocked in the current
        # stall, and their count at its last report (both 0 when a slot frees).
        self.stall_blocked = self.stall_reported = 0

    def load(self, request_id: int, request: Request) -> None:
        """Add a request read back from a store."""
        self._requests[int(request_id)] = request
        if request.status == "open":
            self._open[int(request_id)] = None

    def open(self, steps, methods, beliefs, times) -> np.ndarray:
        """Open one request per step; return their ids."""
        ids = np.arange(1, len(steps) + 1, dtype=np.int64) + self.n_requests
        for request_id, step, k, belief, time in zip(
            ids, steps, methods, beliefs, times
        ):
            self._requests[int(request_id)] = Request(
                int(step), "open", int(k), np.array(belief), float(time)
            )
            self._open[int(request_id)] = None
        self.n_requests += len(steps)
        return ids

    def add_done(self, step: int, method: int | None) -> int:
        """A request made and answered at once (a routine label); its id."""
        self.n_requests += 1
        self._requests[self.n_requests] = Request(step, "done", method, None, None)
        return self.n_requests

    def open_ids(self) -> list[int]:
        """Ids of the open requests, oldest first."""
        return list(self._open)

    @property
    def n_open(self) -> int:
        """Requests awaiting a result."""
        return len(self._open)

    def oldest_open(self, limit: int) -> list[int]:
        """Ids of the ``limit`` oldest open requests, oldest first."""
        return list(itertools.islice(self._open, limit))

    def steps_of(self, ids) -> list[int]:
        """The steps of the requests ``ids``."""
        return [self._requests[i].step for i in ids]

    def of_step(self, step: int) -> tuple[int, Request] | None:
        """The request made for ``step`` (id and request), if any."""
        for request_id, request in self._requests.items():
            if request.step == step:
                return request_id, request
        return None

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
            self.stall_blocked = self.stall_reported = 0
            del self._open[request_id]
        request.status, request.belief, request.time = status, None, None

    def overdue(self, now: float, timeout) -> list[int]:
        """Open requests whose age at ``now`` reaches ``timeout`` (None: none)."""
        if timeout is None:
            return []
        requests = self._requests
        return [i for i in self._open if now - requests[i].time >= timeout]

    def next_expiry(self, timeout) -> float | None:
        """The earliest time at which an open request expires (None: never)."""
        if timeout is None:
            return None
        times = [self._requests[i].time for i in self._open]
        return min(times) + timeout if times else None

    def expire(self, ids) -> None:
        """Mark requests expired: their slots free, a late result is taken."""
        for request_id in ids:
            self._requests[request_id].status = "expired"
            del self._open[request_id]
        if ids:
            self.stall_blocked = self.stall_reported = 0
