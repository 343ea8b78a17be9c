"""The ``skrbal`` command: run a risk-based active-learning study with figures."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

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


def _format_table(table: pd.DataFrame) -> str:
    """A Markdown table (no extra dependency)."""
    header = ["method", *table.columns]
    rows = [
        [str(index)]
        + [
            f"{value:.0f}" if column == "runs" else f"{value:.3f}"
            for column, value in row.items()
        ]
        for index, row in table.iterrows()
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _figures(study, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skrbal.plotting import plot_class_proportions, plot_query_curves

    queries = study.queries
    longest = int(queries.groupby(["method", "repetition"])["query"].max().median())
    max_queries = max(int(1.5 * longest), 1)
    paths = []

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    plot_query_curves(
        queries,
        "decision_accuracy",
        ax=axes[0],
        max_queries=max_queries,
        label="decision accuracy (test set)",
    )
    plot_query_curves(
        queries,
        "f1_macro",
        ax=axes[1],
        max_queries=max_queries,
        label="macro F1 (test set)",
    )
    fig.suptitle(f"{study.config['case']}: {study.config['n_repeats']} repetitions")
    paths.append(out / "learning_curves.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    methods = list(queries["method"].unique())
    fig, axes = plt.subplots(
        1, len(methods), figsize=(5.5 * len(methods), 4), constrained_layout=True
    )
    for ax, method in zip(np.atleast_1d(axes), methods):
        plot_class_proportions(queries, method, ax=ax, max_queries=max_queries)
    paths.append(out / "class_proportions.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def _run(args) -> int:
    from skrbal.experiments import run_study

    out = Path(args.out)
    start = time.perf_counter()
    study = run_study(
        args.case,
        args.methods,
        args.repeats,
        seed=args.seed,
        n_jobs=args.n_jobs,
        out=out,
        resume=args.resume,
        progress=not args.no_progress,
    )
    elapsed = time.perf_counter() - start
    table = _format_table(summary_table(study.totals))
    paths = _figures(study, out)
    (out / "summary.md").write_text(
        f"# {args.case}: {args.repeats} repetitions, seed {args.seed}\n\n{table}\n"
    )
    print(table)
    print(f"\n{args.repeats} repetitions in {elapsed:.1f} s; wrote:")
    for path in [out / "summary.md", out / "totals.csv", out / "queries.csv", *paths]:
        print(f"  {path}")
    return 0


def _parser() -> argparse.ArgumentParser:
    from skrbal.experiments import available_methods

    parser = argparse.ArgumentParser(
        prog="skrbal",
        description="Risk-based active learning: inspect only when the expected "
        "value of perfect information exceeds the inspection cost.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="run a repeated study with figures",
        description="Run every method on fresh random splits of a case study "
        "(half test set, half stream in temporal order, a small initial "
        "labelled set), print a summary table and write figures and tidy "
        "results to the output folder.",
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
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted study in --out instead of refusing to "
        "overwrite it",
    )
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.set_defaults(handler=_run)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``skrbal`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments; ``sys.argv[1:]`` when ``None``.

    Returns
    -------
    status : int
        Exit status.

    Examples
    --------
    >>> from skrbal.cli import main
    >>> main(["run", "--help"])  # doctest: +SKIP
    """
    args = _parser().parse_args(argv)
    if getattr(args, "repeats", 1) < 1:
        print("skrbal: --repeats must be at least 1", file=sys.stderr)
        return 2
    try:
        return args.handler(args)
    except (FileExistsError, ValueError) as exc:
        print(f"skrbal: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
