"""The calls that tell a live agent what happened: results, labels, actions.

:class:`RecordCalls` holds the methods of
:class:`~skrbal.online.RiskBasedAgent` that record what the user learnt or
did after the agent decided: the result of a requested inspection, a label
the agent did not request (a routine inspection), a cancelled request and
an action taken. The agent inherits them; they learn through
:mod:`skrbal.online._results` and commit through the agent's store.
"""

from __future__ import annotations

import warnings
from numbers import Integral

from skrbal.exceptions import RequestError, RequestExpiredWarning
from skrbal.online._idempotency import (
    check_key,
    client_key,
    label_digest,
    stored_call,
    value_digest,
)
from skrbal.online._requests import read_result
from skrbal.online._results import (
    check_result_time,
    learn_result,
    record_label,
    result_stamp,
)
from skrbal.online._storage import ClientKey, EventRecord

__all__ = ["RecordCalls"]


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
            name: label_digest(self, value) if name == "label" else value_digest(value)
            for name, value in inputs.items()
        }
        key = client_key(key, call, **digests)
        return key, stored_call(self, key)

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
        request_id, step, late = self._requests.check(request_id, "recorded", self.name)
        result = read_result(self, request_id, step, label, report)
        check_result_time(self, step, self._requests[request_id].time, stamp)
        action = learn_result(self, request_id, step, result, stamp, key)
        self._requests.close(request_id, "done")
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
        return record_label(self, step, label, report, method, timestamp, key)

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
        request_id, step, _ = self._requests.check(request_id, "cancelled", self.name)
        if reason is not None and (not isinstance(reason, str) or "\x00" in reason):
            raise RequestError(
                "reason must be None or a string without NUL characters, got "
                f"{type(reason).__name__} {reason!r}; nothing was cancelled."
            )
        self.store_.record_cancel(
            self.agent_id_, self._seq, request_id, step, reason, key
        )
        self._requests.close(request_id, "cancelled")
        self._buffers.release(step)
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
        >>> agent.history()["action"].tolist()
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
        self._buffers.record_action(step, action)
        self._seq += 1
