"""Figures of repeated studies: learning curves and labelled-set proportions."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "plot_class_proportions",
    "plot_query_curves",
    "query_curve_summary",
]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "plotting needs matplotlib: pip install 'skrbal[plot]'"
        ) from exc
    return plt


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
                    "n_runs": [(reached >= q).sum() for q in table.columns],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def plot_query_curves(
    queries: pd.DataFrame,
    metric: str = "decision_accuracy",
    *,
    ax=None,
    max_queries=None,
    label: str | None = None,
):
    """Median of a metric against queries, with interquartile bands.

    One line per method, as in the paper's learning-curve figures.

    Parameters
    ----------
    queries : DataFrame
        Tidy per-query results (see :func:`query_curve_summary`).
    metric : str, default='decision_accuracy'
        Column to plot.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.
    max_queries : int, default=None
        Last query count shown.
    label : str, default=None
        Y-axis label; defaults to the metric's name.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skrbal.plotting import plot_query_curves
    >>> queries = pd.DataFrame({"method": ["a", "a", "b"], "repetition": 0,
    ...                         "query": [0, 1, 0], "f1": [0.5, 0.7, 0.6]})
    >>> ax = plot_query_curves(queries, "f1")
    >>> [line.get_label() for line in ax.get_lines()]
    ['a', 'b']
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    summary = query_curve_summary(queries, metric, max_queries=max_queries)
    for method, part in summary.groupby("method", sort=False):
        (line,) = ax.plot(part["query"], part["median"], label=str(method))
        ax.fill_between(
            part["query"], part["q25"], part["q75"], color=line.get_color(), alpha=0.2
        )
    ax.set_xlabel("number of queries (inspections)")
    ax.set_ylabel(label or metric.replace("_", " "))
    ax.legend(title="median, IQR band")
    ax.grid(True, alpha=0.3)
    return ax


def plot_class_proportions(
    queries: pd.DataFrame,
    method: str | None = None,
    *,
    ax=None,
    max_queries=None,
    effective: bool = False,
):
    """Class proportions of the labelled set against queries (mean +- 1 sigma).

    Shows the sampling bias of risk-based querying: which states the
    inspections reveal as the labelled set grows.

    Parameters
    ----------
    queries : DataFrame
        Tidy per-query results with ``proportion_<label>`` columns.
    method : str, default=None
        Which method to plot; required when ``queries`` holds several.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.
    max_queries : int, default=None
        Last query count shown.
    effective : bool, default=False
        Plot the effective proportions of the training set of a
        semi-supervised learner, labelled plus pseudo-labelled samples (the
        ``effective_proportion_<label>`` columns), instead of the labelled
        set's.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from skrbal.plotting import plot_class_proportions
    >>> queries = pd.DataFrame({"method": "a", "repetition": 0, "query": [0, 1],
    ...                         "proportion_1": [1.0, 0.5],
    ...                         "proportion_2": [0.0, 0.5]})
    >>> ax = plot_class_proportions(queries)
    >>> [line.get_label() for line in ax.get_lines()]
    ['class 1', 'class 2']
    """
    plt = _pyplot()
    methods = queries["method"].unique()
    if method is None:
        if len(methods) != 1:
            raise ValueError(f"choose a method among {methods.tolist()}.")
        method = methods[0]
    elif method not in methods:
        raise ValueError(f"no method {method!r} in queries: {methods.tolist()}.")
    part = queries[queries["method"] == method]
    prefix = "effective_proportion_" if effective else "proportion_"
    columns = [
        c for c in part.columns if c.startswith(prefix) and part[c].notna().any()
    ]
    if not columns:
        raise ValueError(f"queries has no {prefix}<label> values for {method!r}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for column in columns:
        table = _per_query(part, column, max_queries)
        mean, std = table.mean(axis=0), table.std(axis=0, ddof=0)
        x = table.columns.to_numpy()
        (line,) = ax.plot(x, mean, label=f"class {column.removeprefix(prefix)}")
        ax.fill_between(
            x,
            np.clip(mean - std, 0, 1),
            np.clip(mean + std, 0, 1),
            color=line.get_color(),
            alpha=0.2,
        )
    ax.set_ylim(0, 1)
    ax.set_xlabel("number of queries (inspections)")
    if effective:
        ax.set_ylabel("share of training set (labelled + pseudo-labelled)")
        ax.set_title(f"{method} (effective)")
    else:
        ax.set_ylabel("share of labelled set")
        ax.set_title(str(method))
    ax.legend(title="mean +- 1 sigma")
    ax.grid(True, alpha=0.3)
    return ax
