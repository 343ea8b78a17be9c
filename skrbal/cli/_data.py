"""The data every command reads: campaign files, process files, Z24 options.

One campaign reader for every command: :func:`read_campaign` reads ``--data``
with :func:`skrbal.datasets.load_campaign`'s rules (named feature, label, time
and action columns, rows numbered the same way in every message), whether
``reproduce`` studies it or ``agent init`` commissions an agent with it. One
process reader, :func:`read_process`, names the file and the line of what is
wrong with it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = [
    "CAMPAIGN_COLUMNS",
    "DATE_FORMAT_HELP",
    "add_campaign_options",
    "add_data_options",
    "add_method_options",
    "case_from_args",
    "given_options",
    "read_campaign",
    "read_inspections",
    "read_process",
]


DATE_FORMAT_HELP = (
    "the form of the times when they are not ISO 8601 (such as "
    "1998-02-01T00:00Z) or seconds, in strftime codes: '%%d/%%m/%%Y %%H:%%M' for "
    "01/02/1998 00:00 read day-first. Without it other text is refused: "
    "01/02/1998 reads day-first in some places, month-first in others"
)


def read_process(path, option: str = "--process"):
    """The decision process of a JSON file, as DecisionProcess.to_json writes."""
    from skrbal import DecisionProcess

    where = f"{option} {path}"
    description = _json_file(path, option)
    if not isinstance(description, dict):
        raise ValueError(
            f"{where}: a decision process is a JSON object ({{...}}), got "
            f"{type(description).__name__}"
        )
    try:
        return DecisionProcess.from_dict(description)
    except RecursionError:
        raise ValueError(
            f"{where}: nested too deeply to be a decision process"
        ) from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def _json_file(path, option: str):
    """The JSON value of a file; errors name the option, the file and the line."""
    where = f"{option} {path}"
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{where}: is a directory, not a JSON file") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} in line {line}); "
            "save the file as UTF-8"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(
            f"{where}: nested too deeply (its numbers are lists two or three "
            "levels deep at most)"
        ) from None


def read_inspections(path, option: str = "--inspections"):
    """Inspection methods of a JSON file: a list of name, cost, confusion, outcomes."""
    from skrbal.inspection import InspectionMethod

    value = _json_file(path, option)
    keys = {"name", "cost", "confusion", "outcomes"}
    if not isinstance(value, list) or not value:
        raise ValueError(
            f"{option} {path}: expected a non-empty JSON list of methods, each "
            '{"name": ..., "cost": ..., "confusion": [[...], ...], "outcomes": '
            "[...]}"
        )
    methods = []
    for i, entry in enumerate(value):
        given = set(entry) if isinstance(entry, dict) else set()
        if not {"name", "cost", "confusion"} <= given <= keys:
            raise ValueError(
                f"{option} {path}: method {i} must be an object with the keys "
                "name, cost, confusion and (optional) outcomes"
            )
        methods.append(InspectionMethod(**entry))
    return methods


def read_class_priors(value, classes, option: str = "--class-priors") -> dict:
    """Per-state statements of where damage lies: inline JSON or a JSON file.

    ``value`` is a JSON object (or the path of a file holding one) mapping a
    state of the process, as its campaign files spell it, to a statement
    ``{"shift": ..., "units": ...}`` of
    :class:`~skrbal.mixture.BayesianGMMClassifier`'s ``class_priors``; the
    keys become the process's own labels (``"3"`` is state 3).
    """
    text = str(value).strip()
    if text.startswith(("{", "[")):
        try:
            statement = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{option} {value}: not valid JSON: {exc}") from None
    else:
        statement = _json_file(value, option)
    if not isinstance(statement, dict):
        raise ValueError(
            f'{option}: expected a JSON object {{"state": {{"shift": -0.02, '
            f'"units": "relative"}}, ...}}, got {type(statement).__name__}'
        )
    # Plain values (a numpy label's repr, np.str_('2'), would reach messages).
    plain = [label.item() if hasattr(label, "item") else label for label in classes]
    labels = {str(label): label for label in plain}
    priors = {}
    for key, spec in statement.items():
        if key not in labels:
            raise ValueError(
                f"{option}: state {key!r} is not one of the process's states "
                f"{[str(label) for label in classes]}"
            )
        if not isinstance(spec, dict):
            raise ValueError(
                f"{option}: the statement for {key!r} must be an object such as "
                f'{{"shift": -0.02, "units": "relative"}}, got {spec!r}'
            )
        priors[labels[key]] = spec
    return priors


def read_campaign(args, process, *, unlabelled: bool = False):
    """The campaign of ``--data`` for ``process``, by the campaign options.

    ``unlabelled``: rows without a label are read (``y`` None there).
    """
    from skrbal.datasets import load_campaign

    return load_campaign(
        args.data,
        process,
        label_column=args.label_column or "label",
        feature_columns=args.feature_columns,
        action_column=args.action_column,
        time_column=args.time_column,
        unlabelled=unlabelled,
        date_format=getattr(args, "date_format", None),
        labels_file=getattr(args, "labels", None),
    )


def given_options(args, options: tuple[str, ...]) -> list[str]:
    return [
        "--" + option.replace("_", "-")
        for option in options
        if getattr(args, option) is not None
    ]


_Z24_OPTIONS = ("damage_onset", "cold_rule", "cold_threshold", "mat_key")
_Z24_OPTIONS += ("temperature_key",)
# The campaign options that name columns (agent init reads them too).
CAMPAIGN_COLUMNS = ("label_column", "feature_columns", "action_column", "time_column")
_CAMPAIGN_OPTIONS = (*CAMPAIGN_COLUMNS, "initial_size")


def _z24_cold_rule(args):
    """--cold-rule and --cold-threshold as load_z24's cold_rule."""
    if args.cold_threshold is None:
        return args.cold_rule
    if args.cold_rule not in (None, "frequency"):
        raise ValueError(
            f"--cold-threshold is the threshold of the frequency rule; it "
            f"cannot go with --cold-rule {args.cold_rule}."
        )
    return args.cold_threshold


