"""Normal-inverse-Wishart conjugate maths shared by the mixture classifiers.

Weighted sufficient statistics of each class, their exact merge, the NIW
posterior they give, and the Cholesky-based pieces the Student-t and Gaussian
densities are evaluated with.
"""

from __future__ import annotations

from math import fsum, isfinite, lgamma, log, pi
from typing import NamedTuple

import numpy as np
from scipy.linalg.lapack import dpotrf, dtrtri

# The Student-t kernels live with the numpy-only predictive (issue 28.25);
# the mixture modules import them from here under their old names.
from skrbal._predictive import log1p_mahalanobis as _log1p_mahalanobis  # noqa: F401
from skrbal._predictive import (  # noqa: F401
    squared_mahalanobis as _squared_mahalanobis,
)


class _NIWPrior(NamedTuple):
    """Validated hyperparameters of the NIW prior and the Dirichlet prior."""

    mean: np.ndarray  # m0, (D,)
    mean_precision: float  # kappa0
    degrees_of_freedom: float  # v0
    scale: np.ndarray  # S0, (D, D)
    concentration: np.ndarray  # alpha_k of the Dirichlet, one per class
    warnings: tuple = ()  # warnings raised when it was validated
    directed: tuple = ()  # _DirectedPrior of the classes with a directed prior


class _Statistics(NamedTuple):
    """Weighted sufficient statistics of each class.

    ``mean`` is the weighted sample mean (zero for an empty class) and
    ``scatter`` the weighted scatter about it; together with ``count`` they
    determine ``sum w x`` and ``sum w x x^T`` without the cancellation of the
    uncentred form.
    """

    count: np.ndarray  # (K,)
    mean: np.ndarray  # (K, D)
    scatter: np.ndarray  # (K, D, D)


def _empty_statistics(n_classes: int, n_features: int) -> _Statistics:
    return _Statistics(
        np.zeros(n_classes),
        np.zeros((n_classes, n_features)),
        np.zeros((n_classes, n_features, n_features)),
    )


def _fill_class_statistics(stats: _Statistics, k: int, X, weight) -> None:
    """Write the statistics of class ``k`` from samples with positive weights."""
    count = weight.sum()
    mean = (weight @ X) / count
    centred = X - mean
    # A spread beyond double precision overflows here; the caller checks the
    # statistics and names the problem, so numpy's own warning is only noise.
    with np.errstate(over="ignore", invalid="ignore"):
        scatter = (centred.T * weight) @ centred
    stats.count[k] = count
    stats.mean[k] = mean
    # Halve before adding: a scatter near the float limit must not overflow
    # on its way to being symmetrised (0.5 * a is exact).
    stats.scatter[k] = 0.5 * scatter + 0.5 * scatter.T


def _weighted_statistics(X: np.ndarray, weights: np.ndarray) -> _Statistics:
    """Sufficient statistics of ``X`` under soft per-class weights.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    weights : ndarray of shape (n_samples, n_classes)
        Non-negative weight of each sample in each class (responsibilities).

    Returns
    -------
    statistics : _Statistics
    """
    stats = _empty_statistics(weights.shape[1], X.shape[1])
    for k in range(weights.shape[1]):
        weight = weights[:, k]
        rows = weight > 0
        if not rows.any():
            continue
        if rows.all():
            _fill_class_statistics(stats, k, X, weight)
        else:
            _fill_class_statistics(stats, k, X[rows], weight[rows])
    return stats


def _present_statistics(
    X: np.ndarray, y_idx: np.ndarray, weight: np.ndarray
) -> tuple[np.ndarray, _Statistics]:
    """The classes with positive weight in a labelled batch, and their statistics.

    Returns the sorted class indices present and a ``_Statistics`` with one row
    per class present, so an update costs the classes in the batch only.
    """
    if X.shape[0] == 1:
        # The streaming case: one sample is its own mean and has no scatter,
        # which the general grouping below would take several times the whole
        # update to find out.
        if weight[0] > 0:
            return y_idx, _Statistics(weight, X, np.zeros((1, X.shape[1], X.shape[1])))
        return y_idx[:0], _empty_statistics(0, X.shape[1])
    present = np.flatnonzero(np.bincount(y_idx, weights=weight))
    stats = _empty_statistics(len(present), X.shape[1])
    positive = weight > 0
    for row, k in enumerate(present):
        members = (y_idx == k) & positive
        _fill_class_statistics(stats, row, X[members], weight[members])
    return present, stats


