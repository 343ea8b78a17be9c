"""Supervised Bayesian Gaussian-mixture classifier with a normal-inverse-Wishart prior.

Each class ``k`` is one Gaussian ``N(mu_k, Sigma_k)`` with a conjugate
normal-inverse-Wishart prior ``NIW(m0, kappa0, v0, S0)`` on ``(mu_k, Sigma_k)``
and a symmetric Dirichlet prior on the class weights (Hughes et al.,
Appendix A). The posterior depends on the data only through weighted
sufficient statistics, which are merged exactly batch by batch, so
``partial_fit`` equals ``fit`` on the concatenated data; a batch refreshes the
posterior of the classes it holds only. Predictions use the
posterior predictive: a multivariate Student-t per class and a
Dirichlet-categorical class prior, combined by Bayes' rule in log space.
"""

from __future__ import annotations

import copy
import operator
import warnings
from math import fsum, isfinite, log
from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    validate_data,
)

__all__ = ["BayesianGMMClassifier"]


from skrbal._labels import labels_differ
from skrbal._logspace import exp_normalise
from skrbal._params import same_value
from skrbal._predictive import StudentTPredictive, student_t_log_density
from skrbal.exceptions import PriorScaleWarning, caller_stacklevel
from skrbal.mixture._base import _JointLikelihoodClassifier
from skrbal.mixture._class_priors import (
    resolve_references,
    unlabelled_classes_warning,
    validate_class_priors,
    validate_concentration,
)
from skrbal.mixture._directed_components import DirectedComponents
from skrbal.mixture._niw import (
    _CLASS_ATTRIBUTES,
    _class_posterior,
    _labelled_statistics,
    _merge,
    _NIWPrior,
    _pooled_moments,
    _present_statistics,
    _Statistics,
)
from skrbal.mixture._statement_check import other_label_evidence