def case_from_args(args):
    """The case study the command line describes; a misplaced option is an error."""
    return _with_mrvm_gamma(_case(args), args)


# The built-in methods whose kernel width --mrvm-gamma sets.
_MRVM_METHODS = ("mrvm1-evpi", "mrvm2-evpi")
# The paper's width, MulticlassRVC's default (gamma=None).
_PAPER_WIDTH = "1/D"


def _with_mrvm_gamma(case, args):
    """--mrvm-gamma: the mRVM width declared on the case, replacing its own."""
    if args.mrvm_gamma is None:
        return case
    from dataclasses import replace

    from skrbal.experiments import available_methods

    methods = args.methods or available_methods()
    mrvms = [name for name in _MRVM_METHODS if name in methods]
    if not mrvms:
        raise ValueError(
            f"--mrvm-gamma sets the kernel width of {' and '.join(_MRVM_METHODS)}, "
            f"and --methods runs neither ({' '.join(methods)})."
        )
    method_params = {name: dict(p) for name, p in case.method_params.items()}
    for name in mrvms:
        params = method_params.setdefault(name, {})
        if args.mrvm_gamma == _PAPER_WIDTH:
            params.pop("gamma", None)
        else:
            params["gamma"] = args.mrvm_gamma
    method_params = {name: p for name, p in method_params.items() if p}
    return replace(case, method_params=method_params)


def _case(args):
    """The case study of the data options (--mrvm-gamma aside)."""
    from skrbal import synthetic_decision_process
    from skrbal.experiments import campaign_case, get_case_study

    z24_options, campaign_options = (
        given_options(args, _Z24_OPTIONS),
        given_options(args, _CAMPAIGN_OPTIONS),
    )
    if args.case != "z24" and z24_options:
        raise ValueError(f"{', '.join(z24_options)}: options of the z24 case only.")
    if args.case != "custom" and args.process is not None:
        raise ValueError(
            f"--process is for 'reproduce custom'; {args.case} has its own process."
        )
    if args.case == "z24":
        if campaign_options:
            raise ValueError(
                f"{', '.join(campaign_options)}: options of a campaign file "
                "(synthetic or custom --data), not of the z24 case."
            )
        return get_case_study(
            "z24",
            data=args.data,
            damage_onset=args.damage_onset,
            cold_rule=_z24_cold_rule(args),
            key=args.mat_key,
            temperature_key=args.temperature_key,
        )
    if args.data is None:
        if args.case == "custom":
            raise ValueError(
                "reproduce custom needs --data (your campaign, CSV or Parquet) "
                "and --process (your decision process, JSON)."
            )
        if campaign_options:
            raise ValueError(
                f"{', '.join(campaign_options)}: options of a campaign file; "
                "pass it with --data."
            )
        return get_case_study(args.case)
    if args.case == "custom":
        if args.process is None:
            raise ValueError(
                "reproduce custom needs --process, your decision process as JSON "
                "(see skrbal.DecisionProcess.to_json)."
            )
        # Read here for its errors; the study records the file and its hash.
        read_process(args.process)
        process, initial_size = args.process, 0.003
    else:
        process, initial_size = synthetic_decision_process(), 0.002
    return campaign_case(
        args.data,
        process,
        name=args.case,
        initial_size=initial_size if args.initial_size is None else args.initial_size,
        label_column=args.label_column or "label",
        feature_columns=args.feature_columns,
        action_column=args.action_column,
        time_column=args.time_column,
    )


