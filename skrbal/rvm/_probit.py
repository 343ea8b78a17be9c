"""Expectations of the multinomial-probit model by Gauss-Hermite quadrature.

The multinomial-probit likelihood and the E-step of the multiclass relevance
vector machine both need one-dimensional expectations over ``u ~ N(0, 1)`` of
products of Gaussian CDFs::

    E_u[ prod_l Phi(u + c_l) ]

These are computed deterministically and vectorised over samples and classes
with *adaptive* Gauss-Hermite quadrature: the nodes are centred on the mode of
the integrand and scaled by its curvature, which keeps the rule accurate when
the offsets ``c_l`` are large (a confidently misclassified training point puts
almost all of the mass far in the tail of ``N(0, 1)``). Every product of
``Phi`` is accumulated as a sum of ``log Phi`` (:func:`scipy.special.log_ndtr`
in the far lower tail), and ratios
of two expectations are formed as differences of log-sum-exps, so neither
underflow nor ``0 / 0`` can occur.
"""

from functools import lru_cache

import numpy as np
from numpy.polynomial.hermite import hermgauss
from scipy.special import log_ndtr, ndtr

from skrbal._logspace import log_normalise, logsumexp, sum_leading

__all__ = [
    "batched_log_proba",
    "gauss_hermite_normal",
    "log_expected_cdf_product",
    "multinomial_probit_log_proba",
    "scores_for_proba",
    "truncated_probit_means",
]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
# Rows of scores per batch of batched_log_proba: the quadrature holds
# n_classes**2 * n_nodes floats per row. Batches of 2**16 floats (341 rows
# with 4 classes and 12 nodes) keep its (nodes x columns) temporaries just
# under 128 KiB, glibc's threshold for serving an allocation by mmap: larger
# ones are mapped and unmapped afresh at every operation, and their page
# faults cost a third of a 6000-row predict (19 ms in one batch, 14.6 ms in
# these). Rows are independent, so the batch size changes no result.
BATCH_FLOATS = 2**16
_LOG_SQRT_PI = 0.5 * np.log(np.pi)
_MAX_NEWTON = 50
# Below this ndtr loses relative precision on its way to underflow (about -38).
_TAIL = -30.0
_NEWTON_TOL = 1e-3


def _log_normal_pdf(z):
    """``log phi(z)`` as ``-0.5 * z * z - log(sqrt(2 pi))``, in one new array."""
    out = np.multiply(z, -0.5)
    out *= z
    out -= _LOG_SQRT_2PI
    return out


@lru_cache(maxsize=16)
def _hermite_rule(n_nodes):
    x, w = hermgauss(n_nodes)
    x.setflags(write=False)
    log_w = np.log(w)
    log_w.setflags(write=False)
    return x, log_w


def gauss_hermite_normal(n_nodes):
    """Nodes and log-weights for expectations under a standard normal.

    ``E[g(u)] ~ sum_q exp(log_weights[q]) g(nodes[q])`` for ``u ~ N(0, 1)``.
    Physicists' Hermite rules integrate against ``exp(-x**2)``; the change of
    variable ``u = sqrt(2) x`` and the factor ``1 / sqrt(pi)`` turn them into a
    rule for the standard normal density.

    Parameters
    ----------
    n_nodes : int
        Number of quadrature nodes; the rule is exact for polynomials of
        degree up to ``2 * n_nodes - 1``.

    Returns
    -------
    nodes : ndarray of shape (n_nodes,)
        Abscissae ``u_q``.
    log_weights : ndarray of shape (n_nodes,)
        Logarithms of the weights; the weights sum to one.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._probit import gauss_hermite_normal
    >>> nodes, log_weights = gauss_hermite_normal(10)
    >>> weights = np.exp(log_weights)
    >>> round(float(weights.sum()), 12), round(float(weights @ nodes**2), 12)
    (1.0, 1.0)
    """
    x, log_w = _hermite_rule(int(n_nodes))
    return np.sqrt(2.0) * x, log_w - _LOG_SQRT_PI


def _log_cdf(z):
    """``log Phi(z)``: ``log(ndtr)`` (several times faster than ``log_ndtr``,
    and accurate while ``ndtr`` keeps its relative precision), with
    ``log_ndtr`` for the far lower tail where ``ndtr`` underflows."""
    out = ndtr(z)
    tail = z < _TAIL
    if not tail.any():
        # ndtr(z) >= 5e-198 here: no log of zero (and no errstate to enter).
        return np.log(out, out=out)
    with np.errstate(divide="ignore"):
        np.log(out, out=out)
    out[tail] = log_ndtr(z[tail])
    return out


