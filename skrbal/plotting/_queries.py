"""Where and how often the learners inspect: histograms over runs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from skrbal.plotting._base import (
    _chosen_methods,
    _integer_ticks,
    _new_axes,
    _study_frame,
    plain_text,
)
from skrbal.plotting._states import _match_states

__all__ = ["QueryCountDisplay", "QueryPositionDisplay", "segment_boundaries"]


def _containers(patches, n: int) -> list:
    """``ax.hist``'s patches as one container per data set."""
    return list(patches) if n > 1 else [patches]


class QueryCountDisplay:
    """Histogram of the number of inspections per run, one per method.

    Inspections are what risk-based learning spends; the paper compares their
    distributions over repetitions between methods on one axis. Both axes
    count, so both have integer ticks. Create it with :meth:`from_study` or
    :meth:`from_frames`; all parameters are stored as attributes.

    Parameters
    ----------
    counts : dict of ndarray
        Method to the number of inspections of each of its runs.
    bins : ndarray
        Edges of the histogram's bins.

    Attributes
    ----------
    bars_ : dict of matplotlib BarContainer
        Method to its bars.
    ax_ : matplotlib Axes
        Axes with the histogram.
    figure_ : matplotlib Figure
        Figure holding the axes.

    See Also
    --------
    QueryPositionDisplay : Where the inspections fall.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skrbal.plotting import QueryCountDisplay
    >>> totals = pd.DataFrame({"method": ["a", "a", "a", "b", "b", "b"],
    ...                        "n_inspections": [3, 5, 5, 1, 2, 2]})
    >>> display = QueryCountDisplay.from_frames(totals)
    >>> [text.get_text() for text in display.ax_.get_legend().get_texts()]
    ['a: 4.3 +- 0.9', 'b: 1.7 +- 0.5']
    >>> [int(bar.get_height()) for bar in display.bars_["b"]]  # counts 1 to 5
    [1, 2, 0, 0, 0]
    """

    def __init__(self, *, counts: dict, bins):
        self.counts = counts
        self.bins = bins

    def plot(self, ax=None, *, legend: bool = True) -> QueryCountDisplay:
        """Draw the histogram.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        legend : bool, default=True
            Add a legend with each method's mean and standard deviation.

        Returns
        -------
        display : QueryCountDisplay
        """
        ax = _new_axes(ax, (6, 4))
        methods = list(self.counts)
        values = [np.asarray(self.counts[m]) for m in methods]
        # Bars side by side: methods often share counts (the semi-supervised
        # ones with each other), and overlaid bars would hide one another.
        _, _, patches = ax.hist(
            values,
            bins=self.bins,
            edgecolor="black",
            linewidth=0.5,
            label=[
                f"{plain_text(m)}: {v.mean():.1f} +- {v.std():.1f}"
                for m, v in zip(methods, values)
            ],
        )
        self.bars_ = dict(zip(methods, _containers(patches, len(methods))))
        ax.set_xlabel("number of inspections in a run")
        ax.set_ylabel("runs")
        _integer_ticks(ax.xaxis)
        _integer_ticks(ax.yaxis)
        if legend:
            ax.legend(title="mean +- 1 sigma")
        ax.grid(True, alpha=0.3)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_frames(
        cls,
        totals: pd.DataFrame,
        *,
        methods: Sequence[str] | None = None,
        bins=None,
        ax=None,
        legend: bool = True,
    ) -> QueryCountDisplay:
        """Count the inspections of each run and draw their histogram.

        Parameters
        ----------
        totals : DataFrame
            Per-run totals with ``method`` and ``n_inspections`` columns
            (``study.totals``).
        methods : sequence of str, default=None
            Methods to show, in this order; all of them by default.
        bins : int or sequence, default=None
            Histogram bins; by default one per integer count (merged to at
            most 60 bins for wide ranges).
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        legend : bool, default=True
            Add a legend with each method's mean and standard deviation.

        Returns
        -------
        display : QueryCountDisplay

        Raises
        ------
        ValueError
            If a column or a method is missing.
        """
        for needed in ("method", "n_inspections"):
            if needed not in totals.columns:
                raise ValueError(f"totals has no column {needed!r}.")
        methods = _chosen_methods(totals, methods)
        counts = {
            m: totals.loc[totals["method"] == m, "n_inspections"].to_numpy()
            for m in methods
        }
        if bins is None:
            every = np.concatenate(list(counts.values()))
            low, high = int(every.min()), int(every.max())
            width = max(1, int(np.ceil((high - low + 1) / 60)))
            bins = np.arange(low, high + width + 1, width) - 0.5
        return cls(counts=counts, bins=bins).plot(ax=ax, legend=legend)

    @classmethod
    def from_study(cls, study, **kwargs) -> QueryCountDisplay:
        """Draw the histogram of inspections per run of a study.

        Parameters
        ----------
        study : Bunch
            As :func:`skrbal.experiments.run_study` or
            :func:`~skrbal.experiments.load_study` return; its ``totals``
            are drawn.
        **kwargs : dict
            ``methods``, ``bins``, ``ax`` and ``legend``, as in
            :meth:`from_frames`.

        Returns
        -------
        display : QueryCountDisplay
        """
        return cls.from_frames(_study_frame(study, "totals"), **kwargs)


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


