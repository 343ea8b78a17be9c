"""Semi-supervised Bayesian Gaussian-mixture classifier fitted by MAP-EM.

The model is the one of :class:`~skrbal.mixture.BayesianGMMClassifier`; the
labels of the unlabelled samples are latent, and expectation-maximisation
finds the maximum a posteriori parameters ``theta`` of
``log p(X_l, y_l, X_u | theta) + log p(theta)`` (Hughes et al., Appendix B).
The E-step gives each unlabelled sample its class responsibilities under the
current MAP Gaussians; the M-step is the conjugate NIW update with those
responsibilities as fractional counts. Predictions then use the posterior
predictive (Student-t) of those weighted statistics.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.special import gammaln, multigammaln, xlogy
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from skrbal._labels import UNLABELLED, split_unlabelled
from skrbal._logspace import exp_normalise, logsumexp
from skrbal.exceptions import caller_stacklevel
from skrbal.mixture._class_priors import statement_groups
from skrbal.mixture._gmm import (
    _as_classes,
    _BaseNIWClassifier,
    _label_indices,
    _sample_weight,
)
from skrbal.mixture._niw import (
    _cholesky,
    _half_log_det,
    _labelled_statistics,
    _map_covariances,
    _merge_statistics,
    _niw_posterior,
    _NIWPrior,
    _sample_statistics,
    _squared_mahalanobis,
    _Statistics,
    _weighted_statistics,
    _whiteners,
)

__all__ = ["SemiSupervisedGMMClassifier"]

# Smallest effective count behind a class weight, in samples: with alpha = 1
# the Dirichlet mode gives a class without any responsibility weight exactly
# 0, and EM could then never give it responsibility back.
_MIN_WEIGHT_COUNT = 1e-6


def _per_class(prior: _NIWPrior, n_classes: int) -> _NIWPrior:
    """The broad prior with its NIW hyperparameters repeated for every class."""
    return prior._replace(
        mean=np.repeat(prior.mean[None], n_classes, axis=0),
        mean_precision=np.full(n_classes, prior.mean_precision),
        degrees_of_freedom=np.full(n_classes, prior.degrees_of_freedom),
        scale=np.repeat(prior.scale[None], n_classes, axis=0),
    )


def _log_niw(means, whiteners, half_log_det, prior: _NIWPrior) -> np.ndarray:
    """``log NIW(mu_k, Sigma_k | m_k, kappa_k, v_k, S_k)`` of every class, (K,).

    ``prior`` holds one set of hyperparameters per class (see ``_per_class``);
    ``whiteners`` and ``half_log_det`` are those of the ``Sigma_k``.
    """
    d = means.shape[1]
    kappa0, v0 = prior.mean_precision, prior.degrees_of_freedom
    whitened = np.einsum("kd,kde->ke", means - prior.mean, whiteners)
    scale_chol = np.linalg.cholesky(prior.scale)
    # tr(S0 Sigma^-1) = ||L_Sigma^-1 L_S0||_F^2 with L_Sigma^-1 = W^T.
    trace = np.square(whiteners.transpose(0, 2, 1) @ scale_chol).sum(axis=(1, 2))
    log_normal = (
        -0.5 * d * np.log(2 * np.pi / kappa0)
        - half_log_det
        - 0.5 * kappa0 * np.square(whitened).sum(axis=1)
    )
    log_inv_wishart = (
        v0 * _half_log_det(scale_chol)
        - 0.5 * v0 * d * np.log(2.0)
        - multigammaln(0.5 * v0, d)
        - (v0 + d + 1) * half_log_det
        - 0.5 * trace
    )
    return log_normal + log_inv_wishart


class _ClassPriors:
    """The NIW prior of every class for EM: broad, or a mixture of two.

    A class with a directed prior (``class_priors``) has the prior
    ``w_b NIW_b + w_d NIW_d``. EM treats the component as one more latent
    variable: given ``theta`` its responsibilities ``r`` are those of the two
    weighted densities at ``theta_k``, and the M-step maximises
    ``sum_j r_j log NIW_j(theta_k)`` plus the likelihood, whose maximum is
    the MAP under a single NIW with ``kappa = sum r_j kappa_j``,
    ``m = sum r_j kappa_j m_j / kappa``, ``v = sum r_j v_j`` and
    ``S = sum r_j (S_j + kappa_j (m_j - m)(m_j - m)^T)``; so the objective
    still never decreases. The classes of one statement share the component
    (see :func:`~skrbal.mixture._class_priors.statement_groups`): their prior
    is ``w_b prod_k NIW_b(theta_k) + w_d prod_k NIW_d(theta_k)``, and its
    responsibilities are shared.
    """

    def __init__(self, prior: _NIWPrior, n_classes: int, directed):
        self.prior = prior
        self.broad = _per_class(prior, n_classes)
        self.directed = directed  # [(entry, (m, kappa, v, S))]
        self.prior_log_weights = np.array(
            [[entry.log_defensive, entry.log_weight] for entry, _ in directed]
        ).reshape(-1, 2)
        self.index = np.array([entry.index for entry, _ in directed], dtype=np.intp)
        self.groups = statement_groups([entry for entry, _ in directed])
        first = np.unique(self.groups, return_index=True)[1]
        self.group_prior_log_weights = self.prior_log_weights[first]
        if directed:
            hyper = list(zip(*(h for _, h in directed)))
            self.directed_prior = self.broad._replace(
                mean=np.array(hyper[0]),
                mean_precision=np.array(hyper[1], dtype=float),
                degrees_of_freedom=np.array(hyper[2], dtype=float),
                scale=np.array(hyper[3]),
            )
        self.effective = self.combined(np.exp(self.prior_log_weights))

    def combined(self, responsibilities: np.ndarray) -> _NIWPrior:
        """The single NIW each class's M-step uses, given ``r`` (M, 2)."""
        if not self.directed:
            return self.broad
        broad, directed = self.broad, self.directed_prior
        rows = self.index
        r_b, r_d = responsibilities[:, 0], responsibilities[:, 1]
        kb, kd = broad.mean_precision[rows], directed.mean_precision
        kappa = r_b * kb + r_d * kd
        mb, md = broad.mean[rows], directed.mean
        mean = ((r_b * kb)[:, None] * mb + (r_d * kd)[:, None] * md) / kappa[:, None]
        db, dd = mb - mean, md - mean
        scale = (
            r_b[:, None, None] * broad.scale[rows]
            + r_d[:, None, None] * directed.scale
            + (r_b * kb)[:, None, None] * db[:, :, None] * db[:, None, :]
            + (r_d * kd)[:, None, None] * dd[:, :, None] * dd[:, None, :]
        )
        out = self.broad._replace(
            mean=broad.mean.copy(),
            mean_precision=broad.mean_precision.copy(),
            degrees_of_freedom=broad.degrees_of_freedom.copy(),
            scale=broad.scale.copy(),
        )
        out.mean[rows] = mean
        out.mean_precision[rows] = kappa
        out.degrees_of_freedom[rows] = (
            r_b * broad.degrees_of_freedom[rows] + r_d * directed.degrees_of_freedom
        )
        out.scale[rows] = 0.5 * (scale + scale.transpose(0, 2, 1))
        return out

    def log_prior_and_update(self, theta: _MAPParameters) -> float:
        """``sum_k log p(theta_k)``; sets the next M-step's ``effective`` prior."""
        args = (theta.means, theta.whiteners, theta.half_log_det)
        log_p = _log_niw(*args, self.broad)
        if self.directed:
            rows = self.index
            sub = (theta.means[rows], theta.whiteners[rows], theta.half_log_det[rows])
            member = np.stack(
                [log_p[rows], _log_niw(*sub, self.directed_prior)], axis=1
            )
            # The classes of one statement share its indicator (see
            # statement_groups): one mixture over the product of their priors.
            tied = np.zeros((self.groups.max() + 1, 2))
            np.add.at(tied, self.groups, member)
            tied += self.group_prior_log_weights
            total = logsumexp(tied, axis=1)
            log_p[rows] = 0.0
            self.effective = self.combined(np.exp(tied - total[:, None])[self.groups])
            return float(log_p.sum() + total.sum())
        return float(log_p.sum())


