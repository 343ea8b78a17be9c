"""Log-space normalisation shared by every module that sums probabilities.

One implementation of the max-shifted log-sum-exp, for the mixture
classifiers, the probit quadrature, the smoothing recursions and
``predict_proba``. It is a plain NumPy reduction, several times faster than
:func:`scipy.special.logsumexp` on the arrays skrbal sums (few classes or
states, many samples; see ``benchmarks/bench_logspace.py``), and, like it,
gives ``-inf`` (not NaN) for a slice whose terms are all ``-inf``.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []  # private helpers; import them by name


def _shifted(a, axis: int):
    """``a - max(a)`` along ``axis`` and that max, with non-finite maxima shifted by 0.

    A slice whose maximum is ``-inf`` (every term impossible) or ``+inf``
    would give ``-inf - -inf = NaN``; shifting it by zero keeps ``-inf`` and
    ``+inf`` as they are.
    """
    a = np.asarray(a, dtype=float)
    top = np.max(a, axis=axis, keepdims=True)
    if not np.isfinite(top).all():
        top = np.where(np.isfinite(top), top, 0.0)
    return a - top, top


def logsumexp(a, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """``log(sum(exp(a), axis))`` without overflow or underflow.

    Parameters
    ----------
    a : array-like
        Log-domain terms; ``-inf`` is a term of probability zero.
    axis : int, default=-1
        Axis to sum over.
    keepdims : bool, default=False
        Keep the summed axis with length one.

    Returns
    -------
    out : ndarray
        ``-inf`` where every term is ``-inf``; NaN where a term is NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._logspace import logsumexp
    >>> logsumexp(np.array([[1000.0, 1000.0], [-np.inf, -np.inf]]), axis=1)
    array([1000.69314718,         -inf])
    """
    shifted, top = _shifted(a, axis)
    np.exp(shifted, out=shifted)
    if axis == 0 and shifted.ndim > 1:
        total = sum_leading(shifted)[None]
    else:
        total = shifted.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        out = np.log(total)
    out += top
    return out if keepdims else np.squeeze(out, axis=axis)


# NumPy sums a contiguous run of up to this many terms in one pairwise block
# (numpy/_core/src/umath/loops_utils.h.src, PW_BLOCKSIZE) and splits longer ones.
_PAIRWISE_BLOCK = 128


def sum_leading(a) -> np.ndarray:
    """``a.sum(axis=0)``, adding the terms in the order NumPy adds a row.

    NumPy sums along the last axis of a contiguous array pairwise (eight
    running partial sums) but along the leading axis term by term, so the
    two layouts of the same numbers can differ in the last bit. This sums
    the leading axis (each addition one vectorised pass over the trailing
    axes, far faster than reducing many short rows) in the last-axis order,
    so that a kernel can lay its terms out either way and give the same bits.

    Parameters
    ----------
    a : ndarray of shape (n_terms, ...)
        Terms along the leading axis (at least one).

    Returns
    -------
    total : ndarray of shape a.shape[1:]

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._logspace import sum_leading
    >>> rows = np.random.default_rng(0).normal(size=(1000, 12))
    >>> bool(np.array_equal(sum_leading(rows.T), rows.sum(axis=1)))
    True
    """
    return _pairwise(a, 0, a.shape[0])


def _pairwise(a, start, n):
    """NumPy's pairwise summation of ``a[start:start + n]`` along axis 0."""
    if n < 8:
        total = a[start] + a[start + 1] if n > 1 else a[start].copy()
        for i in range(start + 2, start + n):
            total += a[i]
        return total
    if n > _PAIRWISE_BLOCK:
        half = n // 2
        half -= half % 8
        return _pairwise(a, start, half) + _pairwise(a, start + half, n - half)
    partial = a[start : start + 8].copy()
    whole = n - n % 8
    for i in range(start + 8, start + whole, 8):
        partial += a[i : i + 8]
    total = (partial[0] + partial[1]) + (partial[2] + partial[3])
    total += (partial[4] + partial[5]) + (partial[6] + partial[7])
    for i in range(start + whole, start + n):
        total += a[i]
    return total


def log_normalise(a, axis: int = -1) -> np.ndarray:
    """``a - logsumexp(a, axis)``: log probabilities from log weights.

    Parameters
    ----------
    a : array-like
        Unnormalised log weights (a joint log likelihood).
    axis : int, default=-1
        Axis along which the result sums to one in the probability domain.

    Returns
    -------
    log_proba : ndarray of the shape of ``a``

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._logspace import log_normalise
    >>> np.exp(log_normalise(np.array([[-800.0, -800.0 + np.log(3.0)]])))
    array([[0.25, 0.75]])
    """
    shifted, _ = _shifted(a, axis)
    # The largest term of a slice with a finite maximum is exp(0) = 1: leave
    # it out of the sum and take log1p. log(1 + small) would round ``small``
    # to the spacing of 1, and with it the log probability of a dominant
    # class (-small) to about three digits. Other slices (all -inf, an inf,
    # a NaN) keep the log of the full sum.
    peak = np.argmax(shifted, axis=axis, keepdims=True)
    peak_value = np.take_along_axis(shifted, peak, axis=axis)
    regular = peak_value == 0.0
    terms = np.exp(shifted)
    np.put_along_axis(
        terms, peak, np.where(regular, 0.0, np.exp(peak_value)), axis=axis
    )
    total = terms.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        norm = np.where(regular, np.log1p(total), np.log(total))
    shifted -= norm
    return shifted


def exp_normalise(a, axis: int = -1) -> np.ndarray:
    """``exp(log_normalise(a, axis))`` with one exponential pass (a softmax).

    Parameters
    ----------
    a : array-like
        Unnormalised log weights.
    axis : int, default=-1
        Axis along which the result sums to one.

    Returns
    -------
    proba : ndarray of the shape of ``a``

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._logspace import exp_normalise
    >>> exp_normalise(np.array([[-800.0, -800.0 + np.log(3.0)]]), axis=1)
    array([[0.25, 0.75]])
    """
    proba, _ = _shifted(a, axis)
    np.exp(proba, out=proba)
    proba /= proba.sum(axis=axis, keepdims=True)
    return proba
