"""A maintained pool-based active learner with modAL's interface."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import _safe_indexing

from skrbal.active._semi import can_partial_fit
from skrbal.query import least_confident_sampling

__all__ = ["ActiveLearner"]

_UPDATES = ("auto", "partial_fit", "refit")


def _stack(a, b):
    if a is None:
        return b
    if hasattr(a, "iloc") and hasattr(b, "iloc"):
        import pandas as pd

        return pd.concat([a, b], axis=0, ignore_index=True)
    if hasattr(a, "iloc"):
        a = a.to_numpy()
    if hasattr(b, "iloc"):
        b = b.to_numpy()
    return np.concatenate([np.asarray(a), np.asarray(b)], axis=0)


class ActiveLearner(BaseEstimator):
    """Pool-based active learner with the interface of modAL's ``ActiveLearner``.

    A drop-in replacement for ``modAL.models.ActiveLearner`` that works on
    current scikit-learn (modAL 0.4.2 passes the removed ``force_all_finite``
    to ``check_X_y``) and teaches incrementally: when the estimator has
    ``partial_fit``, :meth:`teach` updates it with the new samples only rather
    than refitting on everything (an exact update for
    :class:`~skrbal.mixture.BayesianGMMClassifier`). Any scikit-learn
    classifier or Pipeline can be used, and any strategy with modAL's
    signature, including modAL's own.

    Parameters
    ----------
    estimator : classifier
        Fitted in place, as modAL does, so ``learner.estimator`` is the current
        model.
    query_strategy : callable, default=least_confident_sampling
        ``strategy(learner, X_pool, n_instances=1, **kwargs)`` returning
        ``(indices, scores)`` (or bare indices).
    X_training : array-like of shape (n_samples, n_features), default=None
        Initial labelled samples; when given, the estimator is fitted at once.
    y_training : array-like of shape (n_samples,), default=None
        Their labels.
    update : {'auto', 'partial_fit', 'refit'}, default='auto'
        How :meth:`teach` updates the model: ``'partial_fit'`` on the new
        samples, ``'refit'`` on all labelled samples, ``'auto'`` the former
        when the estimator has ``partial_fit``. A label the model has never
        seen always triggers a refit, since ``partial_fit`` cannot add classes.
    **fit_kwargs : dict
        Passed to the estimator's ``fit`` at construction, as in modAL.

    Attributes
    ----------
    X_training : array-like or None
        All labelled samples taught so far.
    y_training : ndarray or None
        Their labels.
    n_partial_fits_ : int
        How many updates were incremental (``partial_fit``).
    n_refits_ : int
        How many updates refitted on all labelled samples.

    See Also
    --------
    skrbal.query.EVPISampling : The risk-based query strategy.
    RiskBasedLearner : The stream form, which decides when to inspect.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.active import ActiveLearner
    >>> from skrbal.query import EVPISampling
    >>> from sklearn.naive_bayes import GaussianNB
    >>> rng = np.random.default_rng(0)
    >>> X_pool = np.concatenate([rng.normal(0, 1, (50, 1)), rng.normal(5, 1, (50, 1))])
    >>> y_pool = np.repeat([1, 4], 50)
    >>> learner = ActiveLearner(
    ...     estimator=GaussianNB(),
    ...     query_strategy=EVPISampling(process=synthetic_decision_process()),
    ...     X_training=X_pool[[0, 99]], y_training=y_pool[[0, 99]],
    ... )
    >>> idx, x = learner.query(X_pool, n_instances=2)
    >>> learner.teach(x, y_pool[idx])
    >>> len(learner.y_training), learner.n_partial_fits_
    (4, 1)
    """

    def __init__(
        self,
        *,
        estimator,
        query_strategy: Callable = least_confident_sampling,
        X_training=None,
        y_training=None,
        update: str = "auto",
        **fit_kwargs,
    ):
        if not callable(query_strategy):
            raise TypeError("query_strategy must be callable.")
        if update not in _UPDATES:
            raise ValueError(f"update must be one of {_UPDATES}, got {update!r}.")
        if (X_training is None) != (y_training is None):
            raise ValueError("X_training and y_training must be given together.")
        self.estimator = estimator
        self.query_strategy = query_strategy
        self.X_training = X_training
        self.y_training = None if y_training is None else np.asarray(y_training)
        self.update = update
        self.fit_kwargs = fit_kwargs
        self.n_partial_fits_ = 0
        self.n_refits_ = 0
        if X_training is not None:
            self._fit_to_known()

    def get_params(self, deep=True):
        """Parameters of the learner, as for any scikit-learn object.

        Parameters
        ----------
        deep : bool, default=True
            Also return the estimator's parameters as ``estimator__name``.

        Returns
        -------
        params : dict

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal.active import ActiveLearner
        >>> sorted(ActiveLearner(estimator=GaussianNB()).get_params(deep=False))
        ['X_training', 'estimator', 'query_strategy', 'update', 'y_training']
        """
        params = super().get_params(deep=deep)
        params.update(self.fit_kwargs)
        return params

    # -------------------------------------------------------------- #
    def _check_labels(self, X, y):
        y = np.asarray(y)
        n_x = X.shape[0] if hasattr(X, "shape") else len(X)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-d, got shape {y.shape}.")
        if n_x != y.shape[0]:
            raise ValueError(f"X has {n_x} samples but y has {y.shape[0]} labels.")
        return y

    def _fit_to_known(self):
        self.estimator.fit(self.X_training, self.y_training, **self.fit_kwargs)
        self.n_refits_ += 1
        return self

    def fit(self, X, y, **fit_kwargs):
        """Forget all taught samples and fit the estimator to ``X, y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labelled samples.
        y : array-like of shape (n_samples,)
            Their labels.
        **fit_kwargs : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : ActiveLearner
        """
        y = self._check_labels(X, y)
        self.X_training, self.y_training = X, y
        self.estimator.fit(X, y, **fit_kwargs)
        self.n_refits_ += 1
        return self

    def teach(self, X, y, only_new: bool = False, **fit_kwargs) -> None:
        """Add labelled samples and update the model.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            Newly labelled samples.
        y : array-like of shape (n_new,)
            Their labels.
        only_new : bool, default=False
            As in modAL: refit on the new samples alone, forgetting the model's
            previous fit (the labelled set still grows).
        **fit_kwargs : dict
            Passed to ``fit`` or ``partial_fit``.
        """
        y = self._check_labels(X, y)
        incremental = not only_new and can_partial_fit(self.estimator, y, self.update)
        self.X_training = _stack(self.X_training, X)
        self.y_training = y if self.y_training is None else _stack(self.y_training, y)
        if only_new:
            self.estimator.fit(X, y, **fit_kwargs)
            self.n_refits_ += 1
        elif incremental:
            self.estimator.partial_fit(X, y, **fit_kwargs)
            self.n_partial_fits_ += 1
        else:
            self.estimator.fit(self.X_training, self.y_training, **fit_kwargs)
            self.n_refits_ += 1

    def query(self, X_pool, *query_args, return_metrics: bool = False, **query_kwargs):
        """Choose the pool instances to label next.

        Parameters
        ----------
        X_pool : array-like of shape (n_pool, n_features)
            Candidate instances.
        *query_args, **query_kwargs
            Passed to the query strategy (e.g. ``n_instances=3``).
        return_metrics : bool, default=False
            Also return the strategy's scores of the chosen instances.

        Returns
        -------
        indices : ndarray
            Indices into ``X_pool``.
        X_query : array-like
            The chosen instances.
        scores : ndarray
            Only when ``return_metrics=True``.
        """
        result = self.query_strategy(self, X_pool, *query_args, **query_kwargs)
        if isinstance(result, tuple) and len(result) == 2:
            indices, scores = result
        else:
            indices, scores = result, None
        indices = np.asarray(indices)
        rows = _safe_indexing(X_pool, indices)
        if return_metrics:
            return indices, rows, scores
        return indices, rows

    # -------------------------------------------------------------- #
    @property
    def classes_(self):
        """Class labels of the current model."""
        return self.estimator.classes_

    def predict(self, X, **kwargs):
        """Predict labels with the current model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        **kwargs : dict
            Passed to the estimator.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self.estimator.predict(X, **kwargs)

    def predict_proba(self, X, **kwargs):
        """Class probabilities from the current model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        **kwargs : dict
            Passed to the estimator.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self.estimator.predict_proba(X, **kwargs)

    def score(self, X, y, **kwargs):
        """The estimator's own score (accuracy for classifiers).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **kwargs : dict
            Passed to the estimator's ``score``.

        Returns
        -------
        score : float
        """
        return self.estimator.score(X, y, **kwargs)