class _MAPParameters:
    """The MAP ``theta`` of a weighted NIW posterior, with its Cholesky factors."""

    def __init__(self, stats: _Statistics, prior: _NIWPrior):
        mean_n, _, dof_n, scale_n = _niw_posterior(stats, prior)
        n_classes = len(stats.count)
        self.means = mean_n
        self.covariances = _map_covariances(scale_n, dof_n)
        chol = _cholesky(self.covariances, "a MAP covariance matrix")
        self.half_log_det = _half_log_det(chol)
        self.whiteners = _whiteners(chol)
        # Mode of Dir(alpha + N): (alpha_k + N_k - 1) / (sum alpha + N - K); it
        # exists because alpha >= 1. With alpha_k == 1 it is zero for a class
        # without responsibility, which would lock that class out of EM for
        # good; a floor of a millionth of a sample keeps every class alive.
        excess = np.maximum(prior.concentration - 1.0 + stats.count, _MIN_WEIGHT_COUNT)
        self.weights = excess / excess.sum()
        self.log_weights = np.log(self.weights)
        self.n_classes = n_classes

    def joint_log_likelihood(self, X: np.ndarray) -> np.ndarray:
        """``log N(x | mu_k, Sigma_k) + log lambda_k``, shape (n_classes, n)."""
        d = X.shape[1]
        joint = _squared_mahalanobis(X, self.means, self.whiteners)
        joint *= -0.5
        joint += (self.log_weights - self.half_log_det - 0.5 * d * np.log(2 * np.pi))[
            :, None
        ]
        return joint

    def log_prior(self, priors: _ClassPriors) -> float:
        """``log p(theta)``: the classes' NIW priors plus the Dirichlet.

        Also sets the component responsibilities of the directed classes'
        priors for the next M-step (see :class:`_ClassPriors`).
        """
        alpha = priors.prior.concentration
        log_dirichlet = (
            gammaln(alpha.sum())
            - gammaln(alpha).sum()
            + xlogy(alpha - 1, self.weights).sum()
        )
        return priors.log_prior_and_update(self) + float(log_dirichlet)