def _inverse_mills(z):
    """``phi(z) / Phi(z)``, finite for every finite ``z``."""
    out = _log_normal_pdf(z)
    out -= _log_cdf(z)
    return np.exp(out, out=out)


def _integrand_mode(offsets):
    """Mode and curvature of ``h(u) = sum_l log Phi(u + c_l) - u**2 / 2``.

    ``offsets`` has shape ``(L, m)``, one column per integrand: laid out so,
    every operation over the ``L`` terms is one vectorised pass. ``h`` is
    strictly concave with ``-L - 1 < h'' < -1``; its derivative is convex and
    decreasing, so Newton's method converges monotonically after the first
    step from any start. Each column stops on its own, so that its result
    does not depend on the other columns of the batch, and the columns that
    stopped leave the arrays. The curvature of a column's last step serves:
    its mode moved by less than the tolerance, and the rule needs its scale
    only roughly.
    """
    n_columns = offsets.shape[1]
    if not n_columns:
        return np.zeros(0), np.ones(0)
    mode = np.zeros(n_columns)
    curvature = np.ones(n_columns)
    going = None  # the columns still iterating, when not all of them
    u, c = mode, offsets
    for _ in range(_MAX_NEWTON):
        z = u + c
        lam = _inverse_mills(z)
        grad = sum_leading(lam)
        grad -= u
        # lam * (z + lam) lies in (0, 1); clip the rounding of the far tail.
        z += lam
        z *= lam
        np.minimum(z, 1.0, out=z)
        np.maximum(z, 0.0, out=z)
        curv = sum_leading(z)
        curv += 1.0
        step = grad / curv
        u = u + step
        moving = np.abs(step) >= _NEWTON_TOL
        n_moving = np.count_nonzero(moving)
        if n_moving == moving.size:
            continue
        if going is None:
            going = np.arange(n_columns)
        mode[going] = u
        curvature[going] = curv
        if not n_moving:
            return mode, curvature
        going, u, c = going[moving], u[moving], c[:, moving]
    if going is None:
        return u, curv
    mode[going] = u
    curvature[going] = curv
    return mode, curvature


def _adaptive_rule(offsets, n_nodes):
    """Nodes and log-weights adapted to ``E_u[prod_l Phi(u + offsets_l)]``.

    ``offsets`` has shape ``(L, m)``. Returns ``nodes`` and ``log_weights``
    of shape ``(n_nodes, m)`` such that, for a smooth ``g``,
    ``E_u[g(u) prod_l Phi(u + c_l)] ~ sum_q exp(log_weights_q) g(u_q)
    prod_l Phi(u_q + c_l)``.
    """
    x, log_w = _hermite_rule(int(n_nodes))
    x, log_w = x[:, None], log_w[:, None]
    mode, curv = _integrand_mode(offsets)
    scale = 1.0 / np.sqrt(curv)
    nodes = mode + np.sqrt(2.0) * scale * x
    # u = mode + sqrt(2) * scale * x turns the N(0, 1) density into
    # exp(-x**2) * exp(x**2 - u**2 / 2) * scale / sqrt(pi).
    log_weights = log_w + x * x - 0.5 * nodes * nodes + np.log(scale) - _LOG_SQRT_PI
    return nodes, log_weights


def _quadrature(offsets, n_nodes):
    """Nodes ``z = u_q + c_l`` of shape ``(Q, L, m)``, their ``log Phi`` and
    the log-weights ``(Q, m)`` of the adaptive rule for ``offsets (L, m)``."""
    nodes, log_weights = _adaptive_rule(offsets, n_nodes)
    z = nodes[:, None, :] + offsets
    return z, _log_cdf(z), log_weights


def _log_expectation(offsets, n_nodes):
    """``log E_u[prod_l Phi(u + c_l)]`` for ``offsets (L, m)``; shape ``(m,)``."""
    _, log_cdf, log_weights = _quadrature(offsets, n_nodes)
    log_weights += log_cdf.sum(axis=1)
    return logsumexp(log_weights, axis=0)


