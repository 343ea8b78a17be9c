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
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(shifted, out=shifted).sum(axis=axis, keepdims=True))
    out += top
    return out if keepdims else np.squeeze(out, axis=axis)


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
    with np.errstate(divide="ignore"):
        norm = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
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
