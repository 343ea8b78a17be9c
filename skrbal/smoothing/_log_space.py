"""Exact log-space message passing, one step at a time."""

from __future__ import annotations

import numpy as np

from skrbal.smoothing._result import ImpossibleEvidenceError


def _finite_peak(terms, axis):
    """Maxima along ``axis``, 0 where everything is impossible.

    An all ``-inf`` slice keeps its ``-inf`` through ``exp(-inf - 0)``, whereas
    subtracting its own maximum would give NaN. Any finite maximum is used as
    it is, however small: a floor (such as ``-1e300``) would turn the
    log-sum-exp of terms below it into ``-inf``, i.e. call possible evidence
    impossible (issue 10).
    """
    peak = terms.max(axis=axis)
    return np.where(peak == -np.inf, 0.0, peak)


def log_matvec_columns(log_vector, log_matrix):
    """``log(exp(log_vector) @ exp(log_matrix))`` without underflow."""
    terms = log_vector[:, np.newaxis] + log_matrix
    peak = _finite_peak(terms, axis=0)
    return np.log(np.exp(terms - peak).sum(axis=0)) + peak


def log_matvec_rows(log_matrix, log_vector):
    """``log(exp(log_matrix) @ exp(log_vector))`` without underflow."""
    terms = log_matrix + log_vector
    peak = _finite_peak(terms, axis=1)
    return np.log(np.exp(terms - peak[:, np.newaxis]).sum(axis=1)) + peak


def log_sum(log_vector) -> float:
    """``log(sum(exp(log_vector)))``; ``-inf`` when every term is."""
    peak = float(_finite_peak(log_vector, axis=0))
    with np.errstate(divide="ignore"):
        return float(np.log(np.exp(log_vector - peak).sum()) + peak)


def shifted_sum(log_a, log_b):
    """``log_a + log_b`` shifted to a maximum of zero, and the shift.

    Two log values of order ``-1e308`` sum beyond the float range even when
    their sum lies within it relative to the others' (two paths that meet
    their improbable observations at different steps): the shift is
    subtracted before the second term is added, so such a state is kept
    instead of becoming ``-inf``, i.e. impossible. The shift is ``-inf`` when
    every sum is (nothing left, or everything beyond the float range).
    """
    peak = float(np.max(log_a + log_b))
    if peak == -np.inf:
        return np.full(np.shape(log_a), -np.inf), peak
    return (log_a - peak) + log_b, peak


def impossible_at(step: int) -> ImpossibleEvidenceError:
    return ImpossibleEvidenceError(
        f"the evidence is impossible: no health state at hidden step {step} "
        f"(log_emission row {step - 1}) has non-zero probability given the start, "
        "the actions and the emissions up to it."
    )


def impossible_end() -> ImpossibleEvidenceError:
    return ImpossibleEvidenceError(
        "the evidence is impossible: the end anchor is unreachable from the start "
        "under the actions taken and the emissions (probability zero)."
    )


def range_exceeded(where: str) -> ValueError:
    return ValueError(
        f"log_emission is beyond double precision at {where}: the evidence is "
        "possible, but every state still possible there has a log probability "
        "more than 1.8e308 below the others', which no float can hold. Rescale "
        "the log densities, or check the model that produced them."
    )


def possible_next(possible, log_transition, log_emission_row):
    """States that the model allows at the next step, whatever the numbers.

    Tracked beside the log messages so that a state lost to overflow (a log
    probability below the float range) is told apart from an impossible one.
    """
    allowed = (possible[:, np.newaxis] & (log_transition > -np.inf)).any(axis=0)
    return allowed & (log_emission_row > -np.inf)


def nothing_left(step: int, possible) -> ValueError:
    """Impossible evidence at a step, or a possible state lost to overflow."""
    if possible.any():
        return range_exceeded(f"hidden step {step}")
    return impossible_at(step)


def nothing_at_end(possible, log_end_message) -> ValueError:
    """An unreachable end anchor, or a reachable one lost to overflow."""
    if np.any(possible & (log_end_message > -np.inf)):
        return range_exceeded("the end anchor")
    return impossible_end()


def end_message(log_transition, actions, log_end, n_states):
    """``log P(end | y_T)``: ones without an end, else the final transition."""
    if log_end is None:
        return np.zeros(n_states)
    with np.errstate(divide="ignore"):
        return log_matvec_rows(log_transition[actions[-1]], log_end)


# Rounding of one log-sum-exp step, per unit of the magnitudes it adds: a
# handful of operations of relative precision 2**-53 each.
_ROUNDING = 4 * np.finfo(float).eps
# Log values are tracked with a worst-case bound on their rounding error (every
# error added at full size, so actual errors are typically orders smaller). A
# result whose marginals or path choices that bound leaves uncertain by more
# than this is refused: rounding then decides the answer, not the evidence.
_TOLERANCE = 1e-6


