"""Pre-posterior analysis: the value of an imperfect inspection's report.

An inspection method with confusion model ``C[y, z] = P(z | y)`` adds a report
node ``z`` to the influence diagram of :class:`~skrbal.DecisionProcess`, with
an informational link ``z -> d``. The expected value of sample information
(EVSI) is the gain in maximum expected utility from that link::

    EVSI = sum_z max_d sum_y p(y) C[y, z] Q(y, d) - max_d sum_y p(y) Q(y, d)

Written with the regret ``R(y, d) = max_d' Q(y, d') - Q(y, d) >= 0``, both
terms share ``sum_y p(y) max_d Q(y, d)``, which cancels::

    EVSI = EVPI - sum_z min_d sum_y p(y) C[y, z] R(y, d)

the EVPI less the expected EVPI that remains after the report. This form
never divides by ``P(z)``, so a report of probability zero needs no special
case, and its EVPI is :meth:`DecisionProcess.evpi` itself, so the bounds
``0 <= EVSI <= EVPI`` can be enforced exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from skrbal._decision import DecisionProcess
from skrbal._labels import label_positions
from skrbal._logspace import logsumexp
from skrbal.exceptions import ImpossibleReportError
from skrbal.inspection._method import InspectionMethod

__all__ = [
    "ImpossibleReportError",
    "check_methods",
    "choose_inspection",
    "evsi",
    "follow_up_cost",
    "report_posterior",
]


def _check_process(process) -> None:
    if not isinstance(process, DecisionProcess):
        raise TypeError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )


def _check_method(method) -> None:
    if not isinstance(method, InspectionMethod):
        raise TypeError(
            f"method must be an InspectionMethod, got {type(method).__name__}."
        )


def check_methods(methods, process: DecisionProcess) -> list[np.ndarray]:
    """Check a list of inspection methods against a process.

    The list must be a non-empty sequence of :class:`InspectionMethod` with
    distinct names, each valid and with one confusion row per state of
    ``process``. This is the check :func:`evsi`, the learners and the agent
    make before using the methods.

    Parameters
    ----------
    methods : sequence of InspectionMethod
        The methods; one method alone must still be given as ``[method]``.
    process : DecisionProcess
        The process whose states the methods inspect.

    Returns
    -------
    confusions : list of ndarray of shape (n_states, n_outcomes)
        The validated confusion matrix of each method, in the order given.

    Raises
    ------
    TypeError
        When ``methods`` is not a sequence of :class:`InspectionMethod`.
    ValueError
        When it is empty, two methods share a name, or a method is invalid
        or does not fit ``process`` (naming the method and the entry).

    See Also
    --------
    InspectionMethod.to_dict : A method as plain JSON values.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import check_methods, perfect_inspection
    >>> process = synthetic_decision_process()
    >>> [c.shape for c in check_methods([perfect_inspection(process)], process)]
    [(4, 4)]
    >>> check_methods([perfect_inspection(process)] * 2, process)
    Traceback (most recent call last):
    ...
    ValueError: inspection methods must have distinct names, got ['perfect', 'perfect'].
    """
    if isinstance(methods, InspectionMethod) or not isinstance(methods, Sequence):
        raise TypeError(
            "methods must be a sequence of InspectionMethod (pass [method] for "
            f"one), got {type(methods).__name__}."
        )
    if len(methods) == 0:
        raise ValueError("methods must hold at least one InspectionMethod.")
    for k, method in enumerate(methods):
        if not isinstance(method, InspectionMethod):
            raise TypeError(
                f"methods[{k}] must be an InspectionMethod, got "
                f"{type(method).__name__}."
            )
    names = [method.name for method in methods]
    if len(set(names)) != len(names):
        raise ValueError(f"inspection methods must have distinct names, got {names}.")
    return [method._confusion_for(process) for method in methods]


def _reveals(confusion) -> bool:
    """Whether every report of ``confusion`` names one state for sure (a label)."""
    return bool(
        np.all((confusion == 0) | (confusion == 1))
        and np.all(np.count_nonzero(confusion, axis=0) <= 1)
    )


def follow_up_cost(methods, process: DecisionProcess) -> float:
    """The cost of the inspection that follows up an imperfect report.

    The cheapest of ``methods`` whose every report names one state for sure
    (a perfect inspection): after an imperfect method's report, paying it
    reveals the state (:func:`evsi` with ``follow_up=True``).

    Parameters
    ----------
    methods : sequence of InspectionMethod
        The methods, as :func:`check_methods` takes them.
    process : DecisionProcess
        The process whose states the methods inspect.

    Returns
    -------
    cost : float
        The cost of the cheapest method that reveals the state.

    Raises
    ------
    ValueError
        When no method reveals the state: there is nothing to follow up with.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import (
    ...     InspectionMethod, follow_up_cost, perfect_inspection)
    >>> process = synthetic_decision_process()
    >>> drone = InspectionMethod(
    ...     name="drone", cost=1.4,
    ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]])
    >>> follow_up_cost([drone, perfect_inspection(process)], process)
    7.0
    """
    confusions = check_methods(methods, process)
    return _follow_up_cost(confusions, [method.cost_ for method in methods])


def _follow_up_cost(confusions, costs) -> float:
    revealing = [cost for c, cost in zip(confusions, costs) if _reveals(c)]
    if not revealing:
        raise ValueError(
            "follow_up needs an inspection method that reveals the state (a "
            "perfect inspection, e.g. perfect_inspection(process)) among the "
            "methods; none of them does."
        )
    return float(min(revealing))


def _evsi_table(aligned, process, confusions, follow_up=None) -> np.ndarray:
    """EVSI of each confusion for aligned, validated beliefs: (n, n_methods).

    One matrix product gives, for every method, report and action, the joint
    expected regret ``sum_y p(y) C[y, z] R(y, d)``. With ``follow_up`` (the
    cost of a perfect inspection), the residual regret of each report is at
    most that cost times the report's probability: the perfect inspection
    after the report, where it is worth its cost.
    """
    evpi = process.evpi(aligned)
    q = process.state_action_utility
    n_states, n_actions = q.shape
    regret = q.max(axis=1, keepdims=True) - q
    weights = np.concatenate(
        [
            (confusion[:, :, None] * regret[:, None, :]).reshape(n_states, -1)
            for confusion in confusions
        ],
        axis=1,
    )
    products = aligned @ weights
    table = np.empty((aligned.shape[0], len(confusions)))
    start = 0
    for k, confusion in enumerate(confusions):  # a few methods, not samples
        stop = start + confusion.shape[1] * n_actions
        block = products[:, start:stop].reshape(-1, confusion.shape[1], n_actions)
        residual = block.min(axis=2)
        if follow_up is not None:
            # Beliefs may dip below zero within the belief tolerance.
            p_report = np.maximum(aligned, 0.0) @ confusion
            residual = np.minimum(residual, follow_up * p_report)
        table[:, k] = residual.sum(axis=1)
        start = stop
    # The residual regret lies in [0, EVPI] in exact arithmetic; clipping it
    # there keeps rounding (and beliefs dipping below zero within the belief
    # tolerance) from giving EVSI < 0 or EVSI > EVPI. A perfect method's
    # residual is exactly zero, so its EVSI is exactly the EVPI.
    np.clip(table, 0.0, evpi[:, None], out=table)
    return evpi[:, None] - table


def evsi(
    proba, process: DecisionProcess, methods, classes=None, *, follow_up: bool = False
) -> np.ndarray:
    """Expected value of sample information of each inspection method.

    The gain in maximum expected utility from choosing the action after
    seeing the method's report ``z`` (pre-posterior analysis)::

        EVSI = E_z[max_d E[Q(y, d) | z]] - max_d E[Q(y, d)]

    with ``P(z) = sum_y p(y) P(z | y)``, the posterior
    ``p(y | z) ∝ p(y) P(z | y)`` and the utilities ``Q`` of
    :attr:`DecisionProcess.state_action_utility
    <skrbal.DecisionProcess.state_action_utility>`. It lies between zero (a
    report independent of the state) and the EVPI (a report that reveals
    the state).

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_columns)
        Beliefs over the current health state, e.g. a classifier's
        ``predict_proba``.
    process : DecisionProcess
        The decision the reports inform.
    methods : sequence of InspectionMethod
        The inspection methods, each with one confusion row per state of
        ``process``; names must be distinct.
    classes : array-like of shape (n_columns,), default=None
        Labels of the columns of ``proba`` (a classifier's ``classes_``);
        ``None`` means the columns are the process's states in order.
    follow_up : bool, default=False
        Value each method as "this method, then a perfect inspection if its
        report warrants one": after each report ``z``, the better of acting
        on the posterior and paying the cheapest method that reveals the
        state (:func:`follow_up_cost`) to act on the truth. The value is net
        of the follow-up's expected cost, not of the method's own. A method
        that reveals the state keeps its EVSI (the EVPI).

    Returns
    -------
    evsi : ndarray of shape (n_samples, n_methods)
        ``evsi[i, k]`` is the EVSI of ``methods[k]`` for belief ``i``, in
        ``[0, process.evpi(proba)[i]]``.

    Raises
    ------
    ValueError
        With ``follow_up=True`` when no method reveals the state.

    See Also
    --------
    skrbal.DecisionProcess.evpi : The value of a perfect inspection.
    choose_inspection : Which method, if any, is worth its cost.

    Notes
    -----
    Computed as the EVPI less the expected residual regret,
    ``EVSI = EVPI - sum_z min_d sum_y p(y) P(z | y) R(y, d)`` with the
    regret ``R(y, d) = max_d' Q(y, d') - Q(y, d)``, which needs no division by
    ``P(z)``; its rounding error is of the order of ``1e-16 * max |Q|``,
    that of ``Q`` itself. The EVPI is
    :meth:`DecisionProcess.evpi <skrbal.DecisionProcess.evpi>` itself and the
    residual is clipped to ``[0, EVPI]``, so ``0 <= EVSI <= EVPI`` holds
    exactly and a perfect method (a permutation of the identity) has
    ``EVSI == EVPI`` bit for bit.

    With ``follow_up`` and a follow-up cost ``c``, the two-stage
    pre-posterior value is

    .. code-block:: text

        sum_z P(z) max(max_d E[Q | z], E[max_d Q | z] - c) - max_d E[Q]
            = EVPI - sum_z min(r_z, c P(z))

    with ``r_z = min_d sum_y p(y) P(z | y) R(y, d)``: each report's
    residual regret is capped at the follow-up's expected cost, and the
    follow-up is worth it exactly where the posterior's EVPI exceeds ``c``.
    It is at least the one-stage EVSI and at least ``EVPI - c``, so a cheap
    method with follow-up never loses to the perfect method alone by more
    than its own cost.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import InspectionMethod, evsi, perfect_inspection
    >>> process = synthetic_decision_process()
    >>> drone = InspectionMethod(
    ...     name="drone", cost=1.4,
    ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]])
    >>> evsi([[0.5, 0.0, 0.0, 0.5]], process,
    ...      [perfect_inspection(process), drone]).round(3)
    array([[14.75 , 11.305]])
    >>> methods = [perfect_inspection(process), drone]
    >>> evsi([[0.9, 0.0, 0.0, 0.1]], process, methods).round(3)
    array([[5.415, 3.546]])
    >>> evsi([[0.9, 0.0, 0.0, 0.1]], process, methods, follow_up=True).round(3)
    array([[5.415, 3.929]])
    """
    _check_process(process)
    confusions = check_methods(methods, process)
    aligned = process.align_proba(proba, classes)
    cost = None
    if follow_up:
        cost = _follow_up_cost(confusions, [method.cost_ for method in methods])
    return _evsi_table(aligned, process, confusions, cost)


def choose_inspection(
    proba, process: DecisionProcess, methods, classes=None, *, follow_up: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Choose, per belief, the inspection method with the largest net value.

    The net value of a method is its EVSI less its cost. The rule inspects
    with the method of largest net value, and only when that value is
    positive. With a single perfect method costing
    ``process.inspection_cost`` (:func:`perfect_inspection`) it is exactly
    the EVPI rule of :meth:`DecisionProcess.should_inspect
    <skrbal.DecisionProcess.should_inspect>`.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_columns)
        Beliefs over the current health state.
    process : DecisionProcess
        The decision the reports inform.
    methods : sequence of InspectionMethod
        The candidate inspection methods, names distinct.
    classes : array-like of shape (n_columns,), default=None
        Labels of the columns of ``proba``.
    follow_up : bool, default=False
        Value an imperfect method with a perfect inspection after any report
        that warrants one (:func:`evsi`): the choice is then between the
        perfect method alone and the cheap one with its follow-up.

    Returns
    -------
    choice : ndarray of int of shape (n_samples,)
        Index into ``methods`` of the method to inspect with, or ``-1`` where
        no method's net value is positive (a net value of exactly zero does
        not inspect, as ``EVPI > inspection_cost`` does not at equality).
        Ties between methods go to the lowest index, and a value within
        rounding of zero is 0 (:meth:`DecisionProcess.best_method
        <skrbal.DecisionProcess.best_method>`, the learners' choice).
    net_value : ndarray of shape (n_samples, n_methods)
        ``EVSI - cost`` of each method.

    See Also
    --------
    evsi : The expected value of sample information.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import (
    ...     InspectionMethod, choose_inspection, perfect_inspection)
    >>> process = synthetic_decision_process()
    >>> drone = InspectionMethod(
    ...     name="drone", cost=1.4,
    ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]])
    >>> choice, net = choose_inspection(
    ...     [[0.5, 0.0, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0]], process,
    ...     [perfect_inspection(process), drone])
    >>> choice
    array([ 1, -1])
    >>> net.round(3)
    array([[ 7.75 ,  9.905],
           [-7.   , -1.4  ]])
    """
    _check_process(process)
    confusions = check_methods(methods, process)
    costs = np.array([method.cost_ for method in methods])
    aligned = process.align_proba(proba, classes)
    cost = _follow_up_cost(confusions, costs) if follow_up else None
    values = _evsi_table(aligned, process, confusions, cost)
    best, value = process.best_method(values, costs)
    return np.where(value - costs[best] > 0, best, -1), values - costs


