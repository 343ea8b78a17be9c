"""``skrbal agent status``: an agent's counts, spend and open requests.

Apart from the other commands so that it starts fast: reading a store needs
SQLAlchemy and numpy, not pandas or scikit-learn (``tests/test_packaging.py``
checks), and a dashboard or a cron job may call it every minute.
"""

from __future__ import annotations

import json

from skrbal.cli._agent_store import guarded, open_store
from skrbal.cli._budget_words import budget_lines, duration_words
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


@guarded
def status(args) -> int:
    store = open_store(args)
    try:
        state = store.status(args.agent)
        configuration = store.configuration(args.agent)
        iso = configuration["settings"].get("time_format") == "iso"
        if iso:
            # Given as datetimes: shown as ISO 8601, not as epoch seconds.
            for request in state["open_requests"]:
                request["timestamp"] = iso_time(request["timestamp"])
        overdue = []
        if state["n_expired"] and not args.json:
            # Rare, so pandas is paid for only then.
            requests = store.requests(args.agent)
            overdue = requests.loc[requests["status"] == "expired", "step"]
            overdue = list(zip(requests.loc[overdue.index, "request_id"], overdue))
        methods = None
        if state["n_open"] and "spend_by_method" in state:
            requests = store.requests(args.agent)
            if "method" in requests.columns:
                methods = requests.set_index("request_id")["method"].to_dict()
    finally:
        store.close()
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