def _labelled_statistics(
    X: np.ndarray, y_idx: np.ndarray, weight: np.ndarray, n_classes: int
) -> _Statistics:
    """Sufficient statistics of labelled samples with sample weights, every class."""
    present, found = _present_statistics(X, y_idx, weight)
    stats = _empty_statistics(n_classes, X.shape[1])
    for field, values in zip(stats, found):
        field[present] = values
    return stats


def _sample_statistics(X: np.ndarray, weight: np.ndarray | None = None) -> _Statistics:
    """Statistics of all the samples of ``X`` as one class (weights default to 1)."""
    weight = np.ones(X.shape[0]) if weight is None else weight
    return _labelled_statistics(X, np.zeros(X.shape[0], dtype=np.intp), weight, 1)


def _pooled_moments(stats: _Statistics) -> tuple[float, np.ndarray, np.ndarray]:
    """Total weight, mean and per-feature variance of the classes pooled.

    The moments of the union of the classes' samples, from their statistics:
    the variance adds the spread of the class means about the pooled mean to
    the scatter within the classes. An empty set gives zero mean and variance.
    """
    total = float(stats.count.sum())
    if total <= 0:
        zeros = np.zeros(stats.mean.shape[-1])
        return 0.0, zeros, zeros.copy()
    mean = (stats.count @ stats.mean) / total
    within = np.diagonal(stats.scatter, axis1=1, axis2=2).sum(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):  # checked by the caller
        between = stats.count @ (stats.mean - mean) ** 2
    return total, mean, (within + between) / total


def _merge(count_a, mean_a, scatter_a, count_b, mean_b, scatter_b):
    """Count, mean and scatter of the union of two weighted data sets.

    The pairwise update of Chan, Golub and LeVeque, for one class (float
    counts, as in a streaming update) or for a stack of any shape (count
    arrays of shape ``S``, means ``S + (D,)``, scatters ``S + (D, D)``, each
    broadcast against the other side's). It is also the conjugate NIW
    update: the prior is ``kappa0`` pseudo-observations at ``m0`` with
    scatter ``S0``, and merging the data into it gives ``kappa_n``, ``m_n``
    and ``S_n`` (see ``_niw_posterior``).
    """
    count = count_a + count_b
    delta = mean_b - mean_a
    # Data beyond double precision overflow here to inf; the posterior's
    # Cholesky factor (_cholesky_factor) names that, with the fix.
    with np.errstate(over="ignore", invalid="ignore"):
        if isinstance(count, np.ndarray):
            share = np.divide(count_b, count, out=np.zeros_like(count), where=count > 0)
            cross = (count_a * share)[..., None, None]
            share = share[..., None]
            outer = delta[..., :, None] * delta[..., None, :]
        else:
            share = count_b / count if count > 0 else 0.0
            cross = count_a * share  # n_a n_b / (n_a + n_b)
            outer = np.multiply.outer(delta, delta)
        scatter = scatter_a + scatter_b
        # Exactly symmetric, as the product is formed before the scaling.
        scatter += cross * outer
        return count, mean_a + share * delta, scatter


def _merge_statistics(a: _Statistics, b: _Statistics) -> _Statistics:
    """Statistics of the union of two weighted data sets, class by class."""
    return _Statistics(*_merge(*a, *b))


def _niw_merge(prior: _NIWPrior, count, mean, scatter):
    """``(kappa_n, m_n, S_n)``: data of one class, or a stack, merged into the prior."""
    return _merge(prior.mean_precision, prior.mean, prior.scale, count, mean, scatter)


def _niw_posterior(stats: _Statistics, prior: _NIWPrior):
    """Posterior NIW hyperparameters ``(m_n, kappa_n, v_n, S_n)`` of each class.

    ``S_n = S0 + sum w x x^T + kappa0 m0 m0^T - kappa_n m_n m_n^T`` comes in
    its centred, cancellation-free form
    ``S0 + scatter + kappa0 N / (kappa0 + N) (xbar - m0)(xbar - m0)^T``,
    which is ``_merge`` of the prior's pseudo-observations with the data.
    """
    kappa_n, mean_n, scale_n = _niw_merge(prior, *stats)
    return mean_n, kappa_n, prior.degrees_of_freedom + stats.count, scale_n


