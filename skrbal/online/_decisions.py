"""What one ``observe`` call decided, and the table it returns.

Deciding and storing a call needs numpy alone: pandas (the frame, times
given as datetimes) and scikit-learn (checking features that are not yet a
finite float array) are imported when first used, so a driver deciding from
the model's snapshot (issue 28.25) imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from skrbal._lazy import LazyModule
from skrbal._learning import BlockDecisions
from skrbal.online._timestamps import as_seconds, time_text

pd = LazyModule("pandas")


def _frame_from_blocks():
    """pandas 3's ``create_dataframe_from_blocks``, or ``None`` (pandas 2)."""
    try:
        from pandas.api.internals import create_dataframe_from_blocks
    except ImportError:  # pragma: no cover - pandas 2
        return None
    return create_dataframe_from_blocks


__all__ = [
    "ObserveCall",
    "as_given",
    "check_features",
    "decisions_arrays",
    "decisions_frame",
    "empty_decisions",
    "observation_times",
    "stored_call",
]


@dataclass(frozen=True)
class ObserveCall:
    """The rows of one ``observe`` call and the kernel's decisions for them."""

    first: int  # step of the first row
    X: np.ndarray
    times: np.ndarray  # the budget's clock: steps or seconds
    stamps: np.ndarray | None  # the timestamps given, if any
    clock: str
    proba: np.ndarray  # beliefs, columns in the process's states
    decided: BlockDecisions
    request_ids: np.ndarray  # per row, 0 without a request


def empty_decisions() -> BlockDecisions:
    """The decisions of a call with no rows."""
    nothing = np.zeros(0, dtype=np.intp)
    return BlockDecisions(0, np.zeros(0), nothing, nothing, nothing, None)


def decisions_frame(
    call: ObserveCall, classes, inspections, action_names=None
) -> pd.DataFrame:
    """One row per observation: step, timestamp, beliefs, EVPI, request, action.

    With ``action_names``, ``action_name`` follows ``action``, as in the
    command line's decisions. The frame is built once from its columns.
    """
    decided, n = call.decided, call.proba.shape[0]
    layout = _FrameLayout.of(
        tuple(np.asarray(classes).tolist()),
        inspections is not None,
        None if action_names is None else tuple(action_names),
    )
    columns = [
        np.arange(call.first, call.first + n, dtype=np.int64),
        np.full(n, np.nan) if call.stamps is None else call.stamps,
        *call.proba.T,
        decided.evpi,
        call.request_ids > 0,
        pd.arrays.IntegerArray(call.request_ids, mask=call.request_ids == 0),
    ]
    if inspections is not None:
        names = np.full(n, None, dtype=object)
        names[decided.requested] = [inspections[k].name for k in decided.methods]
        columns.append(_as_column(names))
    action = decided.action.astype(np.int64)
    columns.append(action)
    if action_names is not None:
        columns.append(layout.action_names.take(action))
    return layout.frame(columns, n)


def _as_column(values):
    """An object array as a DataFrame built from it holds it (strings: the
    string dtype where pandas infers one)."""
    series = pd.Series(values, copy=False)
    return series.to_numpy() if series.dtype == object else series.array


class _FrameLayout:
    """The columns of an agent's decisions frame, made once per layout.

    ``pd.DataFrame(dict)`` infers the name index and each column's dtype at
    every call, about as much CPU as a 1,000-row call's beliefs; an agent's
    frames all have the same columns, so their index and the action names'
    column are made once, and the frame is assembled from the blocks the
    dict would have formed, of arrays that already have the dtypes it would
    have given (pandas 3's ``create_dataframe_from_blocks``; with pandas 2,
    from the dict).
    """

    _made: ClassVar[dict] = {}

    def __init__(self, labels, with_methods, action_names):
        names = ["step", "timestamp", *(f"belief_{label}" for label in labels)]
        names += ["evpi", "inspect", "request_id"]
        if with_methods:
            names.append("method")
        names.append("action")
        self.action_names = None
        if action_names is not None:
            names.append("action_name")
            self.action_names = _as_column(np.asarray(action_names, dtype=object))
        self.columns = pd.Index(names)

    @classmethod
    def of(cls, labels, with_methods, action_names):
        key = (labels, with_methods, action_names)
        layout = cls._made.get(key)
        if layout is None:
            if len(cls._made) >= 64:  # many agents' layouts: no unbounded cache
                cls._made.clear()
            layout = cls._made[key] = cls(labels, with_methods, action_names)
        return layout

    def frame(self, columns, n: int) -> pd.DataFrame:
        """The frame of ``columns`` (arrays of the frame's dtypes)."""
        create_dataframe_from_blocks = _frame_from_blocks()
        if create_dataframe_from_blocks is None:  # pandas 2: the dict's way
            return pd.DataFrame(dict(zip(self.columns, columns)))
        # The blocks pd.DataFrame would form: one 2-D block per numpy dtype
        # (columns as rows), one per extension array.
        blocks, by_dtype = [], {}
        for position, values in enumerate(columns):
            if isinstance(values, np.ndarray):
                by_dtype.setdefault(values.dtype, []).append(position)
            else:
                blocks.append((values, np.array([position], dtype=np.intp)))
        for dtype, positions in by_dtype.items():
            block = np.empty((len(positions), n), dtype=dtype)
            for row, position in enumerate(positions):
                block[row] = columns[position]
            blocks.append((block, np.array(positions, dtype=np.intp)))
        return create_dataframe_from_blocks(
            blocks, index=pd.RangeIndex(n), columns=self.columns
        )


