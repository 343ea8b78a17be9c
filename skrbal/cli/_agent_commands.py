"""``skrbal agent init|inspect|cancel|status|verify|export``: one act each."""

from __future__ import annotations

import json
import math
import re
import sys

import numpy as np
import pandas as pd

from skrbal.cli._agent import CASE_FEATURES
from skrbal.cli._agent_status import status
from skrbal.cli._agent_store import guarded, new_store, open_store, resumed_agent
from skrbal.cli._data import (
    CAMPAIGN_COLUMNS,
    given_options,
    read_campaign,
    read_class_priors,
    read_inspections,
    read_process,
)
from skrbal.cli._formulas import neutralise_formulas
from skrbal.cli._output import check_output, write_output
from skrbal.cli._times import iso_times

__all__ = [
    "cancel",
    "check_key_option",
    "export",
    "init",
    "inspect",
    "process_template",
    "process_text",
    "record_action",
    "record_label",
    "status",
    "timestamps",
    "verify",
]

# Seconds of a unit of --period, --min-gap: y is the Julian year, 365.25 d.
_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_UNITS["y"] = 365.25 * 86400.0


# ---------------------------------------------------------------------- #
# times and durations
# ---------------------------------------------------------------------- #
def timestamps(column):
    """Seconds as floats when the cells are numbers; else the text (ISO dates)."""
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.notna().all():
        return numbers.to_numpy(dtype=np.float64)
    return column.astype(str).to_numpy(dtype=object)


def _time_point(text: str, option: str) -> float:
    """A number (step or seconds) or an ISO 8601 date-time, in seconds."""
    try:
        value = float(text)
    except ValueError:
        from skrbal._datetimes import parse_datetimes

        try:
            # ISO 8601 only: 01/02/1998 is day-first in some places.
            stamp = parse_datetimes(np.array([text], dtype=object), option)[0]
        except (TypeError, ValueError):
            stamp = None
        if stamp is None or pd.isna(stamp):
            raise ValueError(
                f"{option} must be a number or an ISO 8601 date-time such as "
                f"2025-01-01T00:00, got {text!r}"
            ) from None
        value = (stamp - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    if not math.isfinite(value):
        raise ValueError(f"{option} must be finite, got {text!r}")
    return float(value)


def _duration(text: str, option: str, steps: bool = False) -> float:
    """A number, or a number with a unit (s, min, h, d, w, y) in seconds.

    ``steps``: the agent counts time in steps (no time column), where a unit
    has no meaning: ``2w`` would be 1,209,600 steps, so it is refused.
    """
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-z]*)\s*", text)
    if match:
        number, unit = match.groups()
        if steps and unit in _UNITS:
            raise ValueError(
                f"{option} {text}: the agent has no time column, so it counts "
                "time in observations (steps) and a unit of time has no meaning "
                f"({text} would be {_number_words(number, unit)} steps); give a "
                "number of steps, or commission with a time column"
            )
        try:
            value = float(number) * (_UNITS[unit] if unit else 1.0)
        except (KeyError, ValueError):
            value = None
        if value is not None and math.isfinite(value):
            return value
    raise ValueError(
        f"{option} must be a number, or a number with a unit "
        f"({', '.join(_UNITS)}), got {text!r}"
    )


def _number_words(number: str, unit: str) -> str:
    try:
        return f"{float(number) * _UNITS[unit]:,.0f}"
    except ValueError:
        return "a number of"


def _budget_policy(args, first_time: float, steps: bool = False):
    """The policy of the budget options (None: the paper's rule)."""
    from skrbal.budget import (
        CostThreshold,
        MinimumGap,
        PacedBudget,
        QuantileThreshold,
        SpendCap,
    )

    if args.spend_cap is not None and args.paced is not None:
        raise ValueError("--spend-cap and --paced exclude each other")
    if args.paced is not None and args.rate is not None:
        raise ValueError("--paced and --rate exclude each other")
    money = args.paced if args.paced is not None else args.spend_cap
    if (money is None) != (args.period is None):
        raise ValueError("--period goes with --spend-cap or --paced")
    if args.origin is not None and args.period is None:
        raise ValueError("--origin goes with --period (and --spend-cap or --paced)")
    origin = None
    if args.period is not None:
        period = _duration(args.period, "--period", steps)
        origin = (
            first_time if args.origin is None else _time_point(args.origin, "--origin")
        )
    if args.paced is not None:
        policies = [PacedBudget(limit=args.paced, period=period, origin=origin)]
    else:
        policies = [
            CostThreshold() if args.rate is None else QuantileThreshold(rate=args.rate)
        ]
    if args.spend_cap is not None:
        policies.append(SpendCap(limit=args.spend_cap, period=period, origin=origin))
    if args.min_gap is not None:
        policies.append(MinimumGap(gap=_duration(args.min_gap, "--min-gap", steps)))
    if len(policies) == 1 and args.rate is None and args.paced is None:
        return None
    policy = policies[0]
    for other in policies[1:]:
        policy = policy & other
    # Check the parameters now, not at the first observation.
    try:
        policy.initial_state()
    except ValueError as exc:
        raise ValueError(f"budget options: {exc}") from None
    return policy


