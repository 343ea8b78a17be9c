"""The ``skrbal`` command: risk-based active-learning studies with figures.

``skrbal run`` compares EVPI against random querying quickly (``make demo``);
``skrbal reproduce synthetic|z24|custom`` reproduces a case study of the paper
(or runs its protocol on your own campaign and process) with every method,
writing results, all figures and a Markdown summary.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import skrbal
from skrbal._cli_data import add_data_options, add_method_options, case_from_args

__all__ = ["main", "summary_table"]


def summary_table(totals: pd.DataFrame) -> pd.DataFrame:
    """One row per method: inspections, final scores, regret and spend.

    Parameters
    ----------
    totals : DataFrame
        Per-run totals from :func:`skrbal.experiments.run_study`.

    Returns
    -------
    table : DataFrame
        Indexed by method: mean and standard deviation of the number of
        inspections, median final decision accuracy and macro-F1 on the test
        set, mean decision regret on the stream and mean inspection spend.

    Examples
    --------
    >>> import pandas as pd
    >>> from skrbal.cli import summary_table
    >>> totals = pd.DataFrame({"method": ["a", "a"], "n_inspections": [3, 5],
    ...     "final_decision_accuracy": [0.9, 1.0], "final_f1_macro": [0.8, 0.9],
    ...     "regret": [10.0, 0.0], "inspection_spend": [21.0, 35.0]})
    >>> summary_table(totals)["inspections"].tolist()
    [4.0]
    """
    grouped = totals.groupby("method", sort=False)
    return pd.DataFrame(
        {
            "runs": grouped.size(),
            "inspections": grouped["n_inspections"].mean(),
            "inspections_sd": grouped["n_inspections"].std(ddof=0),
            "decision_accuracy": grouped["final_decision_accuracy"].median(),
            "f1_macro": grouped["final_f1_macro"].median(),
            "regret": grouped["regret"].mean(),
            "inspection_spend": grouped["inspection_spend"].mean(),
        }
    )


def _figures(study, out: Path) -> list[Path]:
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


def _require_matplotlib(command: str) -> None:
    """Fail before the study, not after it, when figures cannot be drawn."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(
            f"skrbal {command} draws its figures with matplotlib, which cannot be "
            "imported: install it (pip install 'skrbal[plot]') or pass "
            "--no-figures."
        ) from None


def _remove_outputs(out: Path) -> None:
    """--overwrite: the summary and figures of the study being replaced."""
    for name in ("summary.md", *_CAPTIONS):
        (out / name).unlink(missing_ok=True)


def _run(args) -> int:
    from skrbal.experiments import run_study
    from skrbal.experiments._folder import atomic_write_text, folder_lock
    from skrbal.experiments._report import markdown_table

    if not args.no_figures:
        _require_matplotlib("run")
    out = Path(args.out)
    # The folder stays locked until the summary and figures are written too.
    with folder_lock(out):
        if args.overwrite:
            _remove_outputs(out)
        start = time.perf_counter()
        study = run_study(
            args.case,
            args.methods,
            args.repeats,
            seed=args.seed,
            n_jobs=args.n_jobs,
            out=out,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=not args.no_progress,
        )
        elapsed = time.perf_counter() - start
        table = markdown_table(
            summary_table(study.totals), formats={"runs": "{:.0f}", None: "{:.3f}"}
        )
        atomic_write_text(
            out / "summary.md",
            f"# {args.case}: {args.repeats} repetitions, seed {args.seed}\n\n{table}\n",
        )
        print(table)
        paths = [] if args.no_figures else _figures(study, out)
    print(f"\n{args.repeats} repetitions in {elapsed:.1f} s; wrote:")
    for path in [out / "summary.md", out / "totals.csv", out / "queries.csv", *paths]:
        print(f"  {path}")
    _warning_notes(study.totals)
    return 0


def _warning_notes(totals) -> None:
    """One line per method and warning category the study recorded."""
    from skrbal.experiments._report import warning_table

    for row in warning_table(totals).itertuples():
        print(
            f"skrbal: note: {row.method} raised {row.warning} {row.count} times "
            f"in {row.in_runs} of {row.of_runs} runs (counted in totals.csv, "
            "not shown one by one)",
            file=sys.stderr,
        )


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


