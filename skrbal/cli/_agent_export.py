"""``skrbal agent verify|export``: an agent's records checked, or written out."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from skrbal.cli._agent_store import guarded, open_store
from skrbal.cli._formulas import neutralise_formulas
from skrbal.cli._output import write_output
from skrbal.cli._times import iso_times

__all__ = ["export", "verify"]


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