# ---------------------------------------------------------------------- #
# init
# ---------------------------------------------------------------------- #
def _commissioning(args):
    """Process, features, labels, times and actions of the commissioning."""
    from skrbal.experiments import get_case_study

    if args.case:
        case = get_case_study(args.case)
        split = case.split(random_state=args.seed)
        names = CASE_FEATURES[args.case]
        initial = split.initial_indices
        X = pd.DataFrame(split.X_stream[initial], columns=names)
        return case, case.process(), X, split.y_stream[initial], None, None, split
    if args.data is None:
        raise ValueError("--process needs --data, the commissioning campaign file")
    process = read_process(args.process)
    # Rows without a label after the labelled ones are observed (commission).
    campaign = read_campaign(args, process, unlabelled=True)
    X = pd.DataFrame(campaign.X, columns=campaign.feature_names)
    # Actions only when the file has them: else the agent's own are kept.
    has_actions = args.action_column is not None or "action" in _columns(args.data)
    actions = campaign.actions if has_actions else None
    times = campaign.time
    if times is not None and campaign.time_zoned:
        # Kept zoned: the agent then refuses naive times (read as UTC).
        times = pd.DatetimeIndex(times).tz_localize("UTC")
    if times is not None:
        # Named: the agent keeps its time column, which observe then reads.
        times = pd.Series(times, name=args.time_column or "time")
    return None, process, X, campaign.y, times, actions, None


def _columns(path) -> list[str]:
    """The column names of a campaign file (read again: cheap, and exact)."""
    if str(path).lower().endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    return list(pd.read_csv(path, nrows=0, skipinitialspace=True).columns)


def _estimator(method, case, args, classes):
    """The method's model; a mixture's prior set by --prior (or the source) and
    --class-priors."""
    estimator = method.estimator(case)
    prior = args.prior or ("paper" if args.case else "data")
    has_prior = "mean_prior" in estimator.get_params()
    if args.prior is not None and not has_prior:
        raise ValueError(
            f"--prior sets the prior of a Gaussian mixture; --method {args.method} "
            "has none"
        )
    if has_prior and prior == "data":
        estimator.set_params(mean_prior="data", covariance_prior="data")
    elif has_prior and not args.case:
        # The paper's unit prior on the user's own features: left unset (it is
        # the default), so that it is checked against their scale and a
        # PriorScaleWarning says when it does not fit. A built-in case keeps it
        # pinned, as the paper's reproductions do.
        estimator.set_params(mean_prior=None, covariance_prior=None)
    if args.class_priors is not None:
        if "class_priors" not in estimator.get_params():
            raise ValueError(
                "--class-priors states a Gaussian mixture's prior (gmm-* "
                f"methods); --method {args.method} has none"
            )
        estimator.set_params(class_priors=read_class_priors(args.class_priors, classes))
    return estimator


# Without a budget period, a timed agent's requests expire after 30 days.
_DEFAULT_TIMEOUT = 30 * 86400.0


def _request_timeout(args, times) -> float | None:
    """--request-timeout, or its default: the budget's period, else 30 days.

    An unanswered request must not blind the agent for ever: by default it
    expires after one budget period (the money it held is the period's), or
    30 days for a timed agent without a period; 'none' keeps it open.
    """
    given = args.request_timeout
    if given is not None and given.strip().lower() == "none":
        return None
    if given is not None:
        timeout = _duration(given, "--request-timeout", times is None)
        if timeout <= 0:
            raise ValueError("--request-timeout must be > 0")
        return timeout
    if args.period is not None:
        return _duration(args.period, "--period", times is None)
    return None if times is None else _DEFAULT_TIMEOUT


def _timeout_text(timeout, times) -> str:
    from skrbal.cli._budget_words import duration_words

    if timeout is None:
        return "; requests wait for their result without end"
    clock = "step" if times is None else "timestamp"
    return (
        f"; a request without a result expires after "
        f"{duration_words(timeout, clock)} (--request-timeout)"
    )


