"""Warnings and errors that skrbal raises, so a user can filter or count them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

_INTERNAL = (str(Path(__file__).resolve().parent),)

__all__ = ["MissingStatesWarning", "PriorScaleWarning"]


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


class PriorScaleWarning(UserWarning):
    """The training features lie far from the scale of a default prior.

    The normal-inverse-Wishart prior of
    :class:`~skrbal.mixture.BayesianGMMClassifier` defaults to the paper's,
    prior mean 0 and identity scale, which suits standardised features. On
    raw features far from that scale (a class at feature value 19, frequencies
    in hertz, strains of order 1e-6) it pulls the class means towards 0 and
    inflates or shrinks the class covariances towards the identity until
    enough labels have been seen. Standardise the features (a Pipeline with
    :class:`~sklearn.preprocessing.StandardScaler`), or set
    ``mean_prior='data'`` and ``covariance_prior='data'``, which is the same
    model; a prior given explicitly is taken as meant and not checked.

    The classifiers raise it once per fit and record it in ``fit_warnings_``.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.exceptions import PriorScaleWarning
    >>> from skrbal.mixture import BayesianGMMClassifier
    >>> X, y = [[18.0], [19.0], [-5.0], [-6.0]], [1, 1, 0, 0]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = BayesianGMMClassifier().fit(X, y)
    >>> caught[0].category.__name__
    'PriorScaleWarning'
    >>> type(model.fit_warnings_[0]).__name__
    'PriorScaleWarning'
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


def caller_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside skrbal and scikit-learn.

    A warning raised deep in a fit (through sklearn's ``_fit_context``, a
    learner, a Pipeline) then points at the user's line.
    """
    import sklearn

    internal = (*_INTERNAL, str(Path(sklearn.__file__).resolve().parent))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(internal):
        frame, level = frame.f_back, level + 1
    return level
