"""``skrbal agent``: run a live agent from the shell, over its store.

Every command opens the store, does one thing and closes it, so the commands
can come from different processes, hours apart (a cron job observing, an
engineer recording a result, a dashboard reading the status):

- ``init``: commission a new agent, from a built-in case study or from a
  process file (JSON) and a commissioning CSV;
- ``observe``: decide for new observations read as CSV (a file or standard
  input, live from a pipe), writing the decisions as CSV or JSON lines;
- ``inspect`` / ``cancel``: the result of a requested inspection, or give it up;
- ``status``: counts, spend, open requests, labelled set;
- ``export``: the history (or the requests, or the log) as CSV or Parquet.

Errors are raised as ``ValueError`` (bad arguments or data: exit 2) or
``OSError`` / ``ImportError`` (the system: exit 1), which
:func:`skrbal.cli.main` prints on one line.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import select
import stat
import sys
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["add_agent_commands"]

_CASE_FEATURES = {"synthetic": ["x1", "x2"], "z24": ["f1", "f2", "f3", "f4"]}
# Built-in methods an agent can run (random querying is a baseline, not a rule).
_AGENT_METHODS = ("gmm-evpi", "gmm-em", "gmm-smoothing", "mrvm1-evpi", "mrvm2-evpi")
_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_UNITS["y"] = 365.25 * 86400.0
_SHOWN_REQUESTS = 20


# ---------------------------------------------------------------------- #
# parser
# ---------------------------------------------------------------------- #
def add_agent_commands(commands) -> None:
    """Add ``skrbal agent ...`` to the subcommands of the ``skrbal`` parser."""
    agent = commands.add_parser(
        "agent",
        help="run a live risk-based agent over a store (SQLite or PostgreSQL)",
        description="Run risk-based active learning on a live monitoring feed. "
        "The agent lives in a store (a SQLite file or a PostgreSQL URL) that "
        "records every decision as it is made; each command opens it, acts "
        "and closes it, so commands may come from different processes.",
    )
    verbs = agent.add_subparsers(dest="verb", required=True, metavar="COMMAND")
    common = _common_options()
    _add_init(verbs, common)
    _add_observe(verbs, common)
    inspect = verbs.add_parser(
        "inspect",
        parents=[common],
        help="record the result of a requested inspection",
        description="Record the health state an inspection found; the model "
        "learns it and the optimal action for that state is printed.",
    )
    inspect.add_argument("request_id", type=int, metavar="REQUEST_ID")
    inspect.add_argument("label", metavar="LABEL", help="the state found")
    inspect.add_argument(
        "--timestamp",
        metavar="TIME",
        help="when the result came: seconds or an ISO 8601 date-time",
    )
    _add_wait(inspect)
    inspect.set_defaults(handler=_guarded(_inspect))
    cancel = verbs.add_parser(
        "cancel",
        parents=[common],
        help="give up an open request (its result will not be accepted)",
    )
    cancel.add_argument("request_id", type=int, metavar="REQUEST_ID")
    cancel.add_argument("--reason", help="kept in the store")
    _add_wait(cancel)
    cancel.set_defaults(handler=_guarded(_cancel))
    status = verbs.add_parser(
        "status",
        parents=[common],
        help="print counts, spend, open requests and the labelled set",
    )
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(handler=_guarded(_status))
    export = verbs.add_parser(
        "export",
        parents=[common],
        help="write the history to CSV or Parquet",
        description="Write one table of the agent to a file, atomically: the "
        "history (one row per step), the requests or the event log.",
    )
    export.add_argument("--out", required=True, metavar="FILE")
    export.add_argument(
        "--table", choices=["history", "requests", "events"], default="history"
    )
    export.add_argument(
        "--format",
        choices=["csv", "parquet"],
        help="default: from the file's suffix (.parquet, else csv); Parquet "
        "needs pyarrow",
    )
    export.set_defaults(handler=_guarded(_export))


def _common_options():
    import argparse

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--store",
        required=True,
        metavar="URL|PATH",
        help="the store: a SQLite file path, sqlite:///path or "
        "postgresql://user@host/database",
    )
    common.add_argument(
        "--agent",
        default="agent",
        metavar="NAME",
        help="the agent's name in the store (default: agent)",
    )
    return common


def _add_wait(parser) -> None:
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another writer of the agent (say, a "
        "running observe) to finish (default: 0, fail at once)",
    )


def _add_init(verbs, common) -> None:
    init = verbs.add_parser(
        "init",
        parents=[common],
        help="commission a new agent",
        description="Commission a new agent: from a built-in case study "
        "(--case: its decision process, a model of --method and the initial "
        "labelled set of the paper's protocol, drawn with --seed from the "
        "case's stream), or from your decision process (--process, JSON of "
        "DecisionProcess.to_json) and a commissioning CSV (--data: one "
        "column per feature and a label column).",
    )
    source = init.add_mutually_exclusive_group(required=True)
    source.add_argument("--case", choices=sorted(_CASE_FEATURES))
    source.add_argument("--process", metavar="JSON", help="a decision process file")
    init.add_argument(
        "--data", metavar="CSV", help="with --process: the commissioning inspections"
    )
    init.add_argument(
        "--label",
        default="label",
        metavar="COLUMN",
        help="with --data: the column of the states found (default: label)",
    )
    init.add_argument(
        "--timestamp-column",
        metavar="COLUMN",
        help="with --data: a column of times (seconds or ISO 8601), not a "
        "feature; the agent's clock (and budget periods) are then in seconds, "
        "else in steps (always with --case)",
    )
    init.add_argument(
        "--seed",
        type=int,
        default=0,
        help="with --case: seed of the initial labelled set (default: 0)",
    )
    init.add_argument(
        "--stream-out",
        metavar="CSV",
        help="with --case: also write the case's stream (the observations not "
        "used for commissioning, in order, with their true label) to feed "
        "observe and inspect",
    )
    init.add_argument(
        "--method",
        choices=_AGENT_METHODS,
        default="gmm-evpi",
        help="the model (and semi-supervised remedy) of a built-in method "
        "(default: gmm-evpi)",
    )
    budget = init.add_argument_group(
        "budget",
        "Which inspections to request. The default is the paper's rule, EVPI > "
        "cost; the options below combine (all must agree). Times are steps, or "
        "seconds once observations come with timestamps; a duration may carry "
        "a unit: 30d, 2w, 1y.",
    )
    budget.add_argument(
        "--rate",
        type=float,
        help="instead of the cost rule, inspect this long-run share of the "
        "observations, those of highest EVPI (QuantileThreshold)",
    )
    budget.add_argument(
        "--spend-cap",
        type=float,
        metavar="MONEY",
        help="at most this spend per --period (SpendCap)",
    )
    budget.add_argument("--period", metavar="DURATION", help="with --spend-cap")
    budget.add_argument(
        "--min-gap",
        metavar="DURATION",
        help="at least this time between two inspections (MinimumGap)",
    )
    budget.add_argument(
        "--max-open-requests",
        type=int,
        metavar="N",
        help="request nothing while N requests await their result",
    )
    init.set_defaults(handler=_guarded(_init))


def _add_observe(verbs, common) -> None:
    observe = verbs.add_parser(
        "observe",
        parents=[common],
        help="decide for new observations (CSV) and write the decisions",
        description="Read observations as CSV with a header (the agent's "
        "feature columns by name, other columns ignored) from a file or "
        "standard input, decide for each and write one decision per "
        "observation: step, timestamp, belief per state, EVPI, inspect, "
        "request_id and the recommended action. Rows are decided in batches "
        "of --batch-size, or as soon as a pipe has no more lines waiting, and "
        "each batch is committed to the store before its decisions are written.",
    )
    observe.add_argument(
        "input",
        nargs="?",
        default="-",
        metavar="INPUT",
        help="CSV file of observations, '-' for standard input (default)",
    )
    observe.add_argument(
        "--timestamp-column",
        metavar="COLUMN",
        help="a column of times (seconds or ISO 8601): needed, and only "
        "allowed, when the agent was commissioned with timestamps",
    )
    observe.add_argument(
        "--format",
        choices=["csv", "jsonl"],
        default="csv",
        help="decisions as CSV (default) or JSON lines",
    )
    observe.add_argument(
        "--out", metavar="FILE", help="write the decisions here (default: stdout)"
    )
    observe.add_argument(
        "--batch-size",
        type=int,
        default=1000,
        metavar="N",
        help="observations decided and committed together (default: 1000)",
    )
    _add_wait(observe)
    observe.set_defaults(handler=_guarded(_observe))


# ---------------------------------------------------------------------- #
# errors: one line, the exit code of the skrbal command
# ---------------------------------------------------------------------- #
def _guarded(handler):
    """Run ``handler``; turn store errors into the exceptions ``main`` prints."""

    def run(args) -> int:
        from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError

        from skrbal.online import AgentLockedError, StoreError

        try:
            return handler(args)
        except AgentLockedError as exc:
            raise OSError(str(exc)) from exc
        except StoreError as exc:
            if isinstance(exc.__cause__, OperationalError):
                # An unreachable server or unopenable file: the system fails.
                raise OSError(str(exc)) from exc
            raise ValueError(str(exc)) from exc
        except ArgumentError as exc:
            raise ValueError(f"--store {args.store!r}: {exc}") from exc
        except DBAPIError as exc:
            # The driver's own words, without SQLAlchemy's statement dump.
            raise OSError(f"store {args.store!r}: {exc.orig}") from exc

    return run


def _open_store(args, *, create: bool = False):
    """The store of ``--store``; an existing one unless ``create``."""
    from sqlalchemy.engine import make_url

    from skrbal.online import AgentStore

    url = args.store
    path = None
    if "://" not in url and url != ":memory:":
        path = url
    elif url.startswith("sqlite"):
        path = make_url(url).database or None
    if not create and path is not None and not os.path.exists(path):
        raise FileNotFoundError(
            f"--store {url!r}: no such store; create an agent with 'skrbal agent init'."
        )
    return AgentStore(url)


def _resume(args, store):
    from skrbal.online import RiskBasedAgent

    if args.wait < 0:
        raise ValueError(f"--wait must be >= 0, got {args.wait}")
    return RiskBasedAgent.from_store(store, args.agent, lock_timeout=args.wait)


# ---------------------------------------------------------------------- #
# init
# ---------------------------------------------------------------------- #
def _duration(text: str, option: str) -> float:
    """A number, or a number with a unit (s, min, h, d, w, y) in seconds."""
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-z]*)\s*", text)
    if match:
        number, unit = match.groups()
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


def _budget_policy(args):
    """The policy of the budget options (None: the paper's rule)."""
    from skrbal.budget import CostThreshold, MinimumGap, QuantileThreshold, SpendCap

    if (args.spend_cap is None) != (args.period is None):
        raise ValueError("--spend-cap and --period go together")
    policies = [
        CostThreshold() if args.rate is None else QuantileThreshold(rate=args.rate)
    ]
    if args.spend_cap is not None:
        period = _duration(args.period, "--period")
        policies.append(SpendCap(limit=args.spend_cap, period=period))
    if args.min_gap is not None:
        policies.append(MinimumGap(gap=_duration(args.min_gap, "--min-gap")))
    if len(policies) == 1 and args.rate is None:
        return None
    policy = policies[0]
    for other in policies[1:]:
        policy = policy & other
    # Check the parameters now, not at the first observation.
    policy.initial_state()
    return policy


def _read_csv(source, what: str) -> pd.DataFrame:
    try:
        return pd.read_csv(source)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{what} {source}: the file is empty (no header)") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"{what} {source}: not a valid CSV file: {exc}") from None


def _labels_from_text(values, classes: np.ndarray, where: str) -> np.ndarray:
    """Labels given as text (a CSV cell, an argument) as the process's values."""
    by_text = {str(c): c for c in classes.tolist()}
    out = []
    for i, value in enumerate(values):
        text = "" if pd.isna(value) else str(value).strip()
        if text not in by_text:
            row = f" row {i + 1}" if len(values) > 1 else ""
            raise ValueError(
                f"{where}{row}: {text!r} is not a state of the process; its "
                f"states are {list(by_text)}"
            )
        out.append(by_text[text])
    return np.asarray(out, dtype=classes.dtype)


def _numeric_features(frame: pd.DataFrame, columns, where: str) -> pd.DataFrame:
    """The feature columns as floats; the first bad cell named by row and column."""
    out = {}
    for column in columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = np.flatnonzero(values.isna().to_numpy() | ~np.isfinite(values))
        if bad.size:
            cell = frame[column].iloc[bad[0]]
            raise ValueError(
                f"{where} line {bad[0] + 2}: column {column!r} holds {cell!r}, "
                "not a finite number"
            )
        out[column] = values.astype(np.float64)
    return pd.DataFrame(out)


def _commissioning_from_files(args, process):
    """Features, labels and timestamps of the commissioning CSV."""
    if args.data is None:
        raise ValueError("--process needs --data, the commissioning CSV")
    frame = _read_csv(args.data, "--data")
    if args.label not in frame.columns:
        raise ValueError(
            f"--data {args.data}: no label column {args.label!r} (columns: "
            f"{list(frame.columns)}); name it with --label"
        )
    stamp = args.timestamp_column
    if stamp is not None and stamp not in frame.columns:
        raise ValueError(f"--data {args.data}: no timestamp column {stamp!r}")
    features = [c for c in frame.columns if c not in (args.label, stamp)]
    if not features or frame.empty:
        raise ValueError(
            f"--data {args.data}: needs at least one feature column and one row"
        )
    X = _numeric_features(frame, features, f"--data {args.data}")
    y = _labels_from_text(
        frame[args.label].tolist(), process.classes_, f"--data {args.data}"
    )
    times = None if stamp is None else _timestamps(frame[stamp])
    return X, y, times


def _timestamps(column):
    """Seconds as floats when the cells are numbers; else the text (ISO dates)."""
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.notna().all():
        return numbers.to_numpy(dtype=np.float64)
    return column.astype(str).to_numpy(dtype=object)


def _init(args) -> int:
    from skrbal import DecisionProcess
    from skrbal.experiments import get_case_study, get_method
    from skrbal.experiments._folder import atomic_write_text
    from skrbal.online import RiskBasedAgent

    for option in ("data", "timestamp_column"):
        if args.case and getattr(args, option) is not None:
            raise ValueError(f"--{option.replace('_', '-')} goes with --process")
    if args.process and args.stream_out is not None:
        raise ValueError("--stream-out goes with --case")
    if args.max_open_requests is not None and args.max_open_requests < 1:
        raise ValueError("--max-open-requests must be >= 1")
    budget = _budget_policy(args)
    method = get_method(args.method)
    times, case = None, None
    if args.case:
        case = get_case_study(args.case)
        process = case.process()
        split = case.split(random_state=args.seed)
        names = _CASE_FEATURES[args.case]
        initial = split.initial_indices
        X = pd.DataFrame(split.X_stream[initial], columns=names)
        y = split.y_stream[initial]
    else:
        process = DecisionProcess.from_json(args.process)
        X, y, times = _commissioning_from_files(args, process)
    store = _open_store(args, create=True)
    try:
        agent = RiskBasedAgent(
            estimator=method.estimator(case),
            process=process,
            budget=budget,
            semi_supervised=method.learner_params.get("semi_supervised"),
            max_open_requests=args.max_open_requests,
            store=store,
            name=args.agent,
        )
        try:
            agent.fit(X, y, timestamps=times)
        finally:
            agent.close()
        if args.case and args.stream_out is not None:
            rest = np.setdiff1d(np.arange(split.X_stream.shape[0]), initial)
            stream = pd.DataFrame(split.X_stream[rest], columns=names)
            stream["label"] = split.y_stream[rest]
            atomic_write_text(Path(args.stream_out), stream.to_csv(index=False))
    finally:
        store.close()
    print(
        f"agent {args.agent!r} commissioned in {agent.store_.display_url} with "
        f"{X.shape[0]} labelled observations of {X.shape[1]} features; model "
        f"{type(agent.estimator_).__name__}, budget "
        + ("EVPI > inspection cost" if budget is None else repr(budget))
    )
    if args.case and args.stream_out is not None:
        print(f"wrote the stream ({len(rest)} observations) to {args.stream_out}")
    return 0


# ---------------------------------------------------------------------- #
# observe
# ---------------------------------------------------------------------- #
def _more_waiting(stream) -> bool:
    """Whether the next line can be read without waiting for the writer.

    True for regular files; for a pipe or terminal, whether data is ready, so
    that a live feed is decided line by line while a file goes by batches.
    """
    try:
        fd = stream.fileno()
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        return bool(select.select([fd], [], [], 0)[0])
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return True


class _DecisionWriter:
    """Decisions to a text stream as CSV (one header) or JSON lines."""

    def __init__(self, stream, fmt: str):
        self.stream, self.fmt, self.header = stream, fmt, True

    def write(self, decisions: pd.DataFrame) -> None:
        if self.fmt == "csv":
            if self.header or len(decisions):
                decisions.to_csv(self.stream, index=False, header=self.header)
                self.header = False
        else:
            for record in _records(decisions):
                # json writes floats with repr: exact, and no NaN (null).
                self.stream.write(json.dumps(record) + "\n")
        self.stream.flush()


def _records(decisions: pd.DataFrame) -> list[dict]:
    columns = {}
    for name in decisions.columns:
        column = decisions[name]
        if name == "request_id":
            values = [None if pd.isna(v) else int(v) for v in column]
        elif name == "timestamp":
            values = [None if math.isnan(v) else v for v in column.tolist()]
        else:
            values = column.tolist()
        columns[name] = values
    names = list(columns)
    return [dict(zip(names, row)) for row in zip(*columns.values())]


class _ObservationReader:
    """Rows of an observation CSV, checked as they come, in batches."""

    def __init__(self, stream, name: str, agent, timestamp_column):
        self.stream, self.name = stream, name
        self.reader = csv.reader(stream)
        try:
            header = next(self.reader)
        except StopIteration:
            raise ValueError(f"{name}: no header line") from None
        header = [h.strip() for h in header]
        self.stamp = None
        if timestamp_column is not None:
            if timestamp_column not in header:
                raise ValueError(
                    f"{name}: no timestamp column {timestamp_column!r} (columns: "
                    f"{header})"
                )
            self.stamp = header.index(timestamp_column)
        if agent.feature_names_in_ is not None:
            self.features = list(agent.feature_names_in_)
            missing = [f for f in self.features if f not in header]
            if missing:
                raise ValueError(
                    f"{name}: no column {missing} of the agent's features "
                    f"{self.features} (columns: {header})"
                )
            self.positions = [header.index(f) for f in self.features]
        else:
            self.positions = [i for i in range(len(header)) if i != self.stamp]
            self.features = [header[i] for i in self.positions]
            if len(self.positions) != agent.n_features_in_:
                raise ValueError(
                    f"{name}: {len(self.positions)} feature columns, but the agent "
                    f"has {agent.n_features_in_} features"
                )
        self.width = len(header)

    def _parse(self, record):
        line = self.reader.line_num
        if len(record) != self.width:
            raise ValueError(
                f"{self.name} line {line}: {len(record)} fields, the header has "
                f"{self.width}"
            )
        try:
            row = [float(record[i]) for i in self.positions]
        except ValueError:
            row = []
        if len(row) != len(self.positions) or not all(map(math.isfinite, row)):
            bad = next(
                j
                for j, i in enumerate(self.positions)
                if not _is_finite_number(record[i])
            )
            raise ValueError(
                f"{self.name} line {line}: column {self.features[bad]!r} holds "
                f"{record[self.positions[bad]]!r}, not a finite number"
            )
        return row, None if self.stamp is None else record[self.stamp].strip()

    def batches(self, size: int):
        """Yield ``(X, timestamps)``; a bad line raises after the rows before it."""
        rows, stamps = [], []
        try:
            for record in self.reader:
                if not record:
                    continue
                row, stamp = self._parse(record)
                rows.append(row)
                stamps.append(stamp)
                if len(rows) >= size or not _more_waiting(self.stream):
                    yield self._batch(rows, stamps)
                    rows, stamps = [], []
        except csv.Error as exc:
            if rows:
                yield self._batch(rows, stamps)
            raise ValueError(
                f"{self.name} line {self.reader.line_num}: {exc}"
            ) from None
        except ValueError:
            if rows:
                yield self._batch(rows, stamps)
            raise
        if rows:
            yield self._batch(rows, stamps)

    def _batch(self, rows, stamps):
        X = pd.DataFrame(np.asarray(rows, dtype=np.float64), columns=self.features)
        if self.stamp is None:
            return X, None
        return X, _timestamps(pd.Series(stamps))


def _is_finite_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


@contextlib.contextmanager
def _text_input(name: str):
    if name == "-":
        yield sys.stdin, "standard input"
    else:
        with open(name, newline="", encoding="utf-8") as stream:
            yield stream, name


@contextlib.contextmanager
def _text_output(name):
    if name is None:
        yield sys.stdout
    else:
        with open(name, "w", newline="", encoding="utf-8") as stream:
            yield stream


def _observe(args) -> int:
    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {args.batch_size}")
    store = _open_store(args)
    try:
        agent = _resume(args, store)
        try:
            with _text_input(args.input) as (source, name):
                reader = _ObservationReader(source, name, agent, args.timestamp_column)
                with _text_output(args.out) as out:
                    writer = _DecisionWriter(out, args.format)
                    n_done = 0
                    try:
                        for X, times in reader.batches(args.batch_size):
                            writer.write(agent.observe(X, timestamps=times))
                            n_done += X.shape[0]
                    except ValueError as exc:
                        raise ValueError(
                            f"{exc} ({n_done} observation(s) before it were "
                            "recorded, none after)"
                        ) from exc
                    if n_done == 0:
                        writer.write(agent.observe(np.zeros((0, agent.n_features_in_))))
        finally:
            agent.close()
    finally:
        store.close()
    return 0


# ---------------------------------------------------------------------- #
# inspect, cancel
# ---------------------------------------------------------------------- #
def _action_text(process, action: int) -> str:
    names = process.action_names
    return f"{action} ({names[action]})" if names is not None else str(action)


def _inspect(args) -> int:
    from skrbal.online import RequestError

    store = _open_store(args)
    try:
        agent = _resume(args, store)
        try:
            try:
                label = _labels_from_text(
                    [args.label], agent.classes_, f"LABEL {args.label!r}"
                )[0]
            except ValueError as exc:
                raise RequestError(f"{exc}; nothing was recorded") from None
            stamp = None
            if args.timestamp is not None:
                stamp = _timestamps(pd.Series([args.timestamp]))[0]
            action = agent.record_inspection(args.request_id, label, timestamp=stamp)
            step = int(
                agent.store_.requests(args.agent)
                .set_index("request_id")
                .loc[args.request_id, "step"]
            )
        finally:
            agent.close()
    finally:
        store.close()
    print(
        f"request {args.request_id} (step {step}): state {label} recorded; "
        f"optimal action {_action_text(agent.process, action)}"
    )
    return 0


def _cancel(args) -> int:
    store = _open_store(args)
    try:
        agent = _resume(args, store)
        try:
            agent.cancel_request(args.request_id, reason=args.reason)
        finally:
            agent.close()
    finally:
        store.close()
    print(f"request {args.request_id} cancelled")
    return 0


# ---------------------------------------------------------------------- #
# status, export
# ---------------------------------------------------------------------- #
def _status(args) -> int:
    store = _open_store(args)
    try:
        status = store.status(args.agent)
    finally:
        store.close()
    if args.json:
        print(json.dumps(status))
        return 0
    print(f"agent {status['name']!r}")
    for key in (
        "n_commissioning",
        "n_observations",
        "n_requests",
        "n_open",
        "n_results",
        "n_cancelled",
        "inspection_cost",
        "spend",
        "committed_spend",
        "last_evpi",
        "clock",
    ):
        print(f"  {key}: {status[key]}")
    labelled = ", ".join(f"{k}: {v}" for k, v in status["labelled"].items())
    print(f"  labelled: {labelled}")
    print(f"  budget_state: {json.dumps(status['budget_state'])}")
    shown = status["open_requests"][:_SHOWN_REQUESTS]
    for request in shown:
        print(
            f"  open request {request['request_id']}: step {request['step']}, "
            f"EVPI {request['evpi']:.6g}"
            + ("" if request["timestamp"] is None else f", at {request['timestamp']}")
        )
    if status["n_open"] > len(shown):
        print(f"  ... and {status['n_open'] - len(shown)} more open (see --json)")
    return 0


def _export(args) -> int:
    from skrbal.experiments._folder import atomic_write_bytes, atomic_write_text

    fmt = args.format or ("parquet" if args.out.endswith(".parquet") else "csv")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ImportError(
                "export to Parquet needs pyarrow, which is not installed: pip "
                "install 'skrbal[parquet]', or export to CSV (--format csv)"
            ) from None
    store = _open_store(args)
    try:
        table = getattr(store, args.table)(args.agent)
    finally:
        store.close()
    if "payload" in table.columns:  # dicts: as JSON text in a file
        table["payload"] = [json.dumps(v) for v in table["payload"]]
    label = table.get("label")
    if label is not None and label.dtype.kind == "f":
        known = label.dropna()
        if np.array_equal(known, np.round(known)):
            # Integer states with missing ones: pandas made them floats.
            table["label"] = label.astype("Int64")
    out = Path(args.out)
    if fmt == "csv":
        atomic_write_text(out, table.to_csv(index=False))
    else:
        atomic_write_bytes(out, table.to_parquet(index=False))
    print(f"wrote {len(table)} rows of {args.table} to {out}")
    return 0
