"""Mapping class labels to positions, shared by the process and the metrics."""

from __future__ import annotations

import numpy as np


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


def label_positions(y, classes, *, owner: str = "classes") -> np.ndarray:
    """Position of each label of ``y`` in ``classes``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels to look up.
    classes : ndarray of shape (n_classes,)
        Distinct labels, in any order.
    owner : str, default="classes"
        How the error message names ``classes``.

    Returns
    -------
    positions : ndarray of int of shape (n_samples,)

    Raises
    ------
    ValueError
        Naming the first label of ``y`` that is not in ``classes``.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._labels import label_positions
    >>> label_positions([4, 1], np.array([1, 2, 3, 4]))
    array([3, 0])
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y.shape}.")
    sorter = np.argsort(classes)
    sorted_classes = classes[sorter]
    pos = np.clip(np.searchsorted(sorted_classes, y), 0, len(classes) - 1)
    unknown = labels_differ(sorted_classes[pos], y)
    if np.any(unknown):
        raise ValueError(
            f"unknown label {y[np.argmax(unknown)].item()!r}: {owner} are "
            f"{classes.tolist()}."
        )
    return sorter[pos]
