"""Labels of the unstated classes as evidence about a directed class prior.

A statement (``class_priors``) says where a never-labelled state lies
relative to a reference class. Before that state is labelled, its own data
cannot tell a right statement from a wrong one, but the labels of the other
states can: a statement that puts damage where the frost is sends the
learner to inspect the frost, and each inspection finds a healthy (cold)
state exactly where the statement said damage would be. Under the statement
that label was the less expected; under the broad prior, which puts the
state nowhere in particular, it was not.

The evidence is a composite (pairwise) conditional likelihood, prequential
and exact: for every labelled sample ``i`` of a class ``j`` that the user
made no statement about and that is not the statement's reference, the
probability that ``x_i`` came from ``j`` rather than from the stated class
``k``, each predicted from the samples learnt before it, with even odds
between the two classes::

    log p_j(x_i | D_<i) - log(p_j(x_i | D_<i) + p_k^c(x_i | D_<i))

for each component ``c`` (broad, directed) of ``k``; the directed
component's weight is multiplied by the ratio of the two, where it is below
one. Only where it is below one: a label can show that the state is not
where the statement puts it, but not where it is, and above one the ratio
measures nothing but the broad prior's indifference between two classes
that have no labels yet (with neither labelled, the broad prior gives the
label even odds, the statement, if it puts the state elsewhere, certainty),
which would make a statement more confident, and a misplaced one slower to
give way to the state's own data, for every new healthy state found away
from it. Even odds, not the
Dirichlet class weights: the statement is a claim about where the state
lies, not about how often the learner labelled it, and with the weights a
never-labelled state's share of a few percent makes every label nearly
uninformative. The reference class is left out because its samples place
the directed component (its mean moves with them), so scoring them would
count them twice; the classes with a statement of their own are left out
because two stated states may lie together (e.g. "damaged" and "severe"
stated with one shift), where the check would count one against the
other. The evidence adds to each component's marginal likelihood of the
class's own data (see :class:`~skrbal.mixture._class_priors.DirectedComponents`).
"""

from __future__ import annotations

from math import pi

import numpy as np
from scipy.special import gammaln, logsumexp

from skrbal.mixture._class_priors import niw_log_marginal, stated_sizes
from skrbal.mixture._niw import _merge

__all__ = ["other_label_evidence"]

# Bounds of the directed component's mean precision when the statement does
# not give one (the same as ``_class_priors.stated_mean_precision``).
_LOOSEST = 0.1
_TIGHTEST = 1.0


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
    """NIW posteriors ``(m, kappa, v, S)`` of stacks of weighted statistics:
    the prior's pseudo-observations merged with the data (``_niw._merge``)."""
    kappa, m, scale = _merge(kappa0, m0, scale0, count, mean, scatter)
    return m, kappa, dof0 + count, scale


def _statistics_before(X, y_idx, weight, n_classes):
    """Each class's ``(count, mean, scatter)`` over the samples before each one.

    Exclusive cumulative sums, taken about the first sample for accuracy;
    shapes (n, K), (n, K, D), (n, K, D, D).
    """
    z = X - X[0]
    w = weight[:, None] * (y_idx[:, None] == np.arange(n_classes))  # (n, K)
    count = np.cumsum(w, axis=0) - w
    wz = w[:, :, None] * z[:, None, :]
    first = np.cumsum(wz, axis=0) - wz
    wzz = wz[:, :, :, None] * z[:, None, None, :]
    second = np.cumsum(wzz, axis=0) - wzz
    safe = np.where(count > 0, count, 1.0)
    centred = first / safe[:, :, None]
    scatter = second - count[:, :, None, None] * (
        centred[:, :, :, None] * centred[:, :, None, :]
    )
    return count, centred + X[0], scatter


def _directed_prior(entry, mean_r, dof_r, scale_r):
    """The directed NIW ``(m, kappa, v, S)`` before each sample, shape (n, ...).

    As ``_class_priors.directed_niw`` from the reference's posterior mean
    and MAP covariance at every step.
    """
    d = mean_r.shape[-1]
    cov = scale_r / (dof_r + d + 2)[:, None, None]
    if entry.units == "std":
        step = entry.shift * np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
    elif entry.units == "relative":
        step = entry.shift * np.abs(mean_r)
    else:
        step = np.broadcast_to(entry.shift, mean_r.shape)
    dof = float(d + 2) if entry.degrees_of_freedom is None else entry.degrees_of_freedom
    divisor = dof - d - 1 if dof > d + 1 else dof + d + 1
    if entry.mean_precision is None:
        distance = np.einsum(
            "ni,ni->n", step, np.linalg.solve(cov, step[..., None])[..., 0]
        )
        kappa = np.where(
            distance > 1.0 / _TIGHTEST,
            np.maximum(1.0 / np.where(distance > 0, distance, 1.0), _LOOSEST),
            _TIGHTEST,
        )
    else:
        kappa = np.full(mean_r.shape[0], entry.mean_precision)
    return mean_r + step, kappa, dof, divisor * cov


