"""Decision-making performance of a classifier inside a decision process.

A classifier used for structural health monitoring is judged by the decisions
it leads to rather than by its labels: an agent acting on the classifier's
belief chooses ``d(p) = argmax_d sum_y p(y) Q(y, d)``, an agent that knows the
health state chooses ``d*(y) = argmax_d Q(y, d)``. These functions compare the
two, and total up a monitoring campaign.
"""

from __future__ import annotations

from math import fsum

import numpy as np
from sklearn.utils import Bunch

from skrbal._decision import DecisionProcess
from skrbal._labels import label_positions
from skrbal.inspection import check_methods

__all__ = [
    "campaign_summary",
    "class_proportions",
    "decision_accuracy",
    "utility_regret",
]


def _as_labels(y, name: str) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got shape {y.shape}.")
    if y.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    return y


def _as_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    if sample_weight is None:
        return None
    try:
        weight = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError("sample_weight must be numeric.") from exc
    if weight.shape != (n_samples,):
        raise ValueError(
            f"sample_weight has shape {weight.shape} but there are {n_samples} samples."
        )
    if not np.isfinite(weight).all() or (weight < 0).any():
        raise ValueError("sample_weight must be finite and non-negative.")
    if weight.sum() <= 0:
        raise ValueError("sample_weight sums to zero: no sample carries weight.")
    return weight


def _belief_and_perfect_actions(y_true, proba, process, classes):
    """Validate inputs; return (y_true, action from belief, perfect action)."""
    if not isinstance(process, DecisionProcess):
        raise ValueError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )
    y_true = _as_labels(y_true, "y_true")
    proba = np.asarray(proba)
    if proba.ndim != 2:
        raise ValueError(
            f"proba must be 2-d of shape (n_samples, n_classes), got {proba.shape}."
        )
    if proba.shape[0] != y_true.shape[0]:
        raise ValueError(
            f"y_true has {y_true.shape[0]} samples but proba has {proba.shape[0]} rows."
        )
    chosen = process.optimal_action(proba, classes)
    perfect = process.perfect_information_action(y_true)
    return y_true, chosen, perfect


def decision_accuracy(
    y_true, proba, process: DecisionProcess, *, classes=None, sample_weight=None
) -> float:
    """Share of decisions that match those of an agent with perfect information.

    The agent using the classifier takes the action of maximum expected utility
    under its belief ``proba``; the reference agent takes the best action for
    the true health state ``y_true``. The decision accuracy is the (weighted)
    fraction of samples where the two actions agree.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True health states, labelled as the process's ``classes_``.
    proba : array-like of shape (n_samples, n_columns)
        Beliefs over the health states, e.g. a classifier's ``predict_proba``.
    process : DecisionProcess
        The decision process that turns beliefs and states into actions.
    classes : array-like of shape (n_columns,), default=None
        Label of each column of ``proba`` (the classifier's ``classes_``);
        states with no column get probability zero. ``None`` means the columns
        are the process's states in order.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    accuracy : float
        In ``[0, 1]``; 1 means every decision was the one perfect information
        would have led to.

    See Also
    --------
    utility_regret : How much utility the wrong decisions cost.
    make_decision_scorer : The same measure as a scikit-learn scorer.

    Notes
    -----
    Two different beliefs can lead to the same action, so a classifier with a
    poor classification accuracy may still have a high decision accuracy: the
    measure only counts mistakes that change what is done.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.metrics import decision_accuracy
    >>> process = synthetic_decision_process()
    >>> proba = [[1.0, 0.0, 0.0, 0.0], [0.9, 0.0, 0.0, 0.1], [0.0, 0.0, 0.0, 1.0]]
    >>> decision_accuracy([1, 4, 4], proba, process)
    0.666...
    """
    _, chosen, perfect = _belief_and_perfect_actions(y_true, proba, process, classes)
    weight = _as_sample_weight(sample_weight, chosen.shape[0])
    return float(np.average(chosen == perfect, weights=weight))