def log_expected_cdf_product(offsets, n_nodes=20):
    """Logarithm of ``E_u[prod_l Phi(u + offsets[..., l])]`` for ``u ~ N(0, 1)``.

    Parameters
    ----------
    offsets : array-like of shape (..., n_terms)
        Offsets ``c_l``; the expectation is taken independently for every
        leading index.
    n_nodes : int, default=20
        Number of Gauss-Hermite nodes of the adaptive rule.

    Returns
    -------
    log_expectation : ndarray of shape offsets.shape[:-1]
        The logarithm of the expectation, accurate also when it underflows in
        linear scale.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import log_ndtr, ndtr
    >>> from skrbal.rvm._probit import log_expected_cdf_product
    >>> a = np.array([[-30.0], [0.0], [2.0]])
    >>> bool(np.allclose(log_expected_cdf_product(a), log_ndtr(a[:, 0] / np.sqrt(2))))
    True
    """
    offsets = np.asarray(offsets, dtype=float)
    if offsets.ndim == 0:
        raise ValueError("offsets must have at least one dimension (the terms).")
    columns = np.ascontiguousarray(offsets.reshape(-1, offsets.shape[-1]).T)
    return _log_expectation(columns, n_nodes).reshape(offsets.shape[:-1])


def _off_diagonal(scores):
    """``scores[:, k] - scores[:, j]`` for every ``j != k``, as columns.

    Returns shape ``(K - 1, n * K)``: column ``i * K + k`` holds the offsets
    of class ``k`` of sample ``i``, in the order of ``j``.
    """
    n_samples, n_classes = scores.shape
    diff = scores[:, :, None] - scores[:, None, :]
    keep = ~np.eye(n_classes, dtype=bool)
    offsets = diff[:, keep].reshape(n_samples * n_classes, n_classes - 1)
    return np.ascontiguousarray(offsets.T)


