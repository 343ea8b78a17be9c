"""A maintained pool-based active learner with modAL's interface."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import _safe_indexing

from skrbal._decision import DecisionProcess
from skrbal._labels import check_labels
from skrbal._learning import (
    UPDATE_MODES,
    can_partial_fit,
    check_state_coverage,
    give_classes,
    soft_rows,
    stack_rows,
)
from skrbal.exceptions import MissingStatesWarning, missing_states_message
from skrbal.inspection import report_posterior
from skrbal.query import least_confident_sampling

__all__ = ["ActiveLearner"]


def _n_rows(X) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _n_features(X):
    """Columns of a 2-d sample array (None when ``X`` has no such shape)."""
    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            shape = np.shape(X)
        except ValueError:  # ragged
            return None
    return shape[1] if len(shape) == 2 else None


def _kind_of_labels(y: np.ndarray) -> str:
    if y.dtype.kind in "biuf":
        return "numeric"
    if y.dtype.kind in "US" or (
        y.dtype == object and all(isinstance(v, str) for v in y.tolist())
    ):
        return "string"
    return str(y.dtype)


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
        model. When the query strategy carries a decision process (as
        :class:`~skrbal.query.EVPISampling` does), every ``classes``
        parameter of the estimator left at ``None``, nested ones included (a
        Pipeline's final step), is set to the process's states before it is
        fitted.
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
    warnings_ : list of str
        Warnings raised by fits and updates, such as a
        :class:`~skrbal.exceptions.MissingStatesWarning` when the strategy's
        process has states the model has no class for (raised once per fit).
    X_reported_ : array-like or None
        Samples learnt from imperfect reports (:meth:`teach_report`) whose
        posterior was not one-hot; they are not in ``X_training``.
    posterior_reported_ : ndarray of shape (n_reported, n_states) or None
        Their posteriors over the strategy's process's states.
    reports_ : list of dict
        One entry per report taught: ``method``, ``report`` and
        ``posterior_<state>``.

    Notes
    -----
    :meth:`teach` is atomic: the new samples are checked (one label type, the
    labelled set's number of features, labels the strategy's process knows)
    and the model updated before they join ``X_training``/``y_training``;
    when anything fails, the labelled set is left as it was.
    :meth:`set_params` checks the parameters as the constructor does and,
    when it is given a new labelled set, fits the estimator to it.

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
    >>> y_pool = np.repeat([1, 2, 3, 4], 25)
    >>> X_pool = rng.normal(np.array([-5.0, -0.7, 5.8, 19.0])[y_pool - 1], 2.0)
    >>> X_pool = X_pool[:, None]
    >>> first = [0, 1, 25, 26, 50, 51, 75, 76]
    >>> learner = ActiveLearner(
    ...     estimator=GaussianNB(),
    ...     query_strategy=EVPISampling(process=synthetic_decision_process()),
    ...     X_training=X_pool[first], y_training=y_pool[first],
    ... )
    >>> idx, x = learner.query(X_pool, n_instances=2)
    >>> learner.teach(x, y_pool[idx])
    >>> len(learner.y_training), learner.n_partial_fits_
    (10, 1)
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
        y_training = self._check_params(query_strategy, update, X_training, y_training)
        self.estimator = estimator
        self.query_strategy = query_strategy
        self.X_training = X_training
        self.y_training = y_training
        self.update = update
        self.fit_kwargs = fit_kwargs
        self.n_partial_fits_ = 0
        self.n_refits_ = 0
        self.warnings_ = []
        self.X_reported_ = None
        self.posterior_reported_ = None
        self.reports_ = []
        if X_training is not None:
            self._fit_to_known()

    @staticmethod
    def _check_params(query_strategy, update, X_training, y_training):
        """Check the constructor's parameters; return ``y_training`` as an array."""
        if not callable(query_strategy):
            raise TypeError(
                f"query_strategy must be callable, got {type(query_strategy).__name__}."
            )
        if not isinstance(update, str) or update not in UPDATE_MODES:
            raise ValueError(f"update must be one of {UPDATE_MODES}, got {update!r}.")
        if (X_training is None) != (y_training is None):
            raise ValueError("X_training and y_training must be given together.")
        if y_training is None:
            return None
        y_training = check_labels(y_training, "y_training")
        if y_training.ndim != 1:
            raise ValueError(f"y_training must be 1-d, got shape {y_training.shape}.")
        if _n_rows(X_training) != y_training.shape[0]:
            raise ValueError(
                f"X_training has {_n_rows(X_training)} samples but y_training has "
                f"{y_training.shape[0]} labels."
            )
        return y_training

    def set_params(self, **params):
        """Set the learner's parameters, checked as the constructor checks them.

        A new ``X_training``/``y_training`` (or estimator) is fitted at once, as
        the constructor fits it, so ``estimator`` always matches the labelled
        set. Nothing is changed when a check fails.

        Parameters
        ----------
        **params : dict
            Learner parameters, ``estimator__<name>`` for the estimator's, or
            keyword arguments of the estimator's ``fit``.

        Returns
        -------
        self : ActiveLearner

        Examples
        --------
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal.active import ActiveLearner
        >>> learner = ActiveLearner(estimator=GaussianNB())
        >>> learner.set_params(update="refit").update
        'refit'
        """
        own = {"estimator", "query_strategy", "X_training", "y_training", "update"}
        current = self.get_params(deep=False)
        merged = {**current, **{k: v for k, v in params.items() if k in own}}
        y_training = self._check_params(
            merged["query_strategy"],
            merged["update"],
            merged["X_training"],
            merged["y_training"],
        )
        fit_kwargs = {k: v for k, v in params.items() if k not in own and "__" not in k}
        nested = {k: v for k, v in params.items() if "__" in k}
        if nested:
            super().set_params(**nested)
        for key in own & params.keys():
            setattr(self, key, params[key])
        self.y_training = y_training
        self.fit_kwargs.update(fit_kwargs)
        refit = {"X_training", "y_training", "estimator"} & params.keys()
        if refit and self.X_training is not None:
            self._fit_to_known()
        return self

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
    def _process(self):
        """The decision process of the query strategy, if it has one."""
        process = getattr(self.query_strategy, "process", None)
        return process if isinstance(process, DecisionProcess) else None

    def _check_labels(self, X, y):
        y = check_labels(y, "y")
        n_x = _n_rows(X)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-d, got shape {y.shape}.")
        if n_x != y.shape[0]:
            raise ValueError(f"X has {n_x} samples but y has {y.shape[0]} labels.")
        return y

    def _check_states(self, y):
        """Reject a label that is none of the strategy's process's states."""
        process = self._process()
        if process is not None:
            process.perfect_information_action(y)  # names any unknown label

    def _check_new(self, X, y):
        """Check new samples against the labelled set before anything changes."""
        y = self._check_labels(X, y)
        n_new = _n_features(X)
        n_known = _n_features(self.X_training) if self.X_training is not None else None
        if n_known is None:
            n_known = getattr(self.estimator, "n_features_in_", None)
        if n_new is not None and n_known is not None and n_new != n_known:
            raise ValueError(
                f"X has {n_new} features per sample, but the labelled set "
                f"(X_training) and the model have {n_known}."
            )
        if self.y_training is not None and y.size and self.y_training.size:
            new, old = _kind_of_labels(y), _kind_of_labels(self.y_training)
            if new != old:
                raise ValueError(
                    f"y holds {new} labels but y_training holds {old} labels "
                    f"({self.y_training[:3].tolist()}...): a label must keep its "
                    "type."
                )
        self._check_states(y)
        return y

    def _fitted(self, fit, *args, **kwargs):
        """Run one fit of the estimator, giving it the process's labels first."""
        process = self._process()
        if process is not None:
            give_classes(self.estimator, process.classes_)
        result = fit(*args, **kwargs)
        if process is not None:
            missing = check_state_coverage(self.estimator, process)
            if missing.size:
                message = missing_states_message(
                    f"The model ({type(self.estimator).__name__})",
                    missing,
                    process.classes_,
                )
                warnings.warn(message, MissingStatesWarning, stacklevel=3)
                self.warnings_.append(message)
        return result

    def _fit_to_known(self):
        self._check_states(self.y_training)
        self._refit(self.X_training, self.y_training, **self.fit_kwargs)
        self.n_refits_ += 1
        return self

    def _refit(self, X, y, **fit_kwargs):
        """Fit on the labelled ``X, y`` plus the reported samples, if any."""
        if self.X_reported_ is None:
            return self._fitted(self.estimator.fit, X, y, **fit_kwargs)
        X_soft, y_soft, weight, keyword = soft_rows(
            self.estimator,
            self.X_reported_,
            self.posterior_reported_,
            self._process().classes_,
        )
        X_all, y_all = stack_rows(X, X_soft), stack_rows(y, y_soft.astype(y.dtype))
        if weight is not None:
            fit_kwargs = {**fit_kwargs, keyword: np.r_[np.ones(_n_rows(X)), weight]}
        return self._fitted(self.estimator.fit, X_all, y_all, **fit_kwargs)

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
        self._check_states(y)
        self._fitted(self.estimator.fit, X, y, **fit_kwargs)
        self.X_training, self.y_training = X, y
        self.X_reported_ = self.posterior_reported_ = None
        self.reports_ = []
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

        Raises
        ------
        ValueError
            When ``X`` or ``y`` cannot join the labelled set (mixed label
            types, another label type than ``y_training``, another number of
            features, a label the strategy's process does not know) or the
            estimator rejects them; ``X_training`` and ``y_training`` are then
            unchanged.
        """
        y = self._check_new(X, y)
        incremental = not only_new and can_partial_fit(self.estimator, y, self.update)
        X_all = stack_rows(self.X_training, X)
        y_all = y if self.y_training is None else stack_rows(self.y_training, y)
        if only_new:
            self._fitted(self.estimator.fit, X, y, **fit_kwargs)
        elif incremental:
            self._fitted(self.estimator.partial_fit, X, y, **fit_kwargs)
        else:
            self._refit(X_all, y_all, **fit_kwargs)
        # Only an update that went through joins the labelled set.
        self.X_training, self.y_training = X_all, y_all
        if incremental:
            self.n_partial_fits_ += 1
        else:
            self.n_refits_ += 1

    def teach_report(self, X, reports, method, **fit_kwargs) -> np.ndarray:
        """Learn from imperfect inspections: their reports, not their labels.

        The posterior over the states given the current model's belief and
        each report (:func:`~skrbal.inspection.report_posterior`) is learnt
        as soft evidence. When every posterior is one-hot (a perfect method)
        this is exactly :meth:`teach` with those states. Otherwise, an
        estimator whose ``partial_fit`` takes ``sample_weight`` is updated
        with one copy per state weighted by its posterior
        (:func:`~skrbal.inspection.weighted_copies`; for
        :class:`~skrbal.mixture.BayesianGMMClassifier`, the conjugate update
        with fractional responsibilities); else the model is refitted on the
        labelled set and every report so far, as weighted copies when its
        ``fit`` (a Pipeline's final step) takes ``sample_weight`` and as the
        most probable state when not.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            The inspected samples.
        reports : array-like of shape (n_new,)
            Their reports, labels from ``method.outcomes_`` (e.g. drawn by
            :func:`~skrbal.inspection.simulate_reports`).
        method : InspectionMethod
            The method that made the reports.
        **fit_kwargs : dict
            Passed to ``fit`` or ``partial_fit``.

        Returns
        -------
        posterior : ndarray of shape (n_new, n_states)
            The posteriors learnt, in the order of the process's states.

        Raises
        ------
        ValueError
            Without a query strategy carrying a decision process, or when
            the report is impossible under the belief
            (:class:`~skrbal.inspection.ImpossibleReportError`).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.active import ActiveLearner
        >>> from skrbal.inspection import InspectionMethod, simulate_reports
        >>> from skrbal.query import EVPISampling
        >>> process = synthetic_decision_process()
        >>> drone = InspectionMethod(
        ...     name="drone", cost=1.4,
        ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]],
        ...     outcomes=["no damage found", "damage found"])
        >>> learner = ActiveLearner(
        ...     estimator=GaussianNB(),
        ...     query_strategy=EVPISampling(process=process, inspections=[drone]),
        ...     X_training=[[-5.0], [-4.0], [-1.0], [0.0], [5.0], [6.0], [18], [19]],
        ...     y_training=[1, 1, 2, 2, 3, 3, 4, 4])
        >>> reports = simulate_reports([2], process, drone, random_state=0)
        >>> learner.teach_report([[-2.5]], reports, drone).round(3)
        array([[0.576, 0.424, 0.   , 0.   ]])
        >>> learner.reports_[0]["report"], learner.n_partial_fits_
        ('no damage found', 1)
        """
        process = self._process()
        if process is None:
            raise ValueError(
                "teach_report needs a query strategy with a decision process "
                "(such as EVPISampling): the posterior is over its states."
            )
        belief = self.estimator.predict_proba(X)
        posterior = report_posterior(
            belief, reports, process, method, classes=self.classes_
        )
        classes = process.classes_
        if np.all(posterior.max(axis=1) == 1.0):
            self.teach(X, classes[np.argmax(posterior, axis=1)], **fit_kwargs)
        else:
            self._learn_soft(X, posterior, **fit_kwargs)
        for report, row in zip(np.asarray(reports).tolist(), posterior):
            entry = {"method": method.name, "report": report}
            entry.update({f"posterior_{c}": p for c, p in zip(classes, row)})
            self.reports_.append(entry)
        return posterior

    def _learn_soft(self, X, posterior, **fit_kwargs):
        """Teach reported samples whose posterior is not one-hot."""
        classes = self._process().classes_
        X_new, y_new, weight, keyword = soft_rows(
            self.estimator, X, posterior, classes, "partial_fit"
        )
        before = (self.X_reported_, self.posterior_reported_)
        self.X_reported_ = stack_rows(self.X_reported_, X)
        self.posterior_reported_ = stack_rows(self.posterior_reported_, posterior)
        try:
            if (weight is None or keyword is not None) and can_partial_fit(
                self.estimator, y_new, self.update
            ):
                extra = {} if weight is None else {keyword: weight}
                self._fitted(
                    self.estimator.partial_fit, X_new, y_new, **fit_kwargs, **extra
                )
                self.n_partial_fits_ += 1
            else:
                self._refit(self.X_training, self.y_training, **fit_kwargs)
                self.n_refits_ += 1
        except Exception:
            self.X_reported_, self.posterior_reported_ = before
            raise

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