def utility_regret(
    y_true, proba, process: DecisionProcess, *, classes=None, sample_weight=None
) -> float:
    """Mean utility lost by acting on the belief instead of the true state.

    For each sample the regret is ``Q(y, d*(y)) - Q(y, d(p))``: the utility of
    the best action for the true state ``y`` minus that of the action chosen
    from the belief ``p``. It is zero when the two actions agree and never
    negative.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True health states, labelled as the process's ``classes_``.
    proba : array-like of shape (n_samples, n_columns)
        Beliefs over the health states, e.g. a classifier's ``predict_proba``.
    process : DecisionProcess
        The decision process.
    classes : array-like of shape (n_columns,), default=None
        Label of each column of ``proba`` (the classifier's ``classes_``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    regret : float
        Mean regret per decision, ``>= 0``, in the units of the process's
        utilities.

    See Also
    --------
    decision_accuracy : Share of decisions that are right.
    campaign_summary : Totals over a monitoring campaign.

    Notes
    -----
    Unlike :func:`decision_accuracy`, the regret weighs each wrong decision by
    its consequence: failing to repair a structure in state 4 costs far more
    than an unnecessary repair.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.metrics import utility_regret
    >>> process = synthetic_decision_process()
    >>> # Missing a failure costs Q(4, repair) - Q(4, nothing) = 54.15.
    >>> utility_regret([4, 1], [[1, 0, 0, 0], [1, 0, 0, 0]], process)
    27.075
    """
    y_true, chosen, perfect = _belief_and_perfect_actions(
        y_true, proba, process, classes
    )
    weight = _as_sample_weight(sample_weight, chosen.shape[0])
    regret = process.realised_utility(y_true, perfect) - process.realised_utility(
        y_true, chosen
    )
    return float(np.average(regret, weights=weight))


def class_proportions(y, classes) -> np.ndarray:
    """Proportion of each class in a labelled set.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels, e.g. those of the labelled set of an active learner.
    classes : array-like of shape (n_classes,)
        The classes to report, in the order wanted (e.g. a process's
        ``classes_``). Every label of ``y`` must be one of them.

    Returns
    -------
    proportions : ndarray of shape (n_classes,)
        ``proportions[k]`` is the fraction of ``y`` equal to ``classes[k]``;
        zero for a class absent from ``y``. The entries sum to one.

    See Also
    --------
    decision_accuracy : Decision-making performance.

    Notes
    -----
    Tracking the proportions as labels are queried shows the sampling bias of
    risk-based active learning, which prefers labels near decision boundaries.

    Examples
    --------
    >>> from skrbal.metrics import class_proportions
    >>> class_proportions([1, 1, 3, 1], classes=[1, 2, 3, 4])
    array([0.75, 0.  , 0.25, 0.  ])
    """
    y = _as_labels(y, "y")
    classes = np.asarray(classes)
    if classes.ndim != 1 or classes.shape[0] == 0:
        raise ValueError(
            f"classes must be a non-empty 1-d array, got shape {classes.shape}."
        )
    if len(np.unique(classes)) != len(classes):
        raise ValueError(f"classes must be distinct, got {classes.tolist()}.")
    counts = np.bincount(label_positions(y, classes), minlength=len(classes))
    return counts / y.shape[0]


