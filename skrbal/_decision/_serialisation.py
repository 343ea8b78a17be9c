"""A decision process as a dict and as JSON, and back, exactly.

The layout (``format_version`` 1) is what :meth:`DecisionProcess.to_dict`
documents; the methods of :class:`DecisionProcess` call these functions.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from numbers import Integral

import numpy as np

from skrbal._validation import as_finite_array

# Version of the dict/JSON layout written by DecisionProcess.to_dict; bump it
# when the layout changes and keep reading the old versions.
_FORMAT_VERSION = 1
# Every value a user must decide is required in a description: the
# constructor's defaults (an inspection that costs nothing) are for Python
# code, where they are visible; a file that forgot its cost would inspect at
# every step.
_REQUIRED_KEYS = (
    "format_version",
    "transition",
    "state_utility",
    "action_utility",
    "inspection_cost",
)
_OPTIONAL_KEYS = ("classes", "state_names", "action_names")
_MEANING = {
    "transition": "transition[action][state], the next state's distribution",
    "state_utility": "the utility of each state",
    "action_utility": "the utility (minus the cost) of each action",
    "inspection_cost": "the cost of one inspection, in the utilities' units",
}


def _check_labels(labels, name: str) -> None:
    """Raise unless ``labels`` are all integers or all strings (JSON-safe)."""
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise ValueError(f"{name} must be a list of labels, got {labels!r}.")
    kinds = set()
    for position, label in enumerate(labels):
        if isinstance(label, str):
            kinds.add(str)
        elif isinstance(label, Integral) and not isinstance(label, bool):
            kinds.add(int)
        else:
            raise ValueError(
                f"{name}[{position}] = {label!r} is neither an integer nor a "
                "string; only those labels survive JSON unchanged."
            )
    if len(kinds) > 1:
        raise ValueError(f"{name} mixes integer and string labels: {list(labels)}.")


def _names_list(names, name: str) -> list[str] | None:
    if names is None:
        return None
    names = list(names)
    for position, value in enumerate(names):
        if not isinstance(value, str):
            raise ValueError(f"{name}[{position}] = {value!r} is not a string.")
    return names


def _names_tuple(names, name: str) -> tuple[str, ...] | None:
    if names is not None and (
        isinstance(names, (str, bytes)) or not isinstance(names, Sequence)
    ):
        raise ValueError(f"{name} must be a list of strings, got {names!r}.")
    names = _names_list(names, name)
    return None if names is None else tuple(names)


def process_to_dict(process) -> dict:
    """:meth:`DecisionProcess.to_dict`."""
    transition, _, classes, _ = process._validated()
    if process.classes is None:
        labels = None
    else:
        labels = classes.tolist()
        _check_labels(labels, "classes")
    return {
        "format_version": _FORMAT_VERSION,
        "transition": transition.tolist(),
        "state_utility": np.asarray(process.state_utility, dtype=float).tolist(),
        "action_utility": np.asarray(process.action_utility, dtype=float).tolist(),
        "inspection_cost": float(process.inspection_cost),
        "classes": labels,
        "state_names": _names_list(process.state_names, "state_names"),
        "action_names": _names_list(process.action_names, "action_names"),
    }


def process_from_dict(cls, description: Mapping):
    """:meth:`DecisionProcess.from_dict` for the class ``cls``."""
    if not isinstance(description, Mapping):
        raise ValueError(
            f"a process description must be a dict, got {type(description).__name__}."
        )
    unknown = sorted(map(str, set(description) - {*_REQUIRED_KEYS, *_OPTIONAL_KEYS}))
    if unknown:
        raise ValueError(
            f"unknown key(s) {unknown} in the process description; allowed: "
            f"{list(_REQUIRED_KEYS + _OPTIONAL_KEYS)}."
        )
    missing = [key for key in _REQUIRED_KEYS if key not in description]
    if missing:
        meanings = "; ".join(
            f"{key}: {_MEANING[key]}" for key in missing if key in _MEANING
        )
        raise ValueError(
            f"the process description lacks the key(s) {missing}"
            + (f" ({meanings})" if meanings else "")
            + "; a process file states every cost, utility and transition (see "
            "'skrbal agent process-template')."
        )
    version = description["format_version"]
    if version != _FORMAT_VERSION or isinstance(version, bool):
        raise ValueError(
            f"format_version {version!r} is not supported (this skrbal reads "
            f"version {_FORMAT_VERSION})."
        )
    params = {
        key: as_finite_array(description[key], key, ndim)
        for key, ndim in (
            ("transition", 3),
            ("state_utility", 1),
            ("action_utility", 1),
        )
    }
    cost = description["inspection_cost"]
    if isinstance(cost, Integral) and not isinstance(cost, bool):
        cost = float(cost)
    classes = description.get("classes")
    if classes is not None:
        _check_labels(classes, "classes")
        classes = np.asarray(classes)
    process = cls(
        **params,
        inspection_cost=cost,
        classes=classes,
        state_names=_names_tuple(description.get("state_names"), "state_names"),
        action_names=_names_tuple(description.get("action_names"), "action_names"),
    )
    process._validated()
    return process


def process_to_json(process, path: str | os.PathLike | None = None) -> str | None:
    """:meth:`DecisionProcess.to_json`."""
    text = json.dumps(process.to_dict(), indent=2, allow_nan=False) + "\n"
    if path is None:
        return text
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
    return None


def process_from_json(cls, source: str | os.PathLike):
    """:meth:`DecisionProcess.from_json` for the class ``cls``."""
    if isinstance(source, str) and source.lstrip().startswith("{"):
        where, text = "the JSON text", source
    else:
        where = f"process file {os.fspath(source)!r}"
        with open(source, encoding="utf-8") as file:
            text = file.read()
    try:
        description = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where} is not valid JSON: {exc}.") from None
    try:
        return cls.from_dict(description)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