def report_posterior(
    proba, reports, process: DecisionProcess, method: InspectionMethod, classes=None
) -> np.ndarray:
    """Posterior over the health states given the belief and the report.

    Bayes' rule, ``p(y | z) ∝ p(y) P(z | y)``, computed in log space so that
    small beliefs and small report probabilities do not underflow.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_columns)
        Beliefs over the current health state before the inspection.
    reports : array-like of shape (n_samples,)
        The report of each inspection, labels from ``method.outcomes_``.
    process : DecisionProcess
        The process whose states the posterior is over.
    method : InspectionMethod
        The method that produced the reports.
    classes : array-like of shape (n_columns,), default=None
        Labels of the columns of ``proba``.

    Returns
    -------
    posterior : ndarray of shape (n_samples, n_states)
        In the order of the process's states. A perfect method gives the
        one-hot vector of the reported state exactly.

    Raises
    ------
    ImpossibleReportError
        When a report has probability zero under its belief.

    See Also
    --------
    evsi : The value of the report before it is seen.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import InspectionMethod, report_posterior
    >>> process = synthetic_decision_process()
    >>> drone = InspectionMethod(
    ...     name="drone", cost=1.4,
    ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]],
    ...     outcomes=["no damage found", "damage found"])
    >>> report_posterior([[0.5, 0.0, 0.0, 0.5]] * 2,
    ...                  ["damage found", "no damage found"],
    ...                  process, drone).round(4)
    array([[0.0526, 0.    , 0.    , 0.9474],
           [0.9048, 0.    , 0.    , 0.0952]])
    """
    _check_process(process)
    _check_method(method)
    confusion = method._confusion_for(process)
    outcomes = method.outcomes_
    aligned = process.align_proba(proba, classes)
    columns = label_positions(
        reports, outcomes, owner=f"the outcomes of inspection method {method.name!r}"
    )
    if columns.shape[0] != aligned.shape[0]:
        raise ValueError(
            f"reports has {columns.shape[0]} entries but proba has "
            f"{aligned.shape[0]} rows."
        )
    with np.errstate(divide="ignore"):
        # Beliefs may dip below zero within the belief tolerance.
        log_joint = np.log(np.maximum(aligned, 0.0)) + np.log(confusion[:, columns].T)
    log_evidence = logsumexp(log_joint, axis=1, keepdims=True)
    impossible = np.flatnonzero(~np.isfinite(log_evidence[:, 0]))
    if impossible.size:
        row = int(impossible[0])
        raise ImpossibleReportError(
            f"report {outcomes[columns[row]].item()!r} of inspection method "
            f"{method.name!r} has probability zero under the belief of row {row}: "
            "no state the belief allows can produce it."
        )
    return np.exp(log_joint - log_evidence)
