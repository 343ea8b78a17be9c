"""One configuration fingerprint: canonical JSON of estimators and values.

Studies (the configuration of a results folder) and agent stores (the
configuration of an agent) describe an estimator by its class and its
``get_params(deep=False)``, recursively, as canonical JSON: sorted keys,
floats at full precision (``json`` writes their ``repr``), arrays with every
element, dtype and shape. Unlike ``repr(estimator)``, which scikit-learn
shortens for long parameters and which holds the memory address of a
function, two configurations have the same JSON only when they are equal.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from typing import Any

from skrbal._lazy import numpy as np  # imported when first used

__all__ = ["dumps", "encode_config", "fingerprint"]


def _is_estimator(value) -> bool:
    """Whether ``value`` is a scikit-learn estimator, without importing sklearn.

    No estimator exists before ``sklearn.base`` is imported, so reading an
    agent store's JSON (``skrbal agent status``) need not pay a second for it.
    """
    base = sys.modules.get("sklearn.base")
    return base is not None and isinstance(value, base.BaseEstimator)


def encode_config(value: Any) -> Any:
    """A JSON-serialisable, canonical description of ``value``.

    Estimators become ``{"__estimator__": "module.Class", "params": {...}}``
    (their ``get_params(deep=False)``, recursively); arrays keep their dtype;
    floats are written by ``json`` with ``repr``, which round-trips exactly.
    A value with no such description (a function, say) is kept as its
    ``repr`` under ``"__repr__"``: it takes part in the fingerprint but cannot
    be rebuilt.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if _is_estimator(value):
        cls = type(value)
        params = value.get_params(deep=False)
        return {
            "__estimator__": f"{cls.__module__}.{cls.__qualname__}",
            "params": {k: encode_config(params[k]) for k in sorted(params)},
        }
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufU":
        return {
            "__ndarray__": [encode_config(v) for v in value.ravel().tolist()],
            "dtype": value.dtype.str,
            "shape": list(value.shape),
        }
    if isinstance(value, (list, tuple)):
        items = [encode_config(v) for v in value]
        return items if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: encode_config(value[k]) for k in sorted(value)}}
    if callable(value) and hasattr(value, "__qualname__"):
        # By name, not by repr: a function's repr holds its memory address.
        name = f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
        return {"__repr__": f"<callable {name}>"}
    return {"__repr__": repr(value)}


def dumps(value: Any) -> str:
    """Canonical JSON text of an already encoded value (exact floats)."""
    return json.dumps(value, sort_keys=True, allow_nan=False, separators=(",", ":"))


def fingerprint(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``encode_config(value)``."""
    return hashlib.sha256(dumps(encode_config(value)).encode()).hexdigest()
