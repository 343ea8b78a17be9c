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

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from skrbal._labels import label_positions
from skrbal.exceptions import (
    RequestError,
    RequestExpiredWarning,
    StalledRequestsWarning,
    caller_stacklevel,
)

__all__ = [
    "Request",
    "RequestBook",
    "expire_overdue",
    "read_answer",
    "read_result",
    "report_stall",
]


@dataclass
class Request:
    """One request, as the agent keeps it in memory."""

    step: int
    status: str  # open, done, cancelled or expired
    method: int  # index into the agent's inspection methods; -1 without
    belief: np.ndarray | None  # kept while a result may come
    time: float | None  # the budget's time at its step, while a result may come


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
            self._requests[request_id].status = "expired"
        if ids:
            self.stall_reported = False


def read_result(agent, request_id, step, label, report):
    """The result of a request, checked and read by the decision kernel.

    Returns a :class:`~skrbal._learning.Result`: its ``label`` is None
    for a report that leaves the state uncertain.
    """
    request = agent._requests[request_id]
    return read_answer(
        agent,
        request.method,
        request.belief,
        label,
        report,
        what=f"request {request_id}",
        call=f"record_inspection({request_id}",
        step=step,
    )


def read_answer(agent, k, belief, label, report, *, what, call, step):
    """An inspection's label or report, checked and read by the kernel.

    ``k``: the inspection method's index (-1: the process's perfect one);
    ``belief``: the belief at the step (a report's posterior needs it);
    ``what`` names the inspection and ``call`` starts the call to suggest
    (``record_inspection(3``) in messages.
    """
    method = None if k < 0 else agent.inspections[k]
    verb = call.split("(")[0]
    if (label is None) == (report is None):
        raise RequestError(
            f"{verb} needs either a label or a report for {what}, not "
            f"{'both' if label is not None else 'neither'}; nothing was recorded."
        )
    if label is not None:
        if method is not None and not agent._kernel.reveals[k]:
            outcomes = method.outcomes_.tolist()
            raise RequestError(
                f"{what} (step {step}) was made with inspection "
                f"method {method.name!r}, whose reports do not reveal the "
                f"state: pass its report, {call}, "
                f"report=...) with one of {outcomes}; nothing was recorded."
            )
        try:
            label = agent._check_labels([label], "label")[0]
        except ValueError as exc:
            raise RequestError(f"{exc}; nothing was recorded.") from None
        return agent._kernel.read_result(k, None, label=label)
    if method is None:
        raise RequestError(
            f"agent {agent.name!r} has no inspection methods: its inspections "
            f"reveal the state, so pass the label, {call}, label); nothing "
            "was recorded."
            if agent.inspections is None
            else f"{what} has no inspection method: a report needs one "
            "(method=...); nothing was recorded."
        )
    outcomes = method.outcomes_
    given = np.asarray([report])
    try:
        if given.ndim != 1 or (given.dtype.kind in "biuf") != (
            outcomes.dtype.kind in "biuf"
        ):
            raise ValueError("not an outcome")
        report = outcomes[label_positions(given, outcomes, owner="outcomes")[0]]
    except (TypeError, ValueError):
        raise RequestError(
            f"report {report!r} is not an outcome of inspection method "
            f"{method.name!r} ({what}): pass one of "
            f"{outcomes.tolist()}; nothing was recorded."
        ) from None
    return agent._kernel.read_result(k, belief, report=report)


def expire_overdue(agent, now: float) -> None:
    """Expire the open requests past ``request_timeout`` at time ``now``."""
    book = agent._requests
    overdue = book.overdue(now, agent.request_timeout)
    if not overdue:
        return
    steps = book.steps_of(overdue)
    agent.store_.record_expire(agent.agent_id_, agent._seq, overdue, steps)
    book.expire(overdue)
    agent._seq += 1
    unit = "s" if agent._clock == "timestamp" else " observations"
    warnings.warn(
        f"agent {agent.name!r}: request(s) {overdue} (step(s) {steps}) waited "
        f"{agent.request_timeout:g}{unit} or more without a result "
        f"(request_timeout): they expired and free their slots; a result "
        "that still comes is taken.",
        RequestExpiredWarning,
        stacklevel=caller_stacklevel(),
    )


def report_stall(agent, n_blocked: int) -> None:
    """Warn, once per stall, that the cap on open requests blocked some."""
    book = agent._requests
    if not n_blocked or book.stall_reported:
        return
    book.stall_reported = True
    oldest = book.open_ids()[:3]
    named = ", ".join(f"{i} (step {book[i].step})" for i in oldest)
    warnings.warn(
        f"agent {agent.name!r}: the budget wanted {n_blocked} inspection(s) but "
        f"all {agent.max_open_requests} allowed requests wait for results "
        f"(oldest: {named}); nothing is requested until a result, a "
        "cancellation or request_timeout frees a slot.",
        StalledRequestsWarning,
        stacklevel=caller_stacklevel(),
    )
