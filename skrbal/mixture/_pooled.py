"""A structure's classifier that starts from what its fleet knows.

Each class has a mixture of two conjugate normal-inverse-Wishart priors in
the structure's normalised feature space (its features standardised by its
own commissioning window): the fleet's prior for the class
(:class:`~skrbal.mixture.FleetPrior`, learned from the other structures) and
the broad prior the structure would have alone. The weight of the fleet's
component, the transfer strength, is updated by each component's marginal
likelihood of the class's data beyond the commissioning window (a partial
Bayes factor: the window sets the normalisation, so it is the training
sample, not evidence), so a structure whose labels are unlike the fleet's
falls back to its own data. The structure's unlabelled steps (``-1``) shape
its healthy class (see :mod:`skrbal.mixture._pooled_unlabelled`).
"""

from __future__ import annotations

import warnings
from math import fsum, log, log1p
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from skrbal._labels import UNLABELLED, split_unlabelled
from skrbal._logspace import logsumexp
from skrbal.exceptions import UnlabelledClassesWarning, caller_stacklevel
from skrbal.mixture._base import _JointLikelihoodClassifier
from skrbal.mixture._class_priors import (
    component_log_weights,
    validate_concentration,
)
from skrbal.mixture._fleet_prior import commissioning_window, normaliser
from skrbal.mixture._gmm import _as_classes, _label_indices, _sample_weight
from skrbal.mixture._niw import (
    _class_posterior,
    _empty_statistics,
    _labelled_statistics,
    _merge,
    _NIWPrior,
    _present_statistics,
    _sample_statistics,
)
from skrbal.mixture._pooled_components import (
    Weights,
    log_marginal,
    stacked,
    student_t,
)
from skrbal.mixture._pooled_unlabelled import UnlabelledStream

__all__ = ["PooledGMMClassifier"]

# Passes that find the reference class's responsibility for the unlabelled
# samples: the first from the labelled model, the second from the model that
# the first pass's weights shaped (which gives the stream's outliers, such as
# an undetected damage, less weight than the round labelled model did).
_UNLABELLED_PASSES = 2