def _map_covariances(scale_n: np.ndarray, dof_n) -> np.ndarray:
    """Joint NIW posterior mode of the covariances, ``S_n / (v_n + D + 2)``.

    For one class (``scale_n`` of shape (D, D), ``dof_n`` a float) or a stack.
    """
    divisor = dof_n + scale_n.shape[-1] + 2
    if isinstance(divisor, np.ndarray):
        divisor = divisor[:, None, None]
    return scale_n / divisor


def _half_log_det(cholesky: np.ndarray):
    """``0.5 log|L L^T|`` of a Cholesky factor (a float) or of each of a stack."""
    if cholesky.ndim == 3:
        return np.array([_half_log_det(factor) for factor in cholesky])
    # Python floats: a NumPy reduction costs more than the sum of a few logs.
    return fsum(map(log, cholesky.diagonal().tolist()))


# The factorisations call LAPACK directly: for the small matrix of one class,
# np.linalg's per-call overhead (type checks, an errstate context) is several
# times the work, and it dominated a one-sample partial_fit.
def _cholesky_factor(matrix: np.ndarray, what: str) -> np.ndarray:
    """Lower Cholesky factor of a symmetric positive-definite matrix."""
    factor, info = dpotrf(matrix, lower=1)
    if info:
        if not np.isfinite(matrix).all():
            raise _overflow_error(what)
        raise ValueError(
            f"{what} is not positive definite; increase covariance_prior or check "
            "the features for constant or duplicated columns."
        )
    return factor


def _overflow_error(what: str) -> ValueError:
    return ValueError(
        f"{what} overflows double precision: the spread of a class's training "
        "samples is too large to represent (squared feature values above about "
        "1.8e308); rescale X, e.g. with StandardScaler."
    )


def _cholesky(matrices: np.ndarray, what: str) -> np.ndarray:
    """Lower Cholesky factor of each matrix of a stack."""
    return np.array([_cholesky_factor(matrix, what) for matrix in matrices])


def _whitener(cholesky: np.ndarray) -> np.ndarray:
    """``W = L^{-T}`` so that ``||(x - m) W||^2`` is the Mahalanobis form."""
    # A Cholesky factor has a positive diagonal, so the inverse exists.
    inverse, _ = dtrtri(cholesky, lower=1)
    return inverse.T


def _whiteners(cholesky: np.ndarray) -> np.ndarray:
    """``W_k = L_k^{-T}`` of each factor of a stack."""
    return np.array([_whitener(factor) for factor in cholesky])


# The fitted attributes with one entry per class, in the order of
# _class_posterior's result.
_CLASS_ATTRIBUTES = (
    "class_count_",
    "mean_posterior_",
    "mean_precision_posterior_",
    "degrees_of_freedom_posterior_",
    "covariance_posterior_",
    "weight_concentration_",
    "means_",
    "covariances_",
    "_t_df",
    "_t_whiteners",
    "_t_log_norm",
)


def _class_posterior(prior: _NIWPrior, count, mean, scatter, concentration) -> tuple:
    """The ``_CLASS_ATTRIBUTES`` of one class from its statistics.

    ``prior`` gives the NIW hyperparameters (its ``concentration`` is not
    used: the class's own ``alpha_k`` is ``concentration``).

    The posterior predictive is a Student-t with ``df = v_n - D + 1`` degrees
    of freedom, location ``m_n`` and scale ``(kappa_n + 1) / (kappa_n df) S_n``.
    A class is handled on its own, its scalars as Python floats, because an
    update refreshes only the classes of its batch, and for one small class
    the cost is the number of NumPy calls, not their size.
    """
    d = mean.shape[0]
    kappa_n, mean_n, scale_n = _niw_merge(prior, count, mean, scatter)
    dof_n = prior.degrees_of_freedom + count
    df = dof_n - d + 1
    cholesky = _cholesky_factor(
        (kappa_n + 1) / (kappa_n * df) * scale_n,
        "the posterior predictive scale matrix",
    )
    log_norm = (
        lgamma(0.5 * (df + d))
        - lgamma(0.5 * df)
        - 0.5 * d * log(df * pi)
        - _half_log_det(cholesky)
    )
    if not isfinite(log_norm):  # an infinite scale with a "valid" factor
        raise _overflow_error("the posterior predictive scale matrix")
    return (
        count,
        mean_n,
        kappa_n,
        dof_n,
        scale_n,
        concentration + count,
        mean_n,
        _map_covariances(scale_n, dof_n),
        df,
        _whitener(cholesky),
        log_norm,
    )