def _check_init_options(args) -> None:
    given = given_options(args, ("data", *CAMPAIGN_COLUMNS))
    if args.case and given:
        verb = "goes" if len(given) == 1 else "go"
        raise ValueError(f"{' and '.join(given)} {verb} with --process, not --case")
    if args.process and args.stream_out is not None:
        raise ValueError("--stream-out goes with --case")
    if args.stream_out is not None:
        check_output(args.stream_out, "--stream-out")
    if args.max_open_requests is not None and args.max_open_requests < 1:
        raise ValueError("--max-open-requests must be >= 1")
    if not 0.0 <= args.history_prior <= 1.0:
        raise ValueError(f"--history-prior must be in [0, 1], got {args.history_prior}")


@guarded
def init(args) -> int:
    from skrbal.experiments import get_method
    from skrbal.online import RiskBasedAgent

    _check_init_options(args)
    case, process, X, y, times, actions, split = _commissioning(args)
    to_file = True
    # Budget periods start with the commissioning, unless --origin says.
    first_time = 0.0 if times is None else _time_point(str(times.iloc[0]), "--data")
    budget = _budget_policy(args, first_time, steps=times is None)
    inspections = None
    if args.inspections is not None:
        inspections = read_inspections(args.inspections)
    timeout = _request_timeout(args, times)
    method = get_method(args.method)
    estimator = _estimator(method, case, args, process.classes)
    with new_store(args) as store:
        agent = RiskBasedAgent(
            estimator=estimator,
            process=process,
            budget=budget,
            semi_supervised=method.learner_params.get("semi_supervised"),
            max_open_requests=args.max_open_requests,
            request_timeout=timeout,
            inspections=inspections,
            history_prior=args.history_prior,
            store=store,
            name=args.agent,
        )
        try:
            try:
                agent.fit(X, y, timestamps=times)
            except ValueError as exc:
                # A message about a parameter the user gave names its option.
                given = {"name must": "--agent"}
                if args.class_priors is not None:
                    given["class_priors"] = "--class-priors"
                for start, option in given.items():
                    if str(exc).startswith(start):
                        raise ValueError(f"{option}: {exc}") from None
                raise
            summary = agent.status()
            # The commissioning rows are the agent's first steps.
            for step, action in enumerate([] if actions is None else actions):
                agent.record_action(step, int(action))
        finally:
            agent.close()
        if split is not None and args.stream_out is not None:
            initial = split.initial_indices
            rest = np.setdiff1d(np.arange(split.X_stream.shape[0]), initial)
            stream = pd.DataFrame(split.X_stream[rest], columns=list(X.columns))
            stream["label"] = split.y_stream[rest]
            to_file = write_output(
                args.stream_out, stream.to_csv(index=False), option="--stream-out"
            )
    # Messages cannot go where the stream went (stdout, /dev/stdout).
    note = sys.stderr if args.stream_out is not None and not to_file else sys.stdout
    print(
        f"agent {args.agent!r} commissioned in {agent.store_.display_url} with "
        f"{summary['n_commissioning']} labelled observations of {X.shape[1]} "
        f"features{_commissioning_rows(args, summary, agent.estimator)}; model "
        f"{type(agent.estimator_).__name__}{_stated_text(agent.estimator)}, budget "
        + _budget_in_words(budget, times)
        + _timeout_text(timeout, times),
        file=note,
    )
    _print_observed(summary, note)
    if args.stream_out is not None:
        print(
            f"wrote the stream ({len(rest)} observations) to {args.stream_out}",
            file=note,
        )
    return 0


def _budget_in_words(budget, times) -> str:
    """The policy as init prints it: in words, as status and report do."""
    from skrbal._fingerprint import encode_config
    from skrbal.cli._budget_words import budget_words

    config = None if budget is None else encode_config(budget)
    if times is None:
        return budget_words(config, "step")
    return budget_words(config, "timestamp", np.asarray(times).dtype.kind in "MO")


def _rows_text(first: int, last: int) -> str:
    return f"row {first}" if first == last else f"rows {first} to {last}"


def _commissioning_rows(args, status: dict, estimator) -> str:
    """Which rows of --data commissioned the agent: the leading labelled ones."""
    if args.data is None:
        return ""
    n = status["n_commissioning"]
    text = f" ({_rows_text(0, n - 1)} of {args.data}, counted from 0"
    if status["n_observations"]:
        # The first unlabelled row ends the commissioning set.
        text += f": the labelled rows up to the first without a label, row {n}"
        prior = estimator.get_params(deep=False).get("mean_prior")
        if isinstance(prior, np.ndarray):  # pinned from every row
            text += "; the prior's scale from every row of the file"
    return text + ")"


def _stated_text(estimator) -> str:
    """The states whose place --class-priors stated, as init names them."""
    stated = estimator.get_params(deep=False).get("class_priors")
    if not stated:
        return ""
    return f" (damage stated for {', '.join(map(str, stated))} (--class-priors))"


