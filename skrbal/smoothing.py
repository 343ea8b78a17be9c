"""Latent health-state smoothing between inspections.

Between two inspections the health state is hidden, but the actions taken in
the meantime are known and each one selects the transition model of its step.
The hidden steps therefore form a hidden Markov model with exogenous inputs,
anchored at both ends by the inspected labels. Forward-backward message
passing gives the posterior marginal of every hidden state given the anchors,
the actions and the observations; its arg-max is the pseudo-label of each
unlabelled observation (Hughes et al., "Latent Health-State Smoothing").

All messages are kept in log space with a per-step shift, so segments of tens
of thousands of steps with log densities of order ``-1e3`` (or evidence that
contradicts the transition model by thousands of nats) neither underflow nor
produce NaN.

The time convention shared by every function of this module, for a segment of
``T`` hidden steps between a start state ``y_0`` and an optional end state
``y_{T+1}``::

    step        0        1        2              T        T+1
    state      y_0  ->  y_1  ->  y_2  -> ... ->  y_T  ->  y_{T+1}
    action     d_0      d_1      d_2             d_T
    emission            e_1      e_2             e_T

    start   = y_0      (an inspection, an assumed initial state, or a belief)
    end     = y_{T+1}  (the next inspection, or None when there is none yet)
    log_emission[t - 1] = log p(x_t | y_t)                 for t = 1..T
    actions[t]          = d_t, and y_{t+1} ~ transition[d_t, y_t, :]

``actions[t]`` is the action taken at step ``t``; it drives the transition out
of that step. There are ``T + 1`` actions when ``end`` is given (the last one
leads into the end inspection) and ``T`` otherwise. With inspections at stream
steps ``a`` and ``b`` this is: ``log_emission`` holds the rows of steps
``a+1 .. b-1`` and ``actions`` the actions of steps ``a .. b-1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

__all__ = [
    "ImpossibleEvidenceError",
    "SmoothingResult",
    "aligned_log_density",
    "forward_backward",
    "smooth_segment",
    "viterbi",
]

_ROW_SUM_TOL = 1e-8
_START_SUM_TOL = 1e-6
# Substitute for the maximum of an all-impossible column in a log-sum-exp:
# ``-inf - (-inf)`` would be NaN, whereas ``-inf - _LOG_FLOOR`` stays ``-inf``,
# and every finite maximum is far above it.
_LOG_FLOOR = -1e300


class ImpossibleEvidenceError(ValueError):
    """The anchors, actions and emissions of a segment have probability zero.

    Raised when no sequence of health states is consistent with the evidence,
    for instance an end inspection that the transition model cannot reach from
    the start inspection under the actions taken (a structure found repaired
    although nothing was done, under monotone degradation). It subclasses
    ``ValueError`` so that generic input handling still catches it, while a
    caller can catch it alone to skip an inconsistent segment.

    Examples
    --------
    >>> from skrbal.smoothing import ImpossibleEvidenceError, forward_backward
    >>> degrade = [[0.5, 0.5], [0.0, 1.0]]
    >>> try:
    ...     forward_backward([[0.0, 0.0]], degrade, start=1, end=0)
    ... except ImpossibleEvidenceError as exc:
    ...     print(type(exc).__name__)
    ImpossibleEvidenceError
    """


@dataclass(frozen=True, eq=False)
class SmoothingResult:
    """Posterior of the hidden health states of one segment.

    Parameters
    ----------
    marginals : ndarray of shape (n_steps, n_states)
        ``marginals[t - 1, k] = P(y_t = classes[k] | start, end, actions,
        x_1..x_T)``; every row sums to one.
    pseudo_labels : ndarray of shape (n_steps,)
        ``classes[argmax(marginals[t - 1])]``, the maximum a posteriori state
        of each hidden step on its own (ties go to the first column). These
        states need not form a feasible path; see :func:`viterbi` for the most
        probable joint sequence.
    log_likelihood : float
        Log probability of the evidence given the start: ``log p(x_1..x_T,
        y_{T+1} = end | start, actions)``, or ``log p(x_1..x_T | start,
        actions)`` without an end. With a soft end it is weighted by the end's
        likelihood vector.
    classes : ndarray of shape (n_states,)
        The label of each column: state indices ``0..K-1`` for
        :func:`forward_backward`, the process's ``classes_`` for
        :func:`smooth_segment`.

    See Also
    --------
    forward_backward : Computes this result from log emissions.
    smooth_segment : Computes it from a classifier and a decision process.

    Examples
    --------
    >>> from skrbal.smoothing import forward_backward
    >>> result = forward_backward([[0.0, -1.0]], [[0.5, 0.5], [0.5, 0.5]])
    >>> result.pseudo_labels
    array([0])
    >>> result.classes
    array([0, 1])
    """

    marginals: np.ndarray
    pseudo_labels: np.ndarray
    log_likelihood: float
    classes: np.ndarray


# ---------------------------------------------------------------------- #
# validation
# ---------------------------------------------------------------------- #
def _float_array(value, name: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {value!r}.") from exc


def _check_log_emission(log_emission) -> np.ndarray:
    log_emission = _float_array(log_emission, "log_emission")
    if log_emission.ndim != 2 or log_emission.shape[1] < 1:
        raise ValueError(
            "log_emission must be 2-d of shape (n_steps, n_states) with at least "
            f"one state, got shape {log_emission.shape}."
        )
    bad = np.isnan(log_emission) | np.isposinf(log_emission)
    if bad.any():
        t, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"log_emission[{t}, {k}] = {log_emission[t, k]}: log densities must be "
            "finite, or -inf for an impossible state."
        )
    return log_emission


def _check_log_transition(transition, n_states: int) -> np.ndarray:
    transition = _float_array(transition, "transition")
    if transition.ndim == 2:
        transition = transition[np.newaxis]
    if (
        transition.ndim != 3
        or transition.shape[0] < 1
        or transition.shape[1] != transition.shape[2]
    ):
        raise ValueError(
            "transition must have shape (n_actions, n_states, n_states) or "
            f"(n_states, n_states), got {transition.shape}."
        )
    if transition.shape[1] != n_states:
        raise ValueError(
            f"transition has {transition.shape[1]} states but log_emission has "
            f"{n_states} columns."
        )
    bad = ~np.isfinite(transition) | (transition < 0)
    if bad.any():
        d, i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"transition[{d}, {i}, {j}] = {transition[d, i, j]}: transition "
            "probabilities must be finite and non-negative."
        )
    row_sums = transition.sum(axis=2)
    off = np.argwhere(np.abs(row_sums - 1.0) > _ROW_SUM_TOL)
    if off.size:
        d, i = (int(v) for v in off[0])
        total = float(row_sums[d, i])
        raise ValueError(
            f"transition row {i} for action {d} sums to {total!r}, not 1: "
            "each row P(y_t+1 | y_t, d) must be a probability distribution."
        )
    with np.errstate(divide="ignore"):
        return np.log(transition)


def _check_actions(actions, n_actions: int, n_expected: int, has_end: bool):
    if actions is None:
        if n_actions != 1:
            raise ValueError(
                f"actions is required: transition has {n_actions} actions, so "
                "each step must say which one was taken."
            )
        return [0] * n_expected
    actions = np.asarray(actions)
    if actions.ndim != 1:
        raise ValueError(f"actions must be 1-d, got shape {actions.shape}.")
    if actions.shape[0] != n_expected:
        which = (
            "one per hidden step plus one into the end anchor"
            if has_end
            else ("one per hidden step, none after the last as there is no end anchor")
        )
        raise ValueError(
            f"actions must have {n_expected} entries ({which}), got {actions.shape[0]}."
        )
    if actions.size == 0:
        return []
    if not np.issubdtype(actions.dtype, np.integer):
        raise ValueError(
            f"actions must hold integer action indices, got dtype {actions.dtype}."
        )
    outside = np.flatnonzero((actions < 0) | (actions >= n_actions))
    if outside.size:
        t = int(outside[0])
        raise ValueError(
            f"actions[{t}] = {actions[t]} is not an action index in [0, {n_actions})."
        )
    return actions.tolist()


def _is_state_index(value) -> bool:
    if np.ndim(value) != 0:
        return False
    if isinstance(value, np.ndarray):
        value = value.item()
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def _one_hot_log(index, n_states: int, name: str) -> np.ndarray:
    index = int(index)
    if not 0 <= index < n_states:
        raise ValueError(f"{name} = {index} is not a state index in [0, {n_states}).")
    log_vector = np.full(n_states, -np.inf)
    log_vector[index] = 0.0
    return log_vector


def _check_anchor_vector(value, n_states: int, name: str) -> np.ndarray:
    if np.ndim(value) == 0:
        raise ValueError(
            f"{name} must be None, an integer state index or an array of shape "
            f"({n_states},), got {value!r}."
        )
    vector = _float_array(value, name)
    if vector.shape != (n_states,):
        raise ValueError(
            f"{name} must have shape ({n_states},) to match log_emission, got "
            f"{vector.shape}."
        )
    bad = ~np.isfinite(vector) | (vector < 0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}[{k}] = {vector[k]}: {name} weights must be finite and "
            "non-negative."
        )
    return vector


def _check_log_start(start, n_states: int) -> np.ndarray:
    if start is None:
        return np.full(n_states, -np.log(n_states))
    if _is_state_index(start):
        return _one_hot_log(start, n_states, "start")
    start = _check_anchor_vector(start, n_states, "start")
    total = start.sum()
    if abs(total - 1.0) > _START_SUM_TOL:
        raise ValueError(
            f"start sums to {float(total)!r}, not 1: a soft start must be a "
            "probability distribution over the states."
        )
    with np.errstate(divide="ignore"):
        return np.log(start / total)


def _check_log_end(end, n_states: int) -> np.ndarray | None:
    if end is None:
        return None
    if _is_state_index(end):
        return _one_hot_log(end, n_states, "end")
    end = _check_anchor_vector(end, n_states, "end")
    if not end.any():
        raise ValueError("end is all zeros: no end state is possible.")
    with np.errstate(divide="ignore"):
        return np.log(end)


def _check_segment(log_emission, transition, actions, start, end):
    log_emission = _check_log_emission(log_emission)
    n_steps, n_states = log_emission.shape
    log_transition = _check_log_transition(transition, n_states)
    log_start = _check_log_start(start, n_states)
    log_end = _check_log_end(end, n_states)
    actions = _check_actions(
        actions,
        log_transition.shape[0],
        n_steps + (log_end is not None),
        log_end is not None,
    )
    return log_emission, log_transition, actions, log_start, log_end


# ---------------------------------------------------------------------- #
# message passing
# ---------------------------------------------------------------------- #
def _log_matvec_columns(log_vector, log_matrix):
    """``log(exp(log_vector) @ exp(log_matrix))`` without underflow."""
    terms = log_vector[:, np.newaxis] + log_matrix
    peak = terms.max(axis=0)
    np.maximum(peak, _LOG_FLOOR, out=peak)
    return np.log(np.exp(terms - peak).sum(axis=0)) + peak


def _log_matvec_rows(log_matrix, log_vector):
    """``log(exp(log_matrix) @ exp(log_vector))`` without underflow."""
    terms = log_matrix + log_vector
    peak = terms.max(axis=1)
    np.maximum(peak, _LOG_FLOOR, out=peak)
    return np.log(np.exp(terms - peak[:, np.newaxis]).sum(axis=1)) + peak


def _log_sum(log_vector) -> float:
    peak = max(float(log_vector.max()), _LOG_FLOOR)
    with np.errstate(divide="ignore"):
        return float(np.log(np.exp(log_vector - peak).sum()) + peak)


def _impossible_at(step: int) -> ImpossibleEvidenceError:
    return ImpossibleEvidenceError(
        f"the evidence is impossible: no health state at hidden step {step} "
        f"(log_emission row {step - 1}) has non-zero probability given the start, "
        "the actions and the emissions up to it."
    )


def _impossible_end() -> ImpossibleEvidenceError:
    return ImpossibleEvidenceError(
        "the evidence is impossible: the end anchor is unreachable from the start "
        "under the actions taken and the emissions (probability zero)."
    )


def _end_message(log_transition, actions, log_end, n_states):
    """``log P(end | y_T)``: ones without an end, else the final transition."""
    if log_end is None:
        return np.zeros(n_states)
    with np.errstate(divide="ignore"):
        return _log_matvec_rows(log_transition[actions[-1]], log_end)


def _forward(log_emission, log_transition, actions, log_start):
    """Shifted log forward messages of steps 1..T and the sum of the shifts.

    ``log_alpha[t - 1] + shift_t`` is ``log p(x_1..x_t, y_t | start)`` where
    the shift keeps each row's maximum at zero; the shifts add up to the part
    of the log-likelihood carried out of the messages.
    """
    n_steps, n_states = log_emission.shape
    log_alpha = np.empty((n_steps, n_states))
    log_shift = 0.0
    message = log_start
    with np.errstate(divide="ignore"):
        for t in range(n_steps):
            message = (
                _log_matvec_columns(message, log_transition[actions[t]])
                + log_emission[t]
            )
            peak = message.max()
            if peak == -np.inf:
                raise _impossible_at(t + 1)
            message -= peak
            log_shift += peak
            log_alpha[t] = message
    return log_alpha, log_shift


def _backward(log_emission, log_transition, actions, end_message):
    """Log backward messages of steps 1..T, each shifted to a maximum of zero.

    ``log_beta[t - 1]`` is ``log p(x_{t+1}..x_T, end | y_t)`` up to a constant:
    the transition out of step ``t`` is the one of action ``d_t``.
    """
    n_steps, n_states = log_emission.shape
    log_beta = np.empty((n_steps, n_states))
    if n_steps == 0:
        return log_beta
    message = end_message - end_message.max()
    log_beta[-1] = message
    with np.errstate(divide="ignore"):
        for t in range(n_steps - 1, 0, -1):
            message = _log_matvec_rows(
                log_transition[actions[t]], log_emission[t] + message
            )
            message -= message.max()
            log_beta[t - 1] = message
    return log_beta


def forward_backward(
    log_emission,
    transition,
    actions=None,
    *,
    start=None,
    end=None,
) -> SmoothingResult:
    """Smoothed health-state marginals of a segment between inspections.

    Forward-backward message passing over a hidden Markov model whose
    transition matrix at every step is selected by the known action of that
    step, with the states before and after the segment anchored (see the
    module docstring for the full time diagram)::

        y_0 --d_0--> y_1 --d_1--> ... --d_{T-1}--> y_T --d_T--> y_{T+1}
        start        x_1                           x_T          end

    Parameters
    ----------
    log_emission : array-like of shape (n_steps, n_states)
        ``log p(x_t | y_t = k)`` of the hidden steps ``t = 1..T`` in row
        ``t - 1``, for instance a classifier's class-conditional log
        densities. ``-inf`` marks an impossible state; NaN and ``+inf`` are
        rejected. ``n_steps`` may be zero.
    transition : array-like of shape (n_actions, n_states, n_states) or \
            (n_states, n_states)
        ``transition[d, i, j] = P(y_{t+1} = j | y_t = i, d_t = d)``; a 2-d
        array is a single action. Rows must sum to one within 1e-8.
    actions : array-like of int of shape (n_steps + 1,) or (n_steps,), \
            default=None
        ``actions[t] = d_t``, the action taken at step ``t`` for
        ``t = 0..T`` when ``end`` is given (``T + 1`` entries, the last one
        leading into the end anchor), ``t = 0..T-1`` otherwise. May be None
        only when ``transition`` has a single action.
    start : None, int or array-like of shape (n_states,), default=None
        The state ``y_0`` one step before the first hidden step: a state
        index (an inspection, or an assumed initial state such as undamaged),
        a probability vector (a belief), or None for a uniform distribution.
    end : None, int or array-like of shape (n_states,), default=None
        The state ``y_{T+1}`` one step after the last hidden step: a state
        index (the next inspection), non-negative likelihood weights
        ``p(inspection | y_{T+1} = k)`` (soft evidence; they need not sum to
        one), or None when the segment is open-ended.

    Returns
    -------
    result : SmoothingResult
        Marginals of shape ``(n_steps, n_states)``, their arg-max as state
        indices, the segment's log-likelihood ``log p(x_1..x_T, y_{T+1} |
        y_0, d_0..d_T)`` and ``classes = arange(n_states)``.

    Raises
    ------
    ImpossibleEvidenceError
        If the evidence has probability zero: the end anchor cannot be reached
        from the start under the actions, or every state of some step is
        ruled out.
    ValueError
        If an input has the wrong shape or holds invalid values.

    See Also
    --------
    smooth_segment : The same from a classifier and a decision process.
    viterbi : The most probable joint state sequence of the segment.

    Notes
    -----
    The forward message of step ``t`` is
    ``alpha_t(j) = e_t(j) sum_i alpha_{t-1}(i) P(j | i, d_{t-1})`` with
    ``alpha_0 = start``; the backward message is
    ``beta_t(i) = sum_j P(j | i, d_t) e_{t+1}(j) beta_{t+1}(j)`` with
    ``beta_T(i) = sum_j P(j | i, d_T) end(j)``. The backward step uses the
    transition out of step ``t`` (action ``d_t``), not the one into it. The
    marginal of ``y_t`` is proportional to ``alpha_t beta_t``. Both messages
    are computed in log space with per-step shifts; the loop over time costs a
    few small numpy operations per step.

    References
    ----------
    Hughes, A. J., Bull, L. A., Gardner, P., Dervilis, N., Worden, K.
    "On robust risk-based active-learning algorithms for enhanced decision
    support", section "Latent Health-State Smoothing".

    Examples
    --------
    A structure that can only degrade, found undamaged (state 0) at both
    inspections, was undamaged in between whatever the data suggest:

    >>> import numpy as np
    >>> from skrbal.smoothing import forward_backward
    >>> degrade = [[0.9, 0.1], [0.0, 1.0]]
    >>> log_emission = np.log([[0.1, 0.9], [0.2, 0.8]])
    >>> result = forward_backward(log_emission, degrade, start=0, end=0)
    >>> result.marginals
    array([[1., 0.],
           [1., 0.]])

    Without the end inspection the data dominate:

    >>> result = forward_backward(log_emission, degrade, start=0)
    >>> result.marginals.round(3)
    array([[0.245, 0.755],
           [0.17 , 0.83 ]])
    >>> result.pseudo_labels
    array([1, 1])
    """
    log_emission, log_transition, actions, log_start, log_end = _check_segment(
        log_emission, transition, actions, start, end
    )
    n_steps, n_states = log_emission.shape
    end_message = _end_message(log_transition, actions, log_end, n_states)
    log_alpha, log_shift = _forward(log_emission, log_transition, actions, log_start)
    last = log_alpha[-1] if n_steps else log_start
    log_evidence = _log_sum(last + end_message)
    if log_evidence == -np.inf:
        raise _impossible_end()
    log_beta = _backward(log_emission, log_transition, actions, end_message)

    log_posterior = log_alpha + log_beta
    log_posterior -= log_posterior.max(axis=1, keepdims=True)
    marginals = np.exp(log_posterior)
    marginals /= marginals.sum(axis=1, keepdims=True)
    return SmoothingResult(
        marginals=marginals,
        pseudo_labels=np.argmax(marginals, axis=1),
        log_likelihood=float(log_shift + log_evidence),
        classes=np.arange(n_states),
    )


def viterbi(
    log_emission,
    transition,
    actions=None,
    *,
    start=None,
    end=None,
) -> tuple[np.ndarray, float]:
    """Most probable sequence of hidden health states of a segment.

    Same model, parameters and time convention as :func:`forward_backward`.
    The anchors ``y_0`` and ``y_{T+1}`` are not part of the sequence: a soft
    start or end is summed over, not maximised over.

    Parameters
    ----------
    log_emission : array-like of shape (n_steps, n_states)
        ``log p(x_t | y_t = k)`` of the hidden steps, row ``t - 1``.
    transition : array-like of shape (n_actions, n_states, n_states) or \
            (n_states, n_states)
        ``transition[d, i, j] = P(y_{t+1} = j | y_t = i, d_t = d)``.
    actions : array-like of int of shape (n_steps + 1,) or (n_steps,), \
            default=None
        ``actions[t] = d_t``, as in :func:`forward_backward`.
    start : None, int or array-like of shape (n_states,), default=None
        State, belief or (None) uniform distribution of ``y_0``.
    end : None, int or array-like of shape (n_states,), default=None
        State or likelihood weights of ``y_{T+1}``; None for an open end.

    Returns
    -------
    path : ndarray of int of shape (n_steps,)
        State indices of the most probable sequence ``y_1..y_T`` (ties go to
        lower indices).
    log_probability : float
        ``log p(y_1..y_T = path, x_1..x_T, y_{T+1} = end | y_0, d)``.

    Raises
    ------
    ImpossibleEvidenceError
        If no state sequence has non-zero probability.
    ValueError
        If an input has the wrong shape or holds invalid values.

    See Also
    --------
    forward_backward : Marginal posteriors of each hidden state.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.smoothing import viterbi
    >>> degrade = [[0.9, 0.1], [0.0, 1.0]]
    >>> log_emission = np.log([[0.6, 0.4], [0.3, 0.7], [0.1, 0.9]])
    >>> path, log_probability = viterbi(log_emission, degrade, start=0)
    >>> path
    array([0, 1, 1])
    >>> round(log_probability, 4)
    -3.3808
    """
    log_emission, log_transition, actions, log_start, log_end = _check_segment(
        log_emission, transition, actions, start, end
    )
    n_steps, n_states = log_emission.shape
    end_message = _end_message(log_transition, actions, log_end, n_states)
    if n_steps == 0:
        log_probability = _log_sum(log_start + end_message)
        if log_probability == -np.inf:
            raise _impossible_end()
        return np.empty(0, dtype=np.intp), log_probability

    backpointer = np.empty((n_steps, n_states), dtype=np.intp)
    states = np.arange(n_states)
    with np.errstate(divide="ignore"):
        # y_0 is marginalised, not decoded: a sum, then maxima.
        score = _log_matvec_columns(log_start, log_transition[actions[0]])
        score += log_emission[0]
        log_shift = 0.0
        for t in range(1, n_steps + 1):
            peak = score.max()
            if peak == -np.inf:
                raise _impossible_at(t)
            score -= peak
            log_shift += peak
            if t == n_steps:
                break
            terms = score[:, np.newaxis] + log_transition[actions[t]]
            backpointer[t] = terms.argmax(axis=0)
            score = terms[backpointer[t], states] + log_emission[t]
        final = score + end_message
    last = int(final.argmax())
    if final[last] == -np.inf:
        raise _impossible_end()
    path = np.empty(n_steps, dtype=np.intp)
    path[-1] = last
    for t in range(n_steps - 1, 0, -1):
        path[t - 1] = backpointer[t, path[t]]
    return path, float(log_shift + final[last])


# ---------------------------------------------------------------------- #
# classifier and decision-process adapter
# ---------------------------------------------------------------------- #
def aligned_log_density(estimator, X, process) -> np.ndarray:
    """Class-conditional log densities in the order of a process's states.

    Calls ``estimator.class_log_density(X)`` (columns in
    ``estimator.classes_`` order) and reorders the columns as
    ``process.classes_``.

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``classes_`` and ``class_log_density(X)``
        returning ``log p(x | y = k)`` of shape ``(n_samples, n_classes)``.
        Every state of the process must be one of its classes. A Bayesian
        classifier that declares all states up front, such as
        ``BayesianGMMClassifier(classes=process.classes_)``, gives a state it
        has no data for its prior predictive density.
    X : array-like of shape (n_samples, n_features)
        Observations; may have no rows, in which case the estimator is not
        called.
    process : DecisionProcess
        Supplies the states (``classes_``).

    Returns
    -------
    log_density : ndarray of shape (n_samples, n_states)

    Raises
    ------
    ValueError
        If a class of the estimator is not a state of the process or the
        reverse, or the densities have the wrong shape.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal import DecisionProcess
    >>> from skrbal.smoothing import aligned_log_density
    >>> process = DecisionProcess(
    ...     transition=[[[0.9, 0.1], [0.0, 1.0]]],
    ...     state_utility=[0.0, -1.0],
    ...     action_utility=[0.0],
    ...     classes=["healthy", "damaged"],
    ... )
    >>> class Densities:
    ...     classes_ = np.array(["damaged", "healthy"])
    ...     def class_log_density(self, X):
    ...         return np.column_stack([-np.ravel(X), np.ravel(X)])
    >>> aligned_log_density(Densities(), [[2.0]], process)
    array([[ 2., -2.]])
    """
    process_classes = np.asarray(process.classes_)
    estimator_classes = np.asarray(estimator.classes_)
    n_samples = np.shape(X)[0]
    position = {label: k for k, label in enumerate(process_classes.tolist())}
    unknown = [c for c in estimator_classes.tolist() if c not in position]
    if unknown:
        raise ValueError(
            f"the estimator's classes {unknown} are not states of the process, "
            f"whose classes are {process_classes.tolist()}."
        )
    columns = [position[c] for c in estimator_classes.tolist()]
    missing = sorted(set(range(len(process_classes))) - set(columns))
    if missing:
        raise ValueError(
            f"the estimator has no class {process_classes[missing].tolist()} of the "
            f"process (estimator classes_ = {estimator_classes.tolist()}), so it "
            "gives no density for those states; declare every state when "
            "constructing it (e.g. classes=process.classes_) so that states "
            "without data get their prior predictive density."
        )
    aligned = np.empty((n_samples, len(process_classes)))
    if n_samples == 0:
        return aligned
    density = _float_array(estimator.class_log_density(X), "class_log_density(X)")
    if density.shape != (n_samples, len(estimator_classes)):
        raise ValueError(
            f"class_log_density(X) has shape {density.shape}, expected "
            f"({n_samples}, {len(estimator_classes)}) (samples, estimator classes)."
        )
    aligned[:, columns] = density
    return aligned


def _label_index(label, process_classes, name: str) -> int:
    matches = np.flatnonzero(process_classes == label) if np.ndim(label) == 0 else []
    if len(matches) != 1:
        raise ValueError(
            f"{name} = {label!r} is not a state of the process, whose classes are "
            f"{process_classes.tolist()}."
        )
    return int(matches[0])


def smooth_segment(
    estimator,
    X,
    process,
    actions=None,
    *,
    start_label=None,
    end_label=None,
    initial_state=None,
) -> SmoothingResult:
    """Smooth the hidden health states of a segment with a classifier.

    Thin adapter over :func:`forward_backward`: the emissions are the
    estimator's class-conditional log densities (see
    :func:`aligned_log_density`), the transitions those of the decision
    process, and the anchors inspected labels.

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``classes_`` and ``class_log_density(X)``.
    X : array-like of shape (n_steps, n_features)
        The observations of the hidden steps, in time order.
    process : DecisionProcess
        Transition model and states.
    actions : array-like of int of shape (n_steps + 1,) or (n_steps,), \
            default=None
        ``actions[t] = d_t``, the action index taken at step ``t``, from the
        start step (``t = 0``) to the step before the end inspection
        (``n_steps + 1`` entries) or, without an end, to the step before the
        last hidden one (``n_steps`` entries). See :func:`forward_backward`.
    start_label : label, default=None
        Inspected label one step before the first hidden step. When None (no
        inspection yet), ``initial_state`` is used instead.
    end_label : label, default=None
        Inspected label one step after the last hidden step; None for an open
        end.
    initial_state : label or array-like of shape (n_states,), default=None
        What is assumed about the start when ``start_label`` is None: a label
        (the paper assumes the structure started undamaged, for instance
        ``initial_state=1`` with :func:`~skrbal.synthetic_decision_process`),
        a probability vector over ``process.classes_``, or None for a uniform
        distribution. Ignored when ``start_label`` is given.

    Returns
    -------
    result : SmoothingResult
        Marginals over ``process.classes_``, pseudo-labels as class labels.

    Raises
    ------
    ImpossibleEvidenceError
        If the labels, actions and observations have probability zero.
    ValueError
        If a label is not a state of the process, the estimator's classes do
        not map onto the process's states, or an input is malformed.

    See Also
    --------
    forward_backward : The underlying smoother on log emissions.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.smoothing import smooth_segment
    >>> class Density:
    ...     classes_ = np.array([1, 2, 3, 4])
    ...     def class_log_density(self, X):
    ...         return -0.5 * (np.asarray(X) - self.classes_) ** 2
    >>> process = synthetic_decision_process()
    >>> X = [[1.1], [3.9], [2.2]]
    >>> smooth_segment(Density(), X, process, [0, 0, 0, 0],
    ...                start_label=1, end_label=1).pseudo_labels
    array([1, 1, 1])
    >>> smooth_segment(Density(), X, process, [0, 0, 0], start_label=1).pseudo_labels
    array([1, 2, 2])
    """
    process_classes = np.asarray(process.classes_)
    log_emission = aligned_log_density(estimator, X, process)
    if start_label is not None:
        start = _label_index(start_label, process_classes, "start_label")
    elif initial_state is None or np.ndim(initial_state) == 1:
        start = initial_state
    else:
        start = _label_index(initial_state, process_classes, "initial_state")
    end = None
    if end_label is not None:
        end = _label_index(end_label, process_classes, "end_label")
    result = forward_backward(
        log_emission,
        np.asarray(process.transition, dtype=float),
        actions,
        start=start,
        end=end,
    )
    return SmoothingResult(
        marginals=result.marginals,
        pseudo_labels=process_classes[result.pseudo_labels],
        log_likelihood=result.log_likelihood,
        classes=process_classes,
    )
