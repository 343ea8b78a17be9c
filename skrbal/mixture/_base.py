"""What every mixture classifier derives from its joint log-likelihood.

A mixture classifier of this package defines ``_joint_log_likelihood``
(``log p(x, y=k | D)`` of validated samples) and, where its samples need a
transformation first, ``_check_X``; the predictions follow by Bayes' rule in
log space, the same way for all of them.
"""

from __future__ import annotations

from math import isfinite
from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from skrbal._logspace import exp_normalise, log_normalise


class _JointLikelihoodClassifier(ClassifierMixin, BaseEstimator):
    """Predictions from one joint log-likelihood, for the mixture classifiers.

    Subclasses define ``_joint_log_likelihood(X)``, shape
    ``(n_samples, n_classes)``, and keep their sufficient statistics in
    ``_statistics`` once fitted. The constraints here are those of the
    parameters every one of them takes (the broad NIW prior's ``kappa0`` and
    ``v0``, the Dirichlet prior on the class weights, the label set); each
    subclass adds its own.
    """

    _parameter_constraints: ClassVar[dict] = {
        "mean_precision_prior": [Interval(Real, 0, None, closed="neither")],
        "degrees_of_freedom_prior": [None, Interval(Real, 0, None, closed="neither")],
        "weight_concentration_prior": [
            Interval(Real, 0, None, closed="neither"),
            dict,
            "array-like",
        ],
        "classes": [None, "array-like"],
    }

    def _joint_log_likelihood(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _check_X(self, X) -> np.ndarray:
        """``check_is_fitted`` then ``validate_data(self, X, reset=False)``.

        ``validate_data`` costs over a hundred microseconds, several times the
        densities of a few samples, which a stream learner asks for at every
        step it decides. Input that already is what it would return (a
        non-empty finite float64 2-d ndarray with the fitted number of
        features, for a model fitted without feature names) is used as it
        is; anything else goes through it and gets its usual errors and
        warnings.
        """
        if (
            type(X) is np.ndarray
            and X.dtype == np.float64
            and X.ndim == 2
            and X.shape[0] > 0
            and hasattr(self, "_statistics")
            and X.shape[1] == self.n_features_in_
            and not hasattr(self, "feature_names_in_")
            # A finite sum means finite entries; an overflowing one is left to
            # validate_data.
            and isfinite(X.sum())
        ):
            return X
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict_joint_log_proba(self, X) -> np.ndarray:
        """Joint log probability ``log p(x, y=k | D)`` of each sample and class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        joint_log_proba : ndarray of shape (n_samples, n_classes)
            Columns ordered as ``classes_``.

        Examples
        --------
        >>> from skrbal.mixture import BayesianGMMClassifier
        >>> clf = BayesianGMMClassifier(classes=[0, 1]).fit([[0.0]], [0])
        >>> clf.predict_joint_log_proba([[0.0]]).round(3)
        array([[-1.301, -2.59 ]])
        """
        return self._joint_log_likelihood(self._check_X(X))

    def predict(self, X) -> np.ndarray:
        """Most probable class of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        joint = self._joint_log_likelihood(self._check_X(X))
        return self.classes_[np.argmax(joint, axis=1)]

    def predict_log_proba(self, X) -> np.ndarray:
        """Log posterior probability of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns ordered as ``classes_``.
        """
        return log_normalise(self._joint_log_likelihood(self._check_X(X)), axis=1)

    def predict_proba(self, X) -> np.ndarray:
        """Posterior probability of each class (Bayes' rule on the predictive).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns ordered as ``classes_``; rows sum to one.
        """
        return exp_normalise(self._joint_log_likelihood(self._check_X(X)), axis=1)
