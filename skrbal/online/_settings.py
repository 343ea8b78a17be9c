"""A live agent's parameters: checked, stored as settings, read back."""

from __future__ import annotations

import time
from numbers import Real

import numpy as np

from skrbal import __version__
from skrbal.budget import BudgetPolicy
from skrbal.online._config import (
    decode_config,
    dumps,
    encode_config,
    fingerprint,
    inspections_from_config,
    inspections_to_config,
    process_to_json,
)
from skrbal.online._records import AgentRecord

__all__ = [
    "agent_record",
    "check_params",
    "parameters_of",
    "settings_of",
    "time_column",
    "time_format",
]


def check_params(params, name, estimator):
    """Name any invalid parameter of an agent; return its budget policy.

    ``params`` (a :class:`~skrbal._learning.CampaignParams`) are the
    parameters it shares with the stream learner, checked there; ``None`` is
    returned for the default policy, which the campaign makes.
    """
    budget = params.budget
    if budget is not None and not isinstance(budget, BudgetPolicy):
        raise TypeError(
            "budget must be a skrbal.budget.BudgetPolicy, such as "
            f"CostThreshold() or CostThreshold() & SpendCap(...); got {budget!r}."
        )
    params.check()
    if not isinstance(name, str) or not 0 < len(name) <= 200:
        raise ValueError(
            f"name must be a non-empty string of at most 200 characters, got {name!r}."
        )
    if "\x00" in name:  # PostgreSQL's text cannot hold it
        raise ValueError(f"name must not contain a NUL character, got {name!r}.")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:  # nor can any database's text hold this
        raise ValueError(
            f"name must be text a database can store (UTF-8), got {name!r}: "
            f"character {exc.start} is a lone surrogate."
        ) from None
    random_state = getattr(estimator, "random_state", None)
    if isinstance(random_state, np.random.RandomState):
        raise ValueError(
            "estimator: a RandomState instance as random_state cannot be "
            "replayed from the store; pass an int."
        )
    return budget


def check_step_periods(budget) -> None:
    """Refuse a budget period shorter than one step on a step clock.

    Without timestamps the budget's time is the step number: a period under
    one step makes every step a period of its own, with fresh money, so the
    budget never binds (PacedBudget(period=1e-9) inspected 20 steps of 20).
    """
    members = list(getattr(budget, "policies", None) or [budget])
    while members:
        policy = members.pop()
        members.extend(getattr(policy, "policies", None) or [])
        period = getattr(policy, "period", None)
        if isinstance(period, Real) and not isinstance(period, bool) and period < 1:
            raise ValueError(
                f"budget: {type(policy).__name__}(period={period!r}) is shorter "
                "than one step. Commissioned without timestamps, the budget's "
                "periods are counted in steps, so each step would be a period "
                "of its own with fresh money and the budget would never bind. "
                "Give a period of at least 1 (steps), or commission with "
                "timestamps to count periods in seconds."
            )


def settings_of(params) -> dict:
    """The settings stored with an agent of these CampaignParams (JSON)."""
    return {
        "semi_supervised": params.semi_supervised,
        "update": params.update,
        "em_start": params.em_start,
        "initial_state": encode_config(params.initial_state),
        "max_open_requests": params.max_open_requests,
        "pending_value": params.pending_value,
        "request_timeout": params.request_timeout,
        "history_prior": params.history_prior,
        "inspections": inspections_to_config(params.inspections),
    }


def parameters_of(settings: dict, process) -> dict:
    """The agent's parameters stored in ``settings`` (:func:`settings_of`).

    Settings that came later default to the behaviour of the agents stored
    before them: a stored agent resumes deciding as it did.
    """
    return {
        "inspections": inspections_from_config(settings.get("inspections"), process),
        "semi_supervised": settings["semi_supervised"],
        "update": settings["update"],
        "em_start": settings["em_start"],
        "initial_state": decode_config(settings["initial_state"]),
        "max_open_requests": settings["max_open_requests"],
        "pending_value": settings.get("pending_value", "ignore"),
        "request_timeout": settings.get("request_timeout"),
        "history_prior": settings.get("history_prior", 0.0),
    }


def time_format(timestamps) -> str | None:
    """How an agent's times were given, kept as its ``time_format`` setting.

    ``"iso"`` for datetimes (numpy, pandas, ``datetime``) or ISO 8601 text,
    ``"seconds"`` for numbers, ``None`` without times. The command line shows
    the agent's times the same way (ISO in, ISO out); agents stored before
    the setting have none and show seconds, as they did.
    """
    if timestamps is None:
        return None
    array = np.asarray(timestamps)
    if array.dtype.kind in "MUS":
        return "iso"
    if array.dtype.kind == "O":
        numbers = [
            isinstance(v, Real) and not isinstance(v, bool | np.bool_)
            for v in array.ravel()
        ]
        return "seconds" if any(numbers) else "iso"
    return "seconds"


def time_column(timestamps) -> str | None:
    """The name of the commissioning's times, kept as the ``time_column`` setting.

    Timestamps given as a named pandas Series (a campaign's column) keep
    their column's name, so that ``skrbal agent observe`` reads the same
    column without being told; ``None`` otherwise.
    """
    name = getattr(timestamps, "name", None)
    return name if isinstance(name, str) and name else None


def agent_record(
    params,
    name,
    estimator,
    shape,
    names,
    clock,
    budget_state,
    times_given=None,
    zoned=False,
    column=None,
) -> AgentRecord:
    """The record of an agent commissioned on ``shape`` (rows, features).

    ``params`` are its :class:`~skrbal._learning.CampaignParams`, ``name``
    and ``estimator`` its own.
    ``times_given`` is :func:`time_format` of the commissioning's times;
    ``zoned``, whether they carried a UTC offset (kept as the setting
    ``time_zone: "offset"``: the command line then refuses naive times);
    ``column``, :func:`time_column` of them (the setting ``time_column``).
    """
    n_steps, n_features = shape
    return AgentRecord(
        name=name,
        process=process_to_json(params.process),
        estimator=dumps(encode_config(estimator)),
        estimator_fingerprint=fingerprint(estimator),
        budget=dumps(encode_config(params.budget)),
        budget_fingerprint=fingerprint(params.budget),
        settings={
            **settings_of(params),
            "time_format": times_given,
            **({"time_zone": "offset"} if zoned else {}),
            **({"time_column": column} if column else {}),
        },
        n_features=n_features,
        feature_names=None if names is None else tuple(names),
        clock=clock,
        n_steps=n_steps,
        n_requests=0,
        last_seq=1,
        budget_state=budget_state,
        created_at=time.time(),
        skrbal_version=__version__,
    )
