"""Learning an inspection's result: a requested one, or a routine label.

:func:`learn_result` is the one path by which the live agent learns what an
inspection found (the kernel's update rule through
:func:`~skrbal.online._replay.learn_label` / ``learn_report``) and commits
it; :meth:`RiskBasedAgent.record_inspection` and
:meth:`RiskBasedAgent.record_label` (a routine inspection the agent did not
request) both use it, and a resumed agent replays both the same way.
"""

from __future__ import annotations

import copy
import datetime
import warnings
from numbers import Integral

import numpy as np

from skrbal.exceptions import RequestError
from skrbal.online._replay import learn_label, learn_report
from skrbal.online._requests import Request, read_answer
from skrbal.online._storage import ResultRecord
from skrbal.online._timestamps import as_seconds

__all__ = [
    "check_result_time",
    "learn_result",
    "record_label",
    "reissue",
    "result_stamp",
    "warning_texts",
]


def warning_texts(caught) -> list:
    """The warnings of a fit, as stored with its event."""
    return [f"{w.category.__name__}: {w.message}" for w in caught]


def reissue(caught) -> None:
    """Issue caught warnings to the caller, once the call has committed."""
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


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


def check_result_time(agent, step: int, observed: float | None, stamp) -> None:
    """Refuse a result dated before the observation it inspects.

    Only for an agent with timestamps (``observed`` is the step's time).
    """
    if stamp is None or observed is None or agent._clock != "timestamp":
        return
    if stamp < observed:
        raise RequestError(
            f"agent {agent.name!r}: the result's timestamp {_shown(stamp)} is "
            f"before step {step} was observed, at {_shown(observed)}; an "
            "inspection cannot find a state before it was observed. Nothing "
            "was recorded."
        )


def learn_result(agent, request_id, step, result, stamp, key, **routine) -> int:
    """Learn ``result`` at ``step`` with the update rule, commit it, update.

    ``routine`` (``origin``, ``evpi``, ``method``) makes it a request made
    and done in this one event. Nothing changes if learning or committing
    fails. Returns the action the result calls for.
    """
    label, report, posterior = result.label, result.report, result.posterior
    buffers = agent._buffers
    rule = copy.deepcopy(agent._update)
    saved, undo = None, []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = copy.deepcopy(agent.estimator_)
            if label is None:
                model = learn_report(agent, model, rule, buffers, step, posterior, undo)
            else:
                model, saved = learn_label(agent, model, rule, buffers, step, label)
        record = ResultRecord(
            request_id=request_id,
            step=step,
            label=label,
            action=result.action,
            timestamp=stamp,
            warnings=tuple(warning_texts(caught)),
            report=report,
            posterior=None if posterior is None else tuple(posterior.tolist()),
            key=key,
            **routine,
        )
        agent.store_.record_result(agent.agent_id_, agent._seq, record)
    except BaseException:
        if saved is not None:
            buffers.restore(step, saved)
        for restore in undo:
            restore()
        raise
    reissue(caught)
    agent.estimator_, agent._update = model, rule
    agent._seq += 1
    return result.action


def _method_index(agent, method) -> int:
    """The index of a routine inspection's method (-1: the process's perfect)."""
    if method is None:
        return -1
    names = [m.name for m in agent.inspections or ()]
    if method not in names:
        raise RequestError(
            f"method {method!r} is not an inspection method of agent "
            f"{agent.name!r}; its methods are {names}; nothing was recorded."
        )
    return names.index(method)


def _check_step(agent, step) -> int:
    """An observed step that may take a routine label."""
    n0, n = agent._n_commissioning, agent.n_steps_
    if not isinstance(step, Integral) or isinstance(step, bool):
        raise RequestError(
            f"step must be an observed step (an int), got {step!r}; nothing was "
            "recorded."
        )
    step = int(step)
    if 0 <= step < n0:
        raise RequestError(
            f"step {step} is a commissioning step of agent {agent.name!r}: its "
            "label is known already; nothing was recorded."
        )
    if not n0 <= step < n:
        raise RequestError(
            f"step {step} is not an observed step of agent {agent.name!r}: its "
            f"observations are steps {n0} to {n - 1}; nothing was recorded."
            if n > n0
            else f"step {step} is not an observed step of agent {agent.name!r}: "
            "it has observed nothing yet; nothing was recorded."
        )
    book = agent._requests
    for request_id in range(1, book.n_requests + 1):
        request = book[request_id]
        if request.step != step:
            continue
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
    return step


def record_label(agent, step, label, report, method, timestamp, key) -> int:
    """See :meth:`RiskBasedAgent.record_label`."""
    stamp = result_stamp(timestamp)
    key, done = agent._earlier_call(
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
    step = _check_step(agent, step)
    k = _method_index(agent, method)
    columns = ("belief", "evpi", "timestamp", "features")
    seen = agent.store_.load_steps(agent.agent_id_, [step], columns)
    observed = float(seen["timestamp"][0])
    check_result_time(agent, step, None if np.isnan(observed) else observed, stamp)
    result = read_answer(
        agent,
        k,
        seen["belief"][0],
        label,
        report,
        what=f"the routine inspection of step {step}",
        call=f"record_label({step}",
        step=step,
    )
    sparse = getattr(agent._buffers, "put", None)
    if sparse is not None:
        sparse(step, seen["features"][0])
    book = agent._requests
    request_id = book.n_requests + 1
    try:
        action = learn_result(
            agent,
            request_id,
            step,
            result,
            stamp,
            key,
            origin="routine",
            evpi=float(seen["evpi"][0]),
            method=None if k < 0 else agent.inspections[k].name,
        )
    except BaseException:
        if sparse is not None:
            agent._buffers.release(step)
        raise
    book.load(request_id, Request(step, "done", k, None, None))
    book.n_requests = request_id
    return action
