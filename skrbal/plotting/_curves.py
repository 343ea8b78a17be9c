"""Figures of repeated studies: learning curves and labelled-set proportions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from skrbal.plotting._base import (
    _chosen_methods,
    _history_frame,
    _integer_ticks,
    _new_axes,
    _study_frame,
    plain_text,
)
from skrbal.plotting._states import _match_states

__all__ = [
    "ClassProportionDisplay",
    "QueryCurveDisplay",
    "query_curve_summary",
]


def _per_query(queries: pd.DataFrame, column: str, max_queries=None) -> pd.DataFrame:
    """Repetitions x queries table of ``column``, carried past a run's end.

    A run that stopped inspecting after ``q`` queries keeps its final model,
    so its value at any later query count is its value after query ``q``.
    """
    for needed in ("repetition", "query", column):
        if needed not in queries.columns:
            raise ValueError(f"queries has no column {needed!r}.")
    table = queries.pivot_table(
        index="repetition", columns="query", values=column, aggfunc="last"
    )
    last = int(table.columns.max()) if max_queries is None else int(max_queries)
    table = table.reindex(columns=range(last + 1)).ffill(axis=1)
    return table


def query_curve_summary(
    queries: pd.DataFrame, metric: str = "decision_accuracy", *, max_queries=None
) -> pd.DataFrame:
    """Median and quartiles of a metric against the number of queries.

    Parameters
    ----------
    queries : DataFrame
        Tidy per-query results with columns ``method``, ``repetition``,
        ``query`` and ``metric`` (as :func:`skrbal.experiments.run_study`
        returns).
    metric : str, default='decision_accuracy'
        Column to summarise.
    max_queries : int, default=None
        Last query count; defaults to the longest run. A run that ended
        earlier counts with its final value.

    Returns
    -------
    summary : DataFrame
        Columns ``method``, ``query``, ``median``, ``q25``, ``q75``,
        ``n_runs`` (runs that had made at least that many queries).

    Examples
    --------
    >>> import pandas as pd
    >>> from skrbal.plotting import query_curve_summary
    >>> queries = pd.DataFrame({"method": "a", "repetition": [0, 0, 1],
    ...                         "query": [0, 1, 0], "f1": [0.5, 0.7, 0.6]})
    >>> query_curve_summary(queries, "f1")["median"].tolist()
    [0.55, 0.65]
    """
    frames = []
    for method, part in queries.groupby("method", sort=False):
        table = _per_query(part, metric, max_queries)
        reached = part.groupby("repetition")["query"].max()
        frames.append(
            pd.DataFrame(
                {
                    "method": method,
                    "query": table.columns.to_numpy(),
                    "median": table.median(axis=0).to_numpy(),
                    "q25": table.quantile(0.25, axis=0).to_numpy(),
                    "q75": table.quantile(0.75, axis=0).to_numpy(),
                    "n_runs": (
                        reached.to_numpy()[:, None] >= table.columns.to_numpy()
                    ).sum(axis=0),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


_QUERIES_LABEL = "number of queries (inspections)"


class QueryCurveDisplay:
    """Median of a metric against the number of queries, with quartile bands.

    The paper's learning curves: one line per method, the median over
    repetitions of a test-set metric after each query, and a band between
    the first and third quartiles. Create it with :meth:`from_study` or
    :meth:`from_frames`; all parameters are stored as attributes.

    Parameters
    ----------
    summary : DataFrame
        Columns ``method``, ``query``, ``median``, ``q25`` and ``q75``, as
        :func:`query_curve_summary` returns.
    metric : str
        The metric summarised.
    ylabel : str, default=None
        Y-axis label; the metric's name by default.

    Attributes
    ----------
    lines_ : dict of matplotlib Line2D
        Method to its median line.
    bands_ : dict of matplotlib PolyCollection
        Method to its interquartile band.
    ax_ : matplotlib Axes
        Axes with the curves.
    figure_ : matplotlib Figure
        Figure holding the axes.

    See Also
    --------
    query_curve_summary : The numbers drawn.
    sklearn.model_selection.LearningCurveDisplay : Scores against the
        training-set size.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skrbal.plotting import QueryCurveDisplay
    >>> queries = pd.DataFrame({"method": ["a", "a", "b"], "repetition": 0,
    ...                         "query": [0, 1, 0], "f1": [0.5, 0.7, 0.6]})
    >>> display = QueryCurveDisplay.from_frames(queries, "f1")
    >>> list(display.lines_), display.lines_["a"].get_ydata().tolist()
    (['a', 'b'], [0.5, 0.7])
    """

    def __init__(self, *, summary: pd.DataFrame, metric: str, ylabel=None):
        self.summary = summary
        self.metric = metric
        self.ylabel = ylabel

    def plot(
        self, ax=None, *, ylabel: str | None = None, legend: bool = True
    ) -> QueryCurveDisplay:
        """Draw the curves.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        ylabel : str, default=None
            Overrides the display's ``ylabel``.
        legend : bool, default=True
            Add a legend of the methods.

        Returns
        -------
        display : QueryCurveDisplay
        """
        ax = _new_axes(ax, (6, 4))
        self.lines_, self.bands_ = {}, {}
        for method, part in self.summary.groupby("method", sort=False):
            # Plain float arrays: numpy 1.24.0's masked arrays (which
            # fill_between uses) read a pandas Series' internal ``_data``.
            query, median, q25, q75 = (
                part[column].to_numpy(dtype=float)
                for column in ("query", "median", "q25", "q75")
            )
            (line,) = ax.plot(query, median, label=plain_text(method))
            self.lines_[method] = line
            self.bands_[method] = ax.fill_between(
                query, q25, q75, color=line.get_color(), alpha=0.2
            )
        ax.set_xlabel(_QUERIES_LABEL)
        _integer_ticks(ax.xaxis)
        ax.set_ylabel(ylabel or self.ylabel or self.metric.replace("_", " "))
        if legend:
            ax.legend(title="median, IQR band")
        ax.grid(True, alpha=0.3)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_frames(
        cls,
        queries: pd.DataFrame,
        metric: str = "decision_accuracy",
        *,
        methods=None,
        max_queries: int | None = None,
        ylabel: str | None = None,
        ax=None,
        legend: bool = True,
    ) -> QueryCurveDisplay:
        """Summarise and draw the per-query results of a study.

        Parameters
        ----------
        queries : DataFrame
            Tidy per-query results with columns ``method``, ``repetition``,
            ``query`` and ``metric`` (``study.queries``).
        metric : str, default='decision_accuracy'
            Column to plot.
        methods : sequence of str, default=None
            Methods to show, in this order; all of them by default.
        max_queries : int, default=None
            Last query count shown; a run that ended earlier counts with its
            final value.
        ylabel : str, default=None
            Y-axis label; the metric's name by default.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        legend : bool, default=True
            Add a legend of the methods.

        Returns
        -------
        display : QueryCurveDisplay

        Raises
        ------
        ValueError
            If a column or a method is missing.
        """
        methods = _chosen_methods(queries, methods)
        chosen = queries[queries["method"].isin(methods)]
        summary = query_curve_summary(chosen, metric, max_queries=max_queries)
        order = {method: k for k, method in enumerate(methods)}
        summary = summary.sort_values(
            "method", key=lambda column: column.map(order), kind="stable"
        ).reset_index(drop=True)
        display = cls(summary=summary, metric=metric, ylabel=ylabel)
        return display.plot(ax=ax, legend=legend)

    @classmethod
    def from_study(
        cls, study, metric: str = "decision_accuracy", **kwargs
    ) -> QueryCurveDisplay:
        """Draw the learning curves of a study.

        Parameters
        ----------
        study : Bunch
            As :func:`skrbal.experiments.run_study` or
            :func:`~skrbal.experiments.load_study` return; its ``queries``
            are drawn.
        metric : str, default='decision_accuracy'
            Column to plot.
        **kwargs : dict
            ``methods``, ``max_queries``, ``ylabel``, ``ax`` and ``legend``,
            as in :meth:`from_frames`.

        Returns
        -------
        display : QueryCurveDisplay
        """
        return cls.from_frames(_study_frame(study, "queries"), metric, **kwargs)

    @classmethod
    def from_history(
        cls,
        history,
        metric: str = "decision_accuracy",
        *,
        name: str = "learner",
        **kwargs,
    ) -> QueryCurveDisplay:
        """Draw the learning curve of one fitted learner.

        Call it with the same ``ax`` for each learner to compare them.

        Parameters
        ----------
        history : Bunch
            A fitted learner's ``history_`` (e.g. of
            :class:`~skrbal.active.RiskBasedLearner` fitted with a test
            set); its ``queries`` are drawn.
        metric : str, default='decision_accuracy'
            Column to plot.
        name : str, default='learner'
            The learner's name in the legend.
        **kwargs : dict
            ``max_queries``, ``ylabel``, ``ax`` and ``legend``, as in
            :meth:`from_frames`.

        Returns
        -------
        display : QueryCurveDisplay

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import pandas as pd
        >>> from sklearn.utils import Bunch
        >>> from skrbal.plotting import QueryCurveDisplay
        >>> history = Bunch(queries=pd.DataFrame({"query": [0, 1, 2],
        ...                                       "f1": [0.4, 0.6, 0.9]}))
        >>> display = QueryCurveDisplay.from_history(history, "f1", name="EVPI")
        >>> display.lines_["EVPI"].get_ydata().tolist()
        [0.4, 0.6, 0.9]
        """
        return cls.from_frames(_history_frame(history, name), metric, **kwargs)


class ClassProportionDisplay:
    """Class proportions of the labelled set against queries (mean +- 1 sigma).

    Shows the sampling bias of risk-based querying: which health states the
    inspections reveal as the labelled set grows, one line per state in the
    state's colour (see :func:`state_styles`). Create it with
    :meth:`from_study` or :meth:`from_frames`; all parameters are stored as
    attributes.

    Parameters
    ----------
    mean : DataFrame of shape (n_queries, n_states)
        Mean proportion of each state (columns) after each number of
        queries (index).
    std : DataFrame of shape (n_queries, n_states)
        Its standard deviation over repetitions.
    state_styles : dict
        State label (the columns) to :class:`StateStyle`.
    method : str, default=None
        The method shown, for the title.
    effective : bool, default=False
        Whether the proportions are of the effective training set
        (labelled plus pseudo-labelled) of a semi-supervised learner.

    Attributes
    ----------
    lines_ : dict of matplotlib Line2D
        State label to its mean line.
    bands_ : dict of matplotlib PolyCollection
        State label to its +- 1 sigma band.
    ax_ : matplotlib Axes
        Axes with the proportions.
    figure_ : matplotlib Figure
        Figure holding the axes.

    See Also
    --------
    QueryPositionDisplay : Where along the record the inspections fall.
    AgentHistoryDisplay : A live agent's beliefs, requests, actions and spend
        over time.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.plotting import ClassProportionDisplay
    >>> queries = pd.DataFrame({"method": "a", "repetition": 0, "query": [0, 1],
    ...                         "proportion_1": [1.0, 0.5],
    ...                         "proportion_2": [0.0, 0.5]})
    >>> display = ClassProportionDisplay.from_frames(
    ...     queries, process=synthetic_decision_process())
    >>> [line.get_label() for line in display.lines_.values()]
    ['undamaged', 'minor damage']
    """

    def __init__(
        self,
        *,
        mean: pd.DataFrame,
        std: pd.DataFrame,
        state_styles: dict,
        method: str | None = None,
        effective: bool = False,
    ):
        self.mean = mean
        self.std = std
        self.state_styles = state_styles
        self.method = method
        self.effective = effective

    def plot(self, ax=None, *, legend: bool = True) -> ClassProportionDisplay:
        """Draw the proportions.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        legend : bool, default=True
            Add a legend of the states.

        Returns
        -------
        display : ClassProportionDisplay
        """
        ax = _new_axes(ax, (6, 4))
        self.lines_, self.bands_ = {}, {}
        x = self.mean.index.to_numpy()
        for label in self.mean.columns:
            style = self.state_styles[label]
            mean = self.mean[label].to_numpy()
            std = self.std[label].to_numpy()
            (self.lines_[label],) = ax.plot(
                x, mean, color=style.color, label=plain_text(style.name)
            )
            self.bands_[label] = ax.fill_between(
                x,
                np.clip(mean - std, 0, 1),
                np.clip(mean + std, 0, 1),
                color=style.color,
                alpha=0.2,
            )
        ax.set_ylim(0, 1)
        ax.set_xlabel(_QUERIES_LABEL)
        _integer_ticks(ax.xaxis)
        title = "" if self.method is None else str(self.method)
        if self.effective:
            ax.set_ylabel("share of training set (labelled + pseudo-labelled)")
            title = f"{title} (effective)".strip()
        else:
            ax.set_ylabel("share of labelled set")
        ax.set_title(title)
        if legend:
            ax.legend(title="mean +- 1 sigma")
        ax.grid(True, alpha=0.3)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_frames(
        cls,
        queries: pd.DataFrame,
        method: str | None = None,
        *,
        process=None,
        state_names=None,
        effective: bool = False,
        max_queries: int | None = None,
        ax=None,
        legend: bool = True,
    ) -> ClassProportionDisplay:
        """Average the labelled-set proportions of one method and draw them.

        Parameters
        ----------
        queries : DataFrame
            Tidy per-query results with ``method``, ``repetition``, ``query``
            and ``proportion_<label>`` columns (``study.queries``).
        method : str, default=None
            Which method to plot; required when ``queries`` holds several.
        process : DecisionProcess, default=None
            The study's process: orders, names and colours the states (see
            :func:`state_styles`); without it the states are the labels of
            the columns.
        state_names : sequence of str, default=None
            Names of the states, overriding the process's (without a
            process, one per ``proportion_<label>`` column, in their order).
        effective : bool, default=False
            Plot the effective proportions of the training set of a
            semi-supervised learner, labelled plus pseudo-labelled samples
            (the ``effective_proportion_<label>`` columns), instead of the
            labelled set's.
        max_queries : int, default=None
            Last query count shown.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        legend : bool, default=True
            Add a legend of the states.

        Returns
        -------
        display : ClassProportionDisplay

        Raises
        ------
        ValueError
            If the method is ambiguous or absent, it has no proportions, or a
            column names a state the process does not have.
        """
        methods = _chosen_methods(queries, None)
        if method is None:
            if len(methods) != 1:
                raise ValueError(f"choose a method among {methods}.")
            method = methods[0]
        elif method not in methods:
            raise ValueError(f"no method {method!r} in queries: {methods}.")
        part = queries[queries["method"] == method]
        prefix = "effective_proportion_" if effective else "proportion_"
        columns = [
            c for c in part.columns if c.startswith(prefix) and part[c].notna().any()
        ]
        if not columns:
            raise ValueError(f"queries has no {prefix}<label> values for {method!r}.")
        matched = _match_states(
            [c.removeprefix(prefix) for c in columns], process, state_names
        )
        means, stds, styles = {}, {}, {}
        for text, state, style in matched:
            table = _per_query(part, prefix + text, max_queries)
            means[state] = table.mean(axis=0)
            stds[state] = table.std(axis=0, ddof=0)
            styles[state] = style
        mean = pd.DataFrame(means)
        mean.index.name = "query"
        std = pd.DataFrame(stds)
        std.index.name = "query"
        display = cls(
            mean=mean,
            std=std,
            state_styles=styles,
            method=method,
            effective=effective,
        )
        return display.plot(ax=ax, legend=legend)

    @classmethod
    def from_study(
        cls, study, method: str | None = None, **kwargs
    ) -> ClassProportionDisplay:
        """Draw the labelled-set proportions of one method of a study.

        Parameters
        ----------
        study : Bunch
            As :func:`skrbal.experiments.run_study` or
            :func:`~skrbal.experiments.load_study` return; its ``queries``
            are drawn.
        method : str, default=None
            Which method to plot; required when the study has several.
        **kwargs : dict
            ``process``, ``state_names``, ``effective``, ``max_queries``,
            ``ax`` and ``legend``, as in :meth:`from_frames`.

        Returns
        -------
        display : ClassProportionDisplay
        """
        return cls.from_frames(_study_frame(study, "queries"), method, **kwargs)

    @classmethod
    def from_history(
        cls, history, *, name: str | None = None, **kwargs
    ) -> ClassProportionDisplay:
        """Draw the labelled-set proportions of one fitted learner.

        One run has no spread, so the bands are empty.

        Parameters
        ----------
        history : Bunch
            A fitted learner's ``history_``; its ``queries`` are drawn.
        name : str, default=None
            The learner's name, for the title; no title by default.
        **kwargs : dict
            ``process``, ``state_names``, ``effective``, ``max_queries``,
            ``ax`` and ``legend``, as in :meth:`from_frames`.

        Returns
        -------
        display : ClassProportionDisplay

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import pandas as pd
        >>> from sklearn.utils import Bunch
        >>> from skrbal.plotting import ClassProportionDisplay
        >>> history = Bunch(queries=pd.DataFrame({
        ...     "query": [0, 1], "proportion_1": [1.0, 0.5],
        ...     "proportion_2": [0.0, 0.5]}))
        >>> display = ClassProportionDisplay.from_history(history)
        >>> display.lines_["2"].get_ydata().tolist()
        [0.0, 0.5]
        """
        frame = _history_frame(history, "" if name is None else name)
        return cls.from_frames(frame, **kwargs)
