"""The calls that tell a live agent what happened: results, labels, actions.

:class:`RecordCalls` holds the methods of
:class:`~skrbal.online.RiskBasedAgent` that record what the user learnt or
did after the agent decided: the result of a requested inspection, a label
the agent did not request (a routine inspection), a cancelled request and
an action taken. The agent inherits them; they check what the caller gives,
learn through the agent's :class:`~skrbal._learning.Campaign` (the same
update rule as the stream learner's, replayed the same way on resume) and
commit through the agent's store before the campaign takes the change.
"""

from __future__ import annotations

import datetime
import warnings
from numbers import Integral

import numpy as np

from skrbal._labels import label_positions
from skrbal.exceptions import RequestError, RequestExpiredWarning
from skrbal.online._idempotency import (
    check_key,
    client_key,
    label_digest,
    value_digest,
)
from skrbal.online._records import ClientKey, EventRecord, ResultRecord
from skrbal.online._timestamps import as_seconds

__all__ = ["RecordCalls"]


def result_stamp(timestamp) -> float | None:
    """A result's time in seconds (None when not given)."""
    if timestamp is None:
        return None
    return float(as_seconds(timestamp, "timestamp", 1)[0])


def _shown(seconds: float) -> str:
    try:
        iso = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{seconds!r} s"
    return f"{iso.isoformat().replace('+00:00', 'Z')} ({seconds!r} s)"


