"""What every figure shares: matplotlib on demand, integer ticks, method lists."""

from __future__ import annotations

import pandas as pd


def plain_text(text) -> str:
    """A user's name (a state, an action, a method) as matplotlib text.

    Matplotlib reads ``$...$`` as mathtext, and fails on a name that is not
    valid TeX: names are text, so each ``$`` is escaped (shown as ``$``).
    """
    return str(text).replace("$", r"\$")


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "plotting needs matplotlib: pip install 'skrbal[plot]'"
        ) from exc
    return plt


def _new_axes(ax, figsize):
    """``ax`` or the axes of a new figure of ``figsize``."""
    if ax is None:
        _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def _integer_ticks(axis) -> None:
    """Ticks at whole numbers only, for counts (queries, runs, inspections)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _chosen_methods(frame: pd.DataFrame, methods) -> list:
    """The methods to draw, in order, checked against ``frame['method']``."""
    if "method" not in frame.columns:
        raise ValueError("the results have no 'method' column.")
    present = list(frame["method"].unique())
    if methods is None:
        return present
    missing = [m for m in methods if m not in present]
    if missing:
        raise ValueError(f"no method {missing} in the results: {present}.")
    return list(methods)


def _study_frame(study, name: str) -> pd.DataFrame:
    """``study.queries`` or ``study.totals``, with a clear error otherwise."""
    frame = getattr(study, name, None)
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"study must be the result of run_study or load_study (with a "
            f"{name!r} DataFrame), got {type(study).__name__}."
        )
    return frame


def _history_frame(history, name) -> pd.DataFrame:
    """A learner's ``history_.queries`` as the per-query results of one run."""
    queries = getattr(history, "queries", None)
    if not isinstance(queries, pd.DataFrame):
        hint = ""
        if isinstance(history, pd.DataFrame) and "evpi" in history.columns:
            hint = (
                " This looks like a live agent's history(): draw it with "
                "AgentHistoryDisplay.from_history."
            )
        raise TypeError(
            "history must be a fitted learner's history_ (with a 'queries' "
            f"DataFrame), got {type(history).__name__}.{hint}"
        )
    return queries.assign(method=name, repetition=0)