def _label_indices(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Position of each label of ``y`` in the sorted ``classes``."""
    try:
        pos = classes.searchsorted(y)
        # A label above every class gets len(classes); "clip" compares it with
        # the last class, which it does not equal.
        unknown = labels_differ(classes.take(pos, mode="clip"), y)
    except TypeError as exc:
        raise ValueError(
            f"the labels of y cannot be compared with classes {classes.tolist()}."
        ) from exc
    unknown = np.asarray(unknown, dtype=bool)
    if np.count_nonzero(unknown):
        raise ValueError(
            f"y contains label(s) {np.unique(y[unknown]).tolist()} not in classes "
            f"{classes.tolist()}."
        )
    return pos


def _finite_float_array(value, name: str) -> np.ndarray:
    try:
        # A copy: the prior kept must not change with the caller's array.
        array = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {value!r}.") from exc
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return array


def _as_classes(classes, name: str = "classes") -> np.ndarray:
    classes = np.unique(np.asarray(classes))
    if classes.ndim != 1 or classes.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array of labels.")
    return classes


def _sample_weight(sample_weight, X: np.ndarray) -> np.ndarray:
    if sample_weight is None:
        return np.ones(X.shape[0])
    return _check_sample_weight(
        sample_weight, X, dtype=np.float64, ensure_non_negative=True
    )


# A default prior is far from the data when, for some feature, the training
# samples' root-mean-square distance from the prior mean is more than
# _FAR_ABOVE prior standard deviations, or less than _FAR_BELOW of one; or
# when, seen from the data, the prior (its mean's distance and its standard
# deviation) lies more than _FAR_ABOVE of the data's standard deviations away.
# The second catches raw features whose offset hides their spread: a natural
# frequency of 3.9 +- 0.2 Hz is 3.9 prior standard deviations from 0 (within
# the first band) while the prior's unit scale is 20 times its spread, and
# the class means and covariances it gives are the prior's, not the data's.
# The band is lopsided on purpose: a labelled subset of standardised features
# (one class, a few inspections) is legitimately tighter than the whole.
_FAR_ABOVE = 5.0
_FAR_BELOW = 0.05


def _prior_scale_warning(owner, centre, spread, mean, scale):
    """A :class:`PriorScaleWarning` when the data are far from the prior's scale.

    ``centre`` and ``spread`` are the training data's per-feature mean and
    variance, ``mean`` and ``scale`` the prior's ``m0`` and ``S0``.
    """
    # Data beyond double precision overflow here; the fit names them later.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        offset = (centre - mean) ** 2
        ratio = np.sqrt((spread + offset) / np.diagonal(scale))
        # A feature that does not vary says nothing of its scale.
        seen = np.sqrt((offset + np.diagonal(scale)) / np.where(spread > 0, spread, 1))
        seen = np.where(spread > 0, seen, 1.0)
    far = np.flatnonzero((ratio > _FAR_ABOVE) | (ratio < _FAR_BELOW))
    broad = np.flatnonzero(seen > _FAR_ABOVE)
    if far.size:
        with np.errstate(divide="ignore"):  # a ratio of 0 is the farthest below
            worst = far[np.argmax(np.abs(np.log(ratio[far])))]
        distance = (
            f"their root-mean-square distance from the prior mean is "
            f"{ratio[worst]:.3g} prior standard deviations (feature(s) "
            f"{far.tolist()} outside [{_FAR_BELOW}, {_FAR_ABOVE:g}])"
        )
    elif broad.size:
        worst = broad[np.argmax(seen[broad])]
        distance = (
            f"the prior's mean and scale lie {seen[worst]:.3g} of the features' "
            f"standard deviations from them (feature(s) {broad.tolist()} above "
            f"{_FAR_ABOVE:g})"
        )
    else:
        return None
    return PriorScaleWarning(
        f"{owner}: the training features lie far from the scale of the default "
        f"prior (mean {mean[worst]:.3g}, variance {scale[worst, worst]:.3g} for "
        f"feature {worst}): {distance}. With few "
        "labels the prior then dominates the class means and covariances. "
        "Standardise the features (make_pipeline(StandardScaler(), ...)) or set "
        "mean_prior='data' and covariance_prior='data'."
    )


class _BaseNIWClassifier(_JointLikelihoodClassifier):
    """Priors, conjugate update and posterior predictive shared by the classifiers.

    Subclasses define ``__init__`` (with at least the prior parameters and
    ``classes``) and ``fit``; everything after the sufficient statistics is
    here.
    """

    _parameter_constraints: ClassVar[dict] = {
        **_JointLikelihoodClassifier._parameter_constraints,
        "mean_prior": [None, StrOptions({"data"}), Real, "array-like"],
        "covariance_prior": [
            None,
            StrOptions({"data"}),
            Interval(Real, 0, None, closed="neither"),
            "array-like",
        ],
        "class_priors": [None, dict],
    }
    # The smallest alpha_k the fit can use (EM needs a Dirichlet mode).
    _min_concentration = 0.0

    # ------------------------------------------------------------------ #
    # priors and labels
    # ------------------------------------------------------------------ #
    def _validate_prior(
        self, data: _Statistics, classes: np.ndarray, labelled: np.ndarray
    ) -> _NIWPrior:
        """The prior's hyperparameters, checked against the training data.

        ``data`` holds the statistics of the training samples (per class, or
        all as one class); a ``'data'`` prior parameter is derived from their
        pooled moments. When ``mean_prior`` or ``covariance_prior`` is left at
        its default (unset: 0, the identity) and the data lie far from that
        scale, a :class:`~skrbal.exceptions.PriorScaleWarning` is raised.
        ``labelled`` is the labelled weight of each class of ``classes``:
        the classes without any get an
        :class:`~skrbal.exceptions.UnlabelledClassesWarning`. The prior
        returned carries the warnings raised in ``warnings``.
        """
        d = data.mean.shape[-1]
        _, centre, spread = _pooled_moments(data)
        mean = self._prior_mean(d, centre)
        dof = self.degrees_of_freedom_prior
        dof = float(d if dof is None else dof)
        if dof <= d - 1:
            raise ValueError(
                "degrees_of_freedom_prior must be greater than n_features - 1 = "
                f"{d - 1} for a proper inverse-Wishart prior, got {dof}."
            )
        scale = self._prior_scale(d, spread)
        found = []
        # A prior set explicitly is taken as meant (the paper's reproductions
        # pin its unit prior on purpose); only a default left unset is checked.
        if self.mean_prior is None or self.covariance_prior is None:
            warning = _prior_scale_warning(
                type(self).__name__, centre, spread, mean, scale
            )
            if warning is not None:
                warnings.warn(warning, stacklevel=caller_stacklevel())
                found.append(warning)
        concentration = validate_concentration(
            self.weight_concentration_prior,
            classes,
            self._min_concentration,
            type(self).__name__,
        )
        directed = resolve_references(
            validate_class_priors(self.class_priors, classes, d), labelled
        )
        warning = unlabelled_classes_warning(
            type(self).__name__, classes, labelled, directed
        )
        if warning is not None:
            warnings.warn(warning, stacklevel=caller_stacklevel())
            found.append(warning)
        return _NIWPrior(
            mean,
            float(self.mean_precision_prior),
            dof,
            scale,
            concentration,
            tuple(found),
            directed,
        )

    def _prior_mean(self, d: int, centre: np.ndarray) -> np.ndarray:
        if self.mean_prior is None:
            return np.zeros(d)
        if isinstance(self.mean_prior, str):  # 'data', as validated
            return centre.copy()
        if isinstance(self.mean_prior, Real):
            return np.full(d, _finite_float_array(self.mean_prior, "mean_prior"))
        mean = _finite_float_array(self.mean_prior, "mean_prior")
        if mean.shape != (d,):
            raise ValueError(
                f"mean_prior must have shape ({d},) to match n_features (or be "
                f"a float), got {mean.shape}."
            )
        return mean

    def _prior_scale(self, d: int, spread: np.ndarray) -> np.ndarray:
        scale = self.covariance_prior
        if scale is None:
            return np.eye(d)
        if isinstance(scale, str):  # 'data', as validated
            constant = np.flatnonzero(~(spread > 0))
            if constant.size:
                raise ValueError(
                    "covariance_prior='data' takes the variance of each feature "
                    "over the training samples, but feature(s) "
                    f"{constant.tolist()} do not vary there (fewer than two "
                    "distinct samples, or a constant column); give "
                    "covariance_prior explicitly."
                )
            return np.diag(spread)
        if isinstance(scale, Real):
            return float(scale) * np.eye(d)
        scale = _finite_float_array(scale, "covariance_prior")
        if scale.shape != (d, d):
            raise ValueError(
                f"covariance_prior must be a float or have shape ({d}, {d}), "
                f"got shape {scale.shape}."
            )
        if not np.allclose(scale, scale.T, rtol=1e-10, atol=0.0):
            raise ValueError("covariance_prior must be symmetric.")
        try:
            np.linalg.cholesky(scale)
        except np.linalg.LinAlgError:
            raise ValueError(
                "covariance_prior must be symmetric positive definite; its "
                f"smallest eigenvalue is {np.linalg.eigvalsh(scale)[0]:.3g}."
            ) from None
        return scale

    def _fit_classes(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``classes_`` and the class index of every label, for ``fit``."""
        check_classification_targets(y)
        if self.classes is None:
            return np.unique(y, return_inverse=True)
        classes = _as_classes(self.classes)
        return classes, _label_indices(y, classes)

    # ------------------------------------------------------------------ #
    # conjugate update
    # ------------------------------------------------------------------ #
    def _set_posterior(
        self,
        stats: _Statistics,
        prior: _NIWPrior,
        reference: _Statistics | None = None,
        points: tuple | None = None,
    ) -> None:
        """Store the statistics, the NIW posterior and its predictive factors.

        ``reference`` holds the statistics the directed priors are stated
        against (default: ``stats``, refreshed by every update). ``points``
        ``(X, y_idx, weight)``, the labelled samples in the order learnt,
        weigh the statements that ask for it by the unstated classes' labels
        (:func:`~skrbal.mixture._statement_check.other_label_evidence`).
        """
        columns = zip(
            *(
                _class_posterior(prior, *row, alpha)
                for *row, alpha in zip(*stats, prior.concentration.tolist())
            )
        )
        self._statistics = stats
        self._prior = prior
        self.mean_prior_ = prior.mean
        self.covariance_prior_ = prior.scale
        self.fit_warnings_ = list(prior.warnings)
        for name, column in zip(_CLASS_ATTRIBUTES, columns):
            setattr(self, name, np.array(column))
        self._directed = DirectedComponents(
            prior,
            stats,
            stats if reference is None else reference,
            evidence=_evidence(prior, points),
        )
        self._directed.store(self)
        self._set_class_prior()

    def _update_posterior(
        self, present: np.ndarray, batch: _Statistics, points: tuple | None = None
    ) -> None:
        """Merge the statistics of a batch into those of the classes ``present``.

        Only those classes are refreshed (and the directed priors stated
        against them; ``points``, all the labelled samples, as in
        :meth:`_set_posterior`). Everything is computed before anything is
        stored, so a failure leaves the model as it was.
        """
        stored = self._statistics
        updates = []
        alpha = self._prior.concentration
        # Counts as Python floats: NumPy scalars make every scalar step dearer.
        classes = zip(present.tolist(), batch.count.tolist(), batch.mean, batch.scatter)
        for k, *batch_class in classes:
            merged = _merge(
                stored.count.item(k), stored.mean[k], stored.scatter[k], *batch_class
            )
            updates.append(
                (k, merged, _class_posterior(self._prior, *merged, alpha.item(k)))
            )
        if self._prior.directed:
            # Computed before anything is stored, like the classes' updates.
            stats = _Statistics(*(field.copy() for field in stored))
            for k, merged, _ in updates:
                for field, value in zip(stats, merged):
                    field[k] = value
            directed = self._directed.updated(
                self._prior, stats, present, _evidence(self._prior, points)
            )
        for k, merged, attributes in updates:
            for field, value in zip(stored, merged):
                field[k] = value
            for name, value in zip(_CLASS_ATTRIBUTES, attributes):
                getattr(self, name)[k] = value
        if self._prior.directed:
            self._directed = directed
            directed.store(self)
        if self.unlabelled_classes_.size:
            self._record_unlabelled(stored.count)
        self._set_class_prior()

    def _record_unlabelled(self, labelled: np.ndarray) -> None:
        self.unlabelled_classes_ = self.classes_[~(labelled > 0)]

    def _set_class_prior(self) -> None:
        concentration = self.weight_concentration_
        self._log_class_prior = np.log(concentration) - log(
            fsum(concentration.tolist())
        )

    # ------------------------------------------------------------------ #
    # posterior predictive
    # ------------------------------------------------------------------ #
    def _class_log_density(self, X: np.ndarray, log_class_prior=None) -> np.ndarray:
        """Predictive log densities plus ``log_class_prior[k]``, shape (K, n).

        A Student-t per class; a class with a directed prior has the mixture
        of its two components' Student-t densities, summed in log space.
        """
        # The normalisers and the class prior in one pass.
        offset = self._t_log_norm
        if log_class_prior is not None:
            offset = offset + log_class_prior
        density = student_t_log_density(
            X, self.mean_posterior_, self._t_whiteners, self._t_df, offset
        )
        if self._prior.directed:
            self._directed.mix(X, density, log_class_prior)
        return density

    def _joint_log_likelihood(self, X: np.ndarray) -> np.ndarray:
        """``log p(x, y=k | D)``, shape (n_samples, n_classes)."""
        return self._class_log_density(X, self._log_class_prior).T

    def class_log_density(self, X) -> np.ndarray:
        """Log posterior predictive density of ``X`` under each class.

        ``log p(x | y=k, D)``: the multivariate Student-t with ``v_n - D + 1``
        degrees of freedom, location ``m_n`` and scale
        ``(kappa_n + 1) / (kappa_n (v_n - D + 1)) S_n``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_density : ndarray of shape (n_samples, n_classes)
            Columns ordered as ``classes_``.

        Examples
        --------
        >>> import numpy as np
        >>> from skrbal.mixture import BayesianGMMClassifier
        >>> clf = BayesianGMMClassifier(classes=[0, 1]).fit([[0.0]], [0])
        >>> clf.class_log_density(np.array([[0.0]])).round(3)
        array([[-0.896, -1.491]])
        """
        return self._class_log_density(self._check_X(X)).T

    @staticmethod
    def stacked_predictor(models):
        """A function predicting several fitted models over the same samples at once.

        The function keeps the models' parameters stacked, so each call
        checks the input once, computes the class densities of all models in
        one pass, and computes once a class whose posterior is the same in
        several models (copies of one model that learnt different labels, as
        fantasised results are). Models of another kind, or with other
        classes or features, are predicted one by one.

        Parameters
        ----------
        models : sequence of fitted BayesianGMMClassifier
            Or :class:`SemiSupervisedGMMClassifier`; they must not change
            while the function is used.

        Returns
        -------
        predict : callable
            ``predict(X)`` returns the array of shape (n_models, n_samples,
            n_classes) equal, bit for bit, to ``np.stack([m.predict_proba(X)
            for m in models])``.

        Examples
        --------
        >>> import copy
        >>> import numpy as np
        >>> from skrbal.mixture import BayesianGMMClassifier
        >>> base = BayesianGMMClassifier().fit([[0.0], [1.0], [3.0]], [0, 0, 1])
        >>> models = [copy.deepcopy(base).partial_fit([[2.0]], [k]) for k in (0, 1)]
        >>> predict = BayesianGMMClassifier.stacked_predictor(models)
        >>> predict([[1.5]]).shape
        (2, 1, 2)
        >>> bool(np.array_equal(predict([[1.5]])[1], models[1].predict_proba([[1.5]])))
        True
        """
        models = tuple(models)
        if not models:
            raise ValueError("stacked_predictor needs at least one model.")
        first = models[0]
        same = all(
            isinstance(m, _BaseNIWClassifier)
            and type(m).predict_proba is _BaseNIWClassifier.predict_proba
            and type(m)._class_log_density is _BaseNIWClassifier._class_log_density
            and hasattr(m, "_statistics")
            and m.n_features_in_ == first.n_features_in_
            and np.array_equal(m.classes_, first.classes_)
            for m in models
        )
        if not same:
            return lambda X: np.stack([m.predict_proba(X) for m in models])
        return _StackedNIW(models)


class _StackedNIW:
    """The posterior predictives of several NIW classifiers, stacked (see
    :meth:`_BaseNIWClassifier.stacked_predictor`).

    Their Student-t densities are a :class:`~skrbal._predictive.StudentTPredictive`
    (``predictive``), which a store keeps as the models' snapshot when no
    class has a directed prior (``directed`` is empty).
    """

    def __init__(self, models):
        self.models = models
        self.predictive = StudentTPredictive(
            means=np.concatenate([m.mean_posterior_ for m in models]),
            whiteners=np.concatenate([m._t_whiteners for m in models]),
            df=np.concatenate([m._t_df for m in models]),
            offset=np.concatenate([m._t_log_norm + m._log_class_prior for m in models]),
            n_classes=models[0].classes_.shape[0],
        )
        self.directed = [(i, m) for i, m in enumerate(models) if m._prior.directed]

    def __call__(self, X) -> np.ndarray:
        models = self.models
        X = models[0]._check_X(X)
        n_classes = models[0].classes_.shape[0]
        density = self.predictive.log_density(X)
        for i, m in self.directed:
            block = density[i * n_classes : (i + 1) * n_classes]
            m._directed.mix(X, block, m._log_class_prior)
        stacked = density.reshape(len(models), n_classes, X.shape[0])
        return exp_normalise(stacked.transpose(0, 2, 1), axis=-1)


class BayesianGMMClassifier(_BaseNIWClassifier):
    """Bayesian Gaussian-mixture classifier with conjugate NIW priors.

    One Gaussian ``N(mu_k, Sigma_k)`` per class with a normal-inverse-Wishart
    prior ``NIW(m0, kappa0, v0, S0)`` shared by all classes and a symmetric
    Dirichlet prior on the class weights. The posterior is exact and
    conjugate; predictions marginalise the parameters, so the class-conditional
    density is a multivariate Student-t and the class prior is
    ``(N_k + alpha) / (N + K alpha)``. ``partial_fit`` updates the stored
    sufficient statistics exactly, so feeding the data in batches gives the
    same model as one ``fit`` with the same prior (a ``'data'`` prior is
    taken from the first batch, see ``covariance_prior``).

    Parameters
    ----------
    mean_prior : {'data'}, float or array-like of shape (n_features,), \
            default=None
        Prior mean ``m0`` of every class mean. ``None`` means zeros (the
        paper's prior, meant for standardised features); a float is that
        value for every feature; ``'data'`` is the (weighted) mean of the
        training samples, as :class:`~sklearn.mixture.BayesianGaussianMixture`
        sets it.
    mean_precision_prior : float, default=1.0
        ``kappa0 > 0``: how many pseudo-observations the prior mean is worth.
    degrees_of_freedom_prior : float, default=None
        ``v0 > n_features - 1``: strength of the inverse-Wishart prior on the
        covariances. ``None`` means ``n_features``, for which the prior
        predictive Student-t has one degree of freedom (the paper's choice).
    covariance_prior : {'data'}, float or array-like of shape \
            (n_features, n_features), default=None
        Inverse-Wishart scale matrix ``S0``: ``None`` is the identity (the
        paper's prior), a float a scaled identity, ``'data'`` the diagonal
        matrix of the training samples' (weighted) per-feature variances, or
        a symmetric positive-definite matrix. With ``mean_prior='data'`` too,
        the model is exactly the paper's prior on features standardised by
        :class:`~sklearn.preprocessing.StandardScaler` (the posterior
        predictive is affine-equivariant), so predictions do not depend on
        the features' units. A data-derived prior is fixed by the call that
        starts the model (``fit``, or the first ``partial_fit``) and stored
        in ``mean_prior_`` and ``covariance_prior_``.
    weight_concentration_prior : float, dict or array-like of shape \
            (n_classes,), default=1.0
        ``alpha > 0`` of the Dirichlet prior on the class weights: one value
        for every class (the symmetric prior), a dict ``{class label: alpha}``
        (classes not named keep 1) or one value per class in the order of
        ``classes_``. A never-labelled class has the prior class weight
        ``alpha_k / (N + sum alpha)``;
        :func:`~skrbal.mixture.process_weight_concentration` derives the
        values from a decision process's transition model.
    class_priors : dict, default=None
        Prior knowledge about where some classes lie, in engineering terms:
        ``{class label: statement}``, each statement a dict with

        - ``'shift'`` (required): a float, or one per feature, by which the
          class's mean lies from the reference class's;
        - ``'units'``: ``'std'`` (default: standard deviations of the
          reference class, per feature), ``'relative'`` (fractions of the
          magnitude of the reference class's mean: ``-0.03`` is "3 % lower",
          for features in physical units) or ``'absolute'`` (feature units);
        - ``'reference'``: the class it is stated against, which has no
          statement itself (default: the class with the most labelled
          samples when the model is started, e.g. the healthy one);
        - ``'weight'``: prior probability of the statement, in (0, 1)
          (default 0.9); the broad prior keeps the rest;
        - ``'mean_precision'``: how many reference samples the stated
          location is worth (default ``1 / d**2``, with ``d`` the stated
          step's length in reference standard deviations (Mahalanobis),
          clipped to [0.1, 1]: the location is uncertain by about the step
          itself, so a size half or twice too large still lies inside it,
          and by at most about three reference standard deviations);
        - ``'degrees_of_freedom'``: of the inverse-Wishart centred on the
          reference class's covariance (default ``n_features + 2``);
        - ``'statement'``: a name (string or integer) shared by the entries
          of one claim, such as "damage lowers every frequency" for a
          damaged and a severe state (default: none, each entry its own
          claim). They must give the same ``'weight'``; they share which
          component is true, so a label of one class tests the claim for
          all of them.
        - ``'check'``: also weigh the statement by the labels of the
          classes it says nothing about (not the reference, no statement
          of their own; default False). Each such label counts, with even
          odds between its class and the stated one, how much less expected
          it was where the directed component puts the state than under
          the broad prior (prequential, exact): a statement that puts
          damage where the frost is loses its weight as the frost is
          inspected and found healthy, before any damage label. The model
          keeps its labelled samples for this.
        - ``'size_factor'``: the factor within which the shift's size is
          known (default 1: as stated). ``f > 1`` makes the directed
          component a mixture of five, the shift scaled by ``f^u`` for ``u``
          evenly spaced in [-1, 1], with prior probabilities (1, 4, 6, 4,
          1) / 16 (a log-normal size about the stated one, ``f`` two
          standard deviations away, on a grid), weighed by the class's data
          like the two components; a size stated half or twice too large
          then still puts directed mass where the state is (``f = 2``).

        Such a class has a mixture of two NIW priors, the directed one (its
        mean at the reference class's posterior mean moved by the shift, its
        covariance prior centred on the reference class's covariance) and
        the broad one of the other classes. The posterior is the mixture of
        the two NIW posteriors with weights updated by each one's marginal
        likelihood of the class's data, and the predictive a mixture of two
        Student-t densities. The directed prior follows the reference class
        as its labels arrive. Whatever the statement, the class's density is
        at least ``1 - weight`` times the one it has with the broad prior,
        so a wrong statement cannot hide the state, and its first labels
        move the weight onto the component that explains them. ``None``:
        every class has the broad prior (the paper's model).
    classes : array-like of shape (n_classes,), default=None
        The full label set. When given, ``fit`` accepts data holding only
        some of these labels, and a class with no data keeps its prior
        predictive; a label of ``y`` outside it raises ``ValueError``. It is
        also the default ``classes`` of the first ``partial_fit`` call.
        ``None`` takes the labels present in ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of training samples ``N_k`` of each class.
    means_ : ndarray of shape (n_classes, n_features)
        MAP estimate of each class mean, ``m_n``.
    covariances_ : ndarray of shape (n_classes, n_features, n_features)
        MAP estimate of each class covariance, ``S_n / (v_n + D + 2)``.
    mean_posterior_ : ndarray of shape (n_classes, n_features)
        Posterior location ``m_n = (kappa0 m0 + sum w x) / (kappa0 + N_k)``.
    mean_precision_posterior_ : ndarray of shape (n_classes,)
        Posterior ``kappa_n = kappa0 + N_k``.
    degrees_of_freedom_posterior_ : ndarray of shape (n_classes,)
        Posterior ``v_n = v0 + N_k``.
    covariance_posterior_ : ndarray of shape (n_classes, n_features, n_features)
        Posterior inverse-Wishart scale
        ``S_n = S0 + sum w x x^T + kappa0 m0 m0^T - kappa_n m_n m_n^T``.
    weight_concentration_ : ndarray of shape (n_classes,)
        Posterior Dirichlet concentration ``alpha + N_k``.
    directed_prior_weight_ : ndarray of shape (n_classes,)
        Posterior probability of the directed component of each class with a
        ``class_priors`` statement (0 for the others). For such a class,
        ``means_`` and ``covariances_`` average the two components with
        these weights; the other posterior attributes describe its broad
        component.
    directed_mean_prior_ : ndarray of shape (n_classes, n_features)
        Prior mean of each directed component (NaN for the classes without
        one).
    unlabelled_classes_ : ndarray
        The classes without any labelled sample yet, whose belief rests on
        the prior alone; kept up to date by ``partial_fit``.
    mean_prior_ : ndarray of shape (n_features,)
        The prior mean ``m0`` used.
    covariance_prior_ : ndarray of shape (n_features, n_features)
        The prior scale ``S0`` used.
    fit_warnings_ : list of Warning
        The :class:`~skrbal.exceptions.PriorScaleWarning` and
        :class:`~skrbal.exceptions.UnlabelledClassesWarning` raised when the
        prior was set (empty when none was), so a batch study can count them.
        The second names the classes without a labelled sample and what the
        belief in each rests on (the broad prior, or a directed one).
        A default prior (``mean_prior`` or ``covariance_prior`` left at
        ``None``, or pinned to the default's 0 or identity, as the paper's
        methods do) is checked: the warning says when, for some feature, the
        training samples' root-mean-square distance from ``m0`` is above 5 or
        below 0.05 prior standard deviations, or ``m0``'s distance and the
        prior's standard deviation are together above 5 of the samples'
        standard deviations (raw features whose offset hides their spread,
        such as frequencies near 3.9 Hz). Any other explicit prior is taken
        as meant and not checked.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    SemiSupervisedGMMClassifier : The same model fitted to partly labelled data
        by expectation-maximisation.
    sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis : The
        maximum-likelihood counterpart with Gaussian class densities.
    sklearn.naive_bayes.GaussianNB : Diagonal Gaussians, also with
        ``partial_fit``.

    Notes
    -----
    The statistics kept are, per class, the weighted count, the weighted mean
    and the scatter about it; batches are merged with the pairwise update of
    Chan, Golub and LeVeque, and ``S_n`` is formed in its centred form
    ``S0 + scatter + kappa0 N_k / (kappa0 + N_k) (xbar - m0)(xbar - m0)^T``,
    which avoids the cancellation of the textbook expression. Densities are
    evaluated from Cholesky factors and normalised with the log-sum-exp
    shift, so points far from every class still get finite, normalised
    probabilities.

    References
    ----------
    A. J. Hughes, L. A. Bull, P. Gardner, R. J. Barthorpe, N. Dervilis and
    K. Worden, "On risk-based active learning for structural health
    monitoring", Mechanical Systems and Signal Processing, 2022, Appendix A.

    K. P. Murphy, "Machine Learning: A Probabilistic Perspective", MIT Press,
    2012, section 4.6.3.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.mixture import BayesianGMMClassifier
    >>> X = np.array([[-2.0, 0.0], [-1.5, 0.5], [2.0, 0.0], [1.5, -0.5]])
    >>> y = np.array([1, 1, 2, 2])
    >>> clf = BayesianGMMClassifier(classes=[1, 2, 3, 4]).fit(X, y)
    >>> clf.predict([[-1.8, 0.1], [1.9, 0.0]])
    array([1, 2])
    >>> clf.predict_proba([[0.0, 0.0]]).shape
    (1, 4)
    >>> clf.partial_fit([[0.0, 3.0]], [3]).class_count_
    array([2., 2., 1., 0.])

    A class never labelled, stated to lie 3 standard deviations of class 1
    below it on the first feature:

    >>> import warnings
    >>> stated = BayesianGMMClassifier(
    ...     classes=[1, 2, 3], class_priors={3: {"shift": [-3.0, 0.0]}})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     stated = stated.fit(X, y)
    >>> stated.unlabelled_classes_
    array([3])
    >>> stated.directed_mean_prior_[2].round(2)
    array([-3.05,  0.17])
    """

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
    ):
        self.mean_prior = mean_prior
        self.mean_precision_prior = mean_precision_prior
        self.degrees_of_freedom_prior = degrees_of_freedom_prior
        self.covariance_prior = covariance_prior
        self.weight_concentration_prior = weight_concentration_prior
        self.class_priors = class_priors
        self.classes = classes

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None) -> BayesianGMMClassifier:
        """Compute the posterior from labelled data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, counted as fractional observations: a weight
            of 2 is the same as the sample appearing twice.

        Returns
        -------
        self : BayesianGMMClassifier
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, y_idx = self._fit_classes(y)
        self._fit_labelled(X, y_idx, classes, sample_weight)
        return self

    def partial_fit(
        self, X, y, classes=None, sample_weight=None
    ) -> BayesianGMMClassifier:
        """Update the posterior with a batch of labelled data.

        The update is the exact conjugate one: any split of the data into
        batches gives the model ``fit`` gives on all of it with the same
        prior. A ``'data'`` prior parameter is derived from the first call's
        batch and kept by the later calls, so a stream equals ``fit`` on all
        its data with ``mean_prior=mean_prior_`` and
        ``covariance_prior=covariance_prior_``, not ``fit`` with ``'data'``
        (which would take the prior from all of it). Only the classes present
        in the batch are refreshed.

        Parameters changed (``set_params``) since the previous call are
        validated again: a new prior applies to all the data seen so far, as
        if ``fit`` were called on it (a ``'data'`` parameter is then derived
        from all the data seen before this call), and a ``classes`` parameter
        that differs from ``classes_`` raises ``ValueError``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels.
        classes : array-like of shape (n_classes,), default=None
            All the labels that can appear. Required on the first call unless
            the ``classes`` parameter was set; on later calls it may be
            omitted, and if given must equal ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, counted as fractional observations.

        Returns
        -------
        self : BayesianGMMClassifier
            The updated classifier.
        """
        if not hasattr(self, "_statistics"):
            return self._first_partial_fit(X, y, classes, sample_weight)
        self._check_parameters()
        X, y = self._checked_update(X, y)
        if classes is not None and not np.array_equal(
            _as_classes(classes), self.classes_
        ):
            raise ValueError(
                f"classes={np.asarray(classes).tolist()} differs from "
                f"classes_={self.classes_.tolist()} of the previous call to "
                "partial_fit."
            )
        y_idx = _label_indices(y, self.classes_)
        weight = _sample_weight(sample_weight, X)
        points = self._labelled_points
        if points is not None:
            points = tuple(map(np.concatenate, zip(points, (X, y_idx, weight))))
        self._update_posterior(*_present_statistics(X, y_idx, weight), points)
        self._labelled_points = points
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def _first_partial_fit(self, X, y, classes, sample_weight):
        # Parameters are validated here, by the decorator, and later only when
        # they change (see _check_parameters): sklearn's validation and config
        # contexts cost several times a one-sample update.
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes = self._partial_fit_classes(classes)
        self._fit_labelled(X, _label_indices(y, classes), classes, sample_weight)
        return self

    def _fit_labelled(self, X, y_idx, classes, sample_weight) -> None:
        """Set the posterior from one labelled batch (``fit``, first ``partial_fit``).

        State is written only once the batch has passed every check, so a
        rejected first call leaves the model unfitted.
        """
        weight = _sample_weight(sample_weight, X)
        stats = _labelled_statistics(X, y_idx, weight, len(classes))
        prior = self._validate_prior(stats, classes, stats.count)
        self.classes_ = classes
        # Kept only where a statement is checked against the other labels.
        points = (X.copy(), y_idx, weight) if _checks(prior) else None
        self._set_posterior(stats, prior, points=points)
        self._labelled_points = points
        self._record_unlabelled(stats.count)
        self._seen_parameters = copy.deepcopy(_parameter_values(self))

    def _check_parameters(self) -> None:
        """Take in parameters changed (``set_params``) since they were validated.

        Comparing with the values then validated costs well under a
        microsecond for the usual None, number and list parameters, so every
        ``partial_fit`` can afford it; they are kept as deep copies, so an
        array changed in place counts as changed. A changed prior applies to
        all the data seen so far (the statistics do not depend on it), giving
        the model ``fit`` would; a changed ``classes`` raises.
        """
        current = _parameter_values(self)
        seen = getattr(self, "_seen_parameters", None)
        try:
            # Identical objects compare equal at once; lists and numbers by value.
            if current == seen:
                return
        except ValueError:  # an array parameter: compare one by one
            if all(map(same_value, current, seen)):
                return
        self._validate_params()
        prior = self._validate_prior(
            self._statistics, self.classes_, self._statistics.count
        )
        if self.classes is not None and not np.array_equal(
            _as_classes(self.classes), self.classes_
        ):
            raise ValueError(
                f"the classes parameter {np.asarray(self.classes).tolist()} differs "
                f"from classes_={self.classes_.tolist()} of the fitted model; call "
                "fit to start again with other classes."
            )
        points = getattr(self, "_labelled_points", None)
        if _checks(prior) and points is None:
            raise ValueError(
                "class_priors now checks a statement against the other classes' "
                "labels ('check'), but the model was fitted without it and did "
                "not keep its labelled samples; call fit to start again."
            )
        self._set_posterior(self._statistics, prior, points=points)
        self._labelled_points = points if _checks(prior) else None
        self._seen_parameters = copy.deepcopy(current)

    def _partial_fit_classes(self, classes) -> np.ndarray:
        if classes is None and self.classes is None:
            raise ValueError(
                "classes must be passed on the first call to partial_fit (or set "
                "as a parameter)."
            )
        if classes is None:
            return _as_classes(self.classes)
        found = _as_classes(classes)
        if self.classes is not None and not np.array_equal(
            found, _as_classes(self.classes)
        ):
            raise ValueError(
                f"classes={found.tolist()} passed to partial_fit differs from the "
                f"classes parameter {_as_classes(self.classes).tolist()}."
            )
        return found

    def _checked_update(self, X, y):
        """``validate_data(self, X, y, reset=False)`` for a fitted model.

        ``validate_data`` costs a few hundred microseconds even for one
        sample, which dominates a streaming ``partial_fit``. When the input is
        already what it would return (a finite float64 ndarray with the
        fitted number of features, no feature names, a 1-d label array) it is
        used as is, after converting plain lists as ``check_array`` would;
        anything else goes through ``validate_data``, which raises the usual
        errors.
        """
        X_fast, y_fast = X, y
        if type(X) is list:
            try:
                X_fast = np.asarray(X, dtype=np.float64)
            except (TypeError, ValueError):
                pass  # validate_data names the problem
        if type(y) is list:
            y_fast = np.asarray(y)
        if (
            type(X_fast) is np.ndarray
            and type(y_fast) is np.ndarray
            and X_fast.dtype == np.float64
            and X_fast.ndim == 2
            and y_fast.ndim == 1
            and 0 < X_fast.shape[0] == y_fast.shape[0]
            and X_fast.shape[1] == self.n_features_in_
            and y_fast.dtype.kind in "iuUf"
            and not hasattr(self, "feature_names_in_")
            # A finite sum means finite entries; an overflowing one is left to
            # validate_data.
            and isfinite(X_fast.sum())
            and (y_fast.dtype.kind != "f" or isfinite(y_fast.sum()))
        ):
            return X_fast, y_fast
        return validate_data(self, X, y, reset=False, dtype=np.float64)


def _checks(prior: _NIWPrior) -> bool:
    """Whether a directed entry is checked against the unstated classes' labels."""
    return any(entry.check for entry in prior.directed)


def _evidence(prior: _NIWPrior, points):
    """The unstated classes' labels' evidence per directed entry, or None."""
    if points is None or not _checks(prior):
        return None
    return other_label_evidence(prior, *points)


_parameter_values = operator.attrgetter(*BayesianGMMClassifier._get_param_names())
