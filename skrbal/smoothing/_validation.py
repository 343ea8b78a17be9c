"""Validation of a segment's emissions, transitions, actions and anchors."""

from __future__ import annotations

from numbers import Integral

import numpy as np

_ROW_SUM_TOL = 1e-8
_START_SUM_TOL = 1e-6


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


def _check_transition(transition, n_states: int) -> np.ndarray:
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
    return transition


def _check_actions(actions, n_actions: int, n_expected: int, has_end: bool):
    if actions is None:
        if n_actions != 1:
            raise ValueError(
                f"actions is required: transition has {n_actions} actions, so "
                "each step must say which one was taken."
            )
        # int8 indexes as well as intp, in an eighth of the memory.
        return np.zeros(n_expected, dtype=np.int8)
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
        return np.zeros(0, dtype=np.intp)
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
    return actions.astype(np.intp, copy=False)


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
    transition = _check_transition(transition, n_states)
    log_start = _check_log_start(start, n_states)
    log_end = _check_log_end(end, n_states)
    actions = _check_actions(
        actions,
        transition.shape[0],
        n_steps + (log_end is not None),
        log_end is not None,
    )
    return log_emission, transition, actions, log_start, log_end
