"""Warnings and errors that skrbal raises, so a user can filter or count them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

_INTERNAL = (str(Path(__file__).resolve().parent),)

__all__ = [
    "BudgetStarvedError",
    "BudgetStarvedWarning",
    "MissingStatesWarning",
    "PriorScaleWarning",
    "UnlabelledStateSmoothingWarning",
]


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


class UnlabelledStateSmoothingWarning(UserWarning):
    """Smoothing pseudo-labelled steps while some state has no labelled example.

    ``semi_supervised='smoothing'`` gives each hidden step the most probable
    state of the forward-backward marginals, whose emissions are the
    classifier's class densities. A state with no labelled example has only
    its prior density (for :class:`~skrbal.mixture.BayesianGMMClassifier`
    centred on ``mean_prior``), so the steps spent in it get the pseudo-label
    of another state whose density reaches them. And the pseudo-labels, even
    correct ones, make the model confident about the states it has: where the
    unlabelled state lies the expected value of perfect information can stay
    below the inspection cost, and no inspection ever reveals it. The paper's
    remedy then confirms the model's blind spot instead of correcting it.

    In 1000 repetitions of the synthetic case study the learner warned in 97
    runs (a state still unlabelled after the first inspection); 27 of them
    went bad (the intermediate state 3 unlabelled: final decision accuracy
    0.72 to 0.85, or more than 50 inspections, up to 317), and no run without
    the warning did. The same 27 runs without smoothing ended at a decision
    accuracy of 0.9995 or better (see the user guide, "Sampling bias").

    The stream learner raises it once per fit, the first time it smooths a
    segment while a state of the process has no labelled example. Label an
    example of every state in the initial set, or learn without pseudo-labels
    (``semi_supervised=None``) until every state has been inspected.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.exceptions import UnlabelledStateSmoothingWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("state [3] has no label", UnlabelledStateSmoothingWarning)
    >>> caught[0].category.__name__
    'UnlabelledStateSmoothingWarning'
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


class BudgetStarvedError(ValueError):
    """A budget's money per period is below the cost of one inspection.

    ``SpendCap(limit=4.8, ...)`` with an inspection cost of 7 can never
    inspect: every decision it makes is "do not inspect", which looks like a
    model that has nothing to ask. The budget policies refuse it when they
    first see the cost, naming the limit and the cost. Raise the limit,
    lengthen the period, let unspent money carry over
    (:class:`~skrbal.budget.PacedBudget` with ``carry_over=True``), or pass
    ``allow_starved=True`` to accept a budget that inspects nothing (then a
    :class:`BudgetStarvedWarning` says so once).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget import SpendCap
    >>> from skrbal.exceptions import BudgetStarvedError
    >>> cap = SpendCap(limit=4.8, period=10.0)
    >>> try:
    ...     cap.scan([9.0], [0.0], np.array([True]), 7.0, cap.initial_state())
    ... except BudgetStarvedError as error:
    ...     print(type(error).__name__)
    BudgetStarvedError
    """


class BudgetStarvedWarning(UserWarning):
    """A budget allowed to starve (``allow_starved=True``) cannot inspect.

    Raised once per policy object, the first time a scan sees a cost above
    the money of a period, so that a budget that inspects nothing is never
    silent.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skrbal.budget import SpendCap
    >>> cap = SpendCap(limit=4.8, period=10.0, allow_starved=True)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     step, _ = cap.scan([9.0], [0.0], np.array([True]), 7.0,
    ...                        cap.initial_state())
    >>> step, caught[0].category.__name__
    (-1, 'BudgetStarvedWarning')
    """