class RecordCalls:
    """The recording calls of :class:`~skrbal.online.RiskBasedAgent` (a mixin).

    Examples
    --------
    >>> from skrbal.online import RiskBasedAgent
    >>> from skrbal.online._agent_calls import RecordCalls
    >>> issubclass(RiskBasedAgent, RecordCalls)
    True
    """

    def _earlier_call(
        self, key: str | None, call: str, **inputs
    ) -> tuple[ClientKey | None, EventRecord | None]:
        """The client key of this call, and its event if it was made before.

        ``key`` is checked already (:func:`check_key`); ``inputs`` are the
        call's inputs as validated, by name, each stored as its
        :func:`value_digest` (``label`` as the process knows it,
        :func:`label_digest`). Without a key: ``(None, None)``, nothing
        digested. Raises :class:`~skrbal.exceptions.IdempotencyKeyError` for a
        key used by another call or with other inputs.
        """
        if key is None:
            return None, None
        digests = {
            name: label_digest(self.process.classes_, value)
            if name == "label"
            else value_digest(value)
            for name, value in inputs.items()
        }
        key = client_key(key, call, **digests)
        return key, self._keys.stored(key)

    def record_inspection(
        self,
        request_id,
        label=None,
        *,
        report=None,
        timestamp=None,
        key: str | None = None,
    ) -> int:
        """Learn the result of a requested inspection.

        Parameters
        ----------
        request_id : int
            The request, from :meth:`observe`.
        label : label, default=None
            The health state found, a state of the process: the result of a
            perfect inspection (the process's, or a method whose reports
            reveal the state).
        report : outcome, default=None
            Instead of ``label``: the report of the request's inspection
            method, one of its ``outcomes_`` (needed for a method whose
            reports do not reveal the state). The agent computes the
            posterior over the states from the belief it stored with the
            request (:func:`~skrbal.inspection.report_posterior`); a
            posterior certain of one state is learned as that label, any
            other as soft evidence, as :class:`~skrbal.active.RiskBasedLearner`
            does.
        timestamp : float or datetime, default=None
            When the result came, kept in the store. For an agent with
            timestamps it may not be earlier than the request's observation.
        key : str, default=None
            A client key making the call idempotent (see :meth:`observe`):
            retried with the same key and inputs, it returns the stored
            action without learning or writing again.

        Returns
        -------
        action : int
            The optimal action for the now-known state, or under the
            posterior after the report.

        Raises
        ------
        RequestError
            For an unknown or cancelled request, a repeated result, a label
            outside the process, a label for a request whose method does not
            reveal the state, a report that is not an outcome of the
            request's method, or a result dated before its request's
            observation; nothing is changed.
        IdempotencyKeyError
            When ``key`` was used by another call, or for other inputs.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> process = synthetic_decision_process().set_params(inspection_cost=1.0)
        >>> agent = RiskBasedAgent(estimator=GaussianNB(var_smoothing=0.05),
        ...                        process=process).fit(
        ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
        >>> agent.observe([[12.5]])["request_id"].tolist()
        [1]
        >>> agent.record_inspection(1, 4, key="work-order-17")
        1
        >>> agent.record_inspection(1, 4, key="work-order-17")  # a retry
        1
        >>> agent.close()
        """
        self._check_open()
        key = check_key(key)
        stamp = result_stamp(timestamp)
        key, done = self._earlier_call(
            key,
            "record_inspection",
            request_id=request_id,
            label=label,
            report=report,
            timestamp=stamp,
        )
        if done is not None:
            return done.payload["action"]
        campaign = self._campaign
        request_id, step, late = campaign.requests.check(
            request_id, "recorded", self.name
        )
        request = campaign.requests[request_id]
        result = self._read_answer(
            request.method,
            request.belief,
            label,
            report,
            what=f"request {request_id}",
            call=f"record_inspection({request_id}",
            step=step,
        )
        self._check_result_time(step, request.time, stamp)
        commit = self._result_commit(request_id, step, result, stamp, key)
        action = campaign.answer(request_id, result, commit=commit)
        self._seq += 1
        if late:
            warnings.warn(
                f"agent {self.name!r}: request {request_id} (step {step}) had "
                "expired (request_timeout); its late result is learnt.",
                RequestExpiredWarning,
                stacklevel=2,
            )
        return action

    def record_label(
        self,
        step,
        label=None,
        *,
        report=None,
        method: str | None = None,
        timestamp=None,
        key: str | None = None,
    ) -> int:
        """Learn a label the agent did not request: a routine inspection.

        An inspection made anyway (a scheduled one, a visit for another
        reason) of an observed step teaches the model exactly as the result
        of a request does (the same update rule, replayed the same way on
        resume). It is stored as a request of origin ``'routine'``, made and
        done in one event, so the history, the requests export and the
        status show it. Its cost is recorded and shown apart
        (``n_routine`` and ``routine_spend`` of :meth:`status`), but the
        budget policy's state is not charged: the policy did not decide it.

        Parameters
        ----------
        step : int
            An observed step (not a commissioning one) without a request.
        label : label, default=None
            The state found, a state of the process.
        report : outcome, default=None
            Instead of ``label``: the report of inspection ``method``, learned
            through the posterior given the belief stored at the step.
        method : str, default=None
            The name of one of the agent's ``inspections`` that made the
            inspection; ``None``: the process's perfect inspection.
        timestamp : float or datetime, default=None
            When the inspection was made; for an agent with timestamps, not
            before the step's observation.
        key : str, default=None
            A client key making the call idempotent (see :meth:`observe`).

        Returns
        -------
        action : int
            The optimal action for the state found (or under the posterior).

        Raises
        ------
        RequestError
            For a step not observed, a commissioning step, a step with a
            request (an open one takes its result by
            :meth:`record_inspection`), a step already labelled, a label
            outside the process, an unknown method or report, or a time
            before the observation; nothing is changed.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> agent = RiskBasedAgent(estimator=GaussianNB(var_smoothing=0.05),
        ...                        process=synthetic_decision_process()).fit(
        ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
        >>> agent.observe([[-4.0]])["inspect"].tolist()
        [False]
        >>> agent.record_label(4, 1)  # a routine visit found state 1
        0
        >>> agent.status()["n_routine"]
        1
        >>> agent.close()
        """
        self._check_open()
        key = check_key(key)
        stamp = result_stamp(timestamp)
        key, done = self._earlier_call(
            key,
            "record_label",
            step=step,
            label=label,
            report=report,
            method=method,
            timestamp=stamp,
        )
        if done is not None:
            return done.payload["action"]
        step = self._routine_step(step)
        k = self._method_index(method)
        columns = ("belief", "evpi", "timestamp", "features")
        seen = self.store_.load_steps(self.agent_id_, [step], columns)
        observed = float(seen["timestamp"][0])
        self._check_result_time(step, None if np.isnan(observed) else observed, stamp)
        result = self._read_answer(
            k,
            seen["belief"][0],
            label,
            report,
            what=f"the routine inspection of step {step}",
            call=f"record_label({step}",
            step=step,
        )
        campaign = self._campaign
        # The supervised rule's buffers keep only the rows they read.
        sparse = getattr(campaign.steps, "put", None)
        if sparse is not None:
            sparse(step, seen["features"][0])
        commit = self._result_commit(
            campaign.requests.n_requests + 1,
            step,
            result,
            stamp,
            key,
            origin="routine",
            evpi=float(seen["evpi"][0]),
            method=None
            if k is None or self.inspections is None
            else (self.inspections[k].name),
        )
        try:
            action = campaign.learn_routine(step, result, k, commit=commit)
        except BaseException:
            if sparse is not None:
                campaign.steps.release(step)
            raise
        self._seq += 1
        return action

    # ------------------------------------------------------------------ #
    def _result_commit(self, request_id, step, result, stamp, key, **routine):
        """What commits a result to the store, given its warnings' texts.

        ``routine`` (``origin``, ``evpi``, ``method``) makes it a request made
        and done in this one event.
        """
        posterior = result.posterior

        def commit(texts, snapshot=None):
            record = ResultRecord(
                request_id=request_id,
                step=step,
                label=result.label,
                action=result.action,
                timestamp=stamp,
                warnings=tuple(texts),
                report=result.report,
                posterior=None if posterior is None else tuple(posterior.tolist()),
                key=key,
                snapshot=snapshot,
                **routine,
            )
            self.store_.record_result(self.agent_id_, self._seq, record)

        return commit

    def _read_answer(self, k, belief, label, report, *, what, call, step):
        """An inspection's label or report, checked and read by the campaign.

        ``k``: the inspection method's index (the kernel's: 0 without
        methods; None for a routine label without one of the methods);
        ``belief``: the belief at the step (a report's posterior needs it);
        ``what`` names the inspection and ``call`` starts the call to suggest
        (``record_inspection(3``) in messages.
        """
        campaign = self._campaign
        method = None if k is None or self.inspections is None else self.inspections[k]
        verb = call.split("(")[0]
        if (label is None) == (report is None):
            raise RequestError(
                f"{verb} needs either a label or a report for {what}, not "
                f"{'both' if label is not None else 'neither'}; nothing was recorded."
            )
        if label is not None:
            if method is not None and not campaign.kernel.reveals[k]:
                outcomes = method.outcomes_.tolist()
                raise RequestError(
                    f"{what} (step {step}) was made with inspection "
                    f"method {method.name!r}, whose reports do not reveal the "
                    f"state: pass its report, {call}, "
                    f"report=...) with one of {outcomes}; nothing was recorded."
                )
            try:
                label = self._check_labels([label], "label")[0]
            except ValueError as exc:
                raise RequestError(f"{exc}; nothing was recorded.") from None
            return campaign.read_result(k, None, label=label)
        if method is None:
            raise RequestError(
                f"agent {self.name!r} has no inspection methods: its inspections "
                f"reveal the state, so pass the label, {call}, label); nothing "
                "was recorded."
                if self.inspections is None
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
        return campaign.read_result(k, belief, report=report)

    def _check_result_time(self, step: int, observed: float | None, stamp) -> None:
        """Refuse a result dated before the observation it inspects.

        Only for an agent with timestamps (``observed`` is the step's time).
        """
        if stamp is None or observed is None or self._clock != "timestamp":
            return
        if stamp < observed:
            raise RequestError(
                f"agent {self.name!r}: the result's timestamp {_shown(stamp)} is "
                f"before step {step} was observed, at {_shown(observed)}; an "
                "inspection cannot find a state before it was observed. Nothing "
                "was recorded."
            )

    def _method_index(self, method) -> int | None:
        """A routine inspection's method index (None: the process's perfect one).

        Without inspection methods the process's inspection is the kernel's
        method 0.
        """
        if self.inspections is None and method is None:
            return 0
        if method is None:
            return None
        names = [m.name for m in self.inspections or ()]
        if method not in names:
            raise RequestError(
                f"method {method!r} is not an inspection method of agent "
                f"{self.name!r}; its methods are {names}; nothing was recorded."
            )
        return names.index(method)

    def _routine_step(self, step) -> int:
        """An observed step that may take a routine label."""
        n0, n = self._n_commissioning, self.n_steps_
        if not isinstance(step, Integral) or isinstance(step, bool):
            raise RequestError(
                f"step must be an observed step (an int), got {step!r}; nothing "
                "was recorded."
            )
        step = int(step)
        if 0 <= step < n0:
            raise RequestError(
                f"step {step} is a commissioning step of agent {self.name!r}: its "
                "label is known already; nothing was recorded."
            )
        if not n0 <= step < n:
            raise RequestError(
                f"step {step} is not an observed step of agent {self.name!r}: its "
                f"observations are steps {n0} to {n - 1}; nothing was recorded."
                if n > n0
                else f"step {step} is not an observed step of agent {self.name!r}: "
                "it has observed nothing yet; nothing was recorded."
            )
        made = self._campaign.requests.of_step(step)
        if made is None:
            return step
        request_id, request = made
        if request.status in ("open", "expired"):
            raise RequestError(
                f"step {step} has request {request_id} waiting for its result: "
                f"record it as its result, record_inspection({request_id}, "
                "label); nothing was recorded."
            )
        if request.status == "done":
            raise RequestError(
                f"step {step} is already labelled (request {request_id}); "
                "nothing was recorded."
            )
        raise RequestError(
            f"step {step} had request {request_id}, cancelled: a step takes "
            "one inspection record; nothing was recorded."
        )

    def cancel_request(
        self, request_id, reason: str | None = None, *, key: str | None = None
    ) -> None:
        """Give up an open request: its result will not be accepted.

        The budget policy keeps the spend it counted when the request was
        made: one rule everywhere (``status``, the report's ``charged``
        column, a resumed agent), since the agent cannot know whether the
        inspection was booked or paid for.

        Parameters
        ----------
        request_id : int
            The request, from :meth:`observe`.
        reason : str, default=None
            Kept in the store.
        key : str, default=None
            A client key making the call idempotent (see :meth:`observe`):
            a retry with the same key and inputs does nothing.

        Raises
        ------
        RequestError
            For an unknown request or one that is not open.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> process = synthetic_decision_process().set_params(inspection_cost=1.0)
        >>> agent = RiskBasedAgent(estimator=GaussianNB(var_smoothing=0.05),
        ...                        process=process).fit(
        ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
        >>> agent.observe([[12.5]])["request_id"].tolist()
        [1]
        >>> agent.cancel_request(1, reason="no access", key="cancel-1")
        >>> agent.cancel_request(1, reason="no access", key="cancel-1")  # a retry
        >>> agent.status()["n_cancelled"]
        1
        >>> agent.close()
        """
        self._check_open()
        key = check_key(key)
        key, done = self._earlier_call(
            key, "cancel_request", request_id=request_id, reason=reason
        )
        if done is not None:
            return
        requests = self._campaign.requests
        request_id, step, _ = requests.check(request_id, "cancelled", self.name)
        if reason is not None and (not isinstance(reason, str) or "\x00" in reason):
            raise RequestError(
                "reason must be None or a string without NUL characters, got "
                f"{type(reason).__name__} {reason!r}; nothing was cancelled."
            )
        campaign = self._campaign
        after = None
        if campaign.keeps_snapshots:
            after = campaign.snapshot_after(closed=(request_id,))
        self.store_.record_cancel(
            self.agent_id_,
            self._seq,
            request_id,
            step,
            reason,
            key,
            snapshot=None if after is None else after.value,
        )
        requests.close(request_id, "cancelled")
        campaign.keep_snapshot(after)
        self._campaign.steps.release(step)
        self._seq += 1

    def record_action(self, step, action, *, key: str | None = None) -> None:
        """Record the action actually taken at a step.

        With ``semi_supervised='smoothing'`` the actions between two known
        labels choose the transitions of the smoother; by default they are
        the agent's (the recommended action, or the optimal one once an
        inspection's result is known). An action recorded here replaces it
        for the segments smoothed afterwards.

        Parameters
        ----------
        step : int
            A step already observed.
        action : int
            Index of an action of the process.
        key : str, default=None
            A client key making the call idempotent (see :meth:`observe`):
            a retry with the same key and inputs does nothing.

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> agent = RiskBasedAgent(estimator=GaussianNB(),
        ...                        process=synthetic_decision_process()).fit(
        ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
        >>> agent.record_action(0, 1)  # the crew repaired at step 0 anyway
        >>> agent.history_.steps["action"].tolist()
        [1, 0, 0, 1]
        >>> agent.close()
        """
        self._check_open()
        key = check_key(key)
        key, done = self._earlier_call(key, "record_action", step=step, action=action)
        if done is not None:
            return
        if (
            not isinstance(step, Integral)
            or isinstance(step, bool)
            or not 0 <= step < self.n_steps_
        ):
            raise ValueError(
                f"step must be an observed step in [0, {self.n_steps_}), got {step!r}."
            )
        n_actions = self.process.n_actions
        if (
            not isinstance(action, Integral)
            or isinstance(action, bool)
            or not 0 <= action < n_actions
        ):
            raise ValueError(
                f"action must be an action index in [0, {n_actions}), got {action!r}."
            )
        step, action = int(step), int(action)
        self.store_.record_action(self.agent_id_, self._seq, step, action, key)
        self._campaign.steps.record_action(step, action)
        self._seq += 1