class PooledGMMClassifier(_JointLikelihoodClassifier):
    """Bayesian Gaussian classes that borrow strength from a fleet of structures.

    A new structure commissioned on healthy data knows nothing of its damage
    states; its fleet does. This classifier standardises the structure's
    features by its own commissioning window (the mean and standard deviation
    of its first ``window`` samples of the reference class, the healthy one),
    where similar structures look alike, and gives each class a mixture of
    two normal-inverse-Wishart priors: the fleet's empirical-Bayes prior for
    the class (``fleet``, a :class:`~skrbal.mixture.FleetPrior` learned from
    the other structures' labels) with prior probability ``transfer_prior``,
    and the broad prior of :class:`~skrbal.mixture.BayesianGMMClassifier`
    (mean 0, unit scale) with the rest. A mixture of conjugate priors is
    conjugate: the posterior mixes the two NIW posteriors, each component's
    weight (the transfer strength, ``transfer_weight_``) updated by its
    marginal likelihood of the class's labels beyond the commissioning
    window, and the predictive is a mixture of two Student-t densities. A
    structure whose labels are unlike the fleet's falls back to its own data
    and the broad prior; without a ``fleet`` the model is
    :class:`~skrbal.mixture.BayesianGMMClassifier` on the window-standardised
    features. ``partial_fit`` is exact.

    The structure's unlabelled steps, marked ``-1`` in ``y`` as in
    :mod:`sklearn.semi_supervised` (the stream learner and the agent pass
    them with ``semi_supervised='em'``), shape the reference class: a window
    of a few days shows one season of the healthy state, the stream shows
    all of them and how narrow the state is across them. They join the
    reference class's statistics weighted by its responsibility for them
    (two fixed passes from the labelled model, so that an outlier of the
    stream, such as damage not yet found, gets little weight), and so also
    weigh the fleet's healthy state against the broad prior. The class prior
    counts the labels only.

    Parameters
    ----------
    fleet : FleetPrior, default=None
        What the other structures know, in their own normalised spaces. Its
        ``window`` and ``reference_class`` must be this classifier's. A class
        that fewer than two structures labelled has the broad prior alone.
        ``None``: the structure learns alone.
    transfer_prior : float, default=0.9
        Prior probability, in (0, 1), that a class of this structure is as
        the fleet's; the broad prior keeps the rest, so that a structure
        unlike the fleet can still find its states.
    reference_class : label, default=None
        The class whose commissioning window normalises the features.
        ``None``: the fleet's, or without a fleet the class with the most
        labelled samples when the model is started.
    window : int, default=50
        Number of samples of the reference class (the first given, counted
        by their weights) whose mean and standard deviation normalise the
        features. A feature constant in the window (or a window of one
        sample) keeps its scale; without any sample of the reference class
        the features are not moved.
    mean_precision_prior : float, default=1.0
        ``kappa0`` of the broad prior.
    degrees_of_freedom_prior : float, default=None
        ``v0`` of the broad prior; ``None`` is ``n_features``.
    weight_concentration_prior : float, dict or array-like, default=1.0
        Dirichlet prior on the class weights, as for
        :class:`~skrbal.mixture.BayesianGMMClassifier`.
    classes : array-like of shape (n_classes,), default=None
        The full label set (``fit`` then accepts data holding only some).
    unlabelled_weight : float, default=0.02
        Weight, in (0, 1], of an unlabelled sample relative to a label: the
        steps of a stream are not independent (an hour is much like the
        next), so a count of them overstates what they show. With 1, a
        healthy class learned from the stream so far asked an inspection at
        every season it had not seen yet (``benchmarks/bench_fleet.py``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of training samples of each class.
    weight_concentration_ : ndarray of shape (n_classes,)
        Posterior Dirichlet concentration of the class weights (the prior's
        plus ``class_count_``): the class prior is its normalisation. A
        learner's ``history_prior`` replaces it by the process's prediction.
    transfer_weight_ : ndarray of shape (n_classes,)
        Posterior probability of the fleet's component of each class (0 for
        a class without a fleet prior).
    means_ : ndarray of shape (n_classes, n_features)
        Posterior mean of each class mean, in the features' own units.
    reference_class_ : label
        The class that normalised the features.
    normaliser_mean_ : ndarray of shape (n_features,)
        Mean of the commissioning window.
    normaliser_scale_ : ndarray of shape (n_features,)
        Standard deviation of the commissioning window.
    window_size_ : int
        Number of samples in the commissioning window (at most ``window``).
    unlabelled_count_ : float
        Total weight of the unlabelled samples given to the reference class.
    unlabelled_classes_ : ndarray
        Classes without a labelled sample of this structure yet.
    fit_warnings_ : list of Warning
        The :class:`~skrbal.exceptions.UnlabelledClassesWarning` raised when
        the model was started, if any.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    FleetPrior : The fleet's prior, learned from the other structures.
    BayesianGMMClassifier : The same classes learned alone.

    Notes
    -----
    With ``W`` the window's samples and ``A`` all of a class's samples, the
    weight of component ``j`` is proportional to
    ``pi_j p_j(A) / p_j(W)``, the prior probability times the marginal
    likelihood of the samples beyond the window given the window. The
    window's samples have mean 0 and unit variance by construction, so they
    say nothing about whether the structure is like the fleet, and the window
    of a structure is a few days of one season: judged on it, the fleet's
    prior (which has seen every season) would always lose to the structure's
    own narrow one.

    References
    ----------
    L. A. Bull, P. A. Gardner, J. Gosliga, T. J. Rogers, N. Dervilis, E. J.
    Cross, E. Papatheou, A. E. Maguire, C. Campos and K. Worden,
    "Foundations of population-based SHM, Part I: Homogeneous populations
    and forms", Mechanical Systems and Signal Processing 148, 2021.

    A. O'Hagan, "Fractional Bayes factors for model comparison", Journal of
    the Royal Statistical Society B 57(1), 1995.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.mixture import FleetPrior, PooledGMMClassifier
    >>> rng = np.random.RandomState(0)
    >>> def structure(level):
    ...     healthy = rng.normal(level, 1.0, size=(60, 2))
    ...     damaged = rng.normal(level - 5.0, 1.0, size=(5, 2))
    ...     return np.vstack([healthy, damaged]), np.r_[[1] * 60, [2] * 5]
    >>> fleet = FleetPrior.from_structures(
    ...     [structure(level) for level in (10, 20, 30)], classes=[1, 2])
    >>> X, y = structure(40)
    >>> clf = PooledGMMClassifier(fleet=fleet, classes=[1, 2])
    >>> import warnings
    >>> with warnings.catch_warnings():  # class 2 has no label: it warns
    ...     warnings.simplefilter("ignore")
    ...     clf = clf.fit(X[:50], y[:50])  # healthy labels only
    >>> clf.predict([[40.0, 40.0], [35.0, 35.0]])
    array([1, 2])
    >>> clf.transfer_weight_.round(2)
    array([0.9, 0.9])
    """

    _parameter_constraints: ClassVar[dict] = {
        "fleet": [None, HasMethods(["class_priors"])],
        "transfer_prior": [Interval(Real, 0, 1, closed="neither")],
        "reference_class": "no_validation",
        "window": [Interval(Integral, 2, None, closed="left")],
        "unlabelled_weight": [Interval(Real, 0, 1, closed="right")],
        **_JointLikelihoodClassifier._parameter_constraints,
    }

    def __init__(
        self,
        *,
        fleet=None,
        transfer_prior: float = 0.9,
        reference_class=None,
        window: int = 50,
        mean_precision_prior: float = 1.0,
        degrees_of_freedom_prior: float | None = None,
        weight_concentration_prior=1.0,
        classes=None,
        unlabelled_weight: float = 0.02,
    ):
        self.fleet = fleet
        self.transfer_prior = transfer_prior
        self.reference_class = reference_class
        self.window = window
        self.mean_precision_prior = mean_precision_prior
        self.degrees_of_freedom_prior = degrees_of_freedom_prior
        self.weight_concentration_prior = weight_concentration_prior
        self.classes = classes
        self.unlabelled_weight = unlabelled_weight

    # ------------------------------------------------------------------ #
    # fitting
    # ------------------------------------------------------------------ #
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None) -> PooledGMMClassifier:
        """Normalise by the commissioning window and compute the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples, in temporal order: the first ``window`` of the
            reference class are the commissioning window.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, counted as fractional observations.

        Returns
        -------
        self : PooledGMMClassifier
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        unlabelled = split_unlabelled(y)
        labelled = ~unlabelled
        if self.classes is None:
            if not labelled.any():
                raise ValueError(
                    "y has no labelled sample (every label is -1): pass classes= "
                    "and the commissioning window's labels."
                )
            check_classification_targets(y[labelled])
            classes, y_idx = np.unique(y[labelled], return_inverse=True)
        else:
            classes = self._checked_classes(_as_classes(self.classes))
            y_idx = _label_indices(y[labelled], classes)
        self._start(X, y_idx, classes, _sample_weight(sample_weight, X), unlabelled)
        return self

    def partial_fit(
        self, X, y, classes=None, sample_weight=None
    ) -> PooledGMMClassifier:
        """Update the posterior with a batch of labelled and unlabelled data.

        The first call starts the model as ``fit`` does (its batch holds the
        commissioning window); later calls merge their labelled samples
        exactly and keep their unlabelled ones (``-1``), so any split into
        batches after the first gives the model ``fit`` gives on them all.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for the unlabelled samples.
        classes : array-like of shape (n_classes,), default=None
            All the labels; required on the first call unless the ``classes``
            parameter is set, and if given later must equal ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : PooledGMMClassifier
            The updated classifier.
        """
        if not hasattr(self, "_statistics"):
            return self._first_partial_fit(X, y, classes, sample_weight)
        X, y = validate_data(self, X, y, reset=False, dtype=np.float64)
        unlabelled = split_unlabelled(y)
        if classes is not None and not np.array_equal(
            _as_classes(classes), self.classes_
        ):
            raise ValueError(
                f"classes={np.asarray(classes).tolist()} differs from classes_="
                f"{self.classes_.tolist()} of the previous call to partial_fit."
            )
        weight = _sample_weight(sample_weight, X)
        Z = self._normalised(X)
        self._unlabelled.extend(
            Z[unlabelled], self.unlabelled_weight * weight[unlabelled]
        )
        labelled = ~unlabelled
        y_idx = _label_indices(y[labelled], self.classes_)
        present, batch = _present_statistics(Z[labelled], y_idx, weight[labelled])
        stored = self._statistics
        for row, k in enumerate(present.tolist()):
            merged = _merge(
                stored.count.item(k),
                stored.mean[k],
                stored.scatter[k],
                batch.count.item(row),
                batch.mean[row],
                batch.scatter[row],
            )
            for field, value in zip(stored, merged):
                field[k] = value
        self._set_posterior()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def _first_partial_fit(self, X, y, classes, sample_weight):
        X, y = validate_data(self, X, y, dtype=np.float64)
        unlabelled = split_unlabelled(y)
        if np.any(~unlabelled):
            check_classification_targets(y[~unlabelled])
        if classes is None and self.classes is None:
            raise ValueError(
                "classes must be passed on the first call to partial_fit (or set "
                "as a parameter)."
            )
        found = _as_classes(self.classes if classes is None else classes)
        if self.classes is not None and not np.array_equal(
            found, _as_classes(self.classes)
        ):
            raise ValueError(
                f"classes={found.tolist()} passed to partial_fit differs from the "
                f"classes parameter {_as_classes(self.classes).tolist()}."
            )
        found = self._checked_classes(found)
        self._start(
            X,
            _label_indices(y[~unlabelled], found),
            found,
            _sample_weight(sample_weight, X),
            unlabelled,
        )
        return self

    @staticmethod
    def _checked_classes(classes: np.ndarray) -> np.ndarray:
        if classes.dtype.kind not in "US" and np.any(classes == UNLABELLED):
            raise ValueError(
                "classes must not contain -1, which marks unlabelled samples."
            )
        return classes

    def _reference(self, classes, y_idx, weight) -> int:
        """Index of the class that normalises, checked against the fleet's."""
        owner = type(self).__name__
        label = self.reference_class
        fleet_label = None if self.fleet is None else self.fleet.reference_class
        if label is not None and fleet_label is not None and label != fleet_label:
            raise ValueError(
                f"{owner}: reference_class={label!r} differs from the fleet prior's "
                f"reference_class={fleet_label!r}."
            )
        label = fleet_label if label is None else label
        if label is None:
            return int(np.argmax(np.bincount(y_idx, weight, minlength=len(classes))))
        matches = np.flatnonzero(classes == label)
        if matches.size != 1:
            raise ValueError(
                f"{owner}: reference_class={label!r} is not one of the classes "
                f"{classes.tolist()}."
            )
        return int(matches[0])

    def _start(self, X, y_idx, classes, weight, unlabelled) -> None:
        """Normalise, set the priors and compute the posterior from one batch."""
        owner = type(self).__name__
        if self.fleet is not None and self.fleet.window != self.window:
            raise ValueError(
                f"{owner}: window={self.window} differs from the fleet prior's "
                f"window={self.fleet.window}; every structure must be normalised "
                "alike."
            )
        d = X.shape[1]
        stream = UnlabelledStream(d)
        X_u, weight_u = X[unlabelled], weight[unlabelled]
        X, weight = X[~unlabelled], weight[~unlabelled]
        reference = self._reference(classes, y_idx, weight)
        window = commissioning_window(y_idx, reference, self.window, weight)
        centre, scale = normaliser(X[window], weight[window])
        Z = (X - centre) / scale
        stream.extend((X_u - centre) / scale, self.unlabelled_weight * weight_u)
        stats = _labelled_statistics(Z, y_idx, weight, len(classes))
        # The window's samples are all of the reference class.
        window_stats = _empty_statistics(len(classes), d)
        for field, values in zip(
            window_stats, _sample_statistics(Z[window], weight[window])
        ):
            field[reference] = values[0]
        concentration = validate_concentration(
            self.weight_concentration_prior, classes, 0.0, owner
        )
        dof = float(
            d
            if self.degrees_of_freedom_prior is None
            else self.degrees_of_freedom_prior
        )
        if dof <= d - 1:
            raise ValueError(
                "degrees_of_freedom_prior must be greater than n_features - 1 = "
                f"{d - 1}, got {dof}."
            )
        broad = _NIWPrior(
            np.zeros(d), float(self.mean_precision_prior), dof, np.eye(d), concentration
        )
        fleet = (
            [None] * len(classes)
            if self.fleet is None
            else self.fleet.class_priors(classes, d)
        )
        self.classes_ = classes
        self.reference_class_ = classes[reference]
        self.normaliser_mean_, self.normaliser_scale_ = centre, scale
        self.window_size_ = int(window.size)
        self._statistics, self._window = stats, window_stats
        self._unlabelled, self._reference_index = stream, reference
        self._broad = broad
        self._fleet = [
            None if hyper is None else _NIWPrior(*hyper, concentration)
            for hyper in fleet
        ]
        self._weights = Weights(log(self.transfer_prior), log1p(-self.transfer_prior))
        self._set_posterior()
        self.fit_warnings_ = []
        warning = self._unlabelled_warning()
        if warning is not None:
            warnings.warn(warning, stacklevel=caller_stacklevel())
            self.fit_warnings_.append(warning)

    def _unlabelled_warning(self):
        missing = self.unlabelled_classes_
        if not missing.size:
            return None
        pooled = [c.item() for c in missing if self._fleet[self._index(c)] is not None]
        alone = [c.item() for c in missing if self._fleet[self._index(c)] is None]
        parts = []
        if pooled:
            parts.append(
                f"the belief in {pooled} rests on the fleet's labels of that state "
                f"(weight {self.transfer_prior:g}) mixed with the broad prior"
            )
        if alone:
            parts.append(f"the belief in {alone} rests on the broad prior alone")
        return UnlabelledClassesWarning(
            f"{type(self).__name__}: class(es) {missing.tolist()} have no labelled "
            f"sample of this structure; {'; '.join(parts)}."
        )

    def _index(self, label) -> int:
        return int(np.flatnonzero(self.classes_ == label)[0])

    def _set_posterior(self) -> None:
        """Both components' posteriors, their weights and the fitted attributes.

        The class prior counts the labels only. With unlabelled samples, the
        reference class's statistics add theirs weighted by its
        responsibility, found in ``_UNLABELLED_PASSES`` fixed passes from the
        labelled model (a fixed number, so the model is a function of the
        data alone and ``partial_fit`` equals ``fit``).
        """
        labelled = self._statistics
        concentration = self._broad.concentration + labelled.count
        self._log_class_prior = np.log(concentration) - log(
            fsum(concentration.tolist())
        )
        stats = labelled
        self._set_components(stats)
        self.unlabelled_count_ = 0.0
        if self._unlabelled.size:
            for _ in range(_UNLABELLED_PASSES):
                joint = self._joint_log_likelihood(self._unlabelled.Z)
                responsibility = np.exp(
                    joint[:, self._reference_index] - logsumexp(joint, axis=1)
                )
                stats = self._unlabelled.merged_into(
                    labelled, self._reference_index, responsibility
                )
                self._set_components(stats)
            self.unlabelled_count_ = float(stats.count[self._reference_index]) - float(
                labelled.count[self._reference_index]
            )
        self.class_count_ = labelled.count.copy()
        self.weight_concentration_ = concentration.copy()
        self.transfer_weight_ = np.exp(self._log_fleet_weight)
        means = self._broad_t.means * (1.0 - self.transfer_weight_)[:, None]
        if self._fleet_t is not None:
            means[self._fleet_index] += (
                self._fleet_t.means * self.transfer_weight_[self._fleet_index, None]
            )
        self.means_ = self.normaliser_mean_ + self.normaliser_scale_ * means
        self.unlabelled_classes_ = self.classes_[~(labelled.count > 0)]

    def _set_components(self, stats) -> None:
        """Each component's posterior and weight from the classes' statistics."""
        window = self._window
        broad_rows, fleet_rows, log_weights = [], [], []
        for k, alpha in enumerate(self._broad.concentration.tolist()):
            data = (stats.count.item(k), stats.mean[k], stats.scatter[k])
            seen = (window.count.item(k), window.mean[k], window.scatter[k])
            broad_rows.append(_class_posterior(self._broad, *data, alpha))
            prior = self._fleet[k]
            if prior is None:
                log_weights.append((0.0, -np.inf))
                continue
            fleet_rows.append(_class_posterior(prior, *data, alpha))
            log_weights.append(
                component_log_weights(
                    self._weights,
                    log_marginal(self._broad, *data) - log_marginal(self._broad, *seen),
                    log_marginal(prior, *data) - log_marginal(prior, *seen),
                )
            )
        self._fleet_index = np.array(
            [k for k, prior in enumerate(self._fleet) if prior is not None],
            dtype=np.intp,
        )
        self._broad_t = stacked(broad_rows)
        self._fleet_t = stacked(fleet_rows) if fleet_rows else None
        log_weights = np.array(log_weights)
        self._log_broad_weight, self._log_fleet_weight = log_weights.T

    # ------------------------------------------------------------------ #
    # prediction
    # ------------------------------------------------------------------ #
    def _normalised(self, X: np.ndarray) -> np.ndarray:
        return (X - self.normaliser_mean_) / self.normaliser_scale_

    def _check_X(self, X) -> np.ndarray:
        """Validated samples, normalised by the commissioning window."""
        return self._normalised(super()._check_X(X))

    def _class_log_density(self, Z: np.ndarray) -> np.ndarray:
        """``log p(z | y=k, D)`` in the normalised space, shape (K, n)."""
        broad = self._broad_t
        density = student_t(Z, broad) + self._log_broad_weight[:, None]
        if self._fleet_t is not None:
            index = self._fleet_index
            fleet = student_t(Z, self._fleet_t) + self._log_fleet_weight[index, None]
            density[index] = np.logaddexp(density[index], fleet)
        return density

    def _joint_log_likelihood(self, Z: np.ndarray) -> np.ndarray:
        return (self._class_log_density(Z) + self._log_class_prior[:, None]).T

    def class_log_density(self, X) -> np.ndarray:
        """Log posterior predictive density of ``X`` under each class.

        In the features' own units (the normalisation's Jacobian included).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_density : ndarray of shape (n_samples, n_classes)
            Columns ordered as ``classes_``.
        """
        jacobian = (
            float(np.log(self.normaliser_scale_).sum())
            if hasattr(self, "normaliser_scale_")
            else 0.0
        )
        return self._class_log_density(self._check_X(X)).T - jacobian