_CAPTIONS = {
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


def _reproduce_figures(study, case, record, out: Path, example: int) -> list[Path]:
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


def _reproduce(args) -> int:
    from skrbal.experiments import available_methods, run_study, study_report
    from skrbal.experiments._folder import atomic_write_text, folder_lock

    if not 0 <= args.example_repetition < args.repeats:
        print(
            f"skrbal: --example-repetition must lie in [0, {args.repeats})",
            file=sys.stderr,
        )
        return 2
    if not args.no_figures:
        _require_matplotlib("reproduce")
    case = case_from_args(args)
    methods = args.methods or available_methods()
    out = Path(args.out or f"skrbal-reproduce-{args.case}")
    # The folder stays locked until the summary and figures are written too.
    with folder_lock(out):
        if args.overwrite:
            _remove_outputs(out)
        start = time.perf_counter()
        study = run_study(
            case,
            methods,
            args.repeats,
            seed=args.seed,
            n_jobs=args.n_jobs,
            scheduler=args.scheduler,
            out=out,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=not args.no_progress,
        )
        elapsed = time.perf_counter() - start
        notes = [
            f"Study run (or resumed) in {elapsed:.1f} s with {args.n_jobs} workers."
        ]
        # The summary first: a figure that fails cannot cost the tables.
        report = study_report(study, notes=notes)
        atomic_write_text(out / "summary.md", report)
        paths = []
        if args.no_figures:
            notes.append("No figures: the study was run with --no-figures.")
        else:
            # One read of the record (a data file is read and hashed each time).
            record = case.record()
            paths = _reproduce_figures(
                study, case, record, out, args.example_repetition
            )
            if "evpi_surfaces.png" not in {p.name for p in paths}:
                notes.append(
                    f"No EVPI surfaces: the record has {record[0].shape[1]} "
                    "features and a surface needs 2 (the paper draws them for the "
                    "synthetic case)."
                )
        report = study_report(
            study,
            figures=[(p.name, _CAPTIONS[p.name]) for p in paths],
            notes=notes,
        )
        atomic_write_text(out / "summary.md", report)
    print(report)
    print("wrote:")
    for path in [out / "summary.md", out / "totals.csv", out / "queries.csv", *paths]:
        print(f"  {path}")
    _warning_notes(study.totals)
    return 0


def _parser() -> argparse.ArgumentParser:
    from skrbal.experiments import available_methods

    parser = argparse.ArgumentParser(
        prog="skrbal",
        description="Risk-based active learning: inspect only when the expected "
        "value of perfect information exceeds the inspection cost.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {skrbal.__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="run a repeated study with figures",
        description="Run every method on fresh random splits of a case study "
        "(half test set, half stream in temporal order, a small initial "
        "labelled set), print a summary table and write figures and tidy "
        "results to the output folder.",
        epilog=_OWN_ESTIMATOR,
    )
    run.add_argument(
        "--case",
        choices=["synthetic", "z24"],
        default="synthetic",
        help="case study: the synthetic degradation stream (default) or the "
        "Z24-like bridge data",
    )
    run.add_argument(
        "--methods",
        nargs="+",
        default=["gmm-evpi", "gmm-random"],
        choices=available_methods(),
        metavar="METHOD",
        help="methods to compare (default: gmm-evpi gmm-random); choose from "
        + ", ".join(available_methods()),
    )
    run.add_argument(
        "--repeats",
        type=int,
        default=50,
        help="number of repetitions, each a new random split (default: 50)",
    )
    run.add_argument(
        "--seed", type=int, default=0, help="seed of the study (default: 0)"
    )
    run.add_argument(
        "--n-jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="parallel worker processes (default: 2, or 1 on one core)",
    )
    run.add_argument(
        "--out",
        default="skrbal-results",
        help="output folder for figures, summary and results (default: skrbal-results)",
    )
    _add_folder_options(run)
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.set_defaults(handler=_run)
    _add_reproduce(commands, available_methods())
    _add_agent(commands)
    return parser


def _add_agent(commands) -> None:
    """``skrbal agent ...`` (skrbal.online), which needs the db extra."""
    try:
        from skrbal.online._cli import add_agent_commands
    except ImportError as exc:
        missing = exc

        def unavailable(args):
            raise missing

        agent = commands.add_parser("agent", help="needs: pip install 'skrbal[db]'")
        agent.add_argument("rest", nargs=argparse.REMAINDER)
        agent.set_defaults(handler=unavailable)
        return
    add_agent_commands(commands)


def _add_folder_options(command) -> None:
    """--resume / --overwrite / --no-figures, shared by run and reproduce."""
    reuse = command.add_mutually_exclusive_group()
    reuse.add_argument(
        "--resume",
        action="store_true",
        help="continue the study in --out (interrupted, or to be extended with "
        "more --repeats; fewer --repeats report the first ones and keep the "
        "rest on disk); its configuration must match",
    )
    reuse.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the study in --out: its configuration, repetitions, tidy "
        "CSV files, summary and figures are deleted first (other files are "
        "left alone). Without --resume or --overwrite, a folder that holds a "
        "study is refused",
    )
    command.add_argument(
        "--no-figures",
        action="store_true",
        help="write the results and summary only (no matplotlib needed)",
    )


