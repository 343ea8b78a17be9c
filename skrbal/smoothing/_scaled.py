"""Scaled (probability-space) message passing, vectorised over blocks of steps.

A forward or backward pass is a chain ``x_s = (x_{s-1} * f_s) @ G[g_s]`` of
``K``-vectors: ``f_s`` are emission factors ``exp(log_emission - row max)`` in
``[0, 1]`` and ``G`` the (possibly transposed) transition matrices, one per
action. Each ``x_s`` is rescaled to a maximum of one and the scales are kept in
log space (Rabiner's scaling), which is exact as long as no entry that the model
allows underflows.

The chain is cut into ``n_blocks`` blocks of ``block`` steps. The product of
each block's matrices is built one step at a time for all blocks at once
(a stack of ``K x K`` products), the block starts are then carried from block
to block (one small product per block), and finally every step is recomputed
from its block start, again for all blocks at once. The Python loops thus run
``~2 sqrt(n)`` times instead of ``n`` times.

The result is checked, not assumed: every step verifies that no state the model
allows (reachable from the previous step's support and with a finite emission)
has fallen below :data:`_TINY`, and every carried block start must equal the
one recomputed step by step to ``_CARRY_RTOL``. When a check fails (dynamic
ranges beyond ``1e290`` between states, or impossible evidence) the caller
falls back to the exact log-space recursion of :mod:`._log_space`.
"""

from __future__ import annotations

import numpy as np

# Smallest value an allowed entry may take before its relative precision is in
# doubt; the float64 normal range ends at 2.2e-308.
_TINY = 1e-290
# Block products are accurate to a few hundred ulps; an underflow inside one
# shows up as an error of many orders of magnitude.
_CARRY_RTOL = 1e-11


class ScaledChainUnderflow(Exception):
    """A scaled chain lost an allowed state to underflow (internal)."""


def block_size(n_steps: int) -> int:
    """Steps per block: balances the per-block and per-step Python loops."""
    return int(max(8, min(2048, np.sqrt(n_steps / 2.0))))


class _Transitions:
    """Batched ``(B, K) @ G[g]`` for a few matrices ``G`` of shape ``(D, K, K)``."""

    def __init__(self, matrices):
        self.n_matrices, self.n_states, _ = matrices.shape
        self.matrices = matrices
        # Side by side: one matrix product for every action, then a selection.
        self.stacked = np.ascontiguousarray(
            matrices.transpose(1, 0, 2).reshape(self.n_states, -1)
        )
        self.allowed = (matrices > 0).astype(float)

    def vector_product(self, x, index):
        if self.n_matrices == 1:
            return x @ self.matrices[0]
        products = (x @ self.stacked).reshape(len(x), self.n_matrices, -1)
        return products[np.arange(len(x)), index]

    def matrix_product(self, P, index):
        n_blocks, n_states, _ = P.shape
        if self.n_matrices == 1:
            return (P.reshape(-1, n_states) @ self.matrices[0]).reshape(P.shape)
        products = (P.reshape(-1, n_states) @ self.stacked).reshape(
            n_blocks, n_states, self.n_matrices, n_states
        )
        return products[np.arange(n_blocks), :, index]

    def reachable(self, support, index):
        """Which states the model allows one step after ``support``."""
        if np.ndim(index) == 0:
            return support.astype(float) @ self.allowed[index] > 0
        if self.n_matrices == 1:
            return support.astype(float) @ self.allowed[0] > 0
        return np.einsum("bi,bij->bj", support.astype(float), self.allowed[index]) > 0


def _step(transitions, x, factor, allowed, index, out):
    """One normalised step for a stack of chains; returns the scales.

    Raises :class:`ScaledChainUnderflow` when a state that the model allows
    came out below ``_TINY``.
    """
    u = transitions.vector_product(x * factor, index)
    small = u < _TINY
    if small.any():
        rows = np.flatnonzero(small.any(axis=1))
        support = (x[rows] > 0) & allowed[rows]
        index_rows = index if np.ndim(index) == 0 else index[rows]
        if (small[rows] & transitions.reachable(support, index_rows)).any():
            raise ScaledChainUnderflow
    scale = u.max(axis=1)
    if not np.all(scale > 0):
        raise ScaledChainUnderflow
    np.divide(u, scale[:, np.newaxis], out=out)
    return scale


def scaled_chain(first, factors, allowed, indices, matrices):
    """Normalised ``x_1..x_n`` of ``x_s = (x_{s-1} * f_s) @ G[g_s]``.

    Parameters
    ----------
    first : ndarray of shape (K,)
        ``x_1``, with maximum one.
    factors : ndarray of shape (n - 1, K)
        ``f_2..f_n`` (a view is fine, also a reversed one).
    allowed : ndarray of bool of shape (n - 1, K)
        Where ``f`` is structurally non-zero (finite log emission).
    indices : ndarray of int of shape (n - 1,)
        ``g_2..g_n``.
    matrices : ndarray of shape (D, K, K)

    Returns
    -------
    x : ndarray of shape (n, K)
        Each row with maximum one.
    log_scale : ndarray of shape (n,)
        ``log`` of the factor each step was divided by (0 for ``x_1``).

    Raises
    ------
    ScaledChainUnderflow
        If an allowed state underflowed; the caller must use log space.
    """
    n_links, n_states = factors.shape
    x = np.empty((n_links + 1, n_states))
    scale = np.ones(n_links + 1)
    x[0] = first
    transitions = _Transitions(matrices)
    block = block_size(n_links)
    n_blocks = n_links // block
    done = n_blocks * block
    if n_blocks > 1:
        _blocked(
            transitions,
            factors[:done].reshape(n_blocks, block, n_states),
            allowed[:done].reshape(n_blocks, block, n_states),
            indices[:done].reshape(n_blocks, block),
            x[: done + 1],
            scale[1 : done + 1].reshape(n_blocks, block),
        )
    else:
        done = 0
    for s in range(done, n_links):
        scale[s + 1] = _step(
            transitions,
            x[s : s + 1],
            factors[s],
            allowed[s : s + 1],
            indices[s],
            x[s + 1 : s + 2],
        )[0]
    return x, np.log(scale)


