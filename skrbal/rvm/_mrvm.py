"""Multiclass relevance vector machines (mRVM1 and mRVM2)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from skrbal.exceptions import (
    LostClassWarning,
    NonDiscriminatingFitWarning,
    caller_stacklevel,
)
from skrbal.rvm._basis import KERNELS, KernelBasis
from skrbal.rvm._classes import ClassSet
from skrbal.rvm._diagnostics import FitReport
from skrbal.rvm._methods import Constructive, PreviousFit, TopDown
from skrbal.rvm._probit import batched_log_proba, scores_for_proba
from skrbal.rvm._width import REGROWTH, EvidenceWidth, WidthChoice

__all__ = ["LostClassWarning", "MulticlassRVC", "NonDiscriminatingFitWarning"]


class MulticlassRVC(ClassifierMixin, BaseEstimator):
    """Multiclass relevance vector machine classifier (mRVM1 / mRVM2).

    A sparse Bayesian kernel classifier with the multinomial-probit link. Each
    sample has ``K`` auxiliary scores ``f = W^T k(x) + e``, ``e ~ N(0, I)``,
    and its label is the class with the largest score. The weights ``W`` on the
    training samples have zero-mean Gaussian priors with precisions ``alpha``
    (Gamma(``tau``, ``nu``) hyperprior); most precisions diverge during
    training and the samples that keep a finite one are the relevance vectors.
    Training alternates an M-step for ``W``, an E-step for the posterior means
    of the auxiliary scores (a Gaussian truncated to the cone of the observed
    label) and an update of ``alpha``.

    Parameters
    ----------
    method : {"mrvm1", "mrvm2"}, default="mrvm2"
        ``"mrvm2"`` (top-down) starts from every training sample, with one
        precision per sample and class updated by EM, and prunes a sample once
        its precision exceeds ``prune_threshold`` for every class; a pruned
        sample never returns. ``"mrvm1"`` (constructive) starts from a single
        sample and adds, re-estimates or deletes one sample per iteration by
        fast type-II maximum likelihood, with one precision per sample shared
        by the classes. See Notes.
    kernel : {"rbf", "linear", "poly", "polynomial", "laplacian", "sigmoid", \
"cosine", "chi2", "additive_chi2"} or callable, default="rbf"
        Kernel of :func:`sklearn.metrics.pairwise.pairwise_kernels`, or a
        callable ``kernel(X, Y, **kernel_params)`` returning the Gram matrix of
        shape ``(len(X), len(Y))`` (a :mod:`sklearn.gaussian_process.kernels`
        object works). No bias basis function is added: to give the linear
        kernel an intercept use ``kernel="poly", degree=1, coef0=1``.
    gamma : float, "evidence", "auto" or None, default=None
        Coefficient (width) of the "rbf", "laplacian", "poly", "sigmoid" and
        "chi2" kernels; ``None`` means ``1 / n_features`` as in the mRVM
        papers, which suits standardised features only. ``"evidence"``
        (with ``warm_start=True`` and ``linear_term=0.1``, the stream
        learner's recommended setting: see the user guide) chooses it
        at every :meth:`fit`, so again as labels arrive, by type-II
        maximum likelihood: the model is fitted at
        ``2**-4 .. 2**4`` times the median heuristic and the fit whose
        approximate marginal likelihood of the labels is largest is kept
        (nine fits, each with the same seed, 0 when ``random_state`` is
        None: the choice is reproducible). With ``warm_start=True`` the
        width is kept, and the fit warm-started, until the training set has
        grown by a quarter since it was chosen. ``"auto"`` chooses it by the
        3-fold cross-validated log loss instead (27 extra fits). To choose
        by the decisions, grid-search it with
        :func:`~skrbal.metrics.make_decision_scorer` (see the gallery).
    degree : int, default=3
        Degree of the "poly" kernel.
    coef0 : float, default=1.0
        Independent term of the "poly" and "sigmoid" kernels.
    kernel_params : dict, default=None
        Further keyword arguments of the kernel (override the above; the only
        ones passed to a callable kernel).
    linear_term : float, default=0.0
        Weight ``beta`` of a linear kernel added to ``kernel``: the basis
        functions are ``k(x, x_i) + beta * gamma * (1 + x . x_i)`` (``gamma``
        taken as 1 for a kernel without a width). With ``beta > 0`` the
        scores far from every relevance vector follow a linear discriminant
        learnt from the labels instead of falling to ``intercept_``, so the
        beliefs there extrapolate the trend of the data (as a Gaussian
        mixture's do) rather than drifting to ``class_prior_``. 0.1 is the
        recommended value for the stream learner on standardised features;
        it costs accuracy from a handful of labels (see Notes).
    tau : float, default=1e-5
        Shape of the Gamma hyperprior on the precisions.
    nu : float, default=1e-5
        Rate of the Gamma hyperprior. With it the mRVM2 update
        ``alpha = (2 tau + 1) / (w**2 + 2 nu)`` cannot exceed
        ``(2 tau + 1) / (2 nu)``.
    max_iter : int, default=300
        Maximum number of iterations (EM iterations for mRVM2, single-sample
        changes for mRVM1).
    max_alpha_updates : int, {"n_samples", "2n_samples"} or None, \
default="n_samples"
        mRVM2 stops after this many updates of the precisions ``alpha``,
        counted after the warm-up (``"n_samples"``: one per training sample,
        the papers' "N iterations"; ``"2n_samples"``: the authors' code),
        unless it converged before; ``None`` runs to convergence or
        ``max_iter``. This is a designed stop, reported as
        ``stop_reason_ = "alpha_update_limit"``, not a failure to converge:
        run on, the precision update drains the weight of a relevance vector
        with no same-class neighbour within the kernel's reach until it is
        pruned and its class lost (see Notes). Ignored by mRVM1.
    class_prior : array-like of shape (n_classes,), {"uniform", \
"frequencies"}, default="uniform"
        The beliefs far from every relevance vector, where the kernel
        vanishes: the prior mean of the auxiliary scores is set so that the
        multinomial probit of it is this distribution (``intercept_``).
        ``"uniform"`` (the papers' zero mean), ``"frequencies"`` (the
        labelled class frequencies with half a pseudo-count per class), or
        one positive probability per class of ``classes_``. See Notes.
    tol : float, default=3e-2
        Convergence tolerance on the largest absolute change of ``log alpha``
        over the active samples in one iteration (for mRVM1: the change a
        re-estimation would make). mRVM1 further requires that no sample is
        waiting to be added or deleted, mRVM2 that none was pruned.
    prune_threshold : float, default=1e4
        mRVM2 prunes a sample when the precision of its basis function, scaled
        to 1 at its own centre as in the papers, exceeds this for every
        class: the authors' value on the authors' basis. It must stay below
        the ceiling ``(2 tau + 1) / (2 nu)`` (about 5e4 for the defaults),
        otherwise nothing is ever pruned; see Notes.
    n_quadrature : int, default=12
        Number of adaptive Gauss-Hermite nodes for the expectations over
        ``u ~ N(0, 1)`` in the E-step and in :meth:`predict_proba`.
    classes : array-like of shape (n_classes,), default=None
        All class labels the model must cover. When given, ``y`` may miss some
        of them (or hold a single one) and every prediction still has one
        column per class; an unseen class receives a low probability. When
        ``None`` the classes are those in ``y``, at least two.
    warm_start : bool, default=False
        Start from the previous fit when refitting on a grown training set. The
        first ``n_old`` rows of the new ``X`` must be the previous training
        samples in the same order (rows are matched by position, as when
        labelled samples are appended in active learning). mRVM1 restarts from
        the previous relevance vectors and precisions; mRVM2 from those plus
        the new samples (samples pruned before stay pruned). Ignored, with a
        cold start, when the method, the classes or the number of features
        changed.
    random_state : int, RandomState instance or None, default=None
        Seed of mRVM2's random starting point (the auxiliary class scores of a
        cold start, see Notes); pass an int for reproducible fits. mRVM1 and
        warm starts are deterministic.
    verbose : int, default=0
        Print one line per iteration when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :term:`fit`, defined only when ``X`` has
        string feature names.
    relevance_vectors_ : ndarray of shape (n_relevance, n_features)
        Training samples that carry the model.
    relevance_indices_ : ndarray of shape (n_relevance,)
        Row indices of the relevance vectors in the training data.
    coef_ : ndarray of shape (n_relevance, n_classes)
        Posterior-mode weights ``W`` on the relevance vectors; the scores are
        ``k(X, relevance_vectors_) @ coef_ + intercept_``.
    gamma_ : float
        The kernel width used (given, ``1 / n_features`` or chosen).
    gamma_candidates_ : ndarray of shape (9,)
        With ``gamma="evidence"`` or ``"auto"``: the widths compared.
    gamma_log_evidence_ : ndarray of shape (9,)
        With ``gamma="evidence"``: the approximate log marginal likelihood
        of the labels of the fit at each candidate.
    gamma_log_loss_ : ndarray of shape (9,)
        With ``gamma="auto"``: their mean held-out log loss.
    intercept_ : ndarray of shape (n_classes,)
        Prior mean of the auxiliary scores, whose multinomial probit is
        ``class_prior_`` (zero for a uniform prior).
    class_prior_ : ndarray of shape (n_classes,)
        The beliefs far from every relevance vector (see ``class_prior``).
    alpha_ : ndarray of shape (n_relevance, n_classes)
        Prior precisions of the weights ``coef_``. For mRVM1 every column is
        equal, except in the row of a relevance vector of one class (see
        Notes), which is 1e10 (with a weight of zero) in the other columns.
    n_iter_ : int
        Number of iterations run.
    converged_ : bool
        Whether the convergence criterion was met within ``max_iter``.
    stop_reason_ : {"converged", "alpha_update_limit", "max_iter"}
        How the fit stopped: the convergence criterion, the designed bound
        ``max_alpha_updates`` (mRVM2), or ``max_iter`` (then with a
        :class:`~sklearn.exceptions.ConvergenceWarning`).
    start_ : {"random", "zero", "labels", "warm"}
        Where the fit started: mRVM2's random scores, mRVM1's papers' start
        (``"zero"``) or its start from the labels when that one fails to
        discriminate (``"labels"``, see Notes), or a previous fit.
    lost_classes_ : ndarray
        Labelled classes predicted for none of their training samples (empty
        when every labelled class is kept); a non-empty one was reported by
        a :class:`LostClassWarning` (or, when the fit discriminates nothing,
        by the :class:`NonDiscriminatingFitWarning`).
    n_relevance_trace_ : ndarray of shape (n_iter_,)
        Size of the active set after each iteration (mRVM2 starts from the
        training samples with linearly independent basis functions, see
        Notes).
    log_evidence_trace_ : ndarray of shape (n_iter_,)
        ``log p(F | K, alpha)``, the Gaussian marginal likelihood of the
        auxiliary scores at each M-step. It is a monitor, not a bound: the
        scores ``F`` themselves change from one iteration to the next.
    discriminates_ : bool
        Whether the fit discriminates its training classes: on the training
        data its accuracy beats the majority class share and its log loss is
        at least 5 % below the entropy of the class frequencies. ``True`` when
        ``y`` holds a single class. When ``False`` a
        :class:`NonDiscriminatingFitWarning` was raised.
    fit_warnings_ : list of Warning
        The warnings raised by the last :meth:`fit`
        (:class:`~sklearn.exceptions.ConvergenceWarning`,
        :class:`NonDiscriminatingFitWarning`, :class:`LostClassWarning`, and
        the ``UserWarning`` of a ``prune_threshold`` mRVM2 can never reach),
        so that a batch study can count them.

    See Also
    --------
    sklearn.svm.SVC : Support vector classifier (Platt-scaled probabilities).
    sklearn.gaussian_process.GaussianProcessClassifier : Dense Bayesian kernel
        classifier.

    Notes
    -----
    The E-step and the likelihood
    ``P(y = k | x) = E_u[prod_{j != k} Phi(u + f_k - f_j)]`` are computed by
    adaptive Gauss-Hermite quadrature in log space (see
    ``skrbal.rvm._probit``); the probability rows are renormalised to sum to
    one. :meth:`predict` takes the argmax of the scores, which is also the
    argmax of the probabilities since the likelihood increases with
    ``f_k - f_j``. Both are deterministic.

    **mRVM2.** A cold start draws the auxiliary class scores as the authors'
    code does, ``10 U1 [k = y_i] + U2`` with ``U1, U2 ~ U(0, 1)`` (seeded by
    ``random_state``; pass an int for a reproducible fit): a start at zero
    scores traps EM near zero weights and uniform beliefs when labels are
    few. Pruning defaults to ``alpha > 1e4``, below the ceiling
    ``(2 tau + 1) / (2 nu)`` (see ``skrbal.rvm._methods.TopDown``).

    **Stopping mRVM2** after ``max_alpha_updates`` precision updates keeps
    the classes of a few labels (see the parameter and the user guide); a
    labelled class predicted for none of its training samples is reported
    (:class:`LostClassWarning`, ``lost_classes_``).

    **Far from the data.** Every basis function of the RBF kernel vanishes
    far from its relevance vector, so the scores there fall to
    ``intercept_`` and the beliefs to ``class_prior_``: with the papers'
    uniform prior an unconfident belief (a high expected value of
    information) wherever no relevance vector is near, which the stream
    learner pays for in inspections. ``linear_term`` lets the scores there
    follow a linear discriminant learnt from the labels, as a Gaussian
    mixture's beliefs extrapolate; a wide kernel (``gamma="evidence"``)
    reaches further. The user guide's mRVM section has the measurements
    (``benchmarks/results/rvm_hard_cases.md``).

    **mRVM1.** Each iteration makes the single change that raises the
    marginal likelihood most (Tipping & Faul). When the papers' start (a
    model with no weight) does not discriminate its classes or loses one,
    as on a handful of labels, it starts again from scores at the labels'
    scale (``start_ = "labels"``; see ``skrbal.rvm._methods.Constructive``).
    Its one precision per sample, shared by the ``K`` classes, admits a
    sample only when its quality summed over the classes exceeds ``K``
    times its sparsity, which a class of two to four labels does not reach.
    A class so lost gets a relevance vector of its own where the class's
    own test passes (``skrbal.rvm._keepers``); otherwise it is reported.

    No bias basis function is used (but see ``linear_term``), so the
    relevance vectors are exactly the basis of the model.

    References
    ----------
    .. [1] I. Psorakis, T. Damoulas and M. A. Girolami, "Multiclass relevance
       vector machines: sparsity and accuracy", IEEE Transactions on Neural
       Networks 21(10), 1588-1598, 2010.
    .. [2] T. Damoulas and M. A. Girolami, "Probabilistic multi-class
       multi-kernel learning: on protein fold recognition and remote homology
       detection", Bioinformatics 24(10), 1264-1270, 2008.
    .. [3] M. E. Tipping and A. C. Faul, "Fast marginal likelihood maximisation
       for sparse Bayesian models", AISTATS 2003.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skrbal.rvm import MulticlassRVC
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), MulticlassRVC(method="mrvm1"))
    >>> clf = clf.fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    >>> rvc = clf[-1]
    >>> rvc.relevance_vectors_.shape[0] < 15
    True
    >>> clf.predict_proba(X[:1]).round(2)
    array([[1., 0., 0.]])
    """

    _parameter_constraints: ClassVar[dict] = {
        "method": [StrOptions({"mrvm1", "mrvm2"})],
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto", "evidence"}),
            None,
        ],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "linear_term": [Interval(Real, 0, None, closed="left")],
        "tau": [Interval(Real, 0, None, closed="left")],
        "nu": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_alpha_updates": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"n_samples", "2n_samples"}),
            None,
        ],
        "class_prior": ["array-like", StrOptions({"frequencies", "uniform"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "prune_threshold": [Interval(Real, 0, None, closed="neither")],
        "n_quadrature": [Interval(Integral, 2, None, closed="left")],
        "classes": ["array-like", None],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        method: str = "mrvm2",
        kernel: str | Callable = "rbf",
        gamma: float | str | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        linear_term: float = 0.0,
        tau: float = 1e-5,
        nu: float = 1e-5,
        max_iter: int = 300,
        max_alpha_updates: int | str | None = "n_samples",
        class_prior="uniform",
        tol: float = 3e-2,
        prune_threshold: float = 1e4,
        n_quadrature: int = 12,
        classes=None,
        warm_start: bool = False,
        random_state=None,
        verbose: int = 0,
    ):
        self.method = method
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.linear_term = linear_term
        self.tau = tau
        self.nu = nu
        self.max_iter = max_iter
        self.max_alpha_updates = max_alpha_updates
        self.class_prior = class_prior
        self.tol = tol
        self.prune_threshold = prune_threshold
        self.n_quadrature = n_quadrature
        self.classes = classes
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose

    def _kernel(self, X, Y, gamma=None):
        """Gram matrix ``k(X, Y)`` at width ``gamma`` (default: the fitted one)."""
        return KernelBasis(
            self.kernel,
            gamma=self.gamma_ if gamma is None else gamma,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
            linear_term=self.linear_term,
        ).gram(X, Y)

    def _previous_solution(self, n_samples, classes, same_features, gamma):
        """Active set, alpha, weights and size of a compatible previous fit."""
        if not (self.warm_start and hasattr(self, "coef_")):
            return None
        same_classes = self.classes_.shape == classes.shape and np.all(
            self.classes_ == classes
        )
        same_basis = self.gamma_ == gamma and self._basis_fit == (
            self.method,
            self.linear_term,
        )
        if not (same_classes and same_features and same_basis):
            return None
        kept = self.relevance_indices_ < n_samples
        if not kept.any():
            return None
        return PreviousFit(
            self.relevance_indices_[kept],
            self.alpha_[kept],
            self.coef_[kept],
            self._n_samples_fit,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y) -> MulticlassRVC:
        """Fit the relevance vector machine.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        previous_n_features = getattr(self, "n_features_in_", None)
        X, y = validate_data(self, X, y, dtype=np.float64)
        class_set = ClassSet(self.classes, self.class_prior)
        classes, y_index = class_set.encode(y)
        if self._chooses_by_evidence(X.shape[0], classes, previous_n_features):
            return self._fit_by_evidence(X, y, classes)
        report = FitReport(self.method)
        if self.method == "mrvm2":
            report.check_prune_threshold(
                tau=self.tau, nu=self.nu, prune_threshold=self.prune_threshold
            )
        gamma = self._width(X, y, classes)
        previous = self._previous_solution(
            X.shape[0], classes, previous_n_features == X.shape[1], gamma
        )
        design = self._kernel(X, X, gamma)
        class_prior = class_set.prior(y_index, classes.size)
        intercept = scores_for_proba(class_prior, self.n_quadrature)
        result, alpha, self.start_ = self._method_of_fit(intercept).fit(
            design, y_index, check_random_state(self.random_state), previous
        )

        order = np.argsort(result.active, kind="stable")
        self.classes_ = classes
        self.relevance_indices_ = result.active[order]
        self.relevance_vectors_ = X[self.relevance_indices_]
        self.coef_ = result.weights[order]
        self.gamma_ = gamma
        self.intercept_ = intercept
        self.class_prior_ = class_prior
        self.alpha_ = alpha[order]
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.stop_reason_ = result.stop_reason
        self.n_relevance_trace_ = np.asarray(result.n_relevance_trace)
        self.log_evidence_trace_ = np.asarray(result.log_evidence_trace)
        self._n_samples_fit = X.shape[0]
        self._basis_fit = (self.method, self.linear_term)
        self.fit_warnings_ = report.warnings
        if result.stop_reason == "max_iter":
            report.warn(
                ConvergenceWarning(
                    f"MulticlassRVC ({self.method}) did not converge in "
                    f"{self.max_iter} iterations; increase max_iter or tol."
                )
            )
        training_scores = design[:, self.relevance_indices_] @ self.coef_ + intercept
        self.discriminates_ = report.check_discrimination(
            training_scores,
            self._log_proba_from_scores(training_scores),
            y_index,
            self.relevance_indices_.size,
        )
        self.lost_classes_ = report.check_lost_classes(
            training_scores, y_index, classes, self.discriminates_
        )
        return self

    def _chooses_by_evidence(self, n_samples, classes, previous_n_features):
        """Whether this fit chooses the width by evidence; with warm_start, a
        previous choice is kept until the data grow by ``REGROWTH``."""
        if not (isinstance(self.gamma, str) and self.gamma == "evidence"):
            return False
        chosen_at = getattr(self, "_width_chosen_at", None)
        if not (self.warm_start and chosen_at):
            return True
        same = previous_n_features == self.n_features_in_ and np.array_equal(
            self.classes_, classes
        )
        return not same or not chosen_at <= n_samples < REGROWTH * chosen_at

    def _fit_by_evidence(self, X, y, classes):
        """Fit at every candidate width and keep the fit of most evidence."""
        choice = EvidenceWidth(self.kernel, self.kernel_params)
        best, caught = choice.choose(self, X, y, classes)
        params = self.get_params(deep=False)
        for name, value in vars(best).items():
            if name not in params:
                setattr(self, name, value)
        self._width_chosen_at = X.shape[0]
        self.gamma_candidates_ = choice.candidates
        self.gamma_log_evidence_ = choice.log_evidence
        for message in caught:
            warnings.warn(message, stacklevel=caller_stacklevel())
        return self

    def _method_of_fit(self, intercept):
        """The method's training loop with this estimator's settings."""
        params = {
            "max_iter": self.max_iter,
            "tol": self.tol,
            "n_quadrature": self.n_quadrature,
            "intercept": intercept,
            "max_alpha_updates": self.max_alpha_updates,
            "verbose": self.verbose,
        }
        if self.method == "mrvm1":
            return Constructive(**params)
        return TopDown(
            tau=self.tau, nu=self.nu, prune_threshold=self.prune_threshold, **params
        )

    def _width(self, X, y, classes):
        """The kernel width of this fit: given, ``1 / n_features``, or chosen."""
        if isinstance(self.gamma, str) and self.gamma == "evidence":
            return self.gamma_  # kept from the last choice (warm_start)
        if not (isinstance(self.gamma, str) and self.gamma == "auto"):
            return 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
        choice = WidthChoice(self.kernel, self.kernel_params)
        gamma = choice.choose(self, X, y, classes)
        self.gamma_candidates_ = choice.candidates
        self.gamma_log_loss_ = choice.log_loss
        return gamma

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._kernel(X, self.relevance_vectors_) @ self.coef_ + self.intercept_

    def decision_function(self, X) -> np.ndarray:
        """Means of the auxiliary scores ``f = W^T k(x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            One score per class; for two classes the difference ``f_1 - f_0``
            (positive favours ``classes_[1]``), as in scikit-learn.
        """
        scores = self._scores(X)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X) -> np.ndarray:
        """Class with the largest auxiliary score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of the multinomial-probit class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; ``exp`` of each row sums to one.
        """
        return self._log_proba_from_scores(self._scores(X))

    def _log_proba_from_scores(self, scores):
        return batched_log_proba(scores, self.n_quadrature)

    def predict_proba(self, X) -> np.ndarray:
        """Multinomial-probit class probabilities.

        ``P(y = k | x) = E_u[prod_{j != k} Phi(u + f_k - f_j)]`` with
        ``u ~ N(0, 1)``, by adaptive Gauss-Hermite quadrature, renormalised.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one.
        """
        return np.exp(self.predict_log_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags
