"""What one ``observe`` call decided, and the table it returns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from skrbal._learning import BlockDecisions

__all__ = ["ObserveCall", "decisions_frame", "empty_decisions"]


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


def empty_decisions(n_states: int) -> BlockDecisions:
    """The decisions of a call with no rows."""
    nothing = np.zeros(0, dtype=np.intp)
    return BlockDecisions(0, np.zeros(0), nothing, nothing, nothing, None)


def decisions_frame(call: ObserveCall, classes, inspections) -> pd.DataFrame:
    """One row per observation: step, timestamp, beliefs, EVPI, request, action."""
    decided, n = call.decided, call.proba.shape[0]
    columns = {
        "step": np.arange(call.first, call.first + n, dtype=np.int64),
        "timestamp": np.full(n, np.nan) if call.stamps is None else call.stamps,
    }
    for j, label in enumerate(np.asarray(classes).tolist()):
        columns[f"belief_{label}"] = call.proba[:, j]
    columns["evpi"] = decided.evpi
    columns["inspect"] = call.request_ids > 0
    columns["request_id"] = pd.arrays.IntegerArray(
        call.request_ids, mask=call.request_ids == 0
    )
    if inspections is not None:
        names = np.full(n, None, dtype=object)
        names[decided.requested] = [inspections[k].name for k in decided.methods]
        columns["method"] = names
    columns["action"] = decided.action.astype(np.int64)
    return pd.DataFrame(columns)
