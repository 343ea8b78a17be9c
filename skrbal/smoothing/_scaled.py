"""Scaled (probability-space) message passing, vectorised over blocks of steps.

A forward or backward pass is a chain ``x_s = (x_{s-1} * f_s) @ G[g_s]`` of
``K``-vectors: ``f_s`` are emission factors ``exp(log_emission - row max)`` in
``[0, 1]`` and ``G`` the (possibly transposed) transition matrices, one per
action. Each ``x_s`` is rescaled to a sum of one and the scales are kept in
log space (Rabiner's scaling), which is exact as long as no entry that the model
allows underflows.

The chain is cut into ``n_blocks`` blocks of ``block`` steps. The product of
each block's matrices is built one step at a time for all blocks at once
(a stack of ``K x K`` products), the block starts are then carried from block
to block (one small product per block), and finally every step is recomputed
from its block start, again for all blocks at once. The Python loops thus run
``~2 sqrt(n)`` times instead of ``n`` times.

The result is checked, not assumed. A state that the model allows (reachable
from the previous step's support, with a finite emission) but whose share falls
below ``_TINY`` is *flushed*: set to zero and recorded with a bound on what it
held. Every carried block start must equal the one recomputed step by step to
``_CARRY_RTOL`` (or differ by less than ``_TINY``, then flushed likewise). Once
both passes are done, the paths through every flushed node must carry less
than ``_NEGLIGIBLE_SHARE`` of the posterior at that step, which bounds what
the flushing changed. Long stretches in which a state's share decays below
``1e-290`` (a structure that stays failed for thousands of steps) thus stay on
this path; only evidence that really needs the range (a step that every
allowed state explains ``1e200`` times worse than an impossible one, paths
resurrected after ``1e290``-fold odds, impossible evidence) falls back to the
exact log-space recursion of :mod:`._log_space`.
"""

from __future__ import annotations

import functools

import numpy as np

# Smallest value an allowed entry may take before its relative precision is in
# doubt; the float64 normal range ends at 2.2e-308.
_TINY = 1e-290
# Smallest per-step normaliser (the emission probability of the step relative
# to the row maximum) for which the flushing bound above is useful.
_TINY_SCALE = 1e-200
# Block products are accurate to a few hundred ulps; an underflow inside one
# shows up as an error of many orders of magnitude.
_CARRY_RTOL = 1e-11
# Largest posterior share that the paths through one flushed node may carry.
_NEGLIGIBLE_SHARE = 1e-20


class ScaledChainUnderflow(Exception):
    """A scaled chain lost an allowed state to underflow (internal)."""


def row_sum(a):
    """Sums of the rows of a 2-d array (a matrix product: numpy's reductions
    over a short last axis cost far more per row)."""
    return a @ np.ones(a.shape[1])


def row_max(a):
    """Maxima of the rows of a 2-d array, one column at a time."""
    return functools.reduce(np.maximum, a.T) if a.shape[1] > 1 else a[:, 0].copy()


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
    """One normalised step for a stack of chains.

    Returns the scales and the flushed nodes ``(rows, states, bounds)``, or
    None: allowed states whose share fell below ``_TINY`` are set to zero, and
    ``bounds`` caps their true normalised value.
    """
    u = transitions.vector_product(x * factor, index)
    scale = row_sum(u)
    if not np.all(scale >= _TINY_SCALE):
        raise ScaledChainUnderflow
    flushed = None
    if u.min() < _TINY:
        small = u < _TINY
        rows = np.flatnonzero(small.any(axis=1))
        support = x[rows] > 0
        if allowed is not None:
            support &= allowed[rows]
        index_rows = index if np.ndim(index) == 0 else index[rows]
        hit = small[rows] & transitions.reachable(support, index_rows)
        if hit.any():
            row, state = np.nonzero(hit)
            row = rows[row]
            u[row, state] = 0.0
            flushed = (row, state, 2 * _TINY / scale[row])
    np.divide(u, scale[:, np.newaxis], out=out)
    return scale, flushed


