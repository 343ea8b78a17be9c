"""``skrbal agent inspect|record-label|record-action|cancel``: one act each.

The commands that record what happened to a live agent's requests and
steps, and how they read and print its states and actions.
"""

from __future__ import annotations

from skrbal._lazy import LazyModule
from skrbal.cli._agent_store import guarded, resumed_agent

pd = LazyModule("pandas")  # check_key_option serves observe, which needs none

__all__ = [
    "action_text",
    "cancel",
    "check_key_option",
    "inspect",
    "record_action",
    "record_label",
    "state_text",
]


def _timestamp(text):
    """The time of a ``--timestamp`` option (as ``timestamps`` reads it)."""
    from skrbal.cli._time_options import timestamps

    return timestamps(pd.Series([text]))[0]


def action_text(process, action: int) -> str:
    """An action by its name when the process names it: ``1 (repair)``."""
    names = process.action_names
    return f"{action} ({names[action]})" if names is not None else str(action)


def _label(text: str, process):
    """The state a LABEL argument names, by its value or by its name.

    ``status`` and the report print the states by name (``normal``,
    ``incipient damage``), so a name is read as its state; a value of the
    process's ``classes`` is read as it is and wins over a name spelt alike.
    """
    classes = process.classes.tolist()
    by_text = {str(c): c for c in classes}
    names = process.state_names or ()
    for label, name in zip(classes, names):
        by_text.setdefault(str(name), label)
    given = text.strip()
    if given not in by_text:
        raise ValueError(
            f"LABEL {text!r} is not a state of the process; its states are "
            f"{', '.join(state_text(process, c) for c in classes)}; nothing was "
            "recorded"
        )
    return by_text[given]


def state_text(process, label) -> str:
    """A state as the commands print it: ``3 (incipient damage)``, or its value
    alone when the process names it the same or not at all."""
    names = process.state_names
    if names is None:
        return str(label)
    name = str(names[process.classes.tolist().index(label)])
    return str(label) if name == str(label) else f"{label} ({name})"


def _report(text: str):
    """An --report OUTCOME: a number when it reads as one, else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


# An agent takes client keys of up to 200 characters; observe adds #i.
_LONGEST_KEY = 180


def check_key_option(key) -> None:
    """A --key option: 1 to 180 characters, no NUL (observe adds #i to it)."""
    longest = _LONGEST_KEY
    if key is not None and (not key or len(key) > longest or "\x00" in key):
        raise ValueError(
            f"--key must be 1 to {longest} characters without NUL, got "
            f"{len(key)} characters"
        )


@guarded
def inspect(args) -> int:
    check_key_option(args.key)
    if (args.label is None) == (args.report is None):
        raise ValueError(
            "skrbal agent inspect needs the state found (LABEL) or the report "
            "of the inspection method (--report OUTCOME), one of them"
        )
    with resumed_agent(args) as agent:
        label = None if args.label is None else _label(args.label, agent.process)
        report = None if args.report is None else _report(args.report)
        stamp = None
        if args.timestamp is not None:
            stamp = _timestamp(args.timestamp)
        action = agent.record_inspection(
            args.request_id, label, report=report, timestamp=stamp, key=args.key
        )
        requests = agent.store_.requests(args.agent).set_index("request_id")
        step = int(requests.loc[args.request_id, "step"])
    found = (
        f"state {state_text(agent.process, label)}"
        if label is not None
        else f"report {report!r}"
    )
    print(
        f"request {args.request_id} (step {step}): {found} recorded; "
        f"optimal action {action_text(agent.process, action)}"
    )
    return 0


@guarded
def record_label(args) -> int:
    check_key_option(args.key)
    if (args.label is None) == (args.report is None):
        raise ValueError(
            "skrbal agent record-label needs the state found (LABEL) or the "
            "report of an inspection method (--report OUTCOME --method NAME), "
            "one of them"
        )
    if args.report is not None and args.method is None:
        raise ValueError("--report needs --method, the inspection method's name")
    with resumed_agent(args) as agent:
        label = None if args.label is None else _label(args.label, agent.process)
        report = None if args.report is None else _report(args.report)
        stamp = None
        if args.timestamp is not None:
            stamp = _timestamp(args.timestamp)
        action = agent.record_label(
            args.step,
            label,
            report=report,
            method=args.method,
            timestamp=stamp,
            key=args.key,
        )
    found = (
        f"state {state_text(agent.process, label)}"
        if label is not None
        else f"report {report!r}"
    )
    print(
        f"step {args.step}: routine inspection, {found} recorded; optimal action "
        f"{action_text(agent.process, action)}"
    )
    return 0


def _action(text: str, process) -> int:
    """An ACTION argument: an index or a name of the process's actions."""
    names = list(process.action_names or ())
    if text.strip() in names:
        return names.index(text.strip())
    try:
        return int(text)
    except ValueError:
        allowed = f"0 to {process.n_actions - 1}" + (
            f" or the names {names}" if names else ""
        )
        raise ValueError(
            f"ACTION {text!r} is not an action of the process (allowed: {allowed})"
        ) from None


@guarded
def record_action(args) -> int:
    check_key_option(args.key)
    with resumed_agent(args) as agent:
        action = _action(args.action, agent.process)
        agent.record_action(args.step, action, key=args.key)
    print(f"step {args.step}: action {action_text(agent.process, action)} recorded")
    return 0


@guarded
def cancel(args) -> int:
    check_key_option(args.key)
    with resumed_agent(args) as agent:
        agent.cancel_request(args.request_id, reason=args.reason, key=args.key)
    print(
        f"request {args.request_id} cancelled; its cost stays charged to the "
        "budget, which counts a request when it is made"
    )
    return 0
