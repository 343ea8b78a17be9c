"""Configuration of estimators as plain JSON: encode, fingerprint, rebuild.

An agent store keeps the configuration of the agent's estimator, decision
process and budget policy as JSON, never as a pickle, so that reading a store
cannot execute code. Rebuilding an object from its JSON imports its class by
name, which is only done for classes of :mod:`sklearn` and :mod:`skrbal`; any
other estimator must be passed again by the caller, and is checked against
the stored fingerprint.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from skrbal._fingerprint import dumps, encode_config, fingerprint  # noqa: F401
from skrbal.exceptions import ConfigurationError

# Classes a store may rebuild by importing them: modules of these packages
# define classes and functions only, so importing them runs no stored code.
_REBUILDABLE_PACKAGES = ("sklearn", "skrbal")


def resolve_config(stored_json: str, given: Any, what: str) -> Any:
    """``given`` checked against a stored configuration, or the stored object.

    Raises
    ------
    ConfigurationError
        When ``given`` differs from the stored configuration (naming the first
        difference), or when ``given`` is ``None`` and the stored one cannot
        be rebuilt.
    """
    stored = json.loads(stored_json)
    if given is None:
        return decode_config(stored)
    encoded = encode_config(given)
    if dumps(encoded) != dumps(stored):
        raise ConfigurationError(
            f"{what} differs from the one stored with the agent: "
            f"{config_difference(stored, encoded)}."
        )
    return given


def _import_class(path: str):
    module_name, _, name = path.rpartition(".")
    if module_name.split(".")[0] not in _REBUILDABLE_PACKAGES:
        raise ConfigurationError(
            f"the store holds a {path}, which is not part of scikit-learn or "
            "skrbal: a store never imports other code, so pass the estimator "
            "again (it is checked against the stored configuration)."
        )
    cls = getattr(importlib.import_module(module_name), name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
        raise ConfigurationError(f"{path} is not an estimator class.")
    return cls


def decode_config(value: Any) -> Any:
    """Rebuild the object described by :func:`encode_config`.

    Raises
    ------
    ConfigurationError
        When the description holds a value kept only as its ``repr``, or a
        class outside scikit-learn and skrbal.
    """
    if isinstance(value, list):
        return [decode_config(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__float__" in value:
        return float(value["__float__"])
    if "__tuple__" in value:
        return tuple(decode_config(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {k: decode_config(v) for k, v in value["__dict__"].items()}
    if "__ndarray__" in value:
        flat = np.array(value["__ndarray__"], dtype=np.dtype(value["dtype"]))
        return flat.reshape(value["shape"])
    if "__estimator__" in value:
        cls = _import_class(value["__estimator__"])
        return cls(**{k: decode_config(v) for k, v in value["params"].items()})
    if "__repr__" in value:
        raise ConfigurationError(
            f"the stored configuration holds {value['__repr__']}, which has no "
            "JSON form: pass the object again (it is checked against the "
            "stored fingerprint)."
        )
    raise ConfigurationError(f"unknown configuration entry {sorted(value)}.")


def config_difference(stored: Any, given: Any, path: str = "") -> str:
    """The first place where two encoded configurations differ, for messages."""
    if isinstance(stored, dict) and isinstance(given, dict):
        for key in sorted(set(stored) | set(given)):
            if stored.get(key) != given.get(key):
                return config_difference(
                    stored.get(key), given.get(key), f"{path}.{key}" if path else key
                )
    return f"{path or 'value'}: stored {dumps(stored)}, given {dumps(given)}"


def process_to_json(process) -> str:
    """JSON text of a decision process (:meth:`skrbal.DecisionProcess.to_dict`)."""
    return dumps(process.to_dict())


def process_from_json(text: str):
    """The decision process stored by :func:`process_to_json`, validated."""
    from skrbal._decision import DecisionProcess

    try:
        return DecisionProcess.from_dict(json.loads(text))
    except ValueError as exc:
        raise ConfigurationError(f"the stored process is invalid: {exc}") from exc


def inspections_to_config(methods) -> list | None:
    """Inspection methods as plain JSON values: name, cost, confusion, outcomes.

    ``None`` (the process's perfect inspection) stays ``None``. Floats are
    kept exactly (``json`` writes their ``repr``).
    """
    if methods is None:
        return None
    config = []
    for method in methods:
        confusion, outcomes, cost = method._validated()
        config.append(
            {
                "name": method.name,
                "cost": cost,
                "confusion": confusion.tolist(),
                "outcomes": outcomes.tolist(),
            }
        )
    return config


def inspections_from_config(value, process) -> list | None:
    """The methods stored by :func:`inspections_to_config`, validated.

    Raises
    ------
    ConfigurationError
        When an entry is malformed or a method does not fit ``process``
        (naming the method and the entry, as :class:`InspectionMethod` does).
    """
    if value is None:
        return None
    from skrbal.inspection import InspectionMethod
    from skrbal.inspection._value import _confusions

    try:
        if not isinstance(value, list):
            raise TypeError(f"expected a list of methods, got {value!r}")
        methods = []
        for entry in value:
            if not isinstance(entry, dict) or set(entry) != {
                "name",
                "cost",
                "confusion",
                "outcomes",
            }:
                raise ValueError(
                    "each method must be a dict with exactly the keys name, cost, "
                    f"confusion and outcomes; got {entry!r}"
                )
            methods.append(InspectionMethod(**entry))
        _confusions(methods, process)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(
            f"the stored inspection methods are invalid: {exc}"
        ) from exc
    return methods
