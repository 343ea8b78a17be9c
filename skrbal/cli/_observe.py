"""``skrbal agent observe``: decide for observations read as CSV, live.

Rows come from a file or standard input (a pipe: decided as they arrive),
are checked as they come (a bad line names the file, line and column and
keeps the rows before it), and each batch is committed to the store before
its decisions are written. Times come back as they were given (ISO in, ISO
out, in UTC) and actions with their names.

An agent in a SQLite file that its stored snapshot decides (see
:func:`~skrbal.online._snapshot_agent.snapshot_agent`), counting time in
steps or in seconds given as numbers, is observed without scikit-learn and
pandas
(:class:`~skrbal.online._snapshot_agent.SnapshotAgent`; issue 28.25): the
same decisions, store rows and output bytes. A batch that needs the model
(it changes the fantasised requests) and everything after it go to the
agent itself; ``SKRBAL_SNAPSHOT=off`` sends every batch there.
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
import warnings

import numpy as np

from skrbal._lazy import LazyModule
from skrbal._separators import separator_hint
from skrbal.cli._agent_commands import check_key_option
from skrbal.cli._agent_store import guarded, open_store, resumed_agent
from skrbal.cli._errors import Interrupted
from skrbal.cli._output import output_stream
from skrbal.cli._server_record import sqlite_file
from skrbal.cli._times import agent_times_are_iso, iso_time, iso_times

pd = LazyModule("pandas")  # the agent's own path; the snapshot's needs none

__all__ = ["observe"]


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
    """Decisions to a text stream as CSV (one header) or JSON lines.

    A frame (the agent's), or the arrays of a snapshot agent (CSV of an
    agent counting steps only), written as pandas writes the frame: floats
    as ``repr`` (the shortest text that reads back exactly), an empty cell
    for a missing value.
    """

    def __init__(self, stream, fmt: str, action_names, iso: bool, classes=()):
        self.stream, self.fmt, self.header = stream, fmt, True
        self.action_names, self.iso = action_names, iso
        self.classes = np.asarray(classes).tolist()

    def write(self, decisions, stamps) -> None:
        if isinstance(decisions, dict):
            self._write_arrays(decisions)
            return
        if self.iso or (stamps is not None and stamps.dtype == object):
            # Given as datetimes, to the agent or now (ISO text): shown as
            # ISO 8601 in UTC, as status and export show them.
            decisions["timestamp"] = iso_times(decisions["timestamp"])
        if self.action_names is not None and "action_name" not in decisions:
            position = decisions.columns.get_loc("action") + 1
            names = [self.action_names[a] for a in decisions["action"]]
            decisions.insert(position, "action_name", names)
        if self.fmt == "csv":
            if self.header or len(decisions):
                decisions.to_csv(self.stream, index=False, header=self.header)
                self.header = False
        else:
            for record in _records(decisions):
                # json writes floats with repr: exact, and no NaN (null).
                self.stream.write(json.dumps(record) + "\n")
        self.stream.flush()

    def _write_arrays(self, decided: dict) -> None:
        names = ["step", "timestamp", *(f"belief_{c}" for c in self.classes)]
        names += ["evpi", "inspect", "request_id", "action"]
        if self.action_names is not None:
            names.append("action_name")
        records = []  # each row's values, as the frame's records hold them
        for i, step in enumerate(decided["step"].tolist()):
            stamp, action = float(decided["timestamp"][i]), int(decided["action"][i])
            request = int(decided["request_id"][i])
            record = [step, None if math.isnan(stamp) else stamp]
            record += [float(b) for b in decided["belief"][i]]
            record += [float(decided["evpi"][i]), bool(decided["inspect"][i])]
            record += [request or None, action]
            if self.action_names is not None:
                record.append(self.action_names[action])
            records.append(record)
        if self.fmt != "csv":
            for record in records:
                # json writes floats with repr: exact, and no NaN (null).
                self.stream.write(json.dumps(dict(zip(names, record))) + "\n")
        elif self.header or records:
            rows = [names] if self.header else []
            rows += [[_cell_text(v) for v in record] for record in records]
            self.header = False
            # pandas writes with the csv module: the same quoting and line ends.
            csv.writer(self.stream, lineterminator="\n").writerows(rows)
        self.stream.flush()


def _cell_text(value) -> str:
    """A value as pandas' ``to_csv`` writes it: floats as ``repr``, a missing
    one as nothing."""
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _records(decisions) -> list[dict]:
    columns = {}
    for name in decisions.columns:
        column = decisions[name]
        if name == "request_id":
            values = [None if pd.isna(v) else int(v) for v in column]
        elif name == "timestamp":
            values = [None if pd.isna(v) else v for v in column.tolist()]
        else:
            values = column.tolist()
        columns[name] = values
    names = list(columns)
    return [dict(zip(names, row)) for row in zip(*columns.values())]


class _ObservationReader:
    """Rows of an observation CSV, checked as they come, in batches."""

    def __init__(
        self,
        stream,
        name: str,
        agent,
        timestamp_column,
        date_format=None,
        zoned=False,
        stored_column="time",
        skip_missing=False,
    ):
        self.stream, self.name, self.date_format = stream, name, date_format
        self.zoned, self.skip_missing, self.skipped = zoned, skip_missing, []
        self.reader = csv.reader(_decoded_lines(stream, name))
        try:
            header = next(self.reader)
        except StopIteration:
            raise ValueError(f"{name}: no header line") from None
        header = [h.strip() for h in header]
        hint = separator_hint(header)
        if hint:
            raise ValueError(f"{name}: {hint}")
        self.stamp = None
        untimed = ""
        if timestamp_column is None and agent.status()["clock"] == "timestamp":
            # The agent's own time column (stored at init), else as in a
            # campaign file: a column named 'time' is the times.
            if stored_column in header:
                timestamp_column = stored_column
            else:
                untimed = (
                    "; the agent was commissioned with times, so every observation "
                    f"needs one: it reads them from column {stored_column!r}, or "
                    "name their column with --time-column"
                )
        if timestamp_column is not None:
            if timestamp_column not in header:
                raise ValueError(
                    f"{name}: no timestamp column {timestamp_column!r} (columns: "
                    f"{header})"
                )
            self.stamp = header.index(timestamp_column)
            self.stamp_name = f"{name}: timestamps (column {timestamp_column!r})"
        if agent.feature_names_in_ is not None:
            self.features = list(agent.feature_names_in_)
            missing = [f for f in self.features if f not in header]
            if missing:
                raise ValueError(
                    f"{name}: no column {missing} of the agent's features "
                    f"{self.features} (columns: {header}){untimed}"
                )
            self.positions = [header.index(f) for f in self.features]
        else:
            self.positions = [i for i in range(len(header)) if i != self.stamp]
            self.features = [header[i] for i in self.positions]
            if len(self.positions) != agent.n_features_in_:
                raise ValueError(
                    f"{name}: {len(self.positions)} feature columns, but the agent "
                    f"has {agent.n_features_in_} features{untimed}"
                )
        if untimed:
            raise ValueError(f"{name}: no times (columns: {header}){untimed}")
        self.width = len(header)

    def _parse(self, record):
        line = self.reader.line_num
        if len(record) != self.width:
            raise ValueError(
                f"{self.name} line {line}: {len(record)} fields, the header has "
                f"{self.width}"
            )
        if self.skip_missing:
            gaps = [
                self.features[j]
                for j, i in enumerate(self.positions)
                if record[i].strip(" \t") in _MISSING
            ]
            if gaps:
                stamp = None if self.stamp is None else record[self.stamp].strip()
                self.skipped.append((line, gaps, stamp or None))
                return None
        try:
            row = [_number(record[i]) for i in self.positions]
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
        return row, None if self.stamp is None else record[self.stamp].strip(), line

    def batches(self, size: int, fixed: bool = False):
        """Yield ``(X, timestamps)``; a bad line raises after the rows before it.

        ``fixed``: every batch but the last has ``size`` rows, even from a
        pipe (the batches of a keyed command must not depend on timing).
        """
        rows, stamps, lines = [], [], []
        try:
            for record in self.reader:
                if not record:
                    continue
                parsed = self._parse(record)
                if parsed is None:  # a sensor dropout, skipped
                    continue
                row, stamp, line = parsed
                rows.append(row)
                stamps.append(stamp)
                lines.append(line)
                if len(rows) >= size or (not fixed and not _more_waiting(self.stream)):
                    yield self._batch(rows, stamps, lines)
                    rows, stamps, lines = [], [], []
        except csv.Error as exc:
            if rows:
                yield self._batch(rows, stamps, lines)
            raise ValueError(
                f"{self.name} line {self.reader.line_num}: {exc}"
            ) from None
        except ValueError:
            if rows:
                yield self._batch(rows, stamps, lines)
            raise
        if rows:
            yield self._batch(rows, stamps, lines)

    def _batch(self, rows, stamps, lines):
        # The columns are the agent's features, in its order, by name: the
        # array needs no names for the agent to check.
        self.batch_lines = list(lines)
        X = np.asarray(rows, dtype=np.float64)
        if self.stamp is None:
            return X, None
        if self.date_format is None and all(
            _NUMBER.fullmatch(s.strip(" \t")) for s in stamps
        ):
            # Seconds by the features' grammar: read as pandas reads them
            # (both round to the nearest double), without pandas.
            return X, np.array([float(s) for s in stamps], dtype=np.float64)
        from skrbal._datetimes import parse_datetimes
        from skrbal.cli._time_options import timestamps

        if self.date_format is None:
            stamps = timestamps(pd.Series(stamps))
            if stamps.dtype != object:
                return X, stamps  # seconds
        if self.zoned:
            self._refuse_naive(stamps, lines)
        # Dates read here, where the file's lines are known.
        dates = parse_datetimes(
            np.asarray(stamps, dtype=object),
            self.stamp_name,
            date_format=self.date_format,
            where=lambda i: f"line {lines[i]}",
        )
        return X, dates.tz_convert(None).to_numpy()

    def _refuse_naive(self, stamps, lines) -> None:
        """The rule of zoned agents: a time without a UTC offset is refused."""
        from skrbal._datetimes import carry_utc_offsets

        for stamp, line in zip(stamps, lines):
            if not carry_utc_offsets([stamp]):
                raise ValueError(
                    f"{self.stamp_name} line {line}: {stamp!r} has no UTC offset, "
                    "but the agent was commissioned with times that carry one "
                    "(such as Z or +01:00); a time without one would be read as "
                    "UTC, and a local clock is not: add the offset (Z for UTC)"
                )


def _in_the_file(message: str, reader, name: str) -> str:
    """The agent's "row i of this call" as the line of the file it came from."""
    lines = getattr(reader, "batch_lines", None)

    def line(match):
        row = int(match[1])
        return f"line {lines[row]} of {name}" if row < len(lines) else match[0]

    def span(match):
        first, last = int(match[1]), int(match[2])
        if last >= len(lines):
            return match[0]
        return f"lines {lines[first]} to {lines[last]} of {name}"

    if not lines:
        return message
    message = re.sub(r"rows (\d+) to (\d+) of this call", span, message)
    return re.sub(r"row (\d+) of this call", line, message)


