"""The two prior components of a pooled class: marginals and Student-t factors.

Each class of :class:`~skrbal.mixture.PooledGMMClassifier` has the fleet's
NIW prior and the broad one; these helpers give a component's log marginal
likelihood and its stacked posterior predictive Student-t.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from skrbal.mixture._class_priors import niw_log_marginal
from skrbal.mixture._niw import _log1p_mahalanobis, _niw_merge, _NIWPrior


class Weights(NamedTuple):
    """Prior log probabilities of the fleet's and the broad component."""

    log_weight: float
    log_defensive: float


class Components(NamedTuple):
    """Predictive Student-t factors of one component, one row per class."""

    means: np.ndarray
    whiteners: np.ndarray
    df: np.ndarray
    log_norm: np.ndarray
    dof: np.ndarray
    mean_precision: np.ndarray
    scale: np.ndarray


def log_marginal(prior: _NIWPrior, count, mean, scatter) -> float:
    """Log marginal likelihood of one class's data under one NIW prior."""
    if count <= 0:
        return 0.0
    kappa_n, _, scale_n = _niw_merge(prior, count, mean, scatter)
    return niw_log_marginal(
        prior.mean_precision,
        prior.degrees_of_freedom,
        prior.scale,
        count,
        kappa_n,
        prior.degrees_of_freedom + count,
        scale_n,
    )


def stacked(rows) -> Components:
    """The Student-t factors of ``_class_posterior`` rows, stacked."""
    columns = list(zip(*rows))
    return Components(
        means=np.array(columns[1]),
        whiteners=np.array(columns[9]),
        df=np.array(columns[8]),
        log_norm=np.array(columns[10]),
        dof=np.array(columns[3]),
        mean_precision=np.array(columns[2]),
        scale=np.array(columns[4]),
    )


def student_t(Z: np.ndarray, t: Components) -> np.ndarray:
    """Log Student-t density of every sample under every row of ``t``, (K, n)."""
    density = _log1p_mahalanobis(Z, t.means, t.whiteners, t.df)
    density *= -0.5 * (t.df[:, None] + Z.shape[1])
    density += t.log_norm[:, None]
    return density