def _rounding(*magnitudes):
    total = 1.0
    for magnitude in magnitudes:
        total = total + np.abs(np.where(np.isfinite(magnitude), magnitude, 0.0))
    return _ROUNDING * total


# A term below the peak of its log-sum-exp by more than this (after adding its
# own error) weighs less than 1e-22: its error cannot reach the result.
_NEGLIGIBLE = 50.0


def _inherited(terms, error, peak, axis):
    """Largest error among the terms of a log-sum-exp that can weigh in it."""
    weighs = terms + error - np.expand_dims(peak, axis) > -_NEGLIGIBLE
    return np.where(weighs, error, 0.0).max(axis=axis)


def precision_lost(where: str, spread: float) -> ValueError:
    return ValueError(
        f"log_emission is beyond double precision at {where}: the log "
        f"probabilities compared there carry rounding errors of up to {spread:.3g} "
        f"nats, more than the {_TOLERANCE:g} a result may carry (log densities "
        "of order 1e10 lose 1e-6 nats to rounding, of order 1e16 a whole nat). "
        "Rescale them, or check the model that produced them."
    )


def forward(log_emission, log_transition, actions, log_start):
    """Shifted log forward messages of steps 1..T, their error bounds, the
    sum of the shifts and the states the model allows at step T.

    ``log_alpha[t - 1] + shift_t`` is ``log p(x_1..x_t, y_t | start)`` where
    the shift keeps each row's maximum at zero; the shifts add up to the part
    of the log-likelihood carried out of the messages. ``error[t - 1]`` bounds
    the rounding error of ``log_alpha[t - 1]`` (shift excluded).
    """
    n_steps, n_states = log_emission.shape
    log_alpha = np.empty((n_steps, n_states))
    error_alpha = np.empty((n_steps, n_states))
    log_shift = 0.0
    message, error = log_start, np.zeros(n_states)
    possible = log_start > -np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        for t in range(n_steps):
            possible = possible_next(
                possible, log_transition[actions[t]], log_emission[t]
            )
            terms = message[:, np.newaxis] + log_transition[actions[t]]
            column_peak = _finite_peak(terms, axis=0)
            incoming = np.log(np.exp(terms - column_peak).sum(axis=0)) + column_peak
            message, peak = shifted_sum(incoming, log_emission[t])
            if peak == -np.inf:
                raise nothing_left(t + 1, possible)
            log_shift += peak
            error = _inherited(terms, error[:, np.newaxis], column_peak, 0) + _rounding(
                column_peak, log_emission[t], peak
            )
            log_alpha[t] = message
            error_alpha[t] = error
    return log_alpha, error_alpha, log_shift, possible


def backward(log_emission, log_transition, actions, log_end_message, log_alpha):
    """Log backward messages of steps 1..T, each shifted to a maximum of zero,
    and bounds on their rounding errors.

    ``log_beta[t - 1]`` is ``log p(x_{t+1}..x_T, end | y_t)`` up to a constant:
    the transition out of step ``t`` is the one of action ``d_t``. States that
    the forward messages rule out are set to ``-inf``: they have no posterior
    mass whatever their backward message, and leaving them out of the shift
    keeps the possible states within the float range.
    """
    n_steps, n_states = log_emission.shape
    log_beta = np.empty((n_steps, n_states))
    error_beta = np.empty((n_steps, n_states))
    if n_steps == 0:
        return log_beta, error_beta
    message = np.where(log_alpha[-1] > -np.inf, log_end_message, -np.inf)
    message -= _finite_peak(message, axis=0)
    error = _rounding(log_end_message)
    log_beta[-1], error_beta[-1] = message, error
    with np.errstate(divide="ignore", invalid="ignore"):
        for t in range(n_steps - 1, 0, -1):
            weighted, _ = shifted_sum(message, log_emission[t])
            error = error + _rounding(log_emission[t])
            terms = log_transition[actions[t]] + weighted
            row_peak = _finite_peak(terms, axis=1)
            message = np.log(np.exp(terms - row_peak[:, np.newaxis]).sum(axis=1))
            message += row_peak
            message[log_alpha[t - 1] == -np.inf] = -np.inf
            peak = _finite_peak(message, axis=0)
            message -= peak
            error = _inherited(terms, error, row_peak, 1) + _rounding(row_peak, peak)
            log_beta[t - 1], error_beta[t - 1] = message, error
    return log_beta, error_beta