@contextlib.contextmanager
def _warnings_in_the_file(reader, name: str):
    """Warnings of the agent naming "row i of this call" name the file's line.

    (:class:`~skrbal.exceptions.RepeatedBatchWarning`, say: the rule is the
    agent's, the file's lines are the command's.)
    """
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        message = _in_the_file(str(message), reader, name)
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


def _interrupted(args, name: str, n_done: int, last) -> str:
    """The one line of an observe stopped by Ctrl-C: what stays, how to go on."""
    text = f"interrupted (Ctrl-C): {n_done} observation(s) of {name} recorded"
    if last is None:
        return text + "; run the command again to observe them"
    decision, line, iso = last
    stamp = decision["timestamp"]
    when = ""
    if not (isinstance(stamp, float) and math.isnan(stamp)) and not pd.isna(stamp):
        when = f" at {iso_time(stamp) if iso else format(float(stamp), 'g')}"
    text += f", up to step {int(decision['step'])}{when} (line {line})"
    if args.key is not None:
        return text + (
            f"; run the same command with --key {args.key} to resume (the "
            "batches recorded come from the store)"
        )
    return text + f"; resume with the lines after line {line} (or use --key)"


# What a missing measurement looks like in a CSV (a sensor dropout): an
# empty cell, or pandas' and R's markers. Only --skip-missing skips them.
_MISSING = frozenset({"", "NA", "N/A", "NaN", "nan", "null", "NULL", "None"})