class QueryPositionDisplay:
    """Histogram of where inspections fall along the stream, over all runs.

    Shows which health states risk-based querying inspects: the count of
    inspections in each bin of positions, summed over repetitions, one
    histogram per method, with the health state of each segment of the
    record as a strip in the state's colour (see :func:`state_styles`) along
    the top, its label on the upper axis (segments shorter than 1.5 % of the
    positions are left unnumbered) and its boundaries dashed. Create it with
    :meth:`from_study` or :meth:`from_frames`; all parameters are stored as
    attributes.

    Parameters
    ----------
    positions : dict of ndarray
        Method to the positions of its inspections, over all runs.
    edges : ndarray
        Edges of the bins of positions.
    labels : ndarray of shape (n_positions,), default=None
        State of every position; no boundaries without it.
    state_styles : dict, default=None
        State label to :class:`StateStyle`, for every state in ``labels``.
    position : {'record_index', 'step'}, default='record_index'
        What the positions index, for the axis label.

    Attributes
    ----------
    bars_ : dict of matplotlib BarContainer
        Method to its bars.
    boundaries_ : list of matplotlib Line2D
        The dashed state boundaries.
    state_spans_ : list of matplotlib Rectangle
        The strip along the top, one span per segment, in its state's colour.
    state_axis_ : matplotlib SecondaryAxis or None
        The upper axis with the segments' state labels.
    ax_ : matplotlib Axes
        Axes with the histogram.
    figure_ : matplotlib Figure
        Figure holding the axes.

    See Also
    --------
    segment_boundaries : The segments drawn.
    ClassProportionDisplay : The labelled set's share of each state.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skrbal.plotting import QueryPositionDisplay
    >>> queries = pd.DataFrame({"method": "a", "record_index": [-1, 3, 4, 7]})
    >>> display = QueryPositionDisplay.from_frames(
    ...     queries, [1, 1, 1, 1, 2, 2, 2, 2], bin_width=2)
    >>> [int(bar.get_height()) for bar in display.bars_["a"]]
    [0, 1, 1, 1]
    >>> [float(line.get_xdata()[0]) for line in display.boundaries_]
    [3.5]
    """

    def __init__(
        self,
        *,
        positions: dict,
        edges,
        labels=None,
        state_styles: dict | None = None,
        position: str = "record_index",
    ):
        self.positions = positions
        self.edges = edges
        self.labels = labels
        self.state_styles = state_styles
        self.position = position

    def plot(
        self, ax=None, *, legend: bool = True, ylabel: str | None = None
    ) -> QueryPositionDisplay:
        """Draw the histogram and the record's states.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        legend : bool, default=True
            Add a legend of the methods.
        ylabel : str, default=None
            Y-axis label; says the bin width by default.

        Returns
        -------
        display : QueryPositionDisplay
        """
        ax = _new_axes(ax, (10, 4))
        edges = np.asarray(self.edges)
        methods = list(self.positions)
        several = len(methods) > 1
        self.bars_ = {}
        for method in methods:
            values = np.asarray(self.positions[method])
            _, _, self.bars_[method] = ax.hist(
                values,
                bins=edges,
                alpha=0.5 if several else 0.8,
                label=f"{plain_text(method)} ({len(values)} inspections)",
            )
        ax.set_xlim(edges[0], edges[-1])
        where = "record" if self.position == "record_index" else "stream"
        ax.set_xlabel(f"position in the {where}")
        width = int(np.rint(edges[1] - edges[0])) if edges.size > 1 else 1
        ax.set_ylabel(ylabel or f"inspections per {width} positions, all runs")
        _integer_ticks(ax.xaxis)
        _integer_ticks(ax.yaxis)
        self.boundaries_, self.state_spans_, self.state_axis_ = [], [], None
        if self.labels is not None:
            self._plot_states(ax)
        if legend:
            ax.legend(loc="best")
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _plot_states(self, ax) -> None:
        labels = np.asarray(self.labels)
        boundaries, centres, segment_labels = segment_boundaries(labels)
        for boundary in boundaries:
            self.boundaries_.append(
                ax.axvline(boundary - 0.5, color="black", linestyle="--", linewidth=0.8)
            )
        starts = np.r_[0, boundaries] - 0.5
        ends = np.r_[boundaries, labels.size] - 0.5
        # A strip in the top 3 % of the axes, above the highest bar (the
        # y-axis keeps a 5 % margin), so no bar is hidden.
        for start, end, label in zip(starts, ends, segment_labels.tolist()):
            self.state_spans_.append(
                ax.axvspan(
                    start,
                    end,
                    ymin=0.97,
                    ymax=1.0,
                    color=self.state_styles[label].color,
                    linewidth=0,
                )
            )
        # Short segments (a cold spell of a few observations) keep their
        # boundaries but not a label, which would overprint their neighbours'.
        lengths = ends - starts
        wide = lengths >= 0.015 * labels.size
        top = ax.secondary_xaxis("top")
        top.set_xticks(
            centres[wide],
            [plain_text(label) for label in segment_labels[wide].tolist()],
        )
        for tick, label in zip(top.get_xticklabels(), segment_labels[wide].tolist()):
            tick.set_color(self.state_styles[label].color)
        named = [
            f"{plain_text(label)} {plain_text(self.state_styles[label].name)}"
            for label in dict.fromkeys(segment_labels.tolist())
            if self.state_styles[label].name != f"state {label}"
        ]
        top.set_xlabel("state: " + ", ".join(named) if named else "state")
        self.state_axis_ = top

    @classmethod
    def from_frames(
        cls,
        queries: pd.DataFrame,
        labels=None,
        *,
        process=None,
        state_names=None,
        position: str = "record_index",
        methods: Sequence[str] | None = None,
        bin_width: int = 25,
        ax=None,
        legend: bool = True,
    ) -> QueryPositionDisplay:
        """Bin the positions of the inspections and draw their histogram.

        Parameters
        ----------
        queries : DataFrame
            Per-query results with ``method`` and the ``position`` column
            (``study.queries``); the initial model's row (position -1) is
            left out.
        labels : array-like of shape (n_positions,), default=None
            State of every position, for the boundaries: the whole record's
            labels for ``position='record_index'`` (e.g.
            ``CaseStudy.record()[1]``), a split's ``y_stream`` for
            ``position='step'``. Without it no states are drawn.
        process : DecisionProcess, default=None
            The study's process: names and colours the states (see
            :func:`state_styles`).
        state_names : sequence of str, default=None
            Names of the states, overriding the process's (or, without a
            process, of the sorted labels).
        position : {'record_index', 'step'}, default='record_index'
            Position in the whole record (the same observation in every
            repetition) or in the stream (which differs between
            repetitions, since each streams another random half of the
            record).
        methods : sequence of str, default=None
            Methods to show, in this order; all of them by default.
        bin_width : int, default=25
            Positions per bin.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        legend : bool, default=True
            Add a legend of the methods.

        Returns
        -------
        display : QueryPositionDisplay

        Raises
        ------
        ValueError
            If a column or method is missing, ``bin_width`` is not positive,
            a query lies beyond ``labels``, or a label is not a state of
            the process.
        """
        if position not in queries.columns:
            raise ValueError(f"queries has no column {position!r}.")
        if int(bin_width) < 1:
            raise ValueError(
                f"bin_width must be a positive integer, got {bin_width!r}."
            )
        methods = _chosen_methods(queries, methods)
        inspected = queries[queries[position] >= 0]
        styles = None
        if labels is not None:
            labels = np.asarray(labels)
            n_positions = labels.size
            beyond = inspected[position] >= n_positions
            if beyond.any():
                raise ValueError(
                    f"labels cover {n_positions} positions but a query sits at "
                    f"{int(inspected.loc[beyond, position].max())}: pass the "
                    f"labels of the sequence that {position!r} indexes."
                )
            matched = _match_states(np.unique(labels).tolist(), process, state_names)
            to_state = {given: state for given, state, _ in matched}
            styles = {state: style for _, state, style in matched}
            labels = np.array([to_state[value] for value in labels.tolist()])
        else:
            n_positions = int(inspected[position].max()) + 1 if len(inspected) else 1
        edges = np.arange(0, n_positions + int(bin_width), int(bin_width)) - 0.5
        positions = {
            m: inspected.loc[inspected["method"] == m, position].to_numpy()
            for m in methods
        }
        display = cls(
            positions=positions,
            edges=edges,
            labels=labels,
            state_styles=styles,
            position=position,
        )
        return display.plot(ax=ax, legend=legend)

    @classmethod
    def from_study(cls, study, labels=None, **kwargs) -> QueryPositionDisplay:
        """Draw where the inspections of a study fall along the record.

        Parameters
        ----------
        study : Bunch
            As :func:`skrbal.experiments.run_study` or
            :func:`~skrbal.experiments.load_study` return; its ``queries``
            are drawn.
        labels : array-like of shape (n_positions,), default=None
            State of every position (``case.record()[1]`` of the study's
            case).
        **kwargs : dict
            ``process``, ``state_names``, ``position``, ``methods``,
            ``bin_width``, ``ax`` and ``legend``, as in :meth:`from_frames`.

        Returns
        -------
        display : QueryPositionDisplay
        """
        return cls.from_frames(_study_frame(study, "queries"), labels, **kwargs)
