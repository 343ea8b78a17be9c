"""The results folder of a study, kept as a small database.

Layout: ``config.json`` (what the study is), ``repetitions/rep-NNNNN.json``
(one finished repetition each), the tidy ``queries.csv`` and ``totals.csv``
and a lock file. Every write is atomic; every repetition file says which
study and repetition it holds and is checked on reading; numbers keep full
precision; a second writer is locked out; files get the user's umask.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

# atomic_write_* and folder_lock were defined here; the command line still
# imports them from this module.
from skrbal._files import (  # noqa: F401
    LOCK_NAME,
    atomic_write_bytes,
    atomic_write_text,
    folder_lock,
)
from skrbal.exceptions import StudyFileWarning

__all__ = ["StudyFileWarning", "load_study"]

# 2: queries gained record_index, totals seconds, the config the data source.
# 3: each repetition file names its study and repetition, full-precision
#    numbers with their dtypes.
# 4: totals count every warning a method raised (n_warnings) by category
#    (warnings), not only the learner's own.
FORMAT_VERSION = 4

TIDY_FILES = ("queries.csv", "totals.csv")
_REP_NAME = re.compile(r"rep-(\d{5,})\.json")
# What a configuration must hold for its repetitions to be read.
_CONFIG_KEYS = ("format_version", "case", "methods", "n_repeats", "seed")
_TABLE_COLUMNS = {
    "totals": ("repetition", "method", "n_inspections"),
    "queries": ("repetition", "method", "query"),
}


# ---------------------------------------------------------------------- #
# files
# ---------------------------------------------------------------------- #
def rep_path(out: Path, repetition: int) -> Path:
    return out / "repetitions" / f"rep-{repetition:05d}.json"


def repetition_files(out: Path) -> dict[int, Path]:
    """The repetition files of a folder by index (other names are ignored)."""
    files = {}
    for path in (out / "repetitions").glob("rep-*.json"):
        match = _REP_NAME.fullmatch(path.name)
        if match:
            files[int(match.group(1))] = path
    return dict(sorted(files.items()))


def _remove_stale_temporaries(out: Path) -> None:
    """Delete the half-written files of a killed run (see atomic_write_text).

    Only called under the folder's lock, so no live writer owns them.
    """
    patterns = [("repetitions", ".rep-*.json.*")] + [
        (".", f".{name}.*") for name in ("config.json", *TIDY_FILES)
    ]
    for folder, pattern in patterns:
        for stale in (out / folder).glob(pattern):
            stale.unlink(missing_ok=True)


def _remove_study(out: Path) -> None:
    """Delete a study's own files (overwrite); nothing else in the folder."""
    for path in repetition_files(out).values():
        path.unlink()
    for name in ("config.json", *TIDY_FILES):
        (out / name).unlink(missing_ok=True)
    _remove_stale_temporaries(out)


# ---------------------------------------------------------------------- #
# configuration
# ---------------------------------------------------------------------- #
def _read_json(path: Path):
    """Parse a JSON file; every failure a ValueError naming the file."""
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}.") from None
    except RecursionError:
        raise ValueError(
            f"{path} is not a study file: its JSON is nested too deeply to read."
        ) from None


def read_config(out: Path) -> dict:
    """The study's ``config.json``, checked to be one."""
    path = out / "config.json"
    config = _read_json(path)
    missing = (
        [key for key in _CONFIG_KEYS if key not in config]
        if isinstance(config, dict)
        else list(_CONFIG_KEYS)
    )
    if missing:
        raise ValueError(f"{path} is not a study configuration: it lacks {missing}.")
    n_repeats = config["n_repeats"]
    if not isinstance(config["methods"], dict) or not (
        isinstance(n_repeats, int) and not isinstance(n_repeats, bool)
    ):
        raise ValueError(
            f"{path} is not a study configuration: its methods must be an object "
            f"and its n_repeats an integer, got {config['methods']!r} and "
            f"{n_repeats!r}."
        )
    if config["format_version"] != FORMAT_VERSION:
        raise ValueError(
            f"{path} was written in results format {config['format_version']!r}; "
            f"this version of skrbal reads format {FORMAT_VERSION}. Rerun the "
            "study into a new folder (or with overwrite)."
        )
    return config


