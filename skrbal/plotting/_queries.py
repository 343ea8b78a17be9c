"""Where and how often the learners inspect: histograms over runs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from skrbal.plotting._curves import _pyplot

__all__ = ["plot_query_counts", "plot_query_positions", "segment_boundaries"]


def _chosen_methods(frame: pd.DataFrame, methods) -> list:
    if "method" not in frame.columns:
        raise ValueError("the results have no 'method' column.")
    present = list(frame["method"].unique())
    if methods is None:
        return present
    missing = [m for m in methods if m not in present]
    if missing:
        raise ValueError(f"no method {missing} in the results: {present}.")
    return list(methods)


def plot_query_counts(
    totals: pd.DataFrame,
    *,
    methods: Sequence[str] | None = None,
    ax=None,
    bins=None,
):
    """Histogram of the number of inspections per run, one per method.

    Inspections are what risk-based learning spends; the paper compares their
    distributions over repetitions between methods on one axis.

    Parameters
    ----------
    totals : DataFrame
        Per-run totals with ``method`` and ``n_inspections`` columns (as
        :func:`skrbal.experiments.run_study` returns).
    methods : sequence of str, default=None
        Methods to show, in this order; all of them by default.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.
    bins : int or sequence, default=None
        Histogram bins; by default one per integer count (merged to at most
        60 bins for wide ranges).

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skrbal.plotting import plot_query_counts
    >>> totals = pd.DataFrame({"method": ["a", "a", "a", "b", "b", "b"],
    ...                        "n_inspections": [3, 5, 5, 1, 2, 2]})
    >>> ax = plot_query_counts(totals)
    >>> [text.get_text() for text in ax.get_legend().get_texts()]
    ['a: 4.3 +- 0.9', 'b: 1.7 +- 0.5']
    """
    plt = _pyplot()
    for needed in ("method", "n_inspections"):
        if needed not in totals.columns:
            raise ValueError(f"totals has no column {needed!r}.")
    methods = _chosen_methods(totals, methods)
    counts = totals["n_inspections"].to_numpy()
    if bins is None:
        low, high = int(counts.min()), int(counts.max())
        width = max(1, int(np.ceil((high - low + 1) / 60)))
        bins = np.arange(low, high + width + 1, width) - 0.5
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    values = [totals.loc[totals["method"] == m, "n_inspections"] for m in methods]
    # Bars side by side: methods often share counts (the semi-supervised ones
    # with each other), and overlaid bars would hide one another.
    ax.hist(
        values,
        bins=bins,
        edgecolor="black",
        linewidth=0.5,
        label=[
            f"{m}: {v.mean():.1f} +- {v.std(ddof=0):.1f}"
            for m, v in zip(methods, values)
        ],
    )
    ax.set_xlabel("number of inspections in a run")
    ax.set_ylabel("runs")
    ax.legend(title="mean +- 1 sigma")
    ax.grid(True, alpha=0.3)
    return ax


def segment_boundaries(labels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where a label sequence changes class.

    Parameters
    ----------
    labels : array-like of shape (n_positions,)
        Class labels in order (a record's or a stream's).

    Returns
    -------
    boundaries : ndarray of int
        Positions ``i`` with ``labels[i] != labels[i - 1]``.
    centres : ndarray of float
        Middle position of each constant segment.
    segment_labels : ndarray
        The label of each segment.

    Examples
    --------
    >>> from skrbal.plotting import segment_boundaries
    >>> segment_boundaries([1, 1, 2, 2, 2, 1])
    (array([2, 5]), array([0.5, 3. , 5. ]), array([1, 2, 1]))
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(
            f"labels must be a non-empty 1-d sequence, got {labels.shape}."
        )
    boundaries = np.flatnonzero(labels[1:] != labels[:-1]) + 1
    starts = np.r_[0, boundaries]
    ends = np.r_[boundaries, labels.size] - 1
    return boundaries, (starts + ends) / 2, labels[starts]


def plot_query_positions(
    queries: pd.DataFrame,
    labels=None,
    *,
    position: str = "record_index",
    methods: Sequence[str] | None = None,
    bin_width: int = 25,
    ax=None,
):
    """Histogram of where inspections fall along the stream, over all runs.

    Shows which health states risk-based querying inspects: the count of
    inspections in each bin of positions, summed over repetitions, one
    histogram per method, with the class of each segment of the record on
    the upper axis (segments shorter than 1.5 % of the positions are left
    unnumbered) and its boundaries dashed.

    Parameters
    ----------
    queries : DataFrame
        Per-query results with ``method`` and the ``position`` column (as
        :func:`skrbal.experiments.run_study` returns); the initial model's
        row (position -1) is left out.
    labels : array-like of shape (n_positions,), default=None
        Class of every position, for the boundaries: the whole record's
        labels for ``position='record_index'`` (e.g.
        ``CaseStudy.record()[1]``), a split's ``y_stream`` for
        ``position='step'``. Without it no boundaries are drawn.
    position : {'record_index', 'step'}, default='record_index'
        Position in the whole record (the same observation in every
        repetition) or in the stream (which differs between repetitions,
        since each streams another random half of the record).
    methods : sequence of str, default=None
        Methods to show, in this order; all of them by default.
    bin_width : int, default=25
        Positions per bin.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skrbal.plotting import plot_query_positions
    >>> queries = pd.DataFrame({"method": "a", "record_index": [-1, 3, 4, 7]})
    >>> ax = plot_query_positions(queries, [1, 1, 1, 1, 2, 2, 2, 2], bin_width=2)
    >>> [int(bar.get_height()) for bar in ax.patches]
    [0, 1, 1, 1]
    >>> [float(line.get_xdata()[0]) for line in ax.get_lines()]  # class boundary
    [3.5]
    """
    plt = _pyplot()
    if position not in queries.columns:
        raise ValueError(f"queries has no column {position!r}.")
    if int(bin_width) < 1:
        raise ValueError(f"bin_width must be a positive integer, got {bin_width!r}.")
    methods = _chosen_methods(queries, methods)
    inspected = queries[queries[position] >= 0]
    if labels is not None:
        labels = np.asarray(labels)
        n_positions = labels.size
        beyond = inspected[position] >= n_positions
        if beyond.any():
            raise ValueError(
                f"labels cover {n_positions} positions but a query sits at "
                f"{int(inspected.loc[beyond, position].max())}: pass the labels "
                f"of the sequence that {position!r} indexes."
            )
    else:
        n_positions = int(inspected[position].max()) + 1 if len(inspected) else 1
    edges = np.arange(0, n_positions + int(bin_width), int(bin_width)) - 0.5
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4))
    several = len(methods) > 1
    for method in methods:
        values = inspected.loc[inspected["method"] == method, position]
        ax.hist(
            values,
            bins=edges,
            alpha=0.5 if several else 0.8,
            label=f"{method} ({len(values)} inspections)",
        )
    ax.set_xlim(edges[0], edges[-1])
    where = "record" if position == "record_index" else "stream"
    ax.set_xlabel(f"position in the {where}")
    ax.set_ylabel(f"inspections per {int(bin_width)} positions, all runs")
    if labels is not None:
        boundaries, centres, segment_labels = segment_boundaries(labels)
        for boundary in boundaries:
            ax.axvline(boundary - 0.5, color="black", linestyle="--", linewidth=0.8)
        # Short segments (a cold spell of a few observations) keep their
        # boundaries but not a class number, which would overprint its
        # neighbours'.
        lengths = np.diff(np.r_[0, boundaries, labels.size])
        wide = lengths >= 0.015 * labels.size
        top = ax.secondary_xaxis("top")
        top.set_xticks(
            centres[wide], [str(label) for label in segment_labels[wide].tolist()]
        )
        top.set_xlabel("class")
    ax.legend(loc="best")
    return ax
