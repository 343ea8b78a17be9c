"""The directed prior components of a fitted mixture classifier.

A class with a ``class_priors`` statement has the prior
``w_b NIW_b + w_d sum_s pi_s NIW_s``: the broad component and the directed
one, itself a mixture over the statement's sizes (one component, the
stated size, unless the statement gives a ``size_factor``; see
:func:`~skrbal.mixture._class_priors.stated_sizes`). A mixture of conjugate
priors is conjugate: the posterior mixes the component posteriors with
weights updated by each one's marginal likelihood of the class's data (and,
for a checked statement, by the labels of the classes it says nothing
about, see :mod:`~skrbal.mixture._statement_check`), and the predictive is
a mixture of Student-t densities.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from skrbal.mixture._class_priors import (
    directed_niw,
    niw_log_marginal,
    stated_sizes,
    tied_log_weights,
)
from skrbal.mixture._niw import (
    _class_posterior,
    _log1p_mahalanobis,
    _map_covariances,
    _niw_merge,
    _NIWPrior,
)


def reference_moments(prior, stats, r: int):
    """Posterior mean and MAP covariance of class ``r`` under the broad prior."""
    _, mean_n, scale_n = _niw_merge(
        prior, stats.count.item(r), stats.mean[r], stats.scatter[r]
    )
    dof_n = prior.degrees_of_freedom + stats.count.item(r)
    return mean_n, _map_covariances(scale_n, dof_n)


class _Component(NamedTuple):
    """The directed components of one class: priors, posteriors, marginals.

    One row per size of the statement (see ``stated_sizes``).
    """

    priors: tuple  # (m, kappa, v, S) of each size's directed NIW
    broad: float  # log marginal likelihood of the class's data, broad prior
    directed: np.ndarray  # (S,) the same under each size's directed NIW
    log_size_prior: np.ndarray  # (S,) log prior probability of each size
    attributes: tuple  # _CLASS_ATTRIBUTES of each size's directed posterior

    @property
    def prior(self) -> tuple:
        """The stated size's directed NIW (the middle of the sizes)."""
        return self.priors[len(self.priors) // 2]

    @property
    def log_marginals(self) -> tuple:
        """``(broad, directed)`` log marginal likelihoods of the class's data."""
        return self.broad, float(logsumexp(self.log_size_prior + self.directed))

    @property
    def log_size_posterior(self) -> np.ndarray:
        """Log posterior probability of each size given the class's data."""
        joint = self.log_size_prior + self.directed
        return joint - logsumexp(joint)


def directed_priors(entry, reference_mean, reference_covariance) -> tuple:
    """The directed NIW of each of the entry's sizes, from the reference's moments."""
    return tuple(
        directed_niw(
            entry._replace(shift=entry.shift * size),
            reference_mean,
            reference_covariance,
        )
        for size in stated_sizes(entry)[0]
    )


def _component(prior, entry, priors, stats) -> _Component:
    k = entry.index
    count, mean, scatter = stats.count.item(k), stats.mean[k], stats.scatter[k]
    alpha = prior.concentration.item(k)
    kappa_b, _, scale_b = _niw_merge(prior, count, mean, scatter)
    broad = niw_log_marginal(
        prior.mean_precision,
        prior.degrees_of_freedom,
        prior.scale,
        count,
        kappa_b,
        prior.degrees_of_freedom + count,
        scale_b,
    )
    attributes, directed = [], []
    for hyper in priors:
        row = _class_posterior(
            _NIWPrior(*hyper, prior.concentration), count, mean, scatter, alpha
        )
        _, kappa_d, dof_d, scale_d = hyper
        # row: count, m_n, kappa_n, v_n, S_n, ...
        directed.append(
            niw_log_marginal(kappa_d, dof_d, scale_d, count, row[2], row[3], row[4])
        )
        attributes.append(row)
    return _Component(
        priors, broad, np.array(directed), stated_sizes(entry)[1], tuple(attributes)
    )


class DirectedComponents:
    """The directed prior components of a fitted mixture classifier.

    Holds, for every class with a directed prior, its directed NIW priors
    (computed from the reference class's statistics, one per size), the
    posterior weights of the broad and directed components and of the sizes,
    and the directed components' Student-t densities; the broad component is
    the class's ordinary posterior, kept by the classifier. Instances are
    not changed once built: an update builds a new one, so a failed update
    leaves the model as it was.
    """

    def __init__(self, prior, stats, reference, components=None, evidence=None):
        self.entries = prior.directed
        if components is None:
            components = tuple(
                _component(
                    prior,
                    entry,
                    directed_priors(
                        entry, *reference_moments(prior, reference, entry.reference)
                    ),
                    stats,
                )
                for entry in self.entries
            )
        self.components = components
        self.index = np.array([entry.index for entry in self.entries], dtype=np.intp)
        log_marginals = np.array([c.log_marginals for c in components]).reshape(-1, 2)
        if evidence is not None:
            # The unstated classes' labels (``_statement_check``).
            log_marginals = log_marginals + evidence
        self.evidence = evidence
        self.log_weights = tied_log_weights(self.entries, log_marginals)
        if self.entries:
            rows = [
                (j, attributes, log_size)
                for j, c in enumerate(components)
                for attributes, log_size in zip(c.attributes, c.log_size_posterior)
            ]
            self._row_entry = np.array([j for j, _, _ in rows], dtype=np.intp)
            self._one_row_each = len(rows) == len(components)
            self._means = np.array([a[1] for _, a, _ in rows])
            self._df = np.array([a[8] for _, a, _ in rows])
            self._whiteners = np.array([a[9] for _, a, _ in rows])
            log_w = self.log_weights
            self._log_broad = log_w[:, 0]
            self._offset = (
                np.array([a[10] + log_size for _, a, log_size in rows])
                + log_w[self._row_entry, 1]
            )

    def updated(self, prior, stats, present, evidence=None) -> DirectedComponents:
        """The components after the classes ``present`` received data.

        A class's component is recomputed when it or its reference class
        received data: a directed prior follows its reference as labels of
        the reference class arrive.
        """
        present = set(present.tolist())
        components = list(self.components)
        for j, entry in enumerate(self.entries):
            if entry.reference in present:
                priors = directed_priors(
                    entry, *reference_moments(prior, stats, entry.reference)
                )
            elif entry.index in present:
                priors = components[j].priors
            else:
                continue
            components[j] = _component(prior, entry, priors, stats)
        return DirectedComponents(prior, stats, stats, tuple(components), evidence)

    def mix(self, X, density, log_class_prior=None) -> None:
        """Replace the directed classes' rows of ``density`` by the mixtures.

        ``density`` (K, n) holds each class's broad Student-t log density
        (plus ``log_class_prior``); the directed classes' rows become
        ``log(w_b t_b(x) + w_d sum_s p_s t_s(x))`` (plus the class prior).
        """
        directed = _log1p_mahalanobis(X, self._means, self._whiteners, self._df)
        directed *= -0.5 * (self._df[:, None] + X.shape[1])
        offset = self._offset
        if log_class_prior is not None:
            offset = offset + log_class_prior[self.index[self._row_entry]]
        directed += offset[:, None]
        if not self._one_row_each:
            summed = np.full((len(self.entries), X.shape[0]), -np.inf)
            np.logaddexp.at(summed, self._row_entry, directed)
            directed = summed
        broad = density[self.index] + self._log_broad[:, None]
        density[self.index] = np.logaddexp(broad, directed)

    def store(self, model) -> None:
        """Write the directed classes' summaries into the fitted attributes.

        ``directed_prior_weight_`` and ``directed_mean_prior_`` (the stated
        size's); ``means_`` and ``covariances_`` of a directed class become
        the posterior means of the class mean and of the MAP covariance
        under the mixture.
        """
        n_classes, d = model.means_.shape
        weight = np.zeros(n_classes)
        mean_prior = np.full((n_classes, d), np.nan)
        for entry, component, log_w in zip(
            self.entries, self.components, self.log_weights
        ):
            k = entry.index
            w_d = float(np.exp(log_w[1]))
            weight[k] = w_d
            mean_prior[k] = component.prior[0]
            sizes = np.exp(component.log_size_posterior)
            directed_mean = sum(p * a[1] for p, a in zip(sizes, component.attributes))
            directed_cov = sum(p * a[7] for p, a in zip(sizes, component.attributes))
            model.means_[k] = (1 - w_d) * model.mean_posterior_[k] + w_d * directed_mean
            broad_cov = _map_covariances(
                model.covariance_posterior_[k], model.degrees_of_freedom_posterior_[k]
            )
            model.covariances_[k] = (1 - w_d) * broad_cov + w_d * directed_cov
        model.directed_prior_weight_ = weight
        model.directed_mean_prior_ = mean_prior