def study_fingerprint(config: dict) -> str:
    """What a repetition file must match: the config but n_repeats."""
    core = {k: v for k, v in config.items() if k not in ("n_repeats", "environment")}
    return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()


def _check_config(out: Path, config: dict) -> None:
    saved = read_config(out)
    mismatch = sorted(
        key for key in config if key != "n_repeats" and saved.get(key) != config[key]
    )
    if mismatch:
        raise ValueError(
            f"cannot resume {out}: its configuration differs in {mismatch}. "
            "Choose another output folder, or pass overwrite=True (--overwrite) "
            "to replace that study."
        )


# ---------------------------------------------------------------------- #
# repetition files
# ---------------------------------------------------------------------- #
def _json_scalar(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} {value!r} in a result file")


def _encode_frame(frame: pd.DataFrame) -> dict:
    # Python's float repr is the shortest string that reads back to the same
    # double, so the numbers round-trip exactly; the dtypes come back too.
    return {
        "columns": [str(column) for column in frame.columns],
        "dtypes": [str(dtype) for dtype in frame.dtypes],
        "values": [frame[column].tolist() for column in frame.columns],
    }


def repetition_payload(result: Bunch, repetition: int, config: dict) -> str:
    payload = {
        "format_version": FORMAT_VERSION,
        "study": study_fingerprint(config),
        "repetition": repetition,
        "seed": config["seed"],
        "methods": list(config["methods"]),
        "queries": _encode_frame(result.queries),
        "totals": _encode_frame(result.totals),
    }
    return json.dumps(payload, default=_json_scalar)


def _decode_frame(part, name: str) -> pd.DataFrame:
    """A table of a repetition file; ValueError saying what is wrong."""
    try:
        columns, dtypes, values = part["columns"], part["dtypes"], part["values"]
        if not len(columns) == len(dtypes) == len(values):
            raise ValueError("columns, dtypes and values differ in length")
        if len({len(column) for column in values}) > 1:
            raise ValueError("its columns differ in length")
        frame = pd.DataFrame(
            {
                column: pd.Series(data, dtype=dtype)
                for column, dtype, data in zip(columns, dtypes, values)
            },
            columns=columns,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"its {name} table is malformed ({exc})") from None
    missing = [c for c in _TABLE_COLUMNS[name] if c not in frame.columns]
    if missing:
        raise ValueError(f"its {name} table lacks the columns {missing}")
    return frame


def _check_tables(queries, totals, repetition: int, methods: list) -> None:
    """The tables hold every method of ``repetition``, complete."""
    for name, frame in (("totals", totals), ("queries", queries)):
        if frame.empty:
            raise ValueError(f"its {name} table has 0 rows")
        others = set(frame["repetition"]) - {repetition}
        if others:
            raise ValueError(
                f"its {name} table holds rows of repetition {sorted(others)}"
            )
    if sorted(totals["method"]) != sorted(methods):
        raise ValueError(
            f"its totals table has rows for {totals['method'].tolist()}, "
            f"expected one for each of {methods}"
        )
    for method, n_inspections in zip(totals["method"], totals["n_inspections"]):
        steps = queries.loc[queries["method"] == method, "query"].tolist()
        if steps != list(range(int(n_inspections) + 1)):
            raise ValueError(
                f"its queries table holds {len(steps)} rows for {method!r}, "
                f"expected the initial model and {n_inspections} inspections"
            )


def read_repetition(path: Path, repetition: int, config: dict) -> Bunch:
    """Load a repetition file and check it holds ``repetition`` of the study.

    Raises
    ------
    ValueError
        Naming the file and what is wrong with it.
    """
    payload = _read_json(path)
    keys = ("format_version", "study", "repetition", "methods", "queries", "totals")
    if not isinstance(payload, dict) or any(k not in payload for k in keys):
        raise ValueError(
            f"{path} is not a repetition file: a JSON object with {list(keys)} "
            "is expected."
        )
    methods = list(config["methods"])
    try:
        if payload["format_version"] != FORMAT_VERSION:
            raise ValueError(
                f"it is in results format {payload['format_version']!r}, "
                f"not {FORMAT_VERSION}"
            )
        if payload["repetition"] != repetition:
            raise ValueError(
                f"it holds repetition {payload['repetition']!r}, not {repetition} "
                "as its name says"
            )
        if payload["study"] != study_fingerprint(config):
            raise ValueError(
                "it belongs to another study (its configuration differs from "
                "config.json's)"
            )
        queries = _decode_frame(payload["queries"], "queries")
        totals = _decode_frame(payload["totals"], "totals")
        _check_tables(queries, totals, repetition, methods)
    except ValueError as exc:
        raise ValueError(f"{path} is unusable: {exc}.") from None
    return Bunch(queries=queries, totals=totals)


