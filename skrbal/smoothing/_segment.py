"""Forward-backward and Viterbi over one segment between inspections."""

from __future__ import annotations

import numpy as np

from skrbal.smoothing import _log_space, _max_plus, _scaled
from skrbal.smoothing._result import SmoothingResult
from skrbal.smoothing._validation import _check_segment


def _log_transition(transition):
    with np.errstate(divide="ignore"):
        return np.log(transition)


def _row_peaks(log_emission):
    """Finite maximum of each row (0 for an all-impossible row) and their sum.

    Log densities are handled relative to these peaks, so that values near the
    end of the float range (``-1e308``) never meet each other in a sum. The
    sum (a part of the log-likelihood) is ``-inf`` only when the true value is
    below the float range.
    """
    peak = _scaled.row_max(log_emission)
    peak[peak == -np.inf] = 0.0
    with np.errstate(over="ignore"):
        return peak, float(peak.sum())


# Overflow, underflow and -inf arithmetic are expected on these paths; every
# result is checked explicitly instead.
@np.errstate(divide="ignore", over="ignore", invalid="ignore")
def _marginals(log_emission, transition, actions, log_start, log_end):
    """Marginals and log-likelihood of a segment with at least one step.

    The blocked scaled recursion serves ordinary evidence; the exact log-space
    one takes over when the evidence needs more than the float range.
    """
    peak, log_offset = _row_peaks(log_emission)
    try:
        marginals, log_likelihood = _scaled.forward_backward(
            log_emission,
            peak,
            transition,
            actions,
            np.exp(log_start),
            None if log_end is None else np.exp(log_end),
        )
    except _scaled.ScaledChainUnderflow:
        marginals, log_likelihood = _forward_backward_log(
            log_emission - peak[:, np.newaxis],
            transition,
            actions,
            log_start,
            log_end,
        )
    return marginals, float(log_likelihood) + log_offset


def _forward_backward_log(log_emission, transition, actions, log_start, log_end):
    """The exact log-space recursion: marginals and log-likelihood."""
    log_transition = _log_transition(transition)
    n_states = log_emission.shape[1]
    end_message = _log_space.end_message(log_transition, actions, log_end, n_states)
    # Impossible evidence is found from the zeros of the model alone, before a
    # forward message that overflows could pass it off as a precision loss.
    _log_space._reaching_the_end(
        log_emission, log_transition, actions, log_start, end_message
    )
    log_alpha, error_alpha, log_shift, possible = _log_space.forward(
        log_emission, log_transition, actions, log_start
    )
    log_evidence = _log_space.log_sum(log_alpha[-1] + end_message)
    if log_evidence == -np.inf:
        raise _log_space.nothing_at_end(possible, end_message)
    log_beta, error_beta = _log_space.backward(
        log_emission, log_transition, actions, end_message, log_alpha
    )
    log_posterior = log_alpha + log_beta
    _log_space.shift_and_check_posterior(log_posterior, error_alpha + error_beta)
    marginals = np.exp(log_posterior)
    marginals /= marginals.sum(axis=1, keepdims=True)
    return marginals, log_shift + log_evidence


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
        If an input has the wrong shape or holds invalid values, or if the log
        densities are so large (of order 1e10 and beyond) that rounding, not
        the evidence, would decide the marginals.

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
    are computed with per-step scaling, vectorised over blocks of steps, or,
    when the evidence needs more than the float range, in log space one step
    at a time (see :mod:`skrbal.smoothing`).

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
    log_emission, transition, actions, log_start, log_end = _check_segment(
        log_emission, transition, actions, start, end
    )
    n_steps, n_states = log_emission.shape
    if n_steps == 0:
        marginals = np.empty((0, n_states))
        end_message = _log_space.end_message(
            _log_transition(transition), actions, log_end, n_states
        )
        log_likelihood = _log_space.log_sum(log_start + end_message)
        if log_likelihood == -np.inf:
            raise _log_space.impossible_end()
    else:
        marginals, log_likelihood = _marginals(
            log_emission, transition, actions, log_start, log_end
        )
    return SmoothingResult(
        marginals=marginals,
        pseudo_labels=np.argmax(marginals, axis=1),
        log_likelihood=float(log_likelihood),
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
        If an input has the wrong shape or holds invalid values, or if the log
        densities are so large that rounding, not the evidence, would choose
        between paths.

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
    log_emission, transition, actions, log_start, log_end = _check_segment(
        log_emission, transition, actions, start, end
    )
    n_steps, n_states = log_emission.shape
    log_transition = _log_transition(transition)
    end_message = _log_space.end_message(log_transition, actions, log_end, n_states)
    if n_steps == 0:
        log_probability = _log_space.log_sum(log_start + end_message)
        if log_probability == -np.inf:
            raise _log_space.impossible_end()
        return np.empty(0, dtype=np.intp), log_probability
    return _decode(log_emission, log_transition, actions, log_start, end_message)


@np.errstate(divide="ignore", over="ignore", invalid="ignore")
def _decode(log_emission, log_transition, actions, log_start, end_message):
    """Viterbi path and its log probability, emissions relative to row peaks.

    The blocked max-plus recursion serves ordinary evidence; the step-by-step
    one, which checks each choice against its rounding errors, the rest.
    """
    peak, log_offset = _row_peaks(log_emission)
    relative = log_emission - peak[:, np.newaxis]
    # y_0 is marginalised, not decoded: a sum, then maxima.
    first = _log_space.log_matvec_columns(log_start, log_transition[actions[0]])
    first += relative[0]
    try:
        path = _max_plus.viterbi(first, relative, log_transition, actions, end_message)
    except _max_plus.MaxPlusFallback:
        path, log_probability = _log_space.viterbi(
            relative, log_transition, actions, log_start, end_message
        )
    else:
        steps = np.arange(1, len(path))
        log_probability = (
            first[path[0]]
            + log_transition[actions[steps], path[:-1], path[1:]].sum()
            + relative[steps, path[1:]].sum()
            + end_message[path[-1]]
        )
    return path, float(log_probability) + log_offset
