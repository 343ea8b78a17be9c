"""``skrbal run``: EVPI against random querying, with figures, quickly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from skrbal.cli._errors import debug_option
from skrbal.cli._figures import require_matplotlib, run_figures
from skrbal.cli._study import (
    OWN_ESTIMATOR,
    add_folder_options,
    add_seed_and_jobs,
    check_counts,
    locked_study,
    print_written,
    warning_notes,
)

__all__ = ["add_parser", "summary_table"]


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
    >>> from skrbal.cli._run import summary_table
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


def _run(args) -> int:
    from skrbal._files import atomic_write_text
    from skrbal._tables import markdown_table

    check_counts(args)
    if not args.no_figures:
        require_matplotlib("run")
    out = Path(args.out)
    with locked_study(args, args.case, args.methods, out) as (study, elapsed):
        table = markdown_table(
            summary_table(study.totals), formats={"runs": "{:.0f}", None: "{:.3f}"}
        )
        atomic_write_text(
            out / "summary.md",
            f"# {args.case}: {args.repeats} repetitions, seed {args.seed}\n\n{table}\n",
        )
        print(table)
        paths = [] if args.no_figures else run_figures(study, out)
    print(f"\n{args.repeats} repetitions in {elapsed:.1f} s; wrote:")
    print_written(out, paths)
    warning_notes(study.totals)
    return 0


def add_parser(commands, name: str, help_text: str) -> None:
    """Add ``skrbal run`` to the subcommands of the ``skrbal`` parser."""
    from skrbal.experiments import available_methods

    run = commands.add_parser(
        name,
        parents=[debug_option()],
        help=help_text,
        description="Run every method on fresh random splits of a case study "
        "(half test set, half stream in temporal order, a small initial "
        "labelled set), print a summary table and write figures and tidy "
        "results to the output folder.",
        epilog=OWN_ESTIMATOR,
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
    add_seed_and_jobs(run, "parallel worker processes")
    run.add_argument(
        "--out",
        default="skrbal-results",
        help="output folder for figures, summary and results (default: skrbal-results)",
    )
    add_folder_options(run)
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.set_defaults(handler=_run)
