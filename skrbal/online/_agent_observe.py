"""The call that feeds a live agent its observations: ``observe``.

:class:`ObserveCalls` holds :meth:`~skrbal.online.RiskBasedAgent.observe`
and what it does around the decisions: a retried call answered from the
store, rows skipped for a missing value, overdue requests expired, a stall of
the cap on open requests reported, and the call's block committed through the
agent's store before the campaign takes the decisions. The agent inherits it,
as it inherits :class:`~skrbal.online._agent_start.StartCalls` and
:class:`~skrbal.online._agent_calls.RecordCalls`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from skrbal.exceptions import (
    RequestExpiredWarning,
    StalledRequestsWarning,
    caller_stacklevel,
)
from skrbal.online._decisions import (
    ObserveCall,
    as_given,
    check_features,
    decisions_arrays,
    decisions_frame,
    empty_decisions,
    observation_times,
    stored_call,
)
from skrbal.online._idempotency import (
    array_digest,
    check_key,
    client_key,
    value_digest,
)
from skrbal.online._records import ObserveBlock, RequestRecord, SkippedRow
from skrbal.online._timestamps import as_seconds, duration_text, time_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ObserveCalls"]

# An expiry warning names this many requests (the oldest) and counts the rest:
# one observe of a long record can expire hundreds at once.
_NAMED_EXPIRED = 5


class ObserveCalls:
    """The observing call of :class:`~skrbal.online.RiskBasedAgent` (a mixin).

    Examples
    --------
    >>> from skrbal.online import RiskBasedAgent
    >>> from skrbal.online._agent_observe import ObserveCalls
    >>> issubclass(RiskBasedAgent, ObserveCalls)
    True
    """

    def observe(
        self,
        X,
        timestamps=None,
        *,
        key: str | None = None,
        skipped=None,
        output="frame",
    ) -> pd.DataFrame | dict:
        """Decide for new observations, in order; request inspections.

        All rows are judged by the current model and the requests open when
        the call starts: a result recorded later only affects later calls,
        and (with ``pending_value='fantasy'``) a request made for one row of
        the call does not lower the value of the rows after it, as it would
        if they came in later calls.

        Parameters
        ----------
        X : array-like of shape (n_observations, n_features)
            The new observations, in temporal order.
        timestamps : array-like of shape (n_observations,), default=None
            Their times, seconds or datetimes, non-decreasing. Needed if and
            only if the commissioning samples had timestamps: without them
            the budget counts time in steps.
        key : str, default=None
            A client key making the call idempotent: a non-empty string (at
            most 200 characters, no NUL) unique among the agent's calls, say
            a batch's id. Retried with the same key and the same ``X`` and
            ``timestamps`` (after a crash or a lost answer, from this or
            another process), the call returns the decisions it returned the
            first time, rebuilt from the store, without deciding, writing or
            changing anything. A call with no rows stores nothing, and so
            does not use its key.
        skipped : iterable of SkippedRow or (row, columns[, time]), default=None
            Rows of the caller's input left out of ``X`` for a missing value
            (a sensor dropout): recorded with the call's block, in its event,
            undecided and without a step; ``status()["n_skipped"]`` counts
            them. A call with no rows but skipped ones (the input's last rows
            missed a value) records them in an event of their own (``skip``),
            taking no step and needing no ``timestamps``.
        output : {'frame', 'arrays'}, default='frame'
            ``'arrays'``: the same decisions as a dict of numpy arrays, for a
            caller that wants no DataFrame (it costs a 1,000-row call about
            as much as its beliefs): ``step``, ``timestamp`` (seconds as the
            agent counts them, NaN without times), ``belief`` of shape
            ``(n, n_states)`` in the order of ``classes_``, ``evpi``,
            ``inspect``, ``request_id`` (0 without a request), ``method``
            (with ``inspections``) and ``action``.

        Returns
        -------
        decisions : DataFrame or dict
            One row per observation: ``step``, ``timestamp``,
            ``belief_<label>`` per state, ``evpi``, ``inspect`` (an inspection
            is requested: act after its result), ``request_id`` (``<NA>``
            without a request), with ``inspections`` the ``method`` of the
            request (its name, ``None`` without one), and ``action``, the
            optimal action under the belief, followed by ``action_name`` when
            the process names its actions. ``timestamp`` is as the times were
            given: seconds, or pandas datetimes for datetimes and ISO text
            (UTC; aware if they carried an offset), NaN without times.

        Raises
        ------
        IdempotencyKeyError
            When ``key`` was used by another call of the agent, or by an
            ``observe`` of other rows or times; nothing is changed.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> agent = RiskBasedAgent(estimator=GaussianNB(),
        ...                        process=synthetic_decision_process()).fit(
        ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
        >>> first = agent.observe([[12.5], [-5.0]], key="feed-0001")
        >>> again = agent.observe([[12.5], [-5.0]], key="feed-0001")  # a retry
        >>> again.equals(first), agent.n_steps_
        (True, 6)
        >>> agent.observe([[19.5]], output="arrays")["belief"].shape
        (1, 4)
        >>> agent.close()
        """
        if output not in ("frame", "arrays"):
            raise ValueError(f"output: 'frame' or 'arrays', got {output!r}.")
        self._check_open()
        key = check_key(key)
        X = check_features(X, self.n_features_in_, self.feature_names_in_)
        skipped = SkippedRow.checked(skipped)
        if key is not None and (X.shape[0] or skipped):
            stamps = None
            if timestamps is not None:
                stamps = as_seconds(timestamps, "timestamps", X.shape[0])
            left_out = [r.as_json() for r in skipped]
            key = client_key(  # a retry must also leave out the same rows
                key,
                "observe",
                X=array_digest(X),
                timestamps=array_digest(stamps),
                **({"skipped": value_digest(left_out)} if left_out else {}),
            )
            done = self._keys.stored(key)
            if done is not None and done.kind == "skip":  # recorded before
                skipped, timestamps = (), self._no_times()
            elif done is not None:
                block = self.store_.load_block(self.agent_id_, done.step)
                return self._decisions(
                    stored_call(block, self.inspections), timestamps, output
                )
        else:
            key = None
        n, first = X.shape[0], self.n_steps_
        if n == 0 and skipped:  # after the input's last decided row: no block
            self.store_.record_skipped(self.agent_id_, self._seq, skipped, key)
            self._seq += 1
            timestamps = self._no_times()
        clock, times, stamps = observation_times(
            first, n, timestamps, clock_then=self._clock, last_time=self._last_time
        )
        if n == 0:  # nothing to decide; a model may refuse an empty X
            nothing = ObserveCall(
                first,
                X,
                times,
                None,
                clock,
                np.zeros((0, self.classes_.size)),
                empty_decisions(),
                np.zeros(0, dtype=np.int64),
            )
            return self._decisions(nothing, timestamps, output)
        self._recent.warn_if_repeated(self.name, X, first, clock)
        self._expire_overdue(float(times[0]))
        campaign = self._campaign
        proba = campaign.beliefs(X, step=first)
        call = after = None

        def commit(decided):
            nonlocal call, after
            request_ids = np.zeros(n, dtype=np.int64)
            request_ids[decided.requested] = campaign.next_request_ids(decided)
            call = ObserveCall(
                first, X, times, stamps, clock, proba, decided, request_ids
            )
            if self._snapshots and decided.requested.size:
                opened = zip(request_ids[decided.requested], X[decided.requested])
                after = campaign.snapshot_after(opened=opened)
            self._commit_observe(call, key, skipped, after)

        decided = campaign.decide(X, proba, times, commit=commit)
        campaign.steps.extend(X, decided.action, keep=decided.requested.tolist())
        self._recent.remember(X)
        campaign.open_requests(first, decided, proba, times)
        campaign.keep_snapshot(after)
        self._clock = clock
        self._last_time, self.last_evpi_ = float(times[-1]), float(decided.evpi[-1])
        self._seq += 1
        self._report_stall(decided.n_blocked)
        return self._decisions(call, timestamps, output)

    def _decisions(self, call, timestamps, output):
        """What ``observe`` returns for ``call``: a frame, or its arrays."""
        if output == "arrays":
            return decisions_arrays(call, self.inspections)
        frame = decisions_frame(
            call, self.classes_, self.inspections, self.process.action_names
        )
        return as_given(frame, timestamps)

    def _expire_overdue(self, now: float) -> None:
        """Expire the open requests past ``request_timeout`` at time ``now``."""
        campaign = self._campaign
        overdue = campaign.overdue(now)
        if not overdue:
            return
        steps = campaign.requests.steps_of(overdue)
        made = [time_text(campaign.requests[i].time, self._clock) for i in overdue]
        after = campaign.snapshot_after(closed=overdue) if self._snapshots else None
        self.store_.record_expire(
            self.agent_id_,
            self._seq,
            overdue,
            steps,
            snapshot=None if after is None else after.value,
        )
        campaign.expire(overdue)
        campaign.keep_snapshot(after)
        self._seq += 1
        dated = self._clock == "timestamp"
        asked = ", ".join(
            f"{i} (step {s}{f', at {t}' if dated else ''})"
            for i, s, t in list(zip(overdue, steps, made))[:_NAMED_EXPIRED]
        )
        if len(overdue) > _NAMED_EXPIRED:
            asked += (
                f" and {len(overdue) - _NAMED_EXPIRED} more (`status` lists "
                "every request)"
            )
        until = time_text(now, self._clock) if dated else f"step {now:g}"
        warnings.warn(
            f"agent {self.name!r}: request(s) {asked} waited "
            f"{duration_text(self.request_timeout, self._clock)} or more without "
            f"a result, to {until} (request_timeout): they "
            "expired and free their slots; a result that still comes is taken.",
            RequestExpiredWarning,
            stacklevel=caller_stacklevel(),
        )

    def _report_stall(self, n_blocked: int) -> None:
        """Warn that the cap on open requests blocked some: when the stall
        begins, then at a rising interval while it lasts (1, 3, 7, 15 blocked)."""
        campaign = self._campaign
        total = campaign.stall_report(n_blocked)
        if not total:
            return
        requests = campaign.requests
        oldest = requests.open_ids()[:3]
        named = ", ".join(f"{i} (step {requests[i].step})" for i in oldest)
        wanted = f"the budget wanted {n_blocked} inspection(s)"
        if total > n_blocked:
            wanted = (
                f"still stalled: the budget has wanted {total} inspection(s) "
                "since the stall began"
            )
        warnings.warn(
            f"agent {self.name!r}: {wanted} but all {self.max_open_requests} "
            f"allowed requests wait for results (oldest: {named}); nothing is "
            "requested until a result, a cancellation or request_timeout frees "
            "a slot (warned again each time the count more than doubles).",
            StalledRequestsWarning,
            stacklevel=caller_stacklevel(),
        )

    def _no_times(self):
        """The times of a call with no rows, on the agent's clock."""
        return None if self._clock == "step" else np.empty(0)

    @property
    def _snapshots(self) -> bool:
        """Whether the agent's events keep the model's snapshot after them."""
        return self._campaign.keeps_snapshots

    def _commit_observe(self, call: ObserveCall, key, skipped=(), after=None) -> None:
        decided = call.decided
        requests = tuple(
            RequestRecord(
                request_id=int(call.request_ids[i]),
                step=call.first + int(i),
                evpi=float(decided.evpi[i]),
                method=None if self.inspections is None else self.inspections[k].name,
            )
            for i, k in zip(decided.requested, decided.methods)
        )
        block = ObserveBlock(
            first_step=call.first,
            times=call.times,
            timestamps=call.stamps,
            features=call.X,
            belief=call.proba,
            evpi=decided.evpi,
            action=decided.action,
            request_ids=call.request_ids,
            requests=requests,
            budget_state=decided.budget_state,
            clock=call.clock,
            key=key,
            skipped=skipped,
            snapshot=None if after is None else after.value,
        )
        self.store_.append_observe(self.agent_id_, self._seq, block)
