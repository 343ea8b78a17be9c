"""What a fleet knows about its health states: an empirical-Bayes NIW prior per class.

Each structure's features are normalised by its own commissioning window (the
first healthy observations labelled); in that space the class parameters of
the structures, ``(mu_s, Sigma_s)``, are taken as draws from one
normal-inverse-Wishart distribution per class, whose hyperparameters are
those that maximise the marginal likelihood of the structures' labelled data
(type-II maximum likelihood). A new structure's classifier
(:class:`~skrbal.mixture.PooledGMMClassifier`) starts from that prior.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator

from skrbal.mixture._class_priors import niw_log_marginal
from skrbal.mixture._niw import _labelled_statistics, _niw_merge, _NIWPrior

__all__ = ["FleetPrior", "commissioning_window"]

# Bounds of the empirical-Bayes search: kappa0 (how many samples of a
# structure the fleet's mean is worth), v0 - D + 1 and the factor on the
# moment estimate of the scale.
_LOG_KAPPA = (np.log(1e-3), np.log(1e3))
_LOG_DOF = (np.log(0.5), np.log(1e4))
_LOG_FACTOR = (-8.0, 8.0)
# A ridge on the moment estimate of the covariance, in normalised units (one
# is the commissioning window's standard deviation).
_RIDGE = 1e-3


def commissioning_window(y, reference, window: int, sample_weight=None) -> np.ndarray:
    """Positions of the samples that normalise a structure.

    The first samples labelled ``reference``, in the order given, until their
    weights (1 each by default) add up to ``window``: the commissioning
    window of a structure commissioned on healthy data. Samples of weight 0
    are not part of it.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels, in temporal order.
    reference : label
        The class that normalises (the healthy one).
    window : int
        Number of samples (their total weight).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples.

    Returns
    -------
    positions : ndarray of int

    Examples
    --------
    >>> from skrbal.mixture import commissioning_window
    >>> commissioning_window([1, 2, 1, 1, 1], reference=1, window=3).tolist()
    [0, 2, 3]
    """
    y = np.asarray(y)
    weight = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight)
    candidates = np.flatnonzero((y == reference) & (weight > 0))
    before = np.cumsum(weight[candidates]) - weight[candidates]
    return candidates[before < window]


def normaliser(X: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean and standard deviation of the window's samples.

    A feature that does not vary in the window (or a window of fewer than two
    samples) keeps its scale (1); an empty window keeps the origin.
    """
    if X.shape[0] == 0:
        return np.zeros(X.shape[1]), np.ones(X.shape[1])
    centre = np.average(X, axis=0, weights=weight)
    scale = np.sqrt(np.average((X - centre) ** 2, axis=0, weights=weight))
    return centre, np.where(scale > 0, scale, 1.0)


def _log_marginals(kappa0, dof0, scale0, mean0, stats) -> float:
    """Summed log marginal likelihood of the structures' data under one NIW prior."""
    prior = _NIWPrior(mean0, kappa0, dof0, scale0, np.ones(1))
    total = 0.0
    for count, mean, scatter in zip(*stats):
        kappa_n, _, scale_n = _niw_merge(prior, count, mean, scatter)
        total += niw_log_marginal(
            kappa0, dof0, scale0, count, kappa_n, dof0 + count, scale_n
        )
    return total


def empirical_bayes_niw(stats) -> tuple[np.ndarray, float, float, np.ndarray]:
    """``(m0, kappa0, v0, S0)`` maximising the structures' marginal likelihood.

    ``stats`` holds one row per structure (its count, mean and scatter of one
    class). ``m0`` is the mean of the structures' means; ``S0`` is a factor
    times the pooled within-structure covariance (the moment estimate, with a
    small ridge), and the factor, ``kappa0`` and ``v0`` maximise the summed
    log marginal likelihood within wide bounds.
    """
    count, means, scatter = stats
    d = means.shape[1]
    mean0 = means.mean(axis=0)
    pooled = (scatter.sum(axis=0) + _RIDGE * np.eye(d)) / (count.sum() + 1.0)

    def objective(theta):
        kappa0 = np.exp(theta[0])
        dof0 = d - 1 + np.exp(theta[1])
        scale0 = np.exp(theta[2]) * dof0 * pooled
        return -_log_marginals(kappa0, dof0, scale0, mean0, stats)

    start = np.array([0.0, np.log(d + 2.0), 0.0])
    found = minimize(
        objective,
        start,
        method="L-BFGS-B",
        bounds=[_LOG_KAPPA, _LOG_DOF, _LOG_FACTOR],
    )
    theta = found.x if np.isfinite(found.fun) else start
    dof0 = d - 1 + float(np.exp(theta[1]))
    return mean0, float(np.exp(theta[0])), dof0, float(np.exp(theta[2])) * dof0 * pooled