def _report_skipped(reader, name: str, recorded: bool) -> list:
    """One line per row skipped for a missing value, on standard error.

    Returns the rows, ``(line, columns, time)``, for the agent to record
    with the batch that follows them, or alone after the input's last
    observation (``recorded``); when the command stops on an error, they are
    only named.
    """
    where = "recorded in the store" if recorded else "not recorded (stopped)"
    for line, columns, _ in reader.skipped:
        named = ", ".join(repr(c) for c in columns)
        print(
            f"skrbal: {name} line {line} skipped (--skip-missing): no value in "
            f"column {named}; not observed, no step; {where}",
            file=sys.stderr,
        )
    skipped, reader.skipped = reader.skipped, []
    return skipped


# A feature value: an optional sign, ASCII digits with an optional decimal
# point, an optional exponent (-1.5, 2e-3, .5, 7.). Python's float() also
# takes 1_000, other scripts' digits, inf and nan: none is a measurement.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number(text: str) -> float:
    """The value of a CSV cell that is a number by the documented grammar."""
    text = text.strip(" \t")
    if _NUMBER.fullmatch(text) is None:
        raise ValueError(text)
    return float(text)


def _is_finite_number(text: str) -> bool:
    try:
        return math.isfinite(_number(text))
    except ValueError:
        return False


