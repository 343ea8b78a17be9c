"""Checking class labels and mapping them to positions: the one label check.

Shared by the process, the learners, the agent, the inspections and the
metrics.
"""

from __future__ import annotations

import numpy as np

#: The label that marks an unlabelled sample, as in ``sklearn.semi_supervised``.
UNLABELLED = -1


def split_unlabelled(y) -> np.ndarray:
    """Mask of the samples of ``y`` marked unlabelled (the integer ``-1``).

    A string array cannot hold the integer marker: a string array holding
    ``'-1'`` raises (it was meant as the marker); otherwise it has no
    unlabelled sample (numpy 1 would compare it with ``-1`` as a whole,
    giving one ``False``, not a mask).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._labels import split_unlabelled
    >>> split_unlabelled(np.array([1, -1, 2])).tolist()
    [False, True, False]
    >>> split_unlabelled(np.array(["ok", "damaged"])).tolist()
    [False, False]
    """
    y = np.asarray(y)
    if y.dtype.kind in "US":
        if np.any(y == y.dtype.type("-1")):
            raise ValueError(
                "y is a string array holding '-1': a string array cannot hold "
                "the unlabelled marker, the integer -1. Pass an object array, "
                "e.g. y.astype(object), with the integer -1 for the unlabelled "
                "samples."
            )
        return np.zeros(y.shape[0], dtype=bool)
    return np.asarray(y == UNLABELLED, dtype=bool).reshape(y.shape[0])


def labels_differ(a, b) -> np.ndarray:
    """Elementwise ``a != b`` for labels, all ``True`` where the kinds cannot match.

    Numbers never equal strings. numpy 1 answers ``!=`` between a numeric and
    a string array with one scalar (and a FutureWarning) instead of a mask;
    this gives the mask on every numpy.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._labels import labels_differ
    >>> labels_differ(np.array([1, 2]), np.array([1, 3])).tolist()
    [False, True]
    >>> labels_differ(np.array([1, 2]), np.array(["1", "2"])).tolist()
    [True, True]
    """
    a, b = np.asarray(a), np.asarray(b)
    kinds = {a.dtype.kind, b.dtype.kind}
    if kinds & set("biuf") and kinds & set("USV"):
        return np.ones(np.broadcast_shapes(a.shape, b.shape), dtype=bool)
    return np.asarray(a != b, dtype=bool)


def check_labels(y, name: str = "y") -> np.ndarray:
    """``y`` as an array whose labels are all of one kind.

    Rejects a mix of numbers and strings (or other objects), which numpy
    would otherwise turn into strings (``[1, 'a']`` becomes ``['1', 'a']``)
    or keep as objects that cannot be sorted or compared; the message names
    one label of each kind.

    Examples
    --------
    >>> from skrbal._labels import check_labels
    >>> check_labels([1, 2]).tolist()
    [1, 2]
    >>> check_labels([1, "a"], "y_test")
    Traceback (most recent call last):
    ...
    ValueError: y_test mixes label types: 1 (number) and 'a' (string); use one type
    for every label (all numbers or all strings).
    """
    raw = y if hasattr(y, "dtype") else np.asarray(y, dtype=object)
    raw = np.asarray(raw)
    if raw.dtype == object:
        examples = {}
        for label in raw.ravel().tolist():
            examples.setdefault(_label_kind(label), label)
        if len(examples) > 1:
            shown = " and ".join(
                f"{label!r} ({kind})" for kind, label in examples.items()
            )
            raise ValueError(
                f"{name} mixes label types: {shown}; use one type for every "
                "label (all numbers or all strings)."
            )
    return np.asarray(y)


def _label_kind(label) -> str:
    if isinstance(label, (str, np.str_, bytes)):
        return "string"
    if isinstance(label, (bool, np.bool_)):
        return "bool"
    if isinstance(label, (int, float, np.number)):
        return "number"
    return type(label).__name__


def label_positions(
    y, classes, *, owner: str = "classes", name: str = "y"
) -> np.ndarray:
    """Position of each label of ``y`` in ``classes``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels to look up.
    classes : ndarray of shape (n_classes,)
        Distinct labels, in any order.
    owner : str, default="classes"
        How the error message names ``classes``.
    name : str, default="y"
        How the error message names ``y``.

    Returns
    -------
    positions : ndarray of int of shape (n_samples,)

    Raises
    ------
    ValueError
        Naming the first label of ``y`` that is not in ``classes``, or the
        labels of different kinds that ``y`` mixes.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._labels import label_positions
    >>> label_positions([4, 1], np.array([1, 2, 3, 4]))
    array([3, 0])
    """
    y = check_labels(y, name)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got shape {y.shape}.")
    sorter = np.argsort(classes)
    sorted_classes = classes[sorter]
    try:
        pos = np.clip(np.searchsorted(sorted_classes, y), 0, len(classes) - 1)
    except TypeError:  # one kind, but not one the classes can be compared with
        raise ValueError(
            f"{name} holds labels of type {type(y.ravel()[0]).__name__}, which "
            f"cannot be compared with {owner} {classes.tolist()}."
        ) from None
    unknown = labels_differ(sorted_classes[pos], y)
    if np.any(unknown):
        raise ValueError(
            f"unknown label {y[np.argmax(unknown)].item()!r}: {owner} are "
            f"{classes.tolist()}."
        )
    return sorter[pos]


def states_of(y, classes, *, name: str = "y") -> np.ndarray:
    """The labels of ``y`` as the process's own state values.

    A label must be one of ``classes`` and of its kind: a number is not a
    string state, a string not a number state, and a bool (``True`` compares
    equal to 1) is a state of neither.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._labels import states_of
    >>> states_of([4.0, 1], np.array([1, 2, 3, 4])).tolist()
    [4, 1]
    >>> states_of([True], np.array([1, 2, 3, 4]), name="label")
    Traceback (most recent call last):
    ...
    ValueError: label: [True] are not labels of the process's states [1, 2, 3, 4].
    """
    given = check_labels(y, name)
    numeric = "iuf"
    booleans = given.dtype.kind == "b" or (
        given.dtype == object
        and any(isinstance(v, (bool, np.bool_)) for v in given.ravel().tolist())
    )
    if booleans or (given.dtype.kind in numeric) != (classes.dtype.kind in numeric):
        raise ValueError(
            f"{name}: {given.ravel()[:3].tolist()!r} are not labels of the "
            f"process's states {classes.tolist()}."
        )
    try:
        positions = label_positions(given, classes, owner="the process's states")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: {exc}") from None
    return classes[positions]
