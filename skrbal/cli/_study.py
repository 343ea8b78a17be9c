"""What ``skrbal run`` and ``skrbal reproduce`` share: the results folder."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

from skrbal.cli._figures import CAPTIONS

__all__ = [
    "OWN_ESTIMATOR",
    "add_folder_options",
    "add_seed_and_jobs",
    "check_counts",
    "locked_study",
    "print_written",
    "recorded_warnings",
    "remove_outputs",
    "warning_notes",
]


OWN_ESTIMATOR = (
    "The command runs the built-in methods only. To study another estimator "
    "(any scikit-learn classifier with predict_proba, Pipelines included), use "
    "the Python API: skrbal.experiments.run_study(case, [Method(name, "
    "make_estimator), ...])."
)


def add_folder_options(command) -> None:
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


def remove_outputs(out: Path) -> None:
    """--overwrite: the summary and figures of the study being replaced."""
    for name in ("summary.md", *CAPTIONS):
        (out / name).unlink(missing_ok=True)


def warning_notes(totals) -> None:
    """One line per method and warning category the study recorded."""
    from skrbal._tables import warning_table

    for row in warning_table(totals).itertuples():
        print(
            f"skrbal: note: {row.method} raised {row.warning} {row.count} times "
            f"in {row.in_runs} of {row.of_runs} runs (counted in totals.csv, "
            "not shown one by one)",
            file=sys.stderr,
        )


def check_counts(args) -> None:
    """--repeats >= 1 and --seed >= 0, before anything is started."""
    for option, minimum in (("repeats", 1), ("seed", 0)):
        value = getattr(args, option)
        if value < minimum:
            raise ValueError(f"--{option} must be >= {minimum}, got {value}")


class _Recorded:
    """Warnings caught while the command did ``what``, by category."""

    def __init__(self, caught: list, what: str):
        self.caught, self.what = caught, what

    def counts(self) -> list[tuple[str, int]]:
        return sorted(Counter(w.category.__name__ for w in self.caught).items())

    def notes(self) -> list[str]:
        """One sentence per category, for summary.md."""
        return [
            f"While {self.what}, the replayed fits raised {category} {count} "
            "times (counted here, not printed one by one)."
            for category, count in self.counts()
        ]

    def print_notes(self) -> None:
        """The same, one ``skrbal: note:`` line each on standard error."""
        for category, count in self.counts():
            print(
                f"skrbal: note: {self.what} raised {category} {count} times "
                "(counted in summary.md, not shown one by one)",
                file=sys.stderr,
            )


@contextlib.contextmanager
def recorded_warnings(what: str):
    """Catch every warning of the block; the result counts them by category."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield _Recorded(caught, what)


@contextlib.contextmanager
def locked_study(args, case, methods, out: Path, **options):
    """Run (or resume) the study into ``out``; yield it and its seconds.

    The folder stays locked until the block ends, so the summary and figures
    written in it belong to this study.
    """
    from skrbal._files import folder_lock
    from skrbal.experiments import run_study

    with folder_lock(out):
        if args.overwrite:
            remove_outputs(out)
        start = time.perf_counter()
        study = run_study(
            case,
            methods,
            args.repeats,
            seed=args.seed,
            n_jobs=args.n_jobs,
            out=out,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=not args.no_progress,
            **options,
        )
        yield study, time.perf_counter() - start


def print_written(out: Path, figures: list[Path]) -> None:
    """The files of the study folder, one per line."""
    for path in [out / "summary.md", out / "totals.csv", out / "queries.csv", *figures]:
        print(f"  {path}")


def add_seed_and_jobs(command, jobs_help: str) -> None:
    """--seed and --n-jobs of a study."""
    command.add_argument(
        "--seed", type=int, default=0, help="seed of the study (default: 0)"
    )
    command.add_argument(
        "--n-jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help=f"{jobs_help} (default: 2, or 1 on one core)",
    )