def _decoded_lines(stream, name: str):
    """The lines of a binary stream as text; a line not UTF-8 is named."""
    for number, raw in enumerate(stream, start=1):
        try:
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{name} line {number}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); "
                "save the file as UTF-8"
            ) from None


@contextlib.contextmanager
def _binary_input(name: str):
    if name == "-":
        yield sys.stdin.buffer, "standard input"
        return
    try:
        stream = open(name, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"INPUT {name}: no such file") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"INPUT {name}: is a directory") from None
    with stream:
        yield stream, name


class _Agents:
    """The agent a command observes with: its snapshot's, until a batch needs
    the model; then the agent itself, resumed from the store, for the rest."""

    def __init__(self, args, stack: contextlib.ExitStack):
        self.args, self.stack = args, stack
        self.agent = _snapshot_agent(args, stack)
        self.fast = self.agent is not None
        if not self.fast:
            self.agent = stack.enter_context(resumed_agent(args))

    def observe(self, X, **call):
        """The agent's decisions for a batch (arrays from the snapshot's)."""
        if not self.fast:
            return self.agent.observe(X, **call)
        from skrbal.exceptions import RequestExpiredWarning, caller_stacklevel
        from skrbal.online import NeedsModel

        # Held (no filter's registry touched) until it is known which path
        # decides the batch, then issued from the same place the agent's are.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                decided = self.agent.observe(X, **call)
            except NeedsModel:
                decided = None
        if decided is None:
            # What was written stays (an expiry): its warning is issued; the
            # rest of the batch, unwritten, goes to the agent, which warns again.
            caught = [w for w in caught if w.category is RequestExpiredWarning]
        for w in caught:
            warnings.warn(w.message, stacklevel=caller_stacklevel())
        if decided is None:
            self.agent.close()
            self.fast = False
            self.agent = self.stack.enter_context(resumed_agent(self.args))
            return self.agent.observe(X, **call)
        return decided


