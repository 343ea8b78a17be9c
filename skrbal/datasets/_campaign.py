"""A user's own monitoring campaign: a table of features, labels and actions."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from skrbal._datetimes import carry_utc_offsets, parse_datetimes
from skrbal._decision import as_process
from skrbal._separators import separator_hint
from skrbal.datasets._files import csv_text

__all__ = ["load_campaign"]

_PARQUET_SUFFIXES = (".parquet", ".pq")


def _read_table(data) -> tuple[pd.DataFrame, str, str, int]:
    """The table, its name in messages, its source and the line of row 0."""
    if isinstance(data, pd.DataFrame):
        digest = hashlib.sha256(
            pd.util.hash_pandas_object(data, index=False).to_numpy().tobytes()
        ).hexdigest()
        source = f"DataFrame of shape {data.shape}, sha256 {digest}"
        return data.reset_index(drop=True), "the campaign DataFrame", source, 0
    if not isinstance(data, str | os.PathLike):
        raise ValueError(
            "data must be the path of a CSV or Parquet file or a DataFrame, got "
            f"{type(data).__name__}."
        )
    path = Path(data)
    if not path.is_file():
        raise FileNotFoundError(f"campaign file not found: {path}.")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        raw = path.read_bytes()
        text = csv_text(path, "load_campaign", raw)
        if not text.strip():
            raise ValueError(f"{path} is empty: it holds no campaign.")
        try:
            table = pd.read_csv(
                io.StringIO(text), skipinitialspace=True, **_EXACT_FLOATS
            )
        except (pd.errors.ParserError, ValueError) as exc:
            raise ValueError(f"{path} is not a readable CSV file: {exc}") from None
        _check_separator(table, path)
        first_line = 2  # line 1 is the header
    elif suffix in _PARQUET_SUFFIXES:
        if importlib.util.find_spec("pyarrow") is None:
            raise ImportError(
                f"reading {path} (Parquet) needs pyarrow, which is not installed: "
                "pip install 'skrbal[parquet]' (or pyarrow), or save the campaign "
                "as CSV."
            )
        raw = path.read_bytes()
        try:
            table = pd.read_parquet(io.BytesIO(raw), engine="pyarrow")
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path} is not a readable Parquet file: {exc}") from None
        table = table.reset_index(drop=True)
        first_line = 0
    else:
        raise ValueError(
            f"cannot read {path}: expected a .csv, .parquet or .pq file, got "
            f"{suffix!r}."
        )
    # The digest of the bytes parsed, read once: a file rewritten meanwhile
    # cannot be recorded under another content's hash.
    digest = hashlib.sha256(raw).hexdigest()
    return table, str(path), f"{path}, sha256 {digest}", first_line


def _check_separator(table: pd.DataFrame, path) -> None:
    hint = separator_hint(table.columns)
    if hint:
        raise ValueError(f"{path}: {hint}.")


def _decimal_comma_hint(value) -> str:
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+,\d+\s*", value):
        return f" (a decimal comma? write {value.strip().replace(',', '.')})"
    return ""


def _shown(value):
    """A cell as the user wrote it: ``5``, not ``np.int64(5)``."""
    return value.item() if isinstance(value, np.generic) else value


class _Table:
    """Column checks of one campaign table; messages name file, column and row."""

    def __init__(self, frame: pd.DataFrame, name: str, first_line: int):
        self.frame, self.name, self.first_line = frame, name, first_line
        self.time_zoned = False

    def row(self, index: int) -> str:
        where = f"row {index} (counted from 0"
        if self.first_line:
            where += f"; line {index + self.first_line} of the file"
        return where + ")"

    def column(self, column, role: str, *, required: bool) -> pd.Series | None:
        if column in self.frame.columns:
            return self.frame[column]
        if not required:
            return None
        raise ValueError(
            f"{self.name} has no {role} column {column!r}; its columns are "
            f"{list(map(str, self.frame.columns))}. Pass {role}_column= (or "
            f"--{role}-column) with its name."
        )

    def no_missing(self, values: pd.Series, role: str) -> None:
        missing = np.flatnonzero(values.isna().to_numpy())
        if missing.size:
            raise ValueError(
                f"{self.name}: {role} column {values.name!r} has a missing value "
                f"(NaN or empty) at {self.row(int(missing[0]))}."
            )

    def not_dates(self, values: pd.Series, role: str, *, text: bool) -> None:
        """Refuse a column of dates or times, which would be nanoseconds.

        With ``text``, a column of strings that all read as dates is refused too
        (call it only for a column that is not numbers: "1.5" reads as a date).
        """
        dated = pd.api.types.is_datetime64_any_dtype(
            values
        ) or pd.api.types.is_timedelta64_dtype(values)
        if text and not dated:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    pd.to_datetime(values.astype(str), format="mixed")
                dated = True
            except (TypeError, ValueError, OverflowError):
                pass
        if dated:
            raise ValueError(
                f"{self.name}: {role} column {values.name!r} holds dates or times, "
                f"not numbers: pass time_column={values.name!r} (--time-column "
                f"{values.name}) if it is the time of the observations, or leave "
                "it out of the features."
            )

    def numeric(self, values: pd.Series, role: str) -> np.ndarray:
        self.no_missing(values, role)
        self.not_dates(values, role, text=False)
        numbers = _exact_numbers(values)
        bad = np.flatnonzero(numbers.isna().to_numpy())
        if bad.size:
            self.not_dates(values, role, text=True)
            raise ValueError(
                f"{self.name}: {role} column {values.name!r} is not numeric: "
                f"{self.row(int(bad[0]))} holds {_shown(values.iloc[bad[0]])!r}"
                f"{_decimal_comma_hint(values.iloc[bad[0]])}."
            )
        numbers = numbers.to_numpy(dtype=float)
        infinite = np.flatnonzero(~np.isfinite(numbers))
        if infinite.size:
            raise ValueError(
                f"{self.name}: {role} column {values.name!r} has a non-finite "
                f"value ({numbers[infinite[0]]}) at {self.row(int(infinite[0]))}."
            )
        return numbers

    def scalable(self, numbers: np.ndarray, column) -> None:
        """Refuse a varying feature whose standardisation overflows float64.

        ``[1e308, -1e308]`` has a finite range but an infinite mean or spread:
        standardised, it becomes all ``-0.0`` (or NaN).
        """
        if numbers.size < 2 or np.all(numbers == numbers[0]):
            return  # a constant: its users decide (a study names it)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            mean, scale = numbers.mean(), numbers.std()
            scaled = (numbers - mean) / scale
        if not (
            np.isfinite(mean)
            and np.isfinite(scale)
            and scale > 0
            and np.all(np.isfinite(scaled))
            and np.ptp(scaled) > 0
        ):
            raise ValueError(
                f"{self.name}: feature column {column!r} holds values too large to "
                f"standardise (from {numbers.min():g} to {numbers.max():g}: its "
                "mean or spread overflows a float64); express it in larger units "
                "so that its values stay below about 1e150."
            )


def _labels(table: _Table, values: pd.Series, process, unlabelled=False):
    missing = values.isna() | (values.astype(str).str.strip() == "")
    if unlabelled and missing.any():
        # Missing labels stay None; the others are read as below.
        y = np.full(values.size, None, dtype=object)
        present = np.flatnonzero(~missing.to_numpy())
        y[present] = _labels(table, values.iloc[present], process)
        return y
    table.no_missing(values, "label")
    if process is None:
        return values.to_numpy()
    classes = process.classes_
    positions = pd.Index(classes).get_indexer(values.to_numpy())
    outside = np.flatnonzero(positions < 0)
    if outside.size:
        found = sorted({str(_shown(v)) for v in values.iloc[outside]})
        raise ValueError(
            f"{table.name}: label column {values.name!r} holds {found[:10]}, not "
            f"states of the process (its classes are {classes.tolist()}); the "
            f"first is at {table.row(int(values.index[outside[0]]))}."
        )
    return classes[positions]


def _joined_labels(data: _Table, labels_file, label_column, time_column, date_format):
    """The states of a labels file, one per row of ``data`` (None elsewhere)."""
    frame, name, _, first_line = _read_table(labels_file)
    labels = _Table(frame, name, first_line)
    if data.column(label_column, "label", required=False) is not None:
        raise ValueError(
            f"{data.name} has a label column already; give the labels in one "
            "place, the campaign file or the labels file."
        )
    state = next((c for c in ("state", "label") if c in frame.columns), None)
    if state is None:
        raise ValueError(
            f"{name} has no column 'state' (or 'label'); its columns are "
            f"{list(map(str, frame.columns))}."
        )
    n = data.frame.shape[0]
    if "row" in frame.columns:
        rows = labels.numeric(frame["row"], "row")
        bad = np.flatnonzero((rows != np.round(rows)) | (rows < 0) | (rows >= n))
        if bad.size:
            raise ValueError(
                f"{name}: {labels.row(int(bad[0]))} names row {rows[bad[0]]:g}, "
                f"not a row of {data.name} (0 to {n - 1})."
            )
        rows = rows.astype(np.int64)
    else:
        times = data.column(time_column, "time", required=True)
        when = labels.column("time", "time", required=True)
        wanted = _instants(labels, when, date_format)
        known = _instants(data, times, date_format)
        rows = np.searchsorted(known, wanted)
        rows = np.minimum(rows, n - 1)
        bad = np.flatnonzero(known[rows] != wanted)
        if bad.size:
            raise ValueError(
                f"{name}: {labels.row(int(bad[0]))} is dated {when.iloc[bad[0]]}, "
                f"the time of no row of {data.name}: each inspection is joined to "
                "the measurement of the same time."
            )
    twice = np.flatnonzero(pd.Series(rows).duplicated().to_numpy())
    if twice.size:
        raise ValueError(
            f"{name}: {labels.row(int(twice[0]))} labels row {rows[twice[0]]} of "
            f"{data.name} again."
        )
    joined = np.full(n, None, dtype=object)
    joined[rows] = frame[state].to_numpy(dtype=object)
    return joined


def _instants(table: _Table, values: pd.Series, date_format) -> np.ndarray:
    """A time column as numbers (seconds, or nanoseconds of UTC dates)."""
    if pd.api.types.is_numeric_dtype(values):
        return table.numeric(values, "time")
    table.no_missing(values, "time")
    stamps = parse_datetimes(
        values.to_numpy(dtype=object),
        f"{table.name}: time column {values.name!r}",
        date_format=date_format,
        where=table.row,
    )
    return stamps.tz_convert(None).as_unit("ns").asi8


def _actions(table: _Table, values: pd.Series, process) -> np.ndarray:
    table.no_missing(values, "action")
    names = None if process is None else process.action_names
    if names is not None and not pd.api.types.is_numeric_dtype(values):
        positions = pd.Index(list(names)).get_indexer(values.astype(str).to_numpy())
    else:
        numbers = table.numeric(values, "action")
        positions = np.where(numbers == np.round(numbers), numbers, -1).astype(int)
        if process is not None:
            positions[positions >= process.n_actions] = -1
    outside = np.flatnonzero(positions < 0)
    if outside.size:
        allowed = (
            "integers >= 0"
            if process is None
            else f"0 to {process.n_actions - 1}"
            + (f" or the names {list(names)}" if names is not None else "")
        )
        first = int(outside[0])
        raise ValueError(
            f"{table.name}: action column {values.name!r} holds "
            f"{_shown(values.iloc[first])!r} at {table.row(first)}, not an action "
            f"of the process (allowed: {allowed})."
        )
    return positions.astype(np.int64)


def _time(table: _Table, values: pd.Series, date_format=None) -> np.ndarray:
    table.no_missing(values, "time")
    if pd.api.types.is_numeric_dtype(values):
        time = table.numeric(values, "time")
    else:
        # Read as a live agent reads its timestamps: ISO 8601 in any spelling,
        # naive ones as UTC; returned as datetime64 in UTC.
        name = f"{table.name}: time column {values.name!r}"
        stamps = parse_datetimes(
            values.to_numpy(dtype=object),
            name,
            date_format=date_format,
            where=table.row,
        )
        time = stamps.tz_convert(None).to_numpy()
        table.time_zoned = carry_utc_offsets(values.to_numpy(dtype=object))
    backwards = np.flatnonzero(time[1:] < time[:-1])
    if backwards.size:
        row = int(backwards[0]) + 1
        raise ValueError(
            f"{table.name}: time column {values.name!r} is not in increasing "
            f"order: {table.row(row)} ({values.iloc[row]}) comes after "
            f"{values.iloc[row - 1]}. The rows must be the observations in "
            "temporal order; sort the file by time."
        )
    return time


def load_campaign(
    data,
    process=None,
    *,
    label_column: str = "label",
    feature_columns: Sequence[str] | None = None,
    action_column: str | None = None,
    time_column: str | None = None,
    unlabelled: bool = False,
    date_format: str | None = None,
    labels_file=None,
) -> Bunch:
    """Read a monitoring campaign of your own: features, labels, actions.

    The campaign is a table with one row per observation, in temporal order:
    numeric feature columns, a label column (the health state an inspection
    would reveal), and optionally an action column (the maintenance action
    taken after the observation) and a time column.

    Parameters
    ----------
    data : str, path-like or DataFrame
        A ``.csv`` file (UTF-8, a header line naming the columns), a
        ``.parquet`` / ``.pq`` file (needs pyarrow: ``pip install
        'skrbal[parquet]'``) or a DataFrame.
    process : DecisionProcess, dict, str or path-like, default=None
        The decision process the labels and actions belong to: an object, a
        dict as :meth:`~skrbal.DecisionProcess.to_dict` writes, or a JSON file
        as :meth:`~skrbal.DecisionProcess.to_json` writes. Labels must be its
        classes and actions its action indices (or names). ``None`` checks
        neither.
    label_column : str, default='label'
        The column of the labels.
    feature_columns : sequence of str, default=None
        The feature columns, in this order. ``None`` takes every column that
        is not the label, action or time column.
    action_column : str, default=None
        The column of the actions: integers ``0 .. n_actions - 1``, or the
        process's action names. ``None`` uses a column named ``'action'`` if
        there is one; without it every action is 0 (by convention "do
        nothing").
    time_column : str, default=None
        The column of the observation times (numbers or dates), which must be
        in increasing order. ``None`` uses a column named ``'time'`` if there
        is one. The times are checked and returned, not used as features; any
        other column of dates or times is refused as a feature.
    unlabelled : bool, default=False
        Whether a row may lack its label (NaN or empty): its ``y`` is then
        ``None`` (``y`` an object array), as
        :meth:`~skrbal.online.RiskBasedAgent.commission` reads it (the rows
        after the first unlabelled one are observed). ``False``: a missing
        label is an error.
    labels_file : str, path-like or DataFrame, default=None
        Inspection results kept apart from the measurements: a table with a
        ``state`` (or ``label``) column and a ``time`` column, whose times
        must each be the time of one row of ``data`` (the same instant; ISO
        8601 spelt as you like), or a ``row`` column (counted from 0). Its
        states fill the label column (which ``data`` must then not have);
        every other row is unlabelled (needs ``unlabelled=True``). A time or
        row not in ``data``, or one given twice, is an error naming the line.
    date_format : str, default=None
        The form of the time column's dates when they are not ISO 8601, in
        ``strftime`` codes (``'%d/%m/%Y %H:%M'``).
        ``None`` reads ISO 8601 (``1998-02-01T00:00Z``; naive times as UTC)
        or numbers, and refuses any other text, naming its row: a date such
        as ``01/02/1998`` is day-first in some places, month-first in others.

    Returns
    -------
    campaign : Bunch
        ``X`` (ndarray of shape ``(n_samples, n_features)``), ``y`` (labels,
        as the process's classes), ``actions`` (int ndarray), ``time``
        (numbers, datetime64 in UTC, or ``None``), ``time_zoned`` (whether
        the file's times carried a UTC offset), ``feature_names`` (list of
        str), ``process`` (the validated process, or ``None``), ``source``
        (the file and its SHA-256, or the DataFrame's shape and hash) and
        ``description`` (the columns used, in words).

    Raises
    ------
    FileNotFoundError
        If the file (or the process file) does not exist.
    ImportError
        If a Parquet file is given and pyarrow is not installed.
    ValueError
        Naming the file, the column and the row: a missing label (or given
        feature, action or time) column, a label that is not a state of the
        process, a non-numeric or missing (NaN) feature value, a feature
        column of dates or times (pass it as ``time_column``), a feature whose
        values are too large to standardise (its mean or spread overflows), a
        time column out of order, an action that is not one of the process's,
        fewer than 2 rows.

    See Also
    --------
    skrbal.experiments.campaign_case : A case study on such a campaign.
    skrbal.DecisionProcess.from_json : The process file.

    Examples
    --------
    >>> import pandas as pd
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.datasets import load_campaign
    >>> table = pd.DataFrame({"time": [0.0, 1.0, 2.0], "strain": [1.2, 1.4, 3.1],
    ...                       "label": [1, 1, 3], "action": [0, 0, 1]})
    >>> campaign = load_campaign(table, synthetic_decision_process())
    >>> campaign.X.tolist(), campaign.y.tolist(), campaign.actions.tolist()
    ([[1.2], [1.4], [3.1]], [1, 1, 3], [0, 0, 1])
    >>> campaign.feature_names
    ['strain']
    """
    process = None if process is None else as_process(process)
    frame, name, source, first_line = _read_table(data)
    table = _Table(frame, name, first_line)
    if labels_file is not None:
        if not unlabelled:
            raise ValueError("labels_file needs unlabelled=True: rows without one.")
        frame[label_column] = _joined_labels(
            table,
            labels_file,
            label_column,
            "time" if time_column is None else time_column,
            date_format,
        )
        source += f"; labels from {labels_file}"
    labels = table.column(label_column, "label", required=True)
    # "is None", not "or": a DataFrame's column may be named 0.
    actions = table.column(
        "action" if action_column is None else action_column,
        "action",
        required=action_column is not None,
    )
    times = table.column(
        "time" if time_column is None else time_column,
        "time",
        required=time_column is not None,
    )
    roles = {label_column} | {c.name for c in (actions, times) if c is not None}
    if feature_columns is None:
        feature_columns = [c for c in frame.columns if c not in roles]
    else:
        if isinstance(feature_columns, str):
            raise ValueError(
                f"feature_columns must be a list of column names, got the string "
                f"{feature_columns!r}; pass [{feature_columns!r}] for one column."
            )
        feature_columns = list(feature_columns)
        for column in feature_columns:
            if column in roles:
                raise ValueError(
                    f"{name}: column {column!r} is the label, action or time "
                    "column; it cannot also be a feature."
                )
            table.column(column, "feature", required=True)
    if not feature_columns:
        raise ValueError(
            f"{name} has no feature column: its columns are "
            f"{list(map(str, frame.columns))}."
        )
    if frame.shape[0] == 0:
        raise ValueError(f"{name} holds no observations (no rows).")
    if frame.shape[0] == 1:
        # A feature of one row would be called "constant" downstream.
        raise ValueError(
            f"{name} holds 1 observation (row): a campaign needs at least 2."
        )
    X = np.column_stack([table.numeric(frame[c], "feature") for c in feature_columns])
    for column, numbers in zip(feature_columns, X.T, strict=True):
        table.scalable(numbers, column)
    y = _labels(table, labels, process, unlabelled)
    action_values = (
        np.zeros(frame.shape[0], dtype=np.int64)
        if actions is None
        else _actions(table, actions, process)
    )
    time = None if times is None else _time(table, times, date_format)
    description = (
        f"features {list(map(str, feature_columns))}, labels from column "
        f"{label_column!r}, "
        + (
            "no action column (every action 0)"
            if actions is None
            else f"actions from column {actions.name!r}"
        )
        + ("" if times is None else f", time from column {times.name!r}")
    )
    return Bunch(
        X=X,
        y=y,
        actions=action_values,
        time=time,
        time_zoned=table.time_zoned,
        feature_names=list(map(str, feature_columns)),
        process=process,
        source=source,
        description=description,
    )


# Numbers read back exactly as written: pandas 2's default CSV parser can be an
# ulp off (an agent commissioned from a file then differed from the same rows
# given in Python), so it parses as Python does ("round_trip"); pandas 3's
# default is exact and deprecates the option.
_EXACT_FLOATS = (
    {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
)


def _exact_numbers(values: pd.Series) -> pd.Series:
    """Numbers of a column, NaN where a value is not one.

    Text is parsed by Python's ``float``, which reads back exactly the number
    it was written from (pandas 2.0's ``to_numeric`` of text can be a few
    ulps off); anything else goes through ``pd.to_numeric``.
    """
    if values.dtype == object:
        try:
            return pd.Series(np.asarray(values, dtype=float), index=values.index)
        except (TypeError, ValueError, OverflowError):
            pass
    return pd.to_numeric(values, errors="coerce")
