"""Configuration of estimators as plain JSON: encode, fingerprint, rebuild.

An agent store keeps the configuration of the agent's estimator, decision
process and budget policy as JSON, never as a pickle, so that reading a store
cannot execute code. Rebuilding an object from its JSON is limited to an
explicit allowlist of classes (:data:`REBUILDABLE`), imported here by this
module, never by a name read from the store, with bounded parameters and no
parameter that names a file or runs code (a Pipeline's ``memory``, a
callable). Any other estimator must be passed again by the caller, and is
checked against the stored configuration, whose own fingerprint is checked
first.
"""

from __future__ import annotations

import functools
import hashlib
import json
from contextlib import contextmanager
from typing import Any

from skrbal._fingerprint import dumps, encode_config, fingerprint  # noqa: F401
from skrbal._lazy import numpy as np  # imported when first used
from skrbal.exceptions import (
    AgentLockedError,
    ConfigurationError,
    RequestError,
    StoreError,
)

# The classes a store may rebuild: skrbal's estimators and budget policies,
# and scikit-learn's common preprocessing steps and probabilistic classifiers
# (each cheap to build, bounded by _BOUNDS, with no file or code parameter).
REBUILDABLE = (
    "skrbal.mixture.BayesianGMMClassifier",
    "skrbal.mixture.SemiSupervisedGMMClassifier",
    "skrbal.mixture.PooledGMMClassifier",
    "skrbal.mixture.FleetPrior",
    "skrbal.rvm.MulticlassRVC",
    "skrbal.budget.AllOf",
    "skrbal.budget.CostThreshold",
    "skrbal.budget.MinimumGap",
    "skrbal.budget.PacedBudget",
    "skrbal.budget.QuantileThreshold",
    "skrbal.budget.SpendCap",
    "skrbal.inspection.InspectionMethod",
    "sklearn.pipeline.Pipeline",
    "sklearn.preprocessing.StandardScaler",
    "sklearn.preprocessing.MinMaxScaler",
    "sklearn.preprocessing.MaxAbsScaler",
    "sklearn.preprocessing.RobustScaler",
    # Only ever rebuilt without a function: a callable has no JSON form.
    "sklearn.preprocessing.FunctionTransformer",
    "sklearn.decomposition.PCA",
    "sklearn.naive_bayes.GaussianNB",
    "sklearn.linear_model.LogisticRegression",
    "sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
    "sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis",
    "sklearn.neighbors.KNeighborsClassifier",
    "sklearn.tree.DecisionTreeClassifier",
    "sklearn.ensemble.RandomForestClassifier",
    "sklearn.ensemble.ExtraTreesClassifier",
)

# Upper bounds of size parameters (work a rebuilt estimator would do).
_BOUNDS = {
    "n_estimators": 10_000,
    "max_iter": 1_000_000,
    "n_init": 1_000,
    "n_components": 10_000,
    "n_neighbors": 100_000,
    "n_quadrature": 1_000,
    "degree": 20,
    "max_depth": 10_000,
    "window": 1_000_000,
    "n_jobs": 64,
    "verbose": 100,
}
# Parameters whose product bounds the work of a fit replayed on loading
# (iterations of iterations): each within its bound above, their product
# may not be (MulticlassRVC(max_iter=1_000_000, n_quadrature=1_000, tol=0)
# kept from_store busy for minutes).
_WORK_FACTORS = ("n_estimators", "max_iter", "n_init", "n_quadrature")
_MAX_WORK = 10_000_000
# Parameters that would point at files (a joblib cache) or hold code.
_MUST_BE_NONE = ("memory",)
# Size of a stored array (an estimator's prior, say).
_MAX_ARRAY = 1_000_000
# Bytes of one entry: a text of 1,000 characters, not a dtype of gigabytes.
_MAX_ITEM_BYTES = 4_000


@contextmanager
def stored_configuration(name: str, url: str):
    """Rebuilding an agent's stored configuration: any failure is named.

    A crafted configuration (a dtype no array has, JSON nested 100,000
    deep, a 900-deep AllOf, settings missing a key) would otherwise end in
    Python's or numpy's own error.
    """
    try:
        yield
    except (ConfigurationError, StoreError, RequestError, AgentLockedError):
        raise
    except (
        TypeError,
        ValueError,
        KeyError,
        IndexError,
        AttributeError,
        RecursionError,
        OverflowError,
        MemoryError,
    ) as exc:
        what = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ConfigurationError(
            f"agent {name!r} in store {url}: table skrbal_agents, the agent's "
            f"row: its stored configuration cannot be rebuilt "
            f"({type(exc).__name__}: {what}). The store is damaged or was "
            "crafted: restore it from a backup, or pass the estimator and "
            "budget to from_store (they are checked against it)."
        ) from None


def resolve_config(
    stored_json: str, given: Any, what: str, stored_fingerprint: str | None = None
) -> Any:
    """``given`` checked against a stored configuration, or the stored object.

    With ``stored_fingerprint``, the stored configuration is first checked
    against it: an edited configuration is not used.

    Raises
    ------
    ConfigurationError
        When the stored configuration does not match its fingerprint, when
        ``given`` differs from it (naming the first difference), or when
        ``given`` is ``None`` and the stored one cannot be rebuilt.
    """
    if stored_fingerprint is not None:
        actual = hashlib.sha256(stored_json.encode()).hexdigest()
        if actual != stored_fingerprint:
            raise ConfigurationError(
                f"the stored {what} configuration does not match its stored "
                f"fingerprint ({stored_fingerprint[:12]}..., computed "
                f"{actual[:12]}...): it was changed after the agent was created; "
                "the store is damaged or was edited."
            )
    try:
        stored = json.loads(stored_json)
    except ValueError as exc:
        raise ConfigurationError(
            f"the stored {what} configuration is not JSON: {exc}"
        ) from None
    if given is None:
        return decode_config(stored)
    encoded = encode_config(given)
    if dumps(encoded) != dumps(stored):
        raise ConfigurationError(
            f"{what} differs from the one stored with the agent: "
            f"{config_difference(stored, encoded)}."
        )
    return given