def _print_observed(status: dict, note) -> None:
    """What init did with the rows after the first unlabelled one."""
    if status["n_observations"]:
        n, later = status["n_commissioning"], status["n_observations"]
        print(
            f"then observed the {later} later rows ({_rows_text(n, n + later - 1)}) "
            "in order: "
            f"{status['n_requests']} inspection(s) requested, "
            f"{status['n_results']} of them answered by the file's labels, "
            f"{status['n_routine']} routine label(s) recorded",
            file=note,
        )


# ---------------------------------------------------------------------- #
# inspect, cancel
# ---------------------------------------------------------------------- #
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
            stamp = timestamps(pd.Series([args.timestamp]))[0]
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
            stamp = timestamps(pd.Series([args.timestamp]))[0]
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


# ---------------------------------------------------------------------- #
# status, export
# ---------------------------------------------------------------------- #
@guarded
def verify(args) -> int:
    store = open_store(args)
    try:
        # The head verify returns is the one it checked, in one read.
        head = store.verify(args.agent, expected_head=args.expected_head)
    finally:
        store.close()
    n_events = head["seq"]
    noun = "event" if n_events == 1 else "events"
    # The head is the anchor to keep for the next --expected-head.
    print(
        f"agent {args.agent!r}: {n_events} {noun} verified; "
        f"head {head['seq']}:{head['hash']}"
    )
    return 0


def process_text(process) -> str:
    """A process as JSON for people: one line per entry, one per matrix row."""
    entries = []
    for key, value in process.to_dict().items():
        if key == "transition":
            matrices = ",\n".join(
                "    [\n"
                + ",\n".join(f"      {json.dumps(row)}" for row in matrix)
                + "\n    ]"
                for matrix in value
            )
            entries.append(f'  "transition": [\n{matrices}\n  ]')
        else:
            entries.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(entries) + "\n}\n"


def process_template(args) -> int:
    from skrbal import synthetic_decision_process

    if write_output(args.out, process_text(synthetic_decision_process())):
        print(f"wrote a decision process to {args.out}: edit it into yours")
    return 0


def _with_request_times(requests: pd.DataFrame, history: pd.DataFrame):
    """The requests with the time of their step (when they were made)."""
    times = history.set_index("step")["timestamp"]
    position = requests.columns.get_loc("step") + 1
    requests.insert(position, "timestamp", requests["step"].map(times).to_numpy())
    return requests


def _with_action_names(table: pd.DataFrame, names) -> pd.DataFrame:
    """Each action column followed by the action's name, if the process names it."""
    if names is None:
        return table
    for column in ("recommended_action", "action"):
        if column in table.columns:
            values = table[column]
            named = [None if pd.isna(a) else names[int(a)] for a in values]
            table.insert(table.columns.get_loc(column) + 1, f"{column}_name", named)
    return table


# The columns of the exported tables that hold times the user gave (not the
# writer's clock, ``created_at``).
_TIME_COLUMNS = {"timestamp", "result_timestamp"}


def _parquet_available() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError(
            "export to Parquet needs pyarrow, which is not installed: pip "
            "install 'skrbal[parquet]', or export to CSV (--format csv)"
        ) from None


@guarded
def export(args) -> int:
    fmt = args.format or ("parquet" if args.out.endswith(".parquet") else "csv")
    if fmt == "parquet":
        _parquet_available()
    store = open_store(args)
    try:
        table = getattr(store, args.table)(args.agent)
        if args.table == "requests":
            table = _with_request_times(table, store.history(args.agent))
        configuration = store.configuration(args.agent)
    finally:
        store.close()
    table = _with_action_names(table, configuration["process"].get("action_names"))
    if configuration["settings"].get("time_format") == "iso":
        # Given as datetimes: shown as ISO 8601, not as epoch seconds.
        for column in _TIME_COLUMNS.intersection(table.columns):
            table[column] = iso_times(table[column])
    if "payload" in table.columns:  # dicts: as JSON text in a file
        table["payload"] = [json.dumps(v) for v in table["payload"]]
    label = table.get("label")
    if label is not None and label.dtype.kind == "f":
        known = label.dropna()
        if np.array_equal(known, np.round(known)):
            # Integer states with missing ones: pandas made them floats.
            table["label"] = label.astype("Int64")
    if fmt == "csv" and not args.raw:
        table = neutralise_formulas(table)  # see skrbal.cli._formulas
    data = table.to_csv(index=False) if fmt == "csv" else table.to_parquet(index=False)
    # A confirmation cannot go where the table went (stdout, /dev/stdout),
    # and a pipeline wants no chatter.
    if write_output(args.out, data):
        print(f"wrote {len(table)} rows of {args.table} to {args.out}")
    return 0