def _snapshot_agent(args, stack):
    """The snapshot agent of ``--agent``, or None: observe with the agent."""
    if (
        os.environ.get("SKRBAL_SNAPSHOT", "").lower() == "off"
        or getattr(args, "served_agent", None) is not None
        or args.date_format is not None
        or args.wait < 0
        or sqlite_file(args.store) is None
    ):
        return None
    from skrbal.online import open_sqlite_store, snapshot_agent

    # The standard library's sqlite3, not SQLAlchemy (0.4 s to import), when
    # the file is one it serves; else the store as every command opens it.
    store = open_sqlite_store(args.store) or open_store(args)
    stack.callback(store.close)
    agent = snapshot_agent(store, args.agent, lock_timeout=args.wait)
    if agent is None:
        return None
    stack.callback(agent.close)
    if agent_times_are_iso(store, args.agent):  # dates: read with pandas
        agent.close()
        return None
    return agent


@guarded
def observe(args) -> int:
    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {args.batch_size}")
    check_key_option(args.key)
    with contextlib.ExitStack() as stack:
        agents = _Agents(args, stack)
        agent = agents.agent
        with _binary_input(args.input) as (source, name):
            settings = agent.store_.configuration(args.agent)["settings"]
            reader = _ObservationReader(
                source,
                name,
                agent,
                args.timestamp_column,
                args.date_format,
                zoned=settings.get("time_zone") == "offset",
                stored_column=settings.get("time_column", "time"),
                skip_missing=args.skip_missing,
            )
            with output_stream(args.out) as out:
                writer = _DecisionWriter(
                    out,
                    args.format,
                    agent.process.action_names,
                    agent_times_are_iso(agent.store_, args.agent),
                    agent.classes_,
                )
                n_done, last, i = 0, None, 0
                try:
                    batches = reader.batches(args.batch_size, args.key is not None)
                    for i, (X, times) in enumerate(batches, start=1):
                        key = None if args.key is None else f"{args.key}#{i}"
                        skipped = _report_skipped(reader, name, recorded=True)
                        with _warnings_in_the_file(reader, name):
                            decided = agents.observe(
                                X, timestamps=times, key=key, skipped=skipped
                            )
                        n_done += X.shape[0]
                        last = (_last_row(decided), reader.batch_lines[-1], writer.iso)
                        writer.write(decided, times)
                    # Lines skipped after the last decided row: an event of
                    # their own, keyed as the next batch would be.
                    skipped = _report_skipped(reader, name, recorded=True)
                    if skipped:
                        key = None if args.key is None else f"{args.key}#{i + 1}"
                        empty = np.zeros((0, agents.agent.n_features_in_))
                        agents.observe(empty, key=key, skipped=skipped)
                except KeyboardInterrupt:
                    raise Interrupted(_interrupted(args, name, n_done, last)) from None
                except ValueError as exc:
                    raise ValueError(
                        f"{_in_the_file(str(exc), reader, name)} ({n_done} "
                        "observation(s) before it were recorded, none after)"
                    ) from exc
                finally:
                    _report_skipped(reader, name, recorded=False)
                if n_done == 0:
                    empty = np.zeros((0, agents.agent.n_features_in_))
                    writer.write(agents.observe(empty), None)
    return 0


def _last_row(decided):
    """The last decision of a batch: its ``step`` and ``timestamp``."""
    if isinstance(decided, dict):
        return {
            "step": int(decided["step"][-1]),
            "timestamp": float(decided["timestamp"][-1]),
        }
    return decided.iloc[-1]