def _sizes_log_density(entry, X, reference, data) -> np.ndarray:
    """The directed predictive of the entry's class at each sample, shape (n,).

    ``reference`` ``(mean, dof, scale)`` is the reference class's broad
    posterior before each sample, ``data`` ``(count, mean, scatter)`` the
    class's own statistics; with several sizes (``size_factor``) their
    Student-t densities are mixed with the sizes' posterior weights given
    the class's data.
    """
    sizes, log_size_prior = stated_sizes(entry)
    densities, marginals = [], []
    for size in sizes:
        hyper = _directed_prior(entry._replace(shift=entry.shift * size), *reference)
        posterior = _niw_posteriors(*hyper, *data)
        densities.append(_student_t_log_density(X, *posterior))
        if sizes.size > 1:
            _, kappa0, dof0, scale0 = hyper
            _, kappa_n, dof_n, scale_n = posterior
            marginals.append(
                niw_log_marginal(kappa0, dof0, scale0, data[0], kappa_n, dof_n, scale_n)
            )
    if sizes.size == 1:
        return densities[0]
    joint = np.array(marginals) + log_size_prior[:, None]  # (S, n)
    log_size = joint - logsumexp(joint, axis=0)
    return logsumexp(log_size + np.array(densities), axis=0)


def other_label_evidence(prior, X, y_idx, weight) -> np.ndarray:
    """Log evidence of the unstated classes' labels for each directed entry.

    For every entry of ``prior.directed`` with ``check`` set, the sum over
    the labelled samples of the classes without a statement, other than the
    entry's reference, of ``w_i min(0, l_i^d - l_i^b)`` with
    ``l_i^c = log p_j(x_i) - log(p_j(x_i) + p_k^c(x_i))`` for the broad
    (``b``) and directed (``d``) component of the entry's class ``k``, every
    predictive from the samples before ``i`` (in the order given, the order
    they were learnt in). It is added to the directed component's log
    marginal likelihood (column 1; column 0, the broad one's, stays 0).
    Entries without ``check`` get zeros.

    Parameters
    ----------
    prior : _NIWPrior
        The model's prior, with its validated directed entries (references
        resolved).
    X : ndarray of shape (n, D)
        The labelled samples, in the order they were learnt.
    y_idx : ndarray of shape (n,)
        Their class indices.
    weight : ndarray of shape (n,)
        Their sample weights.

    Returns
    -------
    evidence : ndarray of shape (len(prior.directed), 2)
        ``(broad, directed)`` log evidence per entry.
    """
    entries = prior.directed
    evidence = np.zeros((len(entries), 2))
    if not any(entry.check for entry in entries) or X.shape[0] == 0:
        return evidence
    n_classes = prior.concentration.shape[0]
    stated = np.zeros(n_classes, dtype=bool)
    stated[[entry.index for entry in entries]] = True
    count, mean, scatter = _statistics_before(X, y_idx, weight, n_classes)
    kappa0 = np.full(count.shape, float(prior.mean_precision))
    broad = _niw_posteriors(
        prior.mean, kappa0, prior.degrees_of_freedom, prior.scale, count, mean, scatter
    )
    # Each class's broad predictive at each sample, from the samples before it.
    density = _student_t_log_density(X[:, None, :], *broad)  # (n, K)
    own = density[np.arange(X.shape[0]), y_idx]
    for j, entry in enumerate(entries):
        if not entry.check:
            continue
        k, r = entry.index, entry.reference
        scored = ~stated[y_idx] & (y_idx != r) & (weight > 0)
        if not scored.any():
            continue
        m_r, _, dof_r, scale_r = (part[scored, r] for part in broad)
        data = count[scored, k], mean[scored, k], scatter[scored, k]
        directed = _sizes_log_density(entry, X[scored], (m_r, dof_r, scale_r), data)
        label = own[scored]
        broad_term = label - np.logaddexp(label, density[scored, k])
        directed_term = label - np.logaddexp(label, directed)
        # Refutation only: a label counts against the statement where it was
        # less expected under it, never for it (see the module docstring).
        evidence[j, 1] = weight[scored] @ np.minimum(directed_term - broad_term, 0.0)
    return evidence