def scaled_chain(first, factors, allowed, indices, matrices):
    """Normalised ``x_1..x_n`` of ``x_s = (x_{s-1} * f_s) @ G[g_s]``.

    Parameters
    ----------
    first : ndarray of shape (K,)
        ``x_1``, with entries at most one.
    factors : ndarray of shape (n - 1, K), or a list holding it
        ``f_2..f_n`` (a view is fine, also a reversed one). Given in a
        one-element list, the list is emptied and the array dropped once
        copied, so that the caller's memory can be freed early.
    allowed : ndarray of bool of shape (n - 1, K) or None
        Where ``f`` is structurally non-zero (finite log emission); None when
        it is everywhere.
    indices : ndarray of int of shape (n - 1,)
        ``g_2..g_n``.
    matrices : ndarray of shape (D, K, K)

    Returns
    -------
    x : ndarray of shape (n, K)
        Each row but the first with sum one.
    log_scale : ndarray of shape (n,)
        ``log`` of the factor each step was divided by (0 for ``x_1``).
    flushed : tuple of three ndarrays
        Rows of ``x``, states and bounds of the flushed nodes.

    Raises
    ------
    ScaledChainUnderflow
        If the chain needs log space.
    """
    if isinstance(factors, list):
        factors = factors.pop()
    n_links, n_states = factors.shape
    scale = np.ones(n_links + 1)
    transitions = _Transitions(matrices)
    block = block_size(n_links)
    n_blocks = n_links // block
    flushed = []
    done = n_blocks * block if n_blocks > 1 else 0
    if done:
        # Position-major copies: step j of every block is one contiguous
        # (n_blocks, K) slab, as the loops below visit them.
        def by_position(a, dtype=None):
            a = a[:done].reshape(n_blocks, block, *a.shape[1:])
            return np.ascontiguousarray(np.swapaxes(a, 0, 1), dtype=dtype)

        blocked_factors = by_position(factors)
        factors = factors[done:].copy()
        steps = _blocked(
            transitions,
            blocked_factors,
            None if allowed is None else by_position(allowed),
            by_position(indices, np.min_scalar_type(max(len(matrices) - 1, 0))),
            first,
            flushed,
            scale[1 : done + 1].reshape(n_blocks, block).T,
        )
        del blocked_factors  # now the memory of steps
    # Allocated only once the position-major inputs are freed: at most three
    # (n, K) arrays of a pass are alive at a time.
    x = np.empty((n_links + 1, n_states))
    x[0] = first
    if done:
        x[1 : done + 1].reshape(n_blocks, block, n_states)[...] = np.swapaxes(
            steps, 0, 1
        )
        del steps
    for s in range(done, n_links):
        scale[s + 1 : s + 2], flush = _step(
            transitions,
            x[s : s + 1],
            factors[s - done],
            None if allowed is None else allowed[s : s + 1],
            indices[s],
            x[s + 1 : s + 2],
        )
        if flush is not None:
            flushed.append((flush[0] + s + 1, flush[1], flush[2]))
    if flushed:
        flushed = tuple(np.concatenate(part) for part in zip(*flushed))
    else:
        flushed = (np.zeros(0, dtype=np.intp),) * 2 + (np.zeros(0),)
    return x, np.log(scale, out=scale), flushed


def _blocked(transitions, factors, allowed, indices, first, flushed, scale):
    """Steps ``x_2..`` of whole blocks, position-major, and their scales.

    ``factors`` and ``allowed`` have shape ``(block, n_blocks, K)`` and
    ``indices`` ``(block, n_blocks)``: entry ``[j, b]`` is step ``j`` of block
    ``b``, row ``1 + b * block + j`` of the chain. Returns ``x`` of the same
    layout (in the memory of ``factors``, which it overwrites); fills the
    scales into ``scale`` of shape ``(block, n_blocks)`` and appends flushed
    nodes (as chain rows) to ``flushed``.
    """
    block, n_blocks, n_states = factors.shape
    # 1. The product of each block's step matrices diag(f) G, kept at a
    #    sum of one (only its direction matters for the carry).
    product = factors[0, :, :, np.newaxis] * transitions.matrices[indices[0]]
    for j in range(1, block):
        product = transitions.matrix_product(
            product * factors[j, :, np.newaxis, :], indices[j]
        )
        total = row_sum(product.reshape(n_blocks, -1))
        if not np.all(total > 0):
            raise ScaledChainUnderflow
        product /= total[:, np.newaxis, np.newaxis]
    # 2. The start of each block carried over the previous blocks.
    starts = np.empty((n_blocks, n_states))
    starts[0] = first
    for b in range(1, n_blocks):
        carried = starts[b - 1] @ product[b - 1]
        total = carried.sum()
        if not total > 0:
            raise ScaledChainUnderflow
        starts[b] = carried / total
    # 3. Every step again from its block start, all blocks at once. Step j
    #    overwrites its factors, which nothing needs any more.
    steps = factors
    current = starts
    first_row = 1 + block * np.arange(n_blocks)
    for j in range(block):
        scale[j], flush = _step(
            transitions,
            current,
            factors[j],
            None if allowed is None else allowed[j],
            indices[j],
            steps[j],
        )
        if flush is not None:
            flushed.append((first_row[flush[0]] + j, flush[1], flush[2]))
        current = steps[j]
    # The carried starts must agree with the step-by-step ends, up to what
    # the step-by-step ends flushed.
    gap = np.abs(starts[1:] - current[:-1])
    off = gap > _CARRY_RTOL * current[:-1]
    if off.any():
        if not np.all(gap[off] < _TINY):
            raise ScaledChainUnderflow
        block_index, state = np.nonzero(off)
        flushed.append(
            (block * (block_index + 1), state, np.full(len(state), 2 * _TINY))
        )
    return steps