class SemiSupervisedGMMClassifier(_BaseNIWClassifier):
    """Bayesian Gaussian-mixture classifier trained on partly labelled data.

    The model of :class:`BayesianGMMClassifier` (one Gaussian per class, NIW
    priors, Dirichlet class weights) fitted by expectation-maximisation to
    labelled and unlabelled samples together: the unlabelled samples'
    classes are latent variables, and EM climbs to a maximum a posteriori
    estimate of the parameters. Unlabelled samples are marked ``-1`` in
    ``y``, as in :mod:`sklearn.semi_supervised`.

    Parameters
    ----------
    mean_prior : {'data'}, float or array-like of shape (n_features,), \
            default=None
        Prior mean ``m0`` of every class mean. ``None`` means zeros, a float
        that value for every feature, ``'data'`` the mean of all the training
        samples, labelled and unlabelled (see
        :class:`BayesianGMMClassifier`).
    mean_precision_prior : float, default=1.0
        ``kappa0 > 0``: how many pseudo-observations the prior mean is worth.
    degrees_of_freedom_prior : float, default=None
        ``v0 > n_features - 1``. ``None`` means ``n_features``.
    covariance_prior : {'data'}, float or array-like of shape \
            (n_features, n_features), default=None
        Inverse-Wishart scale matrix ``S0``: ``None`` is the identity, a float
        a scaled identity, ``'data'`` the diagonal of the per-feature
        variances of all the training samples, or a symmetric
        positive-definite matrix.
    weight_concentration_prior : float, dict or array-like of shape \
            (n_classes,), default=1.0
        ``alpha >= 1`` of the Dirichlet prior on the class weights: one value
        for all, ``{class label: alpha}`` (others 1) or one per class (see
        :class:`BayesianGMMClassifier`). EM needs the mode of the Dirichlet
        posterior, which does not exist for ``alpha < 1`` when a class has
        too small an effective count.
    class_priors : dict, default=None
        Where some classes lie relative to a reference class, as in
        :class:`BayesianGMMClassifier`: such a class has a mixture of a
        directed NIW prior and the broad one. The directed prior is stated
        against the reference class's labelled samples. EM treats the
        prior's component as one more latent variable, so its objective
        still never decreases.
    classes : array-like of shape (n_classes,), default=None
        The full label set; a class with no labelled sample can still be
        given responsibility by EM. Required when no sample is labelled.
        ``None`` takes the labels present in ``y``. ``-1`` cannot be a class.
    max_iter : int, default=100
        Maximum number of EM iterations (M-steps).
    tol : float, default=1e-6
        EM stops when the objective per sample, ``lower_bound_``, improves by
        less than ``tol``.
    warm_start : bool, default=False
        If True and the model was fitted before with the same classes and
        features, EM starts from the previous MAP parameters instead of the
        supervised posterior of the labelled samples: after a few samples are
        added, it then needs fewer iterations.
    verbose : int, default=0
        Print the objective at every iteration when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    mean_prior_, covariance_prior_ : ndarray
        The prior mean ``m0`` and scale ``S0`` used.
    fit_warnings_ : list of Warning
        The warnings of the last fit: a
        :class:`~skrbal.exceptions.PriorScaleWarning` and an
        :class:`~skrbal.exceptions.UnlabelledClassesWarning` (see
        :class:`BayesianGMMClassifier`) and the
        :class:`~sklearn.exceptions.ConvergenceWarning` of an EM that did not
        converge, so that a batch study can count them.
    class_count_ : ndarray of shape (n_classes,)
        Effective counts ``N_k = n_k + r_k``: labelled samples plus the
        responsibilities of the unlabelled ones.
    means_ : ndarray of shape (n_classes, n_features)
        MAP class means ``m_n`` (the EM estimate).
    covariances_ : ndarray of shape (n_classes, n_features, n_features)
        MAP class covariances ``S_n / (v_n + D + 2)``.
    weights_ : ndarray of shape (n_classes,)
        MAP class weights ``(alpha + N_k - 1) / (K alpha + N - K)``, each
        effective count ``alpha + N_k - 1`` floored at ``1e-6`` so that no
        class of ``classes`` ever has weight zero.
    mean_posterior_ : ndarray of shape (n_classes, n_features)
        Posterior location ``m_n`` of the weighted NIW posterior.
    mean_precision_posterior_ : ndarray of shape (n_classes,)
        Posterior ``kappa_n = kappa0 + N_k``.
    degrees_of_freedom_posterior_ : ndarray of shape (n_classes,)
        Posterior ``v_n = v0 + N_k``.
    covariance_posterior_ : ndarray of shape (n_classes, n_features, n_features)
        Posterior inverse-Wishart scale ``S_n`` of the weighted statistics.
    weight_concentration_ : ndarray of shape (n_classes,)
        Posterior Dirichlet concentration ``alpha + N_k``.
    directed_prior_weight_, directed_mean_prior_ : ndarray
        Posterior weight and prior mean of the directed components (see
        :class:`BayesianGMMClassifier`).
    unlabelled_classes_ : ndarray
        The classes without a labelled sample, whose belief rests on the
        prior and the unlabelled samples.
    transduction_ : ndarray of shape (n_samples,)
        Label of every training sample: the given label, or the most
        responsible class for an unlabelled one.
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Class weights of every training sample in the final M-step (the
        E-step the final parameters were estimated from, also when
        ``max_iter`` stops EM): one-hot for labelled samples,
        responsibilities for unlabelled ones.
    n_iter_ : int
        Number of EM iterations (M-steps) run.
    converged_ : bool
        Whether the objective stopped improving by ``tol`` within ``max_iter``
        iterations.
    lower_bound_ : float
        Final objective ``(log p(X_l, y_l, X_u | theta) + log p(theta)) /
        n_samples`` at the MAP ``theta``.
    lower_bound_trace_ : list of float
        The objective after every M-step; EM never decreases it.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    BayesianGMMClassifier : The supervised model, with ``partial_fit``.
    sklearn.semi_supervised.SelfTrainingClassifier : Semi-supervised learning
        by pseudo-labelling any classifier.

    Notes
    -----
    The E-step uses the MAP Gaussians ``N(m_n, S_n / (v_n + D + 2))`` and the
    MAP class weights, not the Student-t predictive: with that choice each EM
    iteration maximises a lower bound that touches
    ``log p(X_l, y_l, X_u | theta) + log p(theta)``, so the objective is
    guaranteed never to decrease, which ``lower_bound_trace_`` records. EM
    starts from the responsibilities of the supervised posterior predictive
    of the labelled samples alone.

    Once EM has converged the weighted statistics are those of a
    :class:`BayesianGMMClassifier` fitted with ``label_distributions_`` as
    fractional counts, and predictions are that model's posterior predictive.
    With no unlabelled sample the result is exactly the supervised model.

    Unlabelled samples are marked with the integer ``-1``. With string
    labels, pass ``y`` as an object array holding ``-1`` for the unlabelled
    samples, as in :mod:`sklearn.semi_supervised`; a string array holding
    ``'-1'`` is refused rather than taken for a class.

    With ``weight_concentration_prior=1`` the Dirichlet mode of a class with
    no responsibility is zero, and EM could never bring such a class back;
    every effective count behind a weight is therefore floored at ``1e-6``
    samples, so a class of ``classes`` keeps a tiny weight until the data
    give it responsibility.

    If no sample is labelled the classes are exchangeable: EM keeps them
    identical, and every prediction is uniform over ``classes``.

    References
    ----------
    A. J. Hughes, L. A. Bull, P. Gardner, R. J. Barthorpe, N. Dervilis and
    K. Worden, "On risk-based active learning for structural health
    monitoring", Mechanical Systems and Signal Processing, 2022, Appendix B.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.mixture import SemiSupervisedGMMClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-3, 1, (50, 2)), rng.normal(3, 1, (50, 2))])
    >>> y = np.full(100, -1)
    >>> y[0], y[50] = 0, 1
    >>> clf = SemiSupervisedGMMClassifier().fit(X, y)
    >>> clf.converged_
    True
    >>> clf.means_.round(0)
    array([[-3., -3.],
           [ 3.,  3.]])
    >>> float((clf.transduction_ == np.repeat([0, 1], 50)).mean())
    1.0
    """

    _parameter_constraints: ClassVar[dict] = {
        **_BaseNIWClassifier._parameter_constraints,
        "weight_concentration_prior": [
            Interval(Real, 1, None, closed="left"),
            dict,
            "array-like",
        ],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
    }
    _min_concentration = 1.0

    def __init__(
        self,
        *,
        mean_prior=None,
        mean_precision_prior: float = 1.0,
        degrees_of_freedom_prior: float | None = None,
        covariance_prior=None,
        weight_concentration_prior=1.0,
        class_priors: dict | None = None,
        classes=None,
        max_iter: int = 100,
        tol: float = 1e-6,
        warm_start: bool = False,
        verbose: int = 0,
    ):
        self.mean_prior = mean_prior
        self.mean_precision_prior = mean_precision_prior
        self.degrees_of_freedom_prior = degrees_of_freedom_prior
        self.covariance_prior = covariance_prior
        self.weight_concentration_prior = weight_concentration_prior
        self.class_priors = class_priors
        self.classes = classes
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None) -> SemiSupervisedGMMClassifier:
        """Fit the mixture to labelled and unlabelled samples by MAP-EM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples, labelled and unlabelled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for the unlabelled samples.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, counted as fractional observations in the
            statistics and the EM objective. Soft evidence, such as the
            posterior after an imperfect inspection, is passed as one labelled
            copy of the sample per state weighted by its posterior
            probability (:func:`skrbal.inspection.weighted_copies`): those
            copies are responsibilities fixed at the posterior.

        Returns
        -------
        self : SemiSupervisedGMMClassifier
            The fitted classifier.
        """
        previous = (
            (self.classes_, self._statistics)
            if self.warm_start and hasattr(self, "_statistics")
            else None
        )
        X, y = validate_data(self, X, y, dtype=np.float64)
        weight = _sample_weight(sample_weight, X)
        unlabelled = split_unlabelled(y)
        classes, y_idx = self._semi_supervised_classes(y[~unlabelled])
        X_l, X_u = X[~unlabelled], X[unlabelled]
        labelled_stats = _labelled_statistics(
            X_l, y_idx, weight[~unlabelled], len(classes)
        )
        prior = self._validate_prior(
            _sample_statistics(X, weight), classes, labelled_stats.count
        )
        for entry in prior.directed:
            # EM's prior mixes two NIW components (a statement of several
            # sizes would need one per size), and its labels are not kept in
            # the order learnt (the other labels' check needs them).
            for key, value, allowed in (
                ("size_factor", entry.size_factor, 1.0),
                ("check", entry.check, False),
            ):
                if value != allowed:
                    raise ValueError(
                        f"{type(self).__name__} does not take class_priors["
                        f"{classes[entry.index]!r}][{key!r}]: it must be "
                        f"{allowed} here (BayesianGMMClassifier takes it)."
                    )
        self.classes_ = classes
        resp = self._initial_responsibilities(X_u, labelled_stats, prior, previous)
        # The directed priors are stated against the labelled samples of their
        # reference class, for EM and for the predictive alike.
        priors = _ClassPriors(
            prior,
            len(classes),
            [
                (entry, component.prior)
                for entry, component in zip(prior.directed, self._directed.components)
            ],
        )
        stats, theta, resp = self._expectation_maximisation(
            X_l, y_idx, X_u, labelled_stats, resp, priors, weight, unlabelled
        )
        self._set_posterior(stats, prior, reference=labelled_stats)
        self._record_unlabelled(labelled_stats.count)
        if not self.converged_:
            self.fit_warnings_.append(self._em_warning)
        self.weights_ = theta.weights

        distributions = np.zeros((len(X), len(classes)))
        distributions[np.flatnonzero(~unlabelled), y_idx] = 1.0
        distributions[unlabelled] = resp
        self.label_distributions_ = distributions
        self.transduction_ = classes[np.argmax(distributions, axis=1)]
        return self

    def _semi_supervised_classes(self, y_labelled):
        """``classes_`` and the class index of every labelled sample."""
        if y_labelled.size:
            check_classification_targets(y_labelled)
        if self.classes is not None:
            classes = _as_classes(self.classes)
            if classes.dtype.kind not in "US" and np.any(classes == UNLABELLED):
                raise ValueError(
                    "classes must not contain -1, which marks unlabelled samples."
                )
            return classes, _label_indices(y_labelled, classes)
        if not y_labelled.size:
            raise ValueError(
                "y has no labelled sample (every label is -1): pass classes= to "
                "fit the mixture from the prior and the unlabelled samples."
            )
        return np.unique(y_labelled, return_inverse=True)

    def _initial_responsibilities(self, X_u, labelled_stats, prior, previous):
        """Responsibilities of the unlabelled samples that start EM.

        Sets the supervised posterior of the labelled samples (whose directed
        components the EM priors are taken from).
        """
        self._set_posterior(labelled_stats, prior)
        if (
            previous is not None
            and np.array_equal(previous[0], self.classes_)
            and previous[1].mean.shape[1] == X_u.shape[1]
        ):
            start = _ClassPriors(prior, len(self.classes_), ()).broad
            joint = _MAPParameters(previous[1], start).joint_log_likelihood(X_u)
        else:
            joint = self._class_log_density(X_u) + self._log_class_prior[:, None]
        return exp_normalise(joint.T, axis=1)

    def _expectation_maximisation(
        self, X_l, y_idx, X_u, labelled_stats, resp, priors, weight, unlabelled
    ):
        """Alternate M- and E-steps; return the final statistics and MAP theta.

        ``weight`` (one per sample, ``unlabelled`` marking the rows of
        ``X_u``) scales each sample's contribution; unit weights are exact
        no-ops, so an unweighted fit is the same to the bit.
        """
        weight_l, weight_u = weight[~unlabelled], weight[unlabelled]
        n_samples = weight.sum()
        trace = []
        converged = False
        for n_iter in range(1, self.max_iter + 1):
            # The E-step the parameters of this iteration come from.
            used = resp
            stats = _merge_statistics(
                labelled_stats, _weighted_statistics(X_u, resp * weight_u[:, None])
            )
            theta = _MAPParameters(stats, priors.effective)
            joint_l = theta.joint_log_likelihood(X_l)
            joint_u = theta.joint_log_likelihood(X_u).T
            log_evidence_u = logsumexp(joint_u, axis=1)
            objective = (
                (weight_l * joint_l[y_idx, np.arange(len(X_l))]).sum()
                + (weight_u * log_evidence_u).sum()
                + theta.log_prior(priors)
            ) / n_samples
            trace.append(objective)
            change = objective - trace[-2] if n_iter > 1 else np.inf
            if self.verbose:
                print(f"EM iteration {n_iter}: objective {objective:.8f}")
            # Without unlabelled samples the first M-step is already exact.
            if not len(X_u) or change < self.tol:
                converged = True
                break
            resp = np.exp(joint_u - log_evidence_u[:, None])
        else:
            self._em_warning = ConvergenceWarning(
                f"EM did not converge in max_iter={self.max_iter} iterations (last "
                f"change of the objective {change:.3g} >= tol={self.tol}); increase "
                "max_iter or tol."
            )
            warnings.warn(self._em_warning, stacklevel=caller_stacklevel())
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.lower_bound_ = trace[-1]
        self.lower_bound_trace_ = trace
        return stats, theta, used