def _blocked(transitions, factors, allowed, indices, x, scale):
    """Fill ``x[1:]`` (and ``scale``) for whole blocks; ``x[0]`` is given."""
    n_blocks, block, n_states = factors.shape
    # 1. The product of each block's step matrices diag(f) G, kept at a
    #    maximum of one (only its direction matters for the carry).
    product = factors[:, 0, :, np.newaxis] * transitions.matrices[indices[:, 0]]
    for j in range(1, block):
        product = transitions.matrix_product(
            product * factors[:, j, np.newaxis, :], indices[:, j]
        )
        peak = product.max(axis=(1, 2))
        if not np.all(peak > 0):
            raise ScaledChainUnderflow
        product /= peak[:, np.newaxis, np.newaxis]
    # 2. The start of each block carried over the previous blocks.
    starts = np.empty((n_blocks, n_states))
    starts[0] = x[0]
    for b in range(1, n_blocks):
        carried = starts[b - 1] @ product[b - 1]
        peak = carried.max()
        if not peak > 0:
            raise ScaledChainUnderflow
        starts[b] = carried / peak
    # 3. Every step again from its block start, all blocks at once.
    steps = x[1:].reshape(n_blocks, block, n_states)
    current = starts
    for j in range(block):
        scale[:, j] = _step(
            transitions,
            current,
            factors[:, j],
            allowed[:, j],
            indices[:, j],
            steps[:, j],
        )
        current = steps[:, j]
    # The carried starts must agree with the step-by-step ends.
    carried, stepped = starts[1:], current[:-1]
    if not np.all(np.abs(carried - stepped) <= _CARRY_RTOL * stepped):
        raise ScaledChainUnderflow


def _anchor(vector):
    """A start or end vector at maximum one; underflow-prone ones are refused."""
    peak = vector.max()
    scaled = vector / peak if peak > 0 else vector
    if not peak > 0 or np.any((scaled > 0) & (scaled < _TINY)):
        raise ScaledChainUnderflow
    return scaled, float(np.log(peak))


def forward_backward(log_emission, peak, transition, actions, start, end_weights):
    """Scaled forward-backward of one segment with ``n_steps >= 1``.

    Parameters
    ----------
    log_emission : ndarray of shape (n_steps, K)
    peak : ndarray of shape (n_steps,)
        A finite maximum of each row of ``log_emission`` (0 if none).
    transition : ndarray of shape (D, K, K)
    actions : ndarray of int
    start : ndarray of shape (K,)
        Probabilities of ``y_0``.
    end_weights : ndarray of shape (K,) or None

    Returns
    -------
    marginals : ndarray of shape (n_steps, K)
    log_likelihood : float
        Relative to ``peak``: add ``peak.sum()``.

    Raises
    ------
    ScaledChainUnderflow
        If the evidence needs log space (or is impossible).
    """
    n_steps, n_states = log_emission.shape
    emission = np.exp(log_emission - peak[:, np.newaxis])
    allowed = log_emission > -np.inf
    start, log_start_scale = _anchor(start)
    transitions = _Transitions(transition)
    first = np.empty((1, n_states))
    everywhere = np.ones((1, n_states), dtype=bool)
    log_first = np.log(
        _step(transitions, start[np.newaxis], 1.0, everywhere, actions[0], first)[0]
    )
    # alpha[t - 1] = p(y_t, x_1..x_{t-1}) up to a scale: before emission t.
    alpha, log_scale = scaled_chain(
        first[0], emission[:-1], allowed[:-1], actions[1:n_steps], transition
    )
    if end_weights is None:
        end_message, log_end_scale = np.ones(n_states), 0.0
    else:
        end_message, log_end_scale = _anchor(transition[actions[-1]] @ end_weights)
    evidence = (alpha[-1] * emission[-1]) @ end_message
    if not evidence >= _TINY:
        raise ScaledChainUnderflow
    log_likelihood = (
        log_start_scale
        + log_first
        + float(log_scale.sum())
        + float(np.log(evidence))
        + log_end_scale
    )
    # beta[t - 1] = p(x_{t+1}..x_T, end | y_t) up to a scale, built backwards.
    beta, _ = scaled_chain(
        end_message,
        emission[:0:-1],
        allowed[:0:-1],
        actions[n_steps - 1 : 0 : -1],
        transition.transpose(0, 2, 1),
    )
    beta = beta[::-1]
    posterior = emission
    posterior *= alpha
    posterior *= beta
    # Rows whose every product underflowed (each factor is accurate) are
    # recomputed from logs.
    faint = np.flatnonzero(posterior.max(axis=1) < _TINY)
    if faint.size:
        with np.errstate(divide="ignore"):
            log_posterior = (
                np.log(alpha[faint])
                + (log_emission[faint] - peak[faint, np.newaxis])
                + np.log(beta[faint])
            )
        log_posterior -= log_posterior.max(axis=1, keepdims=True)
        posterior[faint] = np.exp(log_posterior)
    posterior /= posterior.sum(axis=1, keepdims=True)
    if not np.isfinite(posterior).all():
        raise ScaledChainUnderflow
    return posterior, log_likelihood
