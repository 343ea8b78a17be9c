"""The other classes' labels as evidence about a directed class prior.

A statement of where a never-labelled state lies (``class_priors``) can be
told right from wrong before the state is ever labelled: where it puts the
state, the samples the learner inspects keep turning out to be of other
classes. The prequential likelihood of those labels, each predicted from
the samples before it with the class's predictive taken as the broad or as
the directed component, weighs the two components (see
:class:`~skrbal.mixture._class_priors.DirectedComponents`).
"""

from __future__ import annotations

from math import pi

import numpy as np
from scipy.special import gammaln


def _student_t_log_density(x, mean, kappa, dof, scale) -> np.ndarray:
    """NIW posterior predictive log density at ``x``, for stacks of posteriors.

    ``x`` (..., D), ``mean`` (..., D), ``kappa`` and ``dof`` (...), ``scale``
    (..., D, D): the Student-t with ``v - D + 1`` degrees of freedom and
    shape ``(kappa + 1) / (kappa (v - D + 1)) S``.
    """
    d = x.shape[-1]
    df = dof - d + 1
    shape = ((kappa + 1) / (kappa * df))[..., None, None] * scale
    chol = np.linalg.cholesky(shape)
    z = np.linalg.solve(chol, (x - mean)[..., None])[..., 0]
    half_log_det = np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    return (
        gammaln(0.5 * (df + d))
        - gammaln(0.5 * df)
        - 0.5 * d * np.log(df * pi)
        - half_log_det
        - 0.5 * (df + d) * np.log1p((z * z).sum(axis=-1) / df)
    )


def _niw_posteriors(m0, kappa0, dof0, scale0, count, mean, scatter):
    """NIW posteriors ``(m, kappa, v, S)`` of stacks of weighted statistics."""
    kappa = kappa0 + count
    diff = mean - m0
    m = (kappa0[..., None] * m0 + count[..., None] * mean) / kappa[..., None]
    shrink = (kappa0 * count / kappa)[..., None, None]
    scale = scale0 + scatter + shrink * diff[..., :, None] * diff[..., None, :]
    return m, kappa, dof0 + count, scale


def prequential_other_labels(prior, X, y_idx, weight) -> np.ndarray:
    """Prequential log likelihood of the other classes' labels, per component.

    For every directed class ``j`` and each of its two components (broad,
    directed), ``sum_{i: y_i != j} w_i log p(y_i | x_i, D_<i)``: each
    labelled sample's label predicted from the samples before it (their
    order is the order they were learnt in), with class ``j``'s predictive
    the component's alone; another directed class's predictive is its two
    components mixed with their prior weights. Only the normaliser
    ``log sum_k p(y=k | D_<i) p(x_i | k, D_<i)`` differs between the two
    components, so the rest cancels and is left out. Exact and vectorised:
    the statistics before every sample are cumulative sums (taken about the
    first sample, for accuracy), every posterior is conjugate.

    Returns an array of shape (J, 2), rows in the order of ``prior.directed``.
    """
    n, d = X.shape
    n_classes = prior.concentration.shape[0]
    z = X - X[0]
    w = weight[:, None] * (y_idx[:, None] == np.arange(n_classes))  # (n, K)
    # Statistics of the samples before each one: exclusive cumulative sums.
    count = np.cumsum(w, axis=0) - w
    first = (
        np.cumsum(w[:, :, None] * z[:, None, :], axis=0) - w[:, :, None] * z[:, None, :]
    )
    outer = z[:, :, None] * z[:, None, :]
    second = np.cumsum(w[:, :, None, None] * outer[:, None], axis=0)
    second -= w[:, :, None, None] * outer[:, None]
    safe = np.where(count > 0, count, 1.0)
    centred = first / safe[:, :, None]
    scatter = second - count[:, :, None, None] * (
        centred[:, :, :, None] * centred[:, :, None, :]
    )
    mean = centred + X[0]
    kappa0 = np.full(count.shape, float(prior.mean_precision))
    broad = _niw_posteriors(
        prior.mean, kappa0, prior.degrees_of_freedom, prior.scale, count, mean, scatter
    )
    density = _student_t_log_density(X[:, None, :], *broad)  # (n, K)
    alpha = prior.concentration + count
    density += np.log(alpha) - np.log(alpha.sum(axis=1, keepdims=True))
    stated = np.empty((len(prior.directed), n))
    for j, entry in enumerate(prior.directed):
        r, k = entry.reference, entry.index
        m_r, _, dof_r, scale_r = (part[:, r] for part in broad)
        cov = scale_r / (dof_r + d + 2)[:, None, None]
        if entry.units == "std":
            step = entry.shift * np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
        elif entry.units == "relative":
            step = entry.shift * np.abs(m_r)
        else:
            step = entry.shift
        dof = (
            float(d + 2)
            if entry.degrees_of_freedom is None
            else (entry.degrees_of_freedom)
        )
        divisor = dof - d - 1 if dof > d + 1 else dof + d + 1
        posterior = _niw_posteriors(
            m_r + step,
            np.full(n, entry.mean_precision),
            dof,
            divisor * cov,
            count[:, k],
            mean[:, k],
            scatter[:, k],
        )
        stated[j] = _student_t_log_density(X, *posterior) + (
            density[:, k] - _student_t_log_density(X, *(part[:, k] for part in broad))
        )
    mixed = density.copy()
    for j, entry in enumerate(prior.directed):
        k = entry.index
        mixed[:, k] = np.logaddexp(
            entry.log_defensive + density[:, k], entry.log_weight + stated[j]
        )
    scores = np.empty((len(prior.directed), 2))
    for j, entry in enumerate(prior.directed):
        k = entry.index
        others = weight * (y_idx != k)
        rest = np.delete(mixed, k, axis=1)
        top = rest.max(axis=1)
        rest = top + np.log(np.exp(rest - top[:, None]).sum(axis=1))
        scores[j, 0] = -(others @ np.logaddexp(rest, density[:, k]))
        scores[j, 1] = -(others @ np.logaddexp(rest, stated[j]))
    return scores