def open_study(out: Path, config: dict, *, resume: bool, overwrite: bool):
    """Check the folder against ``config``; the usable finished repetitions.

    Called under the folder's lock. Reads only; the caller writes the
    configuration once the study can start.

    Returns
    -------
    results : dict of int to Bunch
        Finished repetitions below ``config['n_repeats']``. Unusable files
        are left out with a :class:`StudyFileWarning` (to be redone).
    """
    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other: choose one.")
    if overwrite:
        _remove_study(out)
        return {}
    files = repetition_files(out)
    if not (out / "config.json").exists():
        leftovers = [p.name for p in files.values()]
        leftovers += [name for name in TIDY_FILES if (out / name).exists()]
        if leftovers:
            raise FileExistsError(
                f"{out} holds study results ({len(leftovers)} files, e.g. "
                f"{leftovers[0]}) but no config.json, so nothing says which study "
                "they belong to and they cannot be reused. Choose another output "
                "folder, or pass overwrite=True (--overwrite) to replace them."
            )
        return {}
    if not resume:
        raise FileExistsError(
            f"{out} already holds a study; pass resume=True (--resume) to "
            "continue it, overwrite=True (--overwrite) to replace it, or choose "
            "another output folder."
        )
    _check_config(out, config)
    _remove_stale_temporaries(out)
    results = {}
    for repetition, path in files.items():
        if repetition >= config["n_repeats"]:
            continue  # kept on disk for a later, larger request
        try:
            results[repetition] = read_repetition(path, repetition, config)
        except ValueError as exc:
            warnings.warn(
                f"{exc} Repetition {repetition} is run again and the file replaced.",
                StudyFileWarning,
                stacklevel=3,
            )
    return results


# ---------------------------------------------------------------------- #
# reading a study
# ---------------------------------------------------------------------- #
def combine(results: dict[int, Bunch], config: dict) -> Bunch:
    order = sorted(results)
    queries = pd.concat([results[r].queries for r in order], ignore_index=True)
    totals = pd.concat([results[r].totals for r in order], ignore_index=True)
    return Bunch(queries=queries, totals=totals, config=config)


def load_study(out) -> Bunch:
    """Load a study written by :func:`run_study` (finished or interrupted).

    Every repetition file is checked: it must hold, complete, the repetition
    its name says, of the study ``config.json`` describes.

    Parameters
    ----------
    out : str or Path
        The study's folder.

    Returns
    -------
    study : Bunch
        ``queries``, ``totals`` and ``config``, from every repetition saved
        below ``config['n_repeats']``. Files of higher repetitions, left by an
        earlier, larger request that was resumed with fewer repetitions, are
        not part of the study (a later resume with more repetitions reuses
        them).

    Raises
    ------
    FileNotFoundError
        If the folder has no ``config.json`` or no finished repetition.
    ValueError
        If ``config.json`` or a repetition file is unusable; the message
        names the file and what is wrong with it.

    Examples
    --------
    >>> import tempfile
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method, load_study, run_study
    >>> folder = tempfile.mkdtemp()
    >>> _ = run_study("synthetic", [Method("nb", GaussianNB)], n_repeats=1,
    ...               out=folder, progress=False)
    >>> len(load_study(folder).totals)
    1
    """
    out = Path(out)
    if not (out / "config.json").exists():
        raise FileNotFoundError(f"no study in {out}: config.json is missing.")
    config = read_config(out)
    results = {
        repetition: read_repetition(path, repetition, config)
        for repetition, path in repetition_files(out).items()
        if repetition < config["n_repeats"]
    }
    if not results:
        raise FileNotFoundError(f"the study in {out} has no finished repetition.")
    return combine(results, config)
