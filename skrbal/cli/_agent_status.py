"""``skrbal agent status``: an agent's counts, spend and open requests.

Apart from the other commands so that it starts fast: a dashboard or a cron
job may call it every minute. A SQLite store is read with the standard
library's ``sqlite3`` (the queries of ``skrbal.online._sql._summary``, which
the store runs through SQLAlchemy too), so the command imports neither
SQLAlchemy nor numpy, pandas or scikit-learn (``tests/test_packaging.py``
checks); a PostgreSQL store, or a file the fast reader cannot read as a store
of this version, is opened as an :class:`~skrbal.online.AgentStore`.
"""

from __future__ import annotations

import json

from skrbal.cli._agent_store import guarded, open_store
from skrbal.cli._budget_words import budget_lines, duration_words
from skrbal.cli._server_record import sqlite_file
from skrbal.cli._times import iso_time

__all__ = ["status", "unlabelled_states_text"]

_STATUS_KEYS = (
    "n_commissioning",
    "n_observations",
    "n_requests",
    "n_open",
    "n_results",
    "n_routine",
    "n_cancelled",
    "n_expired",
    "inspection_cost",
    "spend",
    "committed_spend",
    "routine_spend",
    "last_evpi",
    "clock",
)
_SHOWN_REQUESTS = 20


def unlabelled_states_text(labelled: dict) -> str:
    """The warning about states without a labelled example; '' if none."""
    unseen = [str(state) for state, count in labelled.items() if not count]
    if not unseen:
        return ""
    return (
        f"no labelled example of state(s) {', '.join(unseen)}: the agent's "
        "beliefs about them come from its model's prior alone (commissioned "
        "without them, and no inspection has found one since)"
    )


def _requests_shown(summary, args, state) -> tuple:
    """The overdue requests ``(request_id, step)`` and the open ones' methods."""
    overdue = []
    if state["n_expired"] and not args.json:
        expired = summary.requests_in(args.agent, "expired")
        overdue = [(request_id, step) for request_id, step, _ in expired]
    methods = None
    if state["n_open"] and "spend_by_method" in state:
        opened = summary.requests_in(args.agent, "open")
        methods = {request_id: method for request_id, _, method in opened}
    return overdue, methods


def _read(args) -> tuple:
    """``(status, configuration, overdue, methods)``, from ``sqlite3`` if it can.

    A SQLite file is read by ``sqlite3``; where that reader cannot answer
    (not a readable store of this version, no such agent, damage), or for
    PostgreSQL, the store reads it with the same queries, or names what is
    wrong.
    """
    import sqlite3

    from skrbal.online import StoreError, sqlite_summary

    path = sqlite_file(args.store)
    if path is not None:
        with sqlite_summary(path) as summary:
            if summary is not None:
                try:
                    state = summary.status(args.agent)
                    configuration = summary.configuration(args.agent)
                    return state, configuration, *_requests_shown(summary, args, state)
                except (sqlite3.Error, StoreError):
                    pass
    store = open_store(args)
    try:
        # The store's own readers name the agent of a damaged store.
        state = store.status(args.agent)
        configuration = store.configuration(args.agent)
        with store.summary() as summary:
            return state, configuration, *_requests_shown(summary, args, state)
    finally:
        store.close()


@guarded
def status(args) -> int:
    state, configuration, overdue, methods = _read(args)
    iso = configuration["settings"].get("time_format") == "iso"
    if iso:
        # Given as datetimes: shown as ISO 8601, not as epoch seconds.
        for request in state["open_requests"]:
            request["timestamp"] = iso_time(request["timestamp"])
    if args.json:
        print(json.dumps(state))
        return 0
    print(f"agent {state['name']!r}")
    for key in _STATUS_KEYS:
        print(f"  {key}: {state[key]}")
    if state.get("n_skipped"):  # rows skipped for a missing value (--skip-missing)
        print(f"  n_skipped: {state['n_skipped']} (rows without a value, not observed)")
    for name, spend in state.get("spend_by_method", {}).items():
        count = state["n_inspections_by_method"][name]
        print(f"  spend of {name}: {spend} ({count} inspections)")
    labelled = ", ".join(f"{k}: {v}" for k, v in state["labelled"].items())
    print(f"  labelled: {labelled}")
    unlabelled = unlabelled_states_text(state["labelled"])
    if unlabelled:
        print(f"  warning: {unlabelled}")
    for line in budget_lines(
        configuration["budget"],
        state["budget_state"],
        state["inspection_cost"],
        state["clock"],
        iso,
    ):
        print(f"  {line}")
    shown = state["open_requests"][:_SHOWN_REQUESTS]
    for request in shown:
        method = "" if methods is None else f", method {methods[request['request_id']]}"
        print(
            f"  open request {request['request_id']}: step {request['step']}, "
            f"EVPI {request['evpi']:.6g}"
            + ("" if request["timestamp"] is None else f", at {request['timestamp']}")
            + method
        )
    timeout = configuration["settings"].get("request_timeout")
    if timeout is not None:
        print(
            f"  request_timeout: {duration_words(timeout, state['clock'])} "
            "(a request without a result by then expires; its result is still "
            "taken)"
        )
    for request_id, step in overdue[:_SHOWN_REQUESTS]:
        print(
            f"  overdue request {int(request_id)}: step {int(step)}, expired "
            "without a result (record it when it comes: skrbal agent inspect)"
        )
    if state["n_open"] > len(shown):
        print(f"  ... and {state['n_open'] - len(shown)} more open (see --json)")
    return 0
