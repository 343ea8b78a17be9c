"""The figures of ``skrbal run`` and ``skrbal reproduce`` (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["CAPTIONS", "reproduce_figures", "require_matplotlib", "run_figures"]


def require_matplotlib(command: str) -> None:
    """Fail before the study, not after it, when figures cannot be drawn."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(
            f"skrbal {command} draws its figures with matplotlib, which cannot be "
            "imported: install it (pip install 'skrbal[plot]') or pass "
            "--no-figures."
        ) from None


def run_figures(study, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skrbal.experiments import get_case_study
    from skrbal.plotting import ClassProportionDisplay, QueryCurveDisplay

    queries = study.queries
    longest = int(queries.groupby(["method", "repetition"])["query"].max().median())
    max_queries = max(int(1.5 * longest), 1)
    paths = []

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    QueryCurveDisplay.from_study(
        study,
        "decision_accuracy",
        ax=axes[0],
        max_queries=max_queries,
        ylabel="decision accuracy (test set)",
    )
    QueryCurveDisplay.from_study(
        study,
        "f1_macro",
        ax=axes[1],
        max_queries=max_queries,
        ylabel="macro F1 (test set)",
    )
    fig.suptitle(f"{study.config['case']}: {study.config['n_repeats']} repetitions")
    paths.append(out / "learning_curves.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    methods = list(queries["method"].unique())
    fig, axes = plt.subplots(
        1, len(methods), figsize=(5.5 * len(methods), 4), constrained_layout=True
    )
    process = get_case_study(study.config["case"]).process()
    for ax, method in zip(np.atleast_1d(axes), methods):
        ClassProportionDisplay.from_study(
            study, method, process=process, ax=ax, max_queries=max_queries
        )
    paths.append(out / "class_proportions.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def _query_limit(queries: pd.DataFrame) -> int:
    """Last query count worth showing: where most runs of every method ended."""
    lengths = queries.groupby(["method", "repetition"])["query"].max()
    per_method = lengths.groupby(level="method").quantile(0.9)
    return max(int(np.ceil(per_method.max())), 1)


def _save(fig, path: Path, paths: list) -> None:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)


def _panel_grid(n: int, width: float = 5.0, height: float = 3.8, columns: int = 3):
    import matplotlib.pyplot as plt

    ncols = min(columns, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(width * ncols, height * nrows),
        constrained_layout=True,
        squeeze=False,
    )
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n]


def _proportion_figures(study, process, out: Path, limit: int, paths: list) -> None:
    from skrbal.plotting import ClassProportionDisplay

    queries = study.queries
    methods = list(queries["method"].unique())
    fig, axes = _panel_grid(len(methods))
    for ax, method in zip(axes, methods):
        ClassProportionDisplay.from_study(
            study, method, process=process, ax=ax, max_queries=limit
        )
    fig.suptitle("class proportions of the labelled set, mean +- 1 sigma over runs")
    _save(fig, out / "class_proportions.png", paths)

    effective = [
        method
        for method in methods
        if queries.loc[
            queries["method"] == method,
            [c for c in queries.columns if c.startswith("effective_proportion_")],
        ]
        .notna()
        .any()
        .any()
    ]
    if effective:
        fig, axes = _panel_grid(len(effective))
        for ax, method in zip(axes, effective):
            ClassProportionDisplay.from_study(
                study,
                method,
                process=process,
                ax=ax,
                max_queries=limit,
                effective=True,
            )
        _save(fig, out / "effective_proportions.png", paths)


def _evpi_methods(study) -> list[str]:
    """The study's methods that query by EVPI (not at random)."""
    return [
        name for name, m in study.config["methods"].items() if m["query"] != "random"
    ]


def _query_figures(study, process, labels, out: Path, paths: list) -> None:
    import matplotlib.pyplot as plt

    from skrbal.plotting import QueryCountDisplay, QueryPositionDisplay

    evpi_methods = _evpi_methods(study)
    if evpi_methods:
        fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
        QueryCountDisplay.from_study(study, methods=evpi_methods, ax=ax)
        ax.set_title("inspections per run (random methods match their EVPI method)")
        _save(fig, out / "query_counts.png", paths)

    methods = list(study.queries["method"].unique())
    fig, axes = plt.subplots(
        len(methods),
        1,
        figsize=(11, 2.6 * len(methods) + 0.6),
        sharex=True,
        constrained_layout=True,
        squeeze=False,
    )
    # Bins of 50 record positions hold about 25 stream steps, the paper's bins.
    for ax, method in zip(axes[:, 0], methods):
        QueryPositionDisplay.from_study(
            study,
            labels,
            process=process,
            methods=[method],
            bin_width=50,
            ax=ax,
        )
        ax.set_ylabel("inspections")
        if ax is not axes[-1, 0]:
            ax.set_xlabel("")
    _save(fig, out / "query_positions.png", paths)


def _evpi_figure(study, case, out: Path, example: int, paths: list) -> None:
    import matplotlib.pyplot as plt

    from skrbal.experiments import replay_repetition
    from skrbal.plotting import EVPIDisplay

    methods = list(study.config["methods"])
    evpi_methods = _evpi_methods(study)
    fig, axes = plt.subplots(
        len(evpi_methods),
        2,
        figsize=(12, 4.2 * len(evpi_methods)),
        constrained_layout=True,
        squeeze=False,
    )
    displays = []
    for row, name in zip(axes, evpi_methods):
        replay = replay_repetition(
            case, name, example, seed=study.config["seed"], methods=methods
        )
        split, learner = replay.split, replay.learner
        for ax, model, labelled, when in (
            (row[0], replay.initial_estimator, split.initial_indices, "before"),
            (row[1], learner.estimator_, learner.labelled_indices_, "after"),
        ):
            display = EVPIDisplay.from_estimator(
                model,
                split.X_stream,
                replay.process,
                y=split.y_stream,
                labelled=labelled,
                ax=ax,
                grid_resolution=120,
            )
            displays.append(display)
            ax.set_title(
                f"{name}, repetition {example}: {when} learning "
                f"({len(labelled)} labelled)"
            )
    # The panels are compared: one colour scale for all of them.
    top = max(float(display.evpi.max()) for display in displays)
    for display in displays:
        display.rescale(vmin=0.0, vmax=top)
    axes[0, 0].legend(loc="upper left", fontsize="small", markerscale=2)
    _save(fig, out / "evpi_surfaces.png", paths)


CAPTIONS = {
    "learning_curves.png": "median decision accuracy and macro F1 on the test set "
    "against the number of inspections, interquartile bands",
    "class_proportions.png": "class proportions of the labelled set against "
    "inspections, mean +- 1 sigma",
    "effective_proportions.png": "effective class proportions (labelled plus "
    "pseudo-labelled) of the semi-supervised learners",
    "query_counts.png": "histogram of the number of inspections per run",
    "query_positions.png": "where the inspections fall along the record, summed "
    "over runs, class boundaries dashed",
    "evpi_surfaces.png": "EVPI over the feature space with the model, before and "
    "after learning, for one repetition",
}


def reproduce_figures(study, case, record, out: Path, example: int) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skrbal.plotting import QueryCurveDisplay

    queries = study.queries
    limit = _query_limit(queries)
    paths: list[Path] = []
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), constrained_layout=True)
    for ax, metric, label in (
        (axes[0], "decision_accuracy", "decision accuracy (test set)"),
        (axes[1], "f1_macro", "macro F1 (test set)"),
    ):
        QueryCurveDisplay.from_study(
            study, metric, ax=ax, max_queries=limit, ylabel=label
        )
    n_runs = study.totals["repetition"].nunique()
    fig.suptitle(f"{study.config['case']}: {n_runs} repetitions")
    _save(fig, out / "learning_curves.png", paths)
    process = case.process()
    _proportion_figures(study, process, out, limit, paths)
    _query_figures(study, process, record[1], out, paths)
    if record[0].shape[1] == 2:
        _evpi_figure(study, case, out, example, paths)
    return paths