def _allowlist() -> dict:
    """``(package, class name) -> module`` of :data:`REBUILDABLE`."""
    return {
        (path.split(".")[0], path.rpartition(".")[2]): path.rpartition(".")[0]
        for path in REBUILDABLE
    }


@functools.cache
def _allowed_class(package: str, name: str):
    """The class of :data:`REBUILDABLE` named ``name`` in ``package``, or None.

    Only its own module is imported (fixed module names, never read from a
    store): a store of Gaussian mixtures does not pay for importing random
    forests, and ``skrbal agent observe`` starts that much sooner.
    """
    import importlib

    module = _allowlist().get((package, name))
    return None if module is None else getattr(importlib.import_module(module), name)


def _rebuildable_class(path: str):
    """The allowlisted class stored as ``path`` (``module.Class``).

    Matched by package and class name, so a class that moved between private
    modules of its package (from one version to the next) is still found.
    """
    if not isinstance(path, str):
        raise ConfigurationError(f"malformed estimator entry {path!r}.")
    module, _, name = path.rpartition(".")
    cls = _allowed_class(module.split(".")[0], name)
    if cls is None:
        raise ConfigurationError(
            f"the store holds a {path}, which is not one of the classes a store "
            "may rebuild (skrbal's estimators and budget policies, and the "
            "scikit-learn classes listed in skrbal.online._config.REBUILDABLE): "
            "a store never imports other code, so pass the estimator again (it "
            "is checked against the stored configuration)."
        )
    return cls


def _check_parameter(cls, name: str, value) -> None:
    """Refuse a parameter that names a file, runs code or bounds no work."""
    where = f"stored {cls.__name__} parameter {name}"
    if name in _MUST_BE_NONE and value is not None:
        raise ConfigurationError(
            f"{where}={value!r} refused: it would read and write files (a "
            "joblib cache) when the store is loaded. Pass the estimator again."
        )
    if name in _BOUNDS and value is not None:
        sizes = value if isinstance(value, (list, tuple)) else [value]
        for size in sizes:
            if isinstance(size, bool) or not isinstance(size, (int, float)):
                continue  # a keyword such as 'auto', checked by the class
            if not abs(size) <= _BOUNDS[name]:
                raise ConfigurationError(
                    f"{where}={value!r} refused: a store rebuilds {name} up to "
                    f"{_BOUNDS[name]}. Pass the estimator again."
                )


def _check_work(cls, params: dict) -> None:
    """Refuse parameters whose product would keep loading busy."""
    factors = {
        name: params[name]
        for name in _WORK_FACTORS
        if isinstance(params.get(name), int)
        and not isinstance(params.get(name), bool)
        and params[name] > 0
    }
    work = 1
    for value in factors.values():
        work *= value
    if work > _MAX_WORK:
        shown = " x ".join(f"{name}={value}" for name, value in factors.items())
        raise ConfigurationError(
            f"stored {cls.__name__} refused: {shown} is {work:,}, above the "
            f"{_MAX_WORK:,} a store rebuilds (each parameter is within its "
            "bound; their product would keep loading busy for minutes). Pass "
            "the estimator again to from_store: you vouch for it."
        )


def _rebuild(value: dict):
    cls = _rebuildable_class(value["__estimator__"])
    params = value.get("params")
    if not isinstance(params, dict):
        raise ConfigurationError(f"malformed parameters of {cls.__name__}.")
    decoded = {}
    for name, param in params.items():
        decoded[name] = decode_config(param)
        _check_parameter(cls, name, decoded[name])
    _check_work(cls, decoded)
    try:
        return cls(**decoded)
    except TypeError as exc:
        raise ConfigurationError(
            f"the stored {cls.__name__} cannot be rebuilt: {exc}"
        ) from None


def _array(value: dict) -> np.ndarray:
    dtype, shape = np.dtype(value["dtype"]), value["shape"]
    items = value["__ndarray__"]
    if (
        dtype.kind not in "biufU"
        or dtype.fields is not None
        or dtype.itemsize > _MAX_ITEM_BYTES
        or len(items) > _MAX_ARRAY
    ):
        raise ConfigurationError(
            f"a stored array of dtype {dtype} and {len(items)} values refused: "
            f"a store rebuilds arrays of numbers or text (up to "
            f"{_MAX_ITEM_BYTES // 4} characters) up to {_MAX_ARRAY} values."
        )
    return np.array(items, dtype=dtype).reshape(shape)


def decode_config(value: Any) -> Any:
    """Rebuild the object described by :func:`encode_config`.

    Raises
    ------
    ConfigurationError
        When the description holds a value kept only as its ``repr``, a
        class outside :data:`REBUILDABLE`, a parameter that names a file
        (``memory``) or a size beyond its bound.
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
        return _array(value)
    if "__estimator__" in value:
        return _rebuild(value)
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
    return [method.to_dict() for method in methods]


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
    from skrbal.inspection import InspectionMethod, check_methods

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
        check_methods(methods, process)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(
            f"the stored inspection methods are invalid: {exc}"
        ) from exc
    return methods