def shift_and_check_posterior(log_posterior, error):
    """Shift rows to a maximum of zero (in place); refuse inaccurate marginals.

    A row without any finite entry while the evidence is possible has fallen
    out of the float range. Otherwise a state's share
    is uncertain by a factor ``exp(±(error + error of the row's top state))``;
    the bound adds these over the other states that are possible at all,
    including those whose share rounds to zero but whose error could lift it.
    """
    rows = np.arange(len(log_posterior))
    top = np.argmax(log_posterior, axis=1)
    peak = log_posterior[rows, top]
    lost = np.flatnonzero(peak == -np.inf)
    if lost.size:
        raise precision_lost(f"hidden step {int(lost[0]) + 1}", np.inf)
    log_posterior -= peak[:, np.newaxis]
    spread = error + error[rows, top][:, np.newaxis]
    # The top state's share is one minus the others': twice their error.
    possible = log_posterior > -np.inf
    possible[rows, top] = False
    with np.errstate(over="ignore", invalid="ignore"):
        lifted = np.where(possible, log_posterior + spread, -np.inf)
        reach = np.exp(np.minimum(lifted, 0.0))
        bound = 2.0 * (np.where(possible, reach * np.minimum(spread, 1.0), 0.0)).sum(
            axis=1
        )
    bad = np.flatnonzero(~(bound <= _TOLERANCE))
    if bad.size:
        t = int(bad[0])
        raise precision_lost(
            f"hidden step {t + 1}", float(np.max(np.where(possible[t], spread[t], 0)))
        )


def viterbi(log_emission, log_transition, actions, log_start, log_end_message):
    """Most probable hidden path and its log joint, one step at a time.

    A choice between two candidates whose scores are closer than their
    rounding errors (when these exceed the tolerance) is refused, unless the
    model rules the choice out anyway (no path from it reaches the end).
    """
    n_steps, n_states = log_emission.shape
    backpointer = np.empty((n_steps, n_states), dtype=np.intp)
    states = np.arange(n_states)
    alive = _reaching_the_end(
        log_emission, log_transition, actions, log_start, log_end_message
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        # y_0 is marginalised, not decoded: a sum, then maxima.
        first = log_matvec_columns(log_start, log_transition[actions[0]])
        possible = possible_next(
            log_start > -np.inf, log_transition[actions[0]], log_emission[0]
        )
        error = _rounding(first, log_emission[0])
        score, peak = shifted_sum(first, log_emission[0])
        log_shift = 0.0
        for t in range(1, n_steps + 1):
            if peak == -np.inf:
                raise nothing_left(t, possible)
            log_shift += peak
            error = error + _rounding(peak)
            if t == n_steps:
                break
            terms = score[:, np.newaxis] + log_transition[actions[t]]
            backpointer[t] = terms.argmax(axis=0)
            best = terms[backpointer[t], states]
            _check_choice(terms, backpointer[t], error, t, alive[t])
            possible = possible_next(
                possible, log_transition[actions[t]], log_emission[t]
            )
            error = error[backpointer[t]] + _rounding(best, log_emission[t])
            score, peak = shifted_sum(best, log_emission[t])
        final = score + log_end_message
    last = int(final.argmax())
    if final[last] == -np.inf:
        raise nothing_at_end(possible, log_end_message)
    _check_choice(
        final[:, np.newaxis],
        np.array([last]),
        error + _rounding(log_end_message),
        n_steps,
        np.ones(1, dtype=bool),
    )
    path = np.empty(n_steps, dtype=np.intp)
    path[-1] = last
    for t in range(n_steps - 1, 0, -1):
        path[t - 1] = backpointer[t, path[t]]
    return path, float(log_shift + final[last])


def _reaching_the_end(log_emission, log_transition, actions, log_start, log_end):
    """Which states of each step lie on some path the model allows.

    Raises the impossible-evidence error (at the first step without any
    allowed state, else at the end anchor) before any number is compared.
    """
    n_steps = log_emission.shape[0]
    possible = log_start > -np.inf
    for t in range(n_steps):
        possible = possible_next(possible, log_transition[actions[t]], log_emission[t])
        if not possible.any():
            raise impossible_at(t + 1)
    alive = np.empty(log_emission.shape, dtype=bool)
    alive[-1] = log_end > -np.inf
    if not np.any(alive[-1] & possible):
        raise impossible_end()
    for t in range(n_steps - 1, 0, -1):
        onward = alive[t] & (log_emission[t] > -np.inf)
        alive[t - 1] = (
            (log_transition[actions[t]] > -np.inf) & onward[np.newaxis, :]
        ).any(axis=1)
    return alive


def _check_choice(terms, chosen, error, step, relevant):
    """Is ``chosen[j] = argmax_i terms[i, j]`` resolved by the rounding errors?

    Ties within the tolerance go to the lower index, as they always did; a
    candidate within rounding errors above the tolerance makes it a guess.
    Only the columns ``relevant`` (states on a path to the end) count.
    """
    columns = np.arange(terms.shape[1])
    best = terms[chosen, columns]
    margin = error[chosen] + error[:, np.newaxis]
    close = (terms > -np.inf) & (best - terms <= margin) & (margin > _TOLERANCE)
    close[chosen, columns] = False
    close[:, ~relevant] = False
    if close.any():
        raise precision_lost(f"hidden step {step}", float(margin[close].max()))
