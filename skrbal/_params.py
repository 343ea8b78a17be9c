"""Detecting changed parameters, for estimators that cache their validation.

A cache of validated parameters keeps a private copy of the values it was
built from (:func:`snapshot`) and, at each call, compares the current values
with it (:func:`same_value`), so that ``set_params``, a plain assignment and
an array changed in place are all taken in.
"""

from __future__ import annotations

import copy

import numpy as np


def snapshot(value):
    """A private copy of a parameter value, to detect later changes.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._params import same_value, snapshot
    >>> value = np.array([1.0, 2.0])
    >>> seen = snapshot(value)
    >>> value[0] = 5.0
    >>> same_value(value, seen)
    False
    """
    if type(value) is np.ndarray:
        return value.copy()
    return copy.deepcopy(value)


def same_value(value, seen) -> bool:
    """Whether a parameter still equals the snapshot a cache was built from.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._params import same_value
    >>> same_value([np.eye(2), np.eye(2)], [np.eye(2), np.eye(2)])
    True
    >>> same_value(np.array([0.5]), np.array([0.5], dtype=np.float32))
    False
    """
    if value is seen:  # None, and numbers deepcopy returns as they are
        return True
    if type(value) is not type(seen):
        return False
    if type(value) is np.ndarray:
        if value.dtype != seen.dtype or value.shape != seen.shape:
            return False
        if value.dtype.hasobject:  # labels as Python objects: compare them
            try:
                return bool(np.array_equal(value, seen))
            except (TypeError, ValueError):
                return False
        return value.tobytes() == seen.tobytes()
    try:
        return bool(value == seen)
    except (TypeError, ValueError):
        # A list holding arrays (one transition matrix per action): compare
        # item by item rather than validate again at every call.
        if isinstance(value, (list, tuple)) and len(value) == len(seen):
            return all(map(same_value, value, seen))
        return False