def _size(text: str) -> float | int:
    """A share (float) or a count (integer), as stream_test_split takes."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a share such as 0.01 or a count such as 5, got {text!r}"
        ) from None


def _add_z24_options(reproduce) -> None:
    z24 = reproduce.add_argument_group(
        "z24 labelling protocol",
        "How the Z24 record (a file, or the generator) is labelled; the protocol "
        "applied is printed in summary.md. The paper puts the damage from "
        "observation 3476 and calls class 2 the cold-temperature condition "
        "without stating its rule.",
    )
    z24.add_argument(
        "--damage-onset",
        type=int,
        metavar="N",
        help="index (counted from 0) of the first damaged observation (default: "
        "3476, the paper's number; the annotation of commonly circulated copies "
        "of the data gives 3462)",
    )
    z24.add_argument(
        "--cold-rule",
        choices=["auto", "frequency", "temperature"],
        help="which pre-damage observations are cold: temperature below 0 degC "
        "(needs temperatures in the file; the generator has them), first natural "
        "frequency above --cold-threshold, or auto: temperature where present, "
        "else frequency (default: auto)",
    )
    z24.add_argument(
        "--cold-threshold",
        type=float,
        metavar="HZ",
        help="threshold of the frequency rule; implies --cold-rule frequency "
        "(default: 4.1)",
    )
    z24.add_argument(
        "--mat-key",
        metavar="KEY",
        help="key path of the frequencies in a .mat file, struct fields joined "
        "by dots, e.g. databasez24.data (default: search the file for the one "
        "numeric array of shape (n, 4))",
    )
    z24.add_argument(
        "--temperature-key",
        metavar="KEY",
        help="key path (.mat) or column (.csv) of the temperatures in degC "
        "(default: a variable, field or column named temperature, temperatures "
        "or temp)",
    )


def add_campaign_options(parser, title: str) -> None:
    """--label-column, --feature-columns, --action-column, --time-column."""
    campaign = parser.add_argument_group(
        title,
        "One row per observation in temporal order, a header naming the columns "
        "(CSV, UTF-8, or Parquet). Rows are numbered from 0 in messages, with "
        "the line of the file.",
    )
    campaign.add_argument(
        "--label-column",
        "--label",
        metavar="NAME",
        help="column of the labels (default: label)",
    )
    campaign.add_argument(
        "--feature-columns",
        nargs="+",
        metavar="NAME",
        help="feature columns (default: every column but the label, action and "
        "time columns)",
    )
    campaign.add_argument(
        "--action-column",
        metavar="NAME",
        help="column of the actions taken after each observation, indices or "
        "names of the process's actions (default: 'action' if present, else "
        "every action 0, do nothing)",
    )
    campaign.add_argument(
        "--time-column",
        "--timestamp-column",
        metavar="NAME",
        help="column of the times (seconds, or dates such as 2025-01-31T08:00), "
        "checked to increase, never a feature (default: 'time' if present)",
    )
    return campaign


def _kernel_width(text: str) -> float | str:
    """--mrvm-gamma: 1/D or a positive, finite number."""
    if text.strip().upper() == _PAPER_WIDTH:
        return _PAPER_WIDTH
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected 1/D or a positive number such as 0.05, got {text!r}"
        )
    return value


def add_method_options(reproduce) -> None:
    """--mrvm-gamma, the case-dependent parameter of the built-in methods."""
    reproduce.add_argument(
        "--mrvm-gamma",
        type=_kernel_width,
        metavar="GAMMA|1/D",
        help="kernel width of mrvm1-evpi and mrvm2-evpi (the RBF kernel's gamma), "
        "in place of what the case study declares: a positive number, or 1/D, "
        "the paper's width for D features. The synthetic case declares 0.05 for "
        "its raw features (at 1/D mRVM2 inspects ~91 times per run instead of "
        "~4); every other case, the synthetic one with --data included, uses "
        "1/D. Recorded in config.json and printed in summary.md",
    )


def add_data_options(reproduce) -> None:
    """The Z24 protocol and campaign-file option groups of ``reproduce``."""
    _add_z24_options(reproduce)
    add_campaign_options(
        reproduce, "campaign file (synthetic or custom --data)"
    ).add_argument(
        "--initial-size",
        type=_size,
        metavar="SHARE|COUNT",
        help="share (or number) of the stream labelled at the start (default: "
        "0.002 for synthetic, 0.003 for custom)",
    )
