"""``skrbal reproduce``: a case study of the paper, or its protocol on your data."""

from __future__ import annotations

from pathlib import Path

from skrbal.cli._data import add_data_options, add_method_options, case_from_args
from skrbal.cli._errors import debug_option
from skrbal.cli._figures import CAPTIONS, reproduce_figures, require_matplotlib
from skrbal.cli._study import (
    OWN_ESTIMATOR,
    add_folder_options,
    add_seed_and_jobs,
    check_counts,
    locked_study,
    print_written,
    recorded_warnings,
    warning_notes,
)

__all__ = ["add_parser"]


def _reproduce(args) -> int:
    from skrbal._files import atomic_write_text
    from skrbal.experiments import available_methods, study_report

    check_counts(args)
    if not 0 <= args.example_repetition < args.repeats:
        raise ValueError(f"--example-repetition must lie in [0, {args.repeats})")
    if not args.no_figures:
        require_matplotlib("reproduce")
    case = case_from_args(args)
    methods = args.methods or available_methods()
    out = Path(args.out or f"skrbal-reproduce-{args.case}")
    with locked_study(args, case, methods, out, scheduler=args.scheduler) as (
        study,
        elapsed,
    ):
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
            # The figures replay fits: their warnings are counted, not printed.
            with recorded_warnings("drawing the figures") as figure_warnings:
                paths = reproduce_figures(
                    study, case, record, out, args.example_repetition
                )
            notes.extend(figure_warnings.notes())
            if "evpi_surfaces.png" not in {p.name for p in paths}:
                notes.append(
                    f"No EVPI surfaces: the record has {record[0].shape[1]} "
                    "features and a surface needs 2 (the paper draws them for the "
                    "synthetic case)."
                )
        report = study_report(
            study,
            figures=[(p.name, CAPTIONS[p.name]) for p in paths],
            notes=notes,
        )
        atomic_write_text(out / "summary.md", report)
    print(report)
    print("wrote:")
    print_written(out, paths)
    warning_notes(study.totals)
    if not args.no_figures:
        figure_warnings.print_notes()
    return 0


def add_parser(commands, name: str, help_text: str) -> None:
    """Add ``skrbal reproduce`` to the subcommands of the ``skrbal`` parser."""
    from skrbal.experiments import available_methods

    methods = available_methods()
    reproduce = commands.add_parser(
        name,
        parents=[debug_option()],
        help=help_text,
        description="Repeat every method on fresh random splits of the synthetic "
        "or Z24 case study as in the paper (half the record as test set, the "
        "other half streamed in temporal order, 0.2 % (synthetic) or 0.3 % "
        "(Z24) labelled at the start), or of your own campaign with your own "
        "decision process (custom), then write tidy results, every figure "
        "and a Markdown summary (summary.md) to the output folder. Finished "
        "repetitions are saved one by one; --resume continues an interrupted "
        "study.",
        epilog=OWN_ESTIMATOR,
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
    add_seed_and_jobs(
        reproduce,
        "parallel workers: loky processes, or Dask workers with --scheduler local",
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
    add_folder_options(reproduce)
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