class FleetPrior(BaseEstimator):
    """What a fleet's structures say about each health state, as NIW priors.

    One normal-inverse-Wishart prior per class, in the space where each
    structure's features are normalised by its commissioning window (the mean
    and standard deviation of its first ``window`` samples of the reference
    class). It is learned from the labelled data of the other structures by
    :meth:`from_structures` and given to
    :class:`~skrbal.mixture.PooledGMMClassifier` as its ``fleet``. Its
    parameters are plain arrays, so an agent store keeps it as JSON.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        The class labels, sorted.
    mean : array-like of shape (n_classes, n_features)
        Prior mean ``m0`` of each class's mean.
    mean_precision : array-like of shape (n_classes,)
        ``kappa0`` of each class.
    degrees_of_freedom : array-like of shape (n_classes,)
        ``v0`` of each class.
    scale : array-like of shape (n_classes, n_features, n_features)
        Inverse-Wishart scale ``S0`` of each class.
    n_structures : array-like of int of shape (n_classes,)
        How many structures labelled each class; a class with fewer than two
        has no fleet prior (its other entries are not used).
    reference_class : label
        The class whose commissioning window normalises each structure.
    window : int
        Size of the commissioning window.

    See Also
    --------
    PooledGMMClassifier : A new structure's classifier built on it.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.mixture import FleetPrior
    >>> rng = np.random.RandomState(0)
    >>> records = []
    >>> for s in range(4):
    ...     healthy = rng.normal(10.0 + s, 1.0, size=(60, 2))
    ...     damaged = rng.normal(6.0 + s, 1.0, size=(5, 2))
    ...     records.append((np.vstack([healthy, damaged]), [1] * 60 + [2] * 5))
    >>> fleet = FleetPrior.from_structures(records, classes=[1, 2], window=50)
    >>> fleet.n_structures.tolist()
    [4, 4]
    >>> bool(fleet.mean[1, 0] < -3)  # damage: about 4 healthy deviations down
    True
    """

    def __init__(
        self,
        *,
        classes,
        mean,
        mean_precision,
        degrees_of_freedom,
        scale,
        n_structures,
        reference_class,
        window: int = 50,
    ):
        self.classes = classes
        self.mean = mean
        self.mean_precision = mean_precision
        self.degrees_of_freedom = degrees_of_freedom
        self.scale = scale
        self.n_structures = n_structures
        self.reference_class = reference_class
        self.window = window

    @classmethod
    def from_structures(
        cls, records, *, classes, reference_class=None, window: int = 50
    ) -> FleetPrior:
        """Learn the fleet's prior from the labelled data of its structures.

        Parameters
        ----------
        records : iterable of (X, y)
            Each structure's labelled samples, in temporal order (the
            commissioning labels first, then what its inspections found).
        classes : array-like
            All the class labels.
        reference_class : label, default=None
            The class that normalises each structure. ``None`` is the first
            of ``classes`` (the healthy state of skrbal's processes).
        window : int, default=50
            Size of each structure's commissioning window.

        Returns
        -------
        fleet : FleetPrior
        """
        classes = np.unique(np.asarray(classes))
        reference = classes[0] if reference_class is None else reference_class
        if reference not in classes:
            raise ValueError(
                f"reference_class={reference!r} is not one of {classes.tolist()}."
            )
        if isinstance(window, bool) or not isinstance(window, Integral) or window < 2:
            raise ValueError(f"window must be an integer >= 2, got {window!r}.")
        per_class = [[] for _ in classes]
        n_features = None
        for s, (X, y) in enumerate(records):
            X, y = np.asarray(X, dtype=float), np.asarray(y)
            if X.ndim != 2 or y.shape != (X.shape[0],):
                raise ValueError(
                    f"structure {s}: X must be 2-d with one label per row, got "
                    f"shapes {X.shape} and {y.shape}."
                )
            if n_features is not None and X.shape[1] != n_features:
                raise ValueError(
                    f"structure {s} has {X.shape[1]} features, the first {n_features}."
                )
            n_features = X.shape[1]
            where = commissioning_window(y, reference, window)
            if where.size < 2:
                raise ValueError(
                    f"structure {s} has {where.size} sample(s) of the reference class "
                    f"{reference!r}; its commissioning window needs at least 2."
                )
            centre, spread = normaliser(X[where], np.ones(where.size))
            positions = classes.searchsorted(y)
            if not np.array_equal(classes.take(positions, mode="clip"), y):
                raise ValueError(
                    f"structure {s} has labels outside classes {classes.tolist()}."
                )
            stats = _labelled_statistics(
                (X - centre) / spread, positions, np.ones(len(y)), len(classes)
            )
            for k, row in enumerate(zip(*stats)):
                if row[0] > 0:
                    per_class[k].append(row)
        if n_features is None:
            raise ValueError("records holds no structure.")
        d = n_features
        mean, kappa = np.zeros((len(classes), d)), np.ones(len(classes))
        dof, scale = (
            np.full(len(classes), float(d)),
            np.tile(np.eye(d), (len(classes), 1, 1)),
        )
        counts = np.array([len(rows) for rows in per_class], dtype=np.int64)
        for k, rows in enumerate(per_class):
            if len(rows) >= 2:
                stats = tuple(np.array(column) for column in zip(*rows))
                mean[k], kappa[k], dof[k], scale[k] = empirical_bayes_niw(stats)
        return cls(
            classes=classes,
            mean=mean,
            mean_precision=kappa,
            degrees_of_freedom=dof,
            scale=scale,
            n_structures=counts,
            reference_class=reference.item()
            if hasattr(reference, "item")
            else reference,
            window=int(window),
        )

    def class_priors(self, classes: np.ndarray, n_features: int) -> list:
        """``[(m0, kappa0, v0, S0) or None]``, one per class of ``classes``.

        Checked against the classifier's classes and features: ``None`` for a
        class that fewer than two structures labelled.
        """
        own = np.asarray(self.classes)
        mean = np.asarray(self.mean, dtype=float)
        kappa = np.asarray(self.mean_precision, dtype=float)
        dof = np.asarray(self.degrees_of_freedom, dtype=float)
        scale = np.asarray(self.scale, dtype=float)
        counts = np.asarray(self.n_structures)
        k = own.shape[0] if own.ndim == 1 else -1
        if not (
            mean.shape == (k, n_features)
            and kappa.shape == dof.shape == counts.shape == (k,)
            and scale.shape == (k, n_features, n_features)
        ):
            raise ValueError(
                f"the fleet prior's arrays do not describe {k} classes of "
                f"{n_features} features: mean {mean.shape}, mean_precision "
                f"{kappa.shape}, degrees_of_freedom {dof.shape}, scale "
                f"{scale.shape}, n_structures {counts.shape}."
            )
        if not np.array_equal(np.sort(own), np.sort(np.asarray(classes))):
            raise ValueError(
                f"the fleet prior's classes {own.tolist()} differ from the "
                f"classifier's {np.asarray(classes).tolist()}."
            )
        found = []
        for label in classes:
            j = int(np.flatnonzero(own == label)[0])
            usable = (
                counts[j] >= 2
                and kappa[j] > 0
                and dof[j] > n_features - 1
                and np.isfinite(mean[j]).all()
                and np.all(np.linalg.eigvalsh(scale[j]) > 0)
            )
            found.append((mean[j], kappa[j], dof[j], scale[j]) if usable else None)
        return found