def campaign_summary(
    y_true, actions, process: DecisionProcess, *, inspected=None, methods=None
) -> Bunch:
    """Totals of a monitoring campaign: inspections, spend, utility and regret.

    A campaign is a sequence of decisions, one per observation: the agent took
    ``actions[t]`` while the structure was in state ``y_true[t]`` and may have
    paid for an inspection first. The summary compares what was earned with
    what an agent that knew every state, for free, would have earned.

    Parameters
    ----------
    y_true : array-like of shape (n_decisions,)
        True health state at each decision.
    actions : array-like of int of shape (n_decisions,)
        Index of the action taken at each decision (an index into the process's
        actions, e.g. ``process.optimal_action(proba, classes)`` for an agent
        that only acts on beliefs).
    process : DecisionProcess
        The decision process; its ``inspection_cost`` prices the inspections.
    inspected : array-like of shape (n_decisions,), default=None
        Whether an inspection was made before each decision: a boolean mask,
        or, with ``methods``, the index into ``methods`` of the method used
        and ``-1`` where none was (the ``choice`` of
        :func:`skrbal.inspection.choose_inspection`). ``None`` means no
        inspection was made.
    methods : sequence of InspectionMethod, default=None
        The inspection methods ``inspected`` indexes, each priced at its own
        cost. ``None`` means one perfect inspection at
        ``process.inspection_cost``.

    Returns
    -------
    summary : :class:`~sklearn.utils.Bunch`
        With the keys

        - ``n_decisions`` (int): number of decisions.
        - ``n_inspections`` (int): number of inspections.
        - ``inspection_spend`` (float): ``n_inspections * inspection_cost``,
          or with ``methods`` the sum of the costs of the methods used.
        - ``utility`` (float): ``sum_t Q(y_t, actions[t])``, the expected
          utility realised by the actions taken, given the true states.
        - ``perfect_information_utility`` (float): ``sum_t max_d Q(y_t, d)``.
        - ``regret`` (float): ``perfect_information_utility - utility``,
          ``>= 0``.
        - ``net_utility`` (float): ``utility - inspection_spend``, what the
          campaign earned once inspections are paid for.
        - ``decision_accuracy`` (float): share of actions equal to the
          perfect-information action.
        - only with ``methods``: ``n_inspections_by_method`` and
          ``spend_by_method`` (dicts keyed by method name, every method
          listed).

    See Also
    --------
    utility_regret : Mean regret of a classifier's beliefs.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.metrics import campaign_summary
    >>> summary = campaign_summary(
    ...     [1, 2, 4], [0, 0, 1], synthetic_decision_process(),
    ...     inspected=[False, False, True],
    ... )
    >>> summary.n_inspections, summary.inspection_spend, summary.regret
    (1, 7.0, 0.0)
    >>> round(summary.net_utility, 2)
    -13.35

    With two inspection methods, ``inspected`` says which one was used:

    >>> from skrbal.inspection import InspectionMethod, perfect_inspection
    >>> process = synthetic_decision_process()
    >>> drone = InspectionMethod(
    ...     name="drone", cost=1.4,
    ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]])
    >>> summary = campaign_summary(
    ...     [1, 2, 4], [0, 0, 1], process, inspected=[1, -1, 0],
    ...     methods=[perfect_inspection(process), drone],
    ... )
    >>> summary.inspection_spend, summary.spend_by_method
    (8.4, {'perfect': 7.0, 'drone': 1.4})
    """
    if not isinstance(process, DecisionProcess):
        raise ValueError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )
    y_true = _as_labels(y_true, "y_true")
    actions = np.asarray(actions)
    if actions.shape != y_true.shape:
        raise ValueError(
            f"actions has shape {actions.shape} but y_true has shape {y_true.shape}."
        )
    if methods is not None:
        return _summary_by_method(y_true, actions, process, inspected, methods)
    if inspected is None:
        inspected = np.zeros(y_true.shape, dtype=bool)
    else:
        inspected = np.asarray(inspected)
        if inspected.shape != y_true.shape:
            raise ValueError(
                f"inspected has shape {inspected.shape} but y_true has shape "
                f"{y_true.shape}."
            )
        if inspected.dtype != bool:
            raise ValueError(
                "inspected must be a boolean mask (one flag per decision), got "
                f"dtype {inspected.dtype}."
            )
    n_inspections = int(inspected.sum())
    spend = n_inspections * float(process.inspection_cost)
    return _summary(y_true, actions, process, n_inspections, spend)


def _summary(y_true, actions, process, n_inspections, spend) -> Bunch:
    """The campaign totals, given the number of inspections and their spend."""
    utility = process.realised_utility(y_true, actions)
    perfect_action = process.perfect_information_action(y_true)
    perfect = process.realised_utility(y_true, perfect_action)
    total = float(utility.sum())
    total_perfect = float(perfect.sum())
    return Bunch(
        n_decisions=int(y_true.shape[0]),
        n_inspections=n_inspections,
        inspection_spend=spend,
        utility=total,
        perfect_information_utility=total_perfect,
        # Per-sample regret is >= 0; summing the difference of sums can still
        # round to -1e-13, which would read as a gain.
        regret=max(total_perfect - total, 0.0),
        net_utility=total - spend,
        decision_accuracy=float(np.mean(actions == perfect_action)),
    )


def _summary_by_method(y_true, actions, process, inspected, methods) -> Bunch:
    """:func:`campaign_summary` with the spend split by inspection method."""
    check_methods(methods, process)  # validates the list and every method
    n_methods = len(methods)
    if inspected is None:
        inspected = np.full(y_true.shape, -1)
    inspected = np.asarray(inspected)
    if inspected.shape != y_true.shape:
        raise ValueError(
            f"inspected has shape {inspected.shape} but y_true has shape "
            f"{y_true.shape}."
        )
    if inspected.dtype.kind not in "iu":
        raise ValueError(
            "with methods, inspected must hold the index of the method used at "
            f"each decision (-1 for none), got dtype {inspected.dtype}."
        )
    if inspected.size and (inspected.min() < -1 or inspected.max() >= n_methods):
        raise ValueError(
            f"inspected must index the {n_methods} methods (0 to {n_methods - 1}) "
            f"or be -1, got values from {inspected.min()} to {inspected.max()}."
        )
    counts = np.bincount(inspected[inspected >= 0], minlength=n_methods)
    costs = [method.cost_ for method in methods]
    spends = [int(n) * cost for n, cost in zip(counts, costs)]
    summary = _summary(y_true, actions, process, int(counts.sum()), fsum(spends))
    names = [method.name for method in methods]
    summary.n_inspections_by_method = dict(zip(names, counts.tolist()))
    summary.spend_by_method = dict(zip(names, spends))
    return summary