def _checked_scores(scores):
    """``scores`` as a float array of shape (n_samples, n_classes >= 2)."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError(
            "scores must have shape (n_samples, n_classes) with n_classes >= 2, "
            f"got shape {scores.shape}."
        )
    return scores


def multinomial_probit_log_proba(scores, n_nodes=20):
    """Log-probabilities of the multinomial-probit likelihood.

    For auxiliary scores ``f ~ N(scores, I)`` and label ``argmax_k f_k``::

        P(y = k) = E_u[ prod_{j != k} Phi(u + scores_k - scores_j) ]

    The rows are renormalised in log space, so ``exp`` of every row sums to
    one exactly (the quadrature alone sums to one up to its rounding).

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_classes)
        Means of the auxiliary scores, ``n_classes >= 2``.
    n_nodes : int, default=20
        Number of Gauss-Hermite nodes.

    Returns
    -------
    log_proba : ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._probit import multinomial_probit_log_proba
    >>> proba = np.exp(multinomial_probit_log_proba([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]))
    >>> np.round(proba, 3)
    array([[0.333, 0.333, 0.333],
           [0.969, 0.016, 0.016]])
    """
    scores = _checked_scores(scores)
    if scores.shape[1] == 2:
        # E_u[Phi(u + d)] = Phi(d / sqrt(2)): the quadrature's limit, exactly.
        half = (scores[:, 1] - scores[:, 0]) / np.sqrt(2.0)
        log_lik = np.column_stack([log_ndtr(-half), log_ndtr(half)])
    else:
        log_lik = _log_expectation(_off_diagonal(scores), n_nodes)
        log_lik = log_lik.reshape(scores.shape)
    return log_normalise(log_lik, axis=1)


def batched_log_proba(scores, n_nodes=20):
    """:func:`multinomial_probit_log_proba` over batches of rows.

    The same numbers (same parameters and return value), in bounded memory:
    at most ``BATCH_FLOATS`` floats of quadrature at a time, whatever the
    number of rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._probit import batched_log_proba
    >>> scores = np.array([[3.0, 0.0, 0.0]] * 1000)
    >>> np.round(np.exp(batched_log_proba(scores, 12))[-1], 3)
    array([0.969, 0.016, 0.016])
    """
    n_classes = scores.shape[1]
    log_proba = np.empty_like(scores, dtype=float)
    batch = max(1, BATCH_FLOATS // (n_classes * n_classes * n_nodes))
    for start in range(0, scores.shape[0], batch):
        rows = slice(start, start + batch)
        log_proba[rows] = multinomial_probit_log_proba(scores[rows], n_nodes)
    return log_proba


def _truncation_shift(offsets, n_nodes):
    """``E_u[phi(u + c_k) prod_{l != k} Phi(u + c_l)] / E_u[prod_l Phi(u + c_l)]``.

    ``offsets`` has shape (n, L); the result too. With one term (two classes)
    the ratio has the closed form ``phi(c / sqrt(2)) / (sqrt(2) Phi(c / sqrt(2)))``,
    the value the quadrature converges to.
    """
    if offsets.shape[1] == 1:
        half = offsets / np.sqrt(2.0)
        return np.exp(_log_normal_pdf(half) - 0.5 * np.log(2.0) - log_ndtr(half))
    z, log_cdf, log_joint = _quadrature(np.ascontiguousarray(offsets.T), n_nodes)
    log_joint += log_cdf.sum(axis=1)
    log_den = logsumexp(log_joint, axis=0)
    # The numerator swaps Phi(z_k) for phi(z_k) inside the product.
    log_terms = log_joint[:, None, :] - log_cdf
    log_terms += _log_normal_pdf(z)
    log_num = logsumexp(log_terms, axis=0)
    log_num -= log_den
    # Row-major, as the caller sums each row (NumPy's order depends on it).
    return np.ascontiguousarray(np.exp(log_num, out=log_num).T)


def truncated_probit_means(scores, y, n_nodes=20):
    """Posterior means of the auxiliary scores given the labels (the E-step).

    Each row ``f_i ~ N(scores_i, I)`` is truncated to the cone where the
    score of the observed class ``j = y_i`` is the largest. With offsets
    ``c_l = scores_ij - scores_il`` the means are, for ``k != j``::

        E[f_ik] = scores_ik - E_u[phi(u + c_k) prod_{l != j, k} Phi(u + c_l)]
                              / E_u[prod_{l != j} Phi(u + c_l)]

    and for the observed class
    ``E[f_ij] = scores_ij - sum_{k != j} (E[f_ik] - scores_ik)``.

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_classes)
        Current means ``W^T k(x_i)`` of the auxiliary scores.
    y : array-like of shape (n_samples,)
        Observed class of each row as an integer index into the columns.
    n_nodes : int, default=20
        Number of Gauss-Hermite nodes.

    Returns
    -------
    means : ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._probit import truncated_probit_means
    >>> np.round(truncated_probit_means([[0.0, 0.0]], [1]), 4)
    array([[-0.5642,  0.5642]])
    """
    scores = _checked_scores(scores)
    y = np.asarray(y)
    n_samples, n_classes = scores.shape
    if y.shape != (n_samples,) or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"y must be {n_samples} integer class indices.")
    if n_samples and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"y must index the {n_classes} columns of scores.")

    # Column indices of the classes other than the observed one, per row.
    others = np.arange(n_classes - 1) + (np.arange(n_classes - 1) >= y[:, None])
    observed = np.take_along_axis(scores, y[:, None], axis=1)
    offsets = observed - np.take_along_axis(scores, others, axis=1)

    shift = _truncation_shift(offsets, n_nodes)

    rows = np.arange(n_samples)
    means = scores.copy()
    means[rows[:, None], others] -= shift
    means[rows, y] += shift.sum(axis=1)
    return means


def scores_for_proba(proba, n_nodes=20, tol=1e-10, max_iter=100):
    """Scores whose multinomial-probit probabilities are ``proba``.

    The inverse of :func:`multinomial_probit_log_proba` for one row: returns
    ``f`` of shape ``(K,)``, centred (``f.mean() == 0``), with
    ``exp(multinomial_probit_log_proba(f[None])) == proba`` to ``tol`` in log
    space. Every entry of ``proba`` must be positive. Solved by Newton's
    method on ``log p(f) - log proba`` with the Jacobian by central
    differences (``K`` is small: one per health state); ``K - 1`` scores are
    free, the last is fixed by the centring.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._probit import multinomial_probit_log_proba
    >>> f = scores_for_proba(np.array([0.7, 0.2, 0.1]))
    >>> np.exp(multinomial_probit_log_proba(f[None])).round(6)
    array([[0.7, 0.2, 0.1]])
    """
    proba = np.asarray(proba, dtype=float)
    target = np.log(proba / proba.sum())
    n_classes = target.size

    def residual(free):
        scores = np.append(free, 0.0)
        log_p = multinomial_probit_log_proba(scores[None], n_nodes)[0]
        return (log_p - target)[:-1]

    # Start from the scores whose differences match the log-odds, then Newton.
    free = target[:-1] - target[-1]
    step = 1e-5
    for _ in range(max_iter):
        r = residual(free)
        if np.max(np.abs(r)) < tol:
            break
        jacobian = np.empty((n_classes - 1, n_classes - 1))
        for j in range(n_classes - 1):
            delta = np.zeros(n_classes - 1)
            delta[j] = step
            jacobian[:, j] = (residual(free + delta) - residual(free - delta)) / (
                2 * step
            )
        update = np.linalg.solve(jacobian, r)
        # Halve a step that would move any score by more than 2 (the log-odds
        # start can be far off for extreme probabilities).
        scale = min(1.0, 2.0 / max(np.max(np.abs(update)), 1e-300))
        free = free - scale * update
    scores = np.append(free, 0.0)
    return scores - scores.mean()
