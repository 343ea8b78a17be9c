"""The running state of a campaign's decisions, numpy only.

A :class:`DecisionState` holds what the decisions of a campaign change: the
requests (a :class:`~skrbal._learning._requests.RequestBook`), the budget
policy's running state and the count of steps the cap on open requests
blocked. It decides a block with the :class:`DecisionKernel` given the beliefs
(and, when the pending results count, their fantasies), opens the block's
requests, reports a stall at a rising interval and expires the requests past
their timeout. It imports nothing of scikit-learn: the
:class:`~skrbal._learning.Campaign` (which adds the model, its learning and
the fantasies) holds one, and so can a driver that decides from a snapshot
of the model (issue 28.25), with the same code.
"""

from __future__ import annotations

import numpy as np

from skrbal._learning._kernel import BlockDecisions, DecisionKernel
from skrbal._learning._requests import RequestBook

__all__ = ["DecisionState"]


class DecisionState:
    """Requests, budget state and blocked count of one campaign's decisions.

    Parameters
    ----------
    kernel : DecisionKernel
        The decision step (its budget policy's state is kept here).
    request_timeout : float or None, default=None
        Age (in the budget's time) at which an open request expires.

    Attributes
    ----------
    requests : RequestBook
    budget_state : dict or None
        The budget policy's running state (``None`` before :meth:`start`).
    n_blocked : int
        Steps the policy wanted to inspect while every allowed request was
        open.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._decision._tables import ProcessTables
    >>> from skrbal._learning._decision_state import DecisionState
    >>> from skrbal._learning._kernel import DecisionKernel
    >>> from skrbal.budget._rules import CostThresholdRule
    >>> process = ProcessTables(
    ...     transition=[[[0.9, 0.1], [0.0, 1.0]], [[1.0, 0.0], [1.0, 0.0]]],
    ...     state_utility=[10.0, -100.0], action_utility=[0.0, -20.0],
    ...     inspection_cost=2.0)
    >>> state = DecisionState(DecisionKernel(process, None, CostThresholdRule()))
    >>> state.start()
    >>> proba, times = np.array([[0.99, 0.01], [0.5, 0.5]]), np.arange(2.0)
    >>> decided = state.decide(proba, times)
    >>> decided.requested, state.open_requests(10, decided, proba, times)
    (array([1]), array([1]))
    >>> state.requests.open_ids()
    [1]
    """

    def __init__(self, kernel: DecisionKernel, request_timeout=None):
        self.kernel = kernel
        self.request_timeout = request_timeout
        self.requests = RequestBook()
        self.budget_state = None
        self.n_blocked = 0

    def start(self) -> None:
        """Start the budget's state afresh."""
        self.budget_state = self.kernel.budget.initial_state()

    def decide(
        self,
        proba,
        times,
        *,
        fantasies=None,
        available=None,
        first_only: bool = False,
        plan=None,
        commit=None,
    ) -> BlockDecisions:
        """Decide a block of steps; keep the budget's state and the blocked count.

        ``proba`` are the block's beliefs (columns in the process's states),
        ``fantasies`` their values after the pending results
        (:meth:`DecisionKernel.decide`). ``commit``, when given, is called
        with the decisions before anything changes; if it raises, nothing
        does. The requests are opened by :meth:`open_requests`.
        """
        decided = self.kernel.decide(
            proba,
            times,
            self.budget_state,
            available=available,
            n_open=self.requests.n_open,
            first_only=first_only,
            plan=plan,
            fantasies=fantasies,
        )
        if commit is not None:
            commit(decided)
        self.budget_state = decided.budget_state
        self.n_blocked += decided.n_blocked
        return decided

    def open_requests(self, first: int, decided: BlockDecisions, proba, times):
        """Open the requests of a block decided from step ``first``; their ids."""
        requested = decided.requested
        if not requested.size:  # the usual block: nothing to index or keep
            return np.zeros(0, dtype=np.int64)
        return self.requests.open(
            first + requested, decided.methods, proba[requested], times[requested]
        )

    def next_request_ids(self, decided: BlockDecisions) -> np.ndarray:
        """The ids :meth:`open_requests` will give the block's requests."""
        n = decided.requested.size
        return np.arange(1, n + 1, dtype=np.int64) + self.requests.n_requests

    def fantasised(self, limit: int, closed=(), opened=()) -> tuple[list, list]:
        """The fantasised requests now, and after a call closing and opening some.

        The ``limit`` oldest open requests (oldest first), before and after a
        call that closes the requests ``closed`` and opens ``opened`` (new
        ids, after every open one). When the two differ, so do the fantasies.
        """
        closed = {int(i) for i in closed}
        book = self.requests
        after = [i for i in book.oldest_open(limit + len(closed)) if i not in closed]
        after = (after + [int(i) for i in opened])[:limit]
        return book.oldest_open(limit), after

    def stall_report(self, n_blocked: int) -> int:
        """Blocked inspections so far in this stall, when a report is due; else 0.

        A stall is reported when it begins, then each time its count of
        blocked inspections has passed twice the count at the last report
        (1, 3, 7, 15, ...): at a rising interval while it lasts, so that a
        long one is not reported once and then forgotten.
        """
        book = self.requests
        if not n_blocked:
            return 0
        book.stall_blocked += n_blocked
        if book.stall_blocked <= 2 * book.stall_reported:
            return 0
        book.stall_reported = book.stall_blocked
        return book.stall_blocked

    def overdue(self, now: float) -> list[int]:
        """Open requests past ``request_timeout`` at ``now`` (:meth:`expire` them)."""
        return self.requests.overdue(now, self.request_timeout)

    def next_expiry(self) -> float | None:
        """When the oldest open request expires (None: no timeout, none open)."""
        return self.requests.next_expiry(self.request_timeout)

    def expire(self, ids) -> None:
        """Expire the requests ``ids``: their slots free; a late result is taken."""
        self.requests.expire(ids)
