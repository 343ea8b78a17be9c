"""Viterbi decoding vectorised over blocks of steps (max-plus algebra).

The score recursion ``s_t(j) = max_i (s_{t-1}(i) + log P(j | i, d)) + e_t(j)``
is a chain of max-plus matrix-vector products. As in :mod:`._scaled`, the chain
is cut into blocks: the max-plus product of each block's step matrices is built
for all blocks at once, block starts are carried from block to block, and then
every step is recomputed from its block start for all blocks at once, keeping
its back-pointers and, per block, the block-start state from which each state's
best path came. The path is then traced back block by block (one lookup per
block) and inside all blocks at once.

Scores stay exact to rounding: only sums and maxima of log probabilities,
shifted to a maximum of zero at every step. Carried block starts must match the
step-by-step ones to ``_CARRY_ATOL``; log emissions whose spread within a row
exceeds ``_MAX_SPREAD`` (where sums over a block would lose that accuracy) and
impossible evidence go to the step-by-step recursion of :mod:`._log_space`,
which checks every choice against its rounding errors.
"""

from __future__ import annotations

import numpy as np

from skrbal.smoothing._scaled import block_size, row_max

_CARRY_ATOL = 1e-9
_MAX_SPREAD = 1e4


class MaxPlusFallback(Exception):
    """The blocked decoding cannot vouch for its result (internal)."""


def _max_plus_vector(x, log_matrices):
    """``max_i x[b, i] + M[b, i, j]`` and its arg-max (first on ties).

    One state ``i`` at a time: numpy's reductions over a short axis cost far
    more than a few whole-array maxima.
    """
    best = x[:, 0, np.newaxis] + log_matrices[:, 0, :]
    pointer = np.zeros(best.shape, dtype=np.intp)
    for i in range(1, x.shape[1]):
        candidate = x[:, i, np.newaxis] + log_matrices[:, i, :]
        better = candidate > best
        np.copyto(best, candidate, where=better)
        pointer[better] = i
    return best, pointer


def _shift(x):
    peak = row_max(x)
    if not np.all(peak > -np.inf):
        raise MaxPlusFallback
    x -= peak[:, np.newaxis]


def viterbi(first, log_emission, log_transition, actions, log_end_message):
    """Most probable path given the score of step 1.

    Parameters
    ----------
    first : ndarray of shape (K,)
        Score of hidden step 1 (``y_0`` summed out, emission 1 included).
    log_emission : ndarray of shape (n_steps, K)
        Relative to each row's maximum.
    log_transition : ndarray of shape (D, K, K)
    actions : ndarray of int
    log_end_message : ndarray of shape (K,)

    Returns
    -------
    path : ndarray of int of shape (n_steps,)

    Raises
    ------
    MaxPlusFallback
        If the step-by-step recursion must decide.
    """
    n_steps = log_emission.shape[0]
    finite = log_emission[log_emission > -np.inf]
    if finite.size and finite.min() < -_MAX_SPREAD:
        raise MaxPlusFallback
    n_links = n_steps - 1
    block = block_size(n_links)
    n_blocks = n_links // block if n_links // block > 1 else 0
    done = n_blocks * block

    # Chain row r + 1 comes from row r through transition actions[r + 1] and
    # emission row r + 1.
    def by_position(a):
        a = a[:done].reshape(n_blocks, block, *a.shape[1:])
        return np.ascontiguousarray(np.swapaxes(a, 0, 1))

    current = first[np.newaxis].copy()
    _shift(current)
    pointers, origin_of_end, starts = None, None, None
    if done:
        emissions = by_position(log_emission[1:])
        indices = by_position(actions[1:n_steps])
        starts = _carried_starts(current[0], emissions, indices, log_transition)
        pointers, origin_of_end, stepped_end = _expand(
            starts, emissions, indices, log_transition
        )
        current = stepped_end[-1:]
    tail = []
    for r in range(done, n_links):
        best, pointer = _max_plus_vector(
            current, log_transition[actions[r + 1]][np.newaxis]
        )
        current = best + log_emission[r + 1]
        _shift(current)
        tail.append(pointer[0])
    final = current[0] + log_end_message
    path = np.empty(n_steps, dtype=np.intp)
    path[-1] = int(final.argmax())
    if not final[path[-1]] > -np.inf:
        raise MaxPlusFallback
    for r in range(n_links, done, -1):
        path[r - 1] = tail[r - 1 - done][path[r]]
    if done:
        _trace_blocks(path, pointers, origin_of_end, block)
    return path


def _carried_starts(first, emissions, indices, log_transition):
    """Max-plus block products, then each block's start carried over them."""
    block, n_blocks, n_states = emissions.shape
    product = log_transition[indices[0]] + emissions[0][:, np.newaxis, :]
    for j in range(1, block):
        terms = (
            product[:, :, :, np.newaxis]
            + log_transition[indices[j]][:, np.newaxis, :, :]
        )
        product = terms.max(axis=2) + emissions[j][:, np.newaxis, :]
        peak = product.reshape(n_blocks, -1).max(axis=1)
        if not np.all(peak > -np.inf):
            raise MaxPlusFallback
        product -= peak[:, np.newaxis, np.newaxis]
    starts = np.empty((n_blocks, n_states))
    starts[0] = first
    for b in range(1, n_blocks):
        carried = (starts[b - 1][:, np.newaxis] + product[b - 1]).max(axis=0)
        peak = carried.max()
        if not peak > -np.inf:
            raise MaxPlusFallback
        starts[b] = carried - peak
    return starts


def _expand(starts, emissions, indices, log_transition):
    """Every step from its block start: back-pointers, block-start origins."""
    block, n_blocks, n_states = emissions.shape
    pointers = np.empty((block, n_blocks, n_states), dtype=np.intp)
    origin = np.broadcast_to(np.arange(n_states), (n_blocks, n_states))
    current = starts
    for j in range(block):
        best, pointers[j] = _max_plus_vector(current, log_transition[indices[j]])
        current = best + emissions[j]
        origin = np.take_along_axis(origin, pointers[j], axis=1)
    _shift(current)
    # The carried starts must match the step-by-step ends.
    carried, stepped = starts[1:], current[:-1]
    same_support = np.array_equal(carried > -np.inf, stepped > -np.inf)
    finite = stepped > -np.inf
    if not same_support or np.any(
        np.abs(carried[finite] - stepped[finite]) > _CARRY_ATOL
    ):
        raise MaxPlusFallback
    return pointers, origin, current


def _trace_blocks(path, pointers, origin, block):
    """Fill ``path[: n_blocks * block + 1]`` given the state after the blocks.

    Chain row ``1 + b * block + j`` is step ``j`` of block ``b``; row
    ``b * block`` is the start of block ``b``.
    """
    n_blocks = pointers.shape[1]
    states = np.empty((block + 1, n_blocks), dtype=np.intp)
    # The state at the end of each block, from the last block backwards.
    end = path[n_blocks * block]
    for b in range(n_blocks - 1, -1, -1):
        states[block, b] = end
        end = origin[b, end]
    blocks = np.arange(n_blocks)
    for j in range(block - 1, -1, -1):
        states[j, :] = pointers[j, blocks, states[j + 1, :]]
    path[0] = states[0, 0]
    path[1 : n_blocks * block + 1] = states[1:].T.reshape(-1)
