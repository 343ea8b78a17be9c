"""Beliefs checked and aligned to a decision process's states (numpy only)."""

from __future__ import annotations

import numpy as np

from skrbal._validation import BELIEF_TOL, check_belief_sums

__all__ = ["align_beliefs", "check_beliefs", "check_row_sums"]


def align_beliefs(
    proba, classes, process_classes, check_sums=True, check_values=True
) -> np.ndarray:
    """Beliefs checked, their columns ordered as the process's states.

    ``classes`` labels the columns of ``proba`` (``None``: already in the
    order of ``process_classes``); a state missing from ``classes`` gets
    probability 0. With ``check_values``, every row must be a probability
    distribution (its sum too unless ``check_sums=False``).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._decision._beliefs import align_beliefs
    >>> align_beliefs([[0.25, 0.75]], np.array(["b", "a"]), np.array(["a", "b", "c"]))
    array([[0.75, 0.25, 0.  ]])
    """
    proba = np.asarray(proba, dtype=float)
    if proba.ndim == 1:
        raise ValueError(
            "proba must be 2-d of shape (n_samples, n_states), got a 1-d "
            f"array of shape {proba.shape}; use proba.reshape(1, -1) for one "
            "belief."
        )
    if proba.ndim != 2:
        raise ValueError(
            f"proba must be 2-d of shape (n_samples, n_states), got {proba.shape}."
        )
    n_states = len(process_classes)
    if classes is None:
        if proba.shape[1] != n_states:
            raise ValueError(
                f"proba has {proba.shape[1]} columns but the process has "
                f"{n_states} states; pass classes= to map columns to states."
            )
    else:
        classes = np.asarray(classes)
        if classes.shape != (proba.shape[1],):
            raise ValueError(
                f"classes has shape {classes.shape} but proba has "
                f"{proba.shape[1]} columns."
            )
    if check_values:
        check_beliefs(proba, check_sums)
    if classes is None:
        return proba
    index = {label: k for k, label in enumerate(process_classes.tolist())}
    try:
        columns = [index[label] for label in classes.tolist()]
    except KeyError as exc:
        raise ValueError(
            f"unknown label {exc.args[0]!r}: the process's classes are "
            f"{process_classes.tolist()}."
        ) from None
    if len(set(columns)) != len(columns):
        raise ValueError(f"classes has repeated labels: {classes.tolist()}.")
    if columns == list(range(n_states)):
        return proba
    aligned = np.zeros((proba.shape[0], n_states))
    aligned[:, columns] = proba
    return aligned


def check_beliefs(
    proba: np.ndarray, check_sums: bool = True, first_row: int = 0
) -> None:
    """Raise if a row is not a probability distribution.

    Whole-array reductions first, so valid beliefs cost one pass and one
    matrix-vector product; the row-by-row search only runs to name a bad
    entry. With ``check_sums=False`` the caller checks the row sums
    itself (see :func:`check_row_sums`). ``first_row`` is the row number
    of ``proba[0]`` in the caller's array, for the messages.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._decision._beliefs import check_beliefs
    >>> check_beliefs(np.array([[0.5, 0.5], [1.5, -0.5]]))
    Traceback (most recent call last):
    ...
    ValueError: proba[1, 1] = -0.5 is outside [0, 1].
    """
    if proba.size == 0:
        return
    # Non-negative rows that sum to one lie in [0, 1], so the minimum and
    # the row sums suffice; a NaN propagates through the minimum.
    if not proba.min() >= -BELIEF_TOL:
        if not np.isfinite(proba).all():
            row = int(np.argwhere(~np.isfinite(proba))[0, 0])
            raise ValueError(f"proba has a non-finite value in row {first_row + row}.")
        row, col = (int(v) for v in np.argwhere(proba < -BELIEF_TOL)[0])
        raise ValueError(
            f"proba[{first_row + row}, {col}] = {float(proba[row, col]):.10g} "
            "is outside [0, 1]."
        )
    if check_sums:
        check_row_sums(proba @ np.ones(proba.shape[1]), first_row)


def check_row_sums(sums: np.ndarray, first_row: int = 0) -> None:
    """Raise, naming the first bad row, unless every belief sums to one.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._decision._beliefs import check_row_sums
    >>> check_row_sums(np.array([1.0, 1.0]))
    """
    check_belief_sums(
        sums,
        "proba",
        "beliefs must be probability distributions over the health states",
        first_row,
    )