_OWN_ESTIMATOR = (
    "The command runs the built-in methods only. To study another estimator "
    "(any scikit-learn classifier with predict_proba, Pipelines included), use "
    "the Python API: skrbal.experiments.run_study(case, [Method(name, "
    "make_estimator), ...])."
)


def _add_reproduce(commands, methods: list[str]) -> None:
    reproduce = commands.add_parser(
        "reproduce",
        help="reproduce a case study of the paper: results, all figures, summary",
        description="Repeat every method on fresh random splits of the synthetic "
        "or Z24 case study as in the paper (half the record as test set, the "
        "other half streamed in temporal order, 0.2 % (synthetic) or 0.3 % "
        "(Z24) labelled at the start), or of your own campaign with your own "
        "decision process (custom), then write tidy results, every figure "
        "and a Markdown summary (summary.md) to the output folder. Finished "
        "repetitions are saved one by one; --resume continues an interrupted "
        "study.",
        epilog=_OWN_ESTIMATOR,
    )
    reproduce.add_argument(
        "case",
        choices=["synthetic", "z24", "custom"],
        help="the case study to reproduce; custom: your campaign (--data) and "
        "your decision process (--process)",
    )
    reproduce.add_argument(
        "--data",
        metavar="PATH",
        help="your record. z24: your copy of the Z24 natural frequencies (.mat, "
        "the frequencies a variable or a struct field such as databasez24.data, "
        "or .csv, 3932 x 4), read with skrbal.datasets.load_z24; without it the "
        "Z24-like generator stands in. synthetic: your recording of a "
        "four-state test rig, custom: your campaign, both a CSV or Parquet "
        "table read with skrbal.datasets.load_campaign (feature columns, a "
        "'label' column, optional 'action' and 'time' columns). Features of a "
        "file are standardised with the whole record's mean and standard "
        "deviation.",
    )
    reproduce.add_argument(
        "--process",
        metavar="PATH",
        help="custom only: your decision process, a JSON file as "
        "skrbal.DecisionProcess.to_json writes; the labels must be its classes",
    )
    add_data_options(reproduce)
    reproduce.add_argument(
        "--repeats",
        type=int,
        default=1000,
        help="number of repetitions (default: 1000, as in the paper)",
    )
    reproduce.add_argument(
        "--methods",
        nargs="+",
        choices=methods,
        metavar="METHOD",
        help="methods to compare (default: all built-ins: " + ", ".join(methods) + ")",
    )
    add_method_options(reproduce)
    reproduce.add_argument(
        "--seed", type=int, default=0, help="seed of the study (default: 0)"
    )
    reproduce.add_argument(
        "--n-jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="parallel workers: loky processes, or Dask workers with "
        "--scheduler local (default: 2, or 1 on one core)",
    )
    reproduce.add_argument(
        "--scheduler",
        metavar="ADDRESS|local",
        help="run on Dask: 'local' starts a LocalCluster of --n-jobs worker "
        "processes, an address such as tcp://10.0.0.5:8786 uses that cluster "
        "(default: joblib's loky processes)",
    )
    reproduce.add_argument(
        "--out",
        help="output folder (default: skrbal-reproduce-<case>)",
    )
    _add_folder_options(reproduce)
    reproduce.add_argument(
        "--example-repetition",
        type=int,
        default=0,
        metavar="R",
        help="repetition whose models the EVPI-surface figure shows (default: 0)",
    )
    reproduce.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )
    reproduce.set_defaults(handler=_reproduce)


def main(argv=None) -> int:
    """Entry point of the ``skrbal`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments; ``sys.argv[1:]`` when ``None``.

    Returns
    -------
    status : int
        Exit status: 0 on success, 2 for invalid arguments, data or a
        folder that holds another study, 1 when the system fails the run (a
        file that cannot be written, a full or read-only disk, an
        unreachable Dask scheduler, a folder locked by another run, a
        missing optional dependency). Errors are reported on one line of
        standard error, starting ``skrbal:``.

    Examples
    --------
    >>> from skrbal.cli import main
    >>> main(["run", "--help"])  # doctest: +SKIP
    """
    args = _parser().parse_args(argv)
    for option, minimum in (("repeats", 1), ("seed", 0)):
        value = getattr(args, option, minimum)
        if value < minimum:
            print(
                f"skrbal: --{option} must be >= {minimum}, got {value}", file=sys.stderr
            )
            return 2
    try:
        return args.handler(args)
    except (FileExistsError, FileNotFoundError, ValueError) as exc:
        print(f"skrbal: {_one_line(exc)}", file=sys.stderr)
        return 2
    except (OSError, ImportError) as exc:
        # The disk, the folder, the cluster or the install: one line, no
        # traceback, whatever the operating system or library reported.
        print(f"skrbal: {_one_line(exc)}", file=sys.stderr)
        return 1


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