def _check_flushed(flushed, other, log_emission, peak, total):
    """The paths through each flushed node must carry a negligible share.

    A node ``(t, k)`` flushed from the forward messages held at most
    ``bound``; all paths through it weigh ``bound * e_t(k) * beta_t(k)``
    against the step's total ``total[t]`` (and symmetrically for a node
    flushed from the backward messages, with ``alpha``).
    """
    row, state, bound = flushed
    if not row.size:
        return
    emission = np.exp(log_emission[row, state] - peak[row])
    share = bound * emission * other[row, state] / total[row]
    if not np.all(share <= _NEGLIGIBLE_SHARE):
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
    emission = np.subtract(log_emission, peak[:, np.newaxis])
    np.exp(emission, out=emission)
    allowed = log_emission > -np.inf
    if allowed.all():
        allowed = None  # the common case: no emission rules a state out
    start, log_start_scale = _anchor(start)
    transitions = _Transitions(transition)
    first = np.empty((1, n_states))
    everywhere = np.ones((1, n_states), dtype=bool)
    scale_first, flushed_first = _step(
        transitions, start[np.newaxis], 1.0, everywhere, actions[0], first
    )
    if flushed_first is not None:
        raise ScaledChainUnderflow
    log_first = float(np.log(scale_first[0]))
    # alpha[t - 1] = p(y_t, x_1..x_{t-1}) up to a scale: before emission t.
    alpha, log_scale, flushed_alpha = scaled_chain(
        first[0],
        emission[:-1],
        None if allowed is None else allowed[:-1],
        actions[1:n_steps],
        transition,
    )
    if end_weights is None:
        end_message, log_end_scale = np.ones(n_states), 0.0
    else:
        end_message, log_end_scale = _anchor(transition[actions[-1]] @ end_weights)
    evidence = (alpha[-1] * emission[-1]) @ end_message
    backward_factors = [emission[:0:-1]]
    del emission  # freed by the backward pass once copied, then recomputed
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
    beta, _, flushed_beta = scaled_chain(
        end_message,
        backward_factors,
        None if allowed is None else allowed[:0:-1],
        actions[n_steps - 1 : 0 : -1],
        transition.transpose(0, 2, 1),
    )
    beta = beta[::-1]
    # Row s of the backward chain is beta of step n - s.
    row, state, bound = flushed_beta
    flushed_beta = (n_steps - 1 - row, state, bound)
    posterior = _posterior(log_emission, peak, alpha, beta, flushed_alpha, flushed_beta)
    return posterior, log_likelihood


def _posterior(log_emission, peak, alpha, beta, flushed_alpha, flushed_beta):
    """Marginals ``alpha * e * beta`` normalised per row, flushing checked."""
    posterior = np.subtract(log_emission, peak[:, np.newaxis])
    np.exp(posterior, out=posterior)
    posterior *= alpha
    posterior *= beta
    total = row_sum(posterior)
    # Against the raw totals: a flushed node on a row whose every product
    # underflowed is never negligible. The bound uses the other pass's
    # messages, exact only while that pass flushed nothing: a path through
    # nodes flushed from both passes would escape both checks.
    if flushed_alpha[0].size and flushed_beta[0].size:
        raise ScaledChainUnderflow
    for flushed, other in ((flushed_alpha, beta), (flushed_beta, alpha)):
        _check_flushed(flushed, other, log_emission, peak, total)
    # Rows whose every product underflowed (each factor is accurate) are
    # recomputed from logs.
    faint = np.flatnonzero(total < _TINY)
    if faint.size:
        with np.errstate(divide="ignore"):
            log_posterior = (
                np.log(alpha[faint])
                + (log_emission[faint] - peak[faint, np.newaxis])
                + np.log(beta[faint])
            )
        log_posterior -= log_posterior.max(axis=1, keepdims=True)
        posterior[faint] = np.exp(log_posterior)
        total[faint] = row_sum(posterior[faint])
    posterior /= total[:, np.newaxis]
    if not np.isfinite(posterior).all():
        raise ScaledChainUnderflow
    return posterior
