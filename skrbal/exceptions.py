"""Warnings and errors that skrbal raises, so a user can filter or count them."""

from __future__ import annotations

import numpy as np

__all__ = ["MissingStatesWarning"]


class MissingStatesWarning(UserWarning):
    """A fitted model has no class for some of the decision process's states.

    A classifier that cannot be told the full label set (``GaussianNB``,
    ``SVC``, ... have no ``classes`` parameter) learns only the labels it was
    trained on. Its beliefs then give every missing health state probability
    zero, so the expected value of perfect information treats those states as
    impossible: no inspection is ever triggered to discover them, and a
    learner may stop inspecting altogether. Give the estimator the labels
    (a ``classes`` parameter, which the learners fill in from the process), or
    include every state in the initial labelled set.

    The learners raise it once per fit and record it in their history.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.exceptions import MissingStatesWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("states [2, 3] missing", MissingStatesWarning)
    >>> caught[0].category.__name__
    'MissingStatesWarning'
    """


def missing_states(model_classes, process_classes) -> np.ndarray:
    """The process's states that ``model_classes`` lacks, in the process's order."""
    if model_classes is None:
        return np.asarray(process_classes)[:0]
    process_classes = np.asarray(process_classes)
    present = set(np.asarray(model_classes).tolist())
    return process_classes[[s not in present for s in process_classes.tolist()]]


def missing_states_message(owner: str, missing, process_classes) -> str:
    """The text of a :class:`MissingStatesWarning` about ``owner``."""
    missing = np.asarray(missing).tolist()
    states = np.asarray(process_classes).tolist()
    return (
        f"{owner} has no class for the process's state(s) {missing} (the "
        f"process has {states}): it gives "
        "them probability 0, so EVPI treats them as impossible and no inspection "
        "will look for them. Give the estimator the labels (a classes parameter) "
        "or label every state in the initial set."
    )