def decisions_arrays(call: ObserveCall, inspections) -> dict:
    """The decisions of a call as arrays, without building a frame.

    The frame's columns as numpy arrays: ``step``, ``timestamp`` (seconds,
    NaN without times), ``belief`` of shape ``(n, n_states)`` (columns in the
    classes' order), ``evpi``, ``inspect``, ``request_id`` (0 without a
    request), ``method`` with ``inspections``, ``action``.
    """
    decided, n = call.decided, call.proba.shape[0]
    arrays = {
        "step": np.arange(call.first, call.first + n, dtype=np.int64),
        "timestamp": np.full(n, np.nan) if call.stamps is None else call.stamps,
        "belief": call.proba,
        "evpi": decided.evpi,
        "inspect": call.request_ids > 0,
        "request_id": call.request_ids,
    }
    if inspections is not None:
        names = np.full(n, None, dtype=object)
        names[decided.requested] = [inspections[k].name for k in decided.methods]
        arrays["method"] = names
    arrays["action"] = decided.action.astype(np.int64)
    return arrays


def as_given(frame: pd.DataFrame, timestamps) -> pd.DataFrame:
    """The decisions frame with the times as the user gave them.

    Timestamps given as datetimes (or ISO text) come back as pandas
    datetimes (in UTC, aware if they carried an offset, else naive), not as
    the seconds the agent counts in.
    """
    from skrbal._datetimes import carry_utc_offsets, parse_datetimes
    from skrbal.online._settings import time_format

    if len(frame) and time_format(timestamps) == "iso":
        stamps = parse_datetimes(np.asarray(timestamps).ravel(), "timestamps")
        if not carry_utc_offsets(timestamps):
            stamps = stamps.tz_convert(None)
        frame["timestamp"] = stamps
    return frame


def observation_times(first, n, timestamps, *, clock_then, last_time):
    """The clock, times and timestamps of ``n`` new observations, checked.

    ``first`` is the first one's step; ``clock_then`` the agent's clock
    (``'step'`` or ``'timestamp'``) and ``last_time`` its last time so far.
    """
    if timestamps is None:
        clock, times, stamps = (
            "step",
            np.arange(first, first + n, dtype=float),
            None,
        )
    else:
        clock = "timestamp"
        stamps = times = as_seconds(timestamps, "timestamps", n)
    if clock != clock_then:
        stamped = clock_then == "timestamp"
        raise ValueError(
            f"timestamps: the agent was commissioned "
            f"{'with' if stamped else 'without'} timestamps, "
            "so its budget counts time in "
            f"{'seconds' if stamped else 'steps'}; every "
            f"observation must come {'with' if timestamps is None else 'without'}"
            " them."
        )
    if n and times[0] < last_time:
        # Dates as dates, and where the agent stands: what a user resumes from.
        raise ValueError(
            f"timestamps must not go back in time: row 0 of this call, "
            f"{time_text(times[0], clock)}, is before the agent's last "
            f"observation, step {first - 1} at "
            f"{time_text(last_time, clock)}; observe only what came after."
        )
    return clock, times, stamps


def check_features(X, n_features: int, feature_names):
    """New observations as a float array with the commissioning's columns.

    An array that already is what ``check_array`` would return (a finite
    float64 2-d ndarray) is taken as it is: the check costs more than a
    block's beliefs.
    """
    names = getattr(X, "columns", None)
    ready = (
        type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        # A finite sum means finite entries; an overflowing one is left to
        # check_array.
        and np.isfinite(X.sum())
    )
    if not ready:
        from sklearn.utils.validation import check_array

        X = check_array(X, dtype=np.float64, ensure_min_samples=0)
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but the agent was commissioned "
            f"with {n_features}."
        )
    if names is not None and feature_names is not None:
        names = np.asarray([str(c) for c in names], dtype=object)
        if not np.array_equal(names, feature_names):
            raise ValueError(
                f"X has columns {names.tolist()}, but the agent was "
                f"commissioned with {feature_names.tolist()}."
            )
    return X


def stored_call(block, inspections) -> ObserveCall:
    """The call of a stored ``observe`` (an ObserveBlock), as it decided.

    Its decisions equal those the call returned when it decided: the block
    holds its steps' beliefs, EVPI, actions and requests exactly.
    """
    ids = np.asarray(block.request_ids, dtype=np.int64)
    requested = np.flatnonzero(ids > 0)
    names = [m.name for m in inspections or ()]
    methods = np.array(
        [names.index(r.method) if r.method in names else 0 for r in block.requests],
        dtype=np.intp,
    )
    decided = BlockDecisions(
        block.n_steps,
        np.asarray(block.evpi, dtype=np.float64),
        np.asarray(block.action, dtype=np.intp),
        requested,
        methods,
        dict(block.budget_state),
    )
    return ObserveCall(
        block.first_step,
        block.features,
        block.times,
        block.timestamps,
        block.clock,
        block.belief,
        decided,
        ids,
    )
