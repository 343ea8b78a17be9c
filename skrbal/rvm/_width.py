"""A kernel width chosen from the labelled data (``gamma="auto"``, ``"evidence"``).

The mRVM papers fix the width at ``1 / n_features``, which suits standardised
features only, and the number of inspections a risk-based learner makes
depends on it several-fold. ``gamma="auto"`` chooses it at every fit from the
labelled set itself: candidates on a geometric grid around the median
heuristic (the inverse of the median squared distance between labelled
samples, which follows the feature scale), scored by the held-out log loss of
a cross-validation whose folds are fixed by the labels' order (no random
numbers, so the choice is reproducible and does not disturb the seed of the
fit); the widest within one standard error of the least loss is taken.

``gamma="evidence"`` chooses it by type-II maximum likelihood instead: the
mRVM is fitted at every candidate width and the one whose fit has the
largest approximate marginal likelihood of the labels (:func:`log_evidence`)
is kept, fit and all, so that the choice costs one fit per candidate.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.metrics.pairwise import pairwise_distances
from sklearn.utils import check_random_state

from skrbal.rvm._basis import KERNELS_WITH_WIDTH, KernelBasis
from skrbal.rvm._probit import batched_log_proba

__all__ = [
    "EVIDENCE_FACTORS",
    "REGROWTH",
    "WIDTH_FACTORS",
    "WidthChoice",
    "choose_width",
    "cyclic_folds",
    "log_evidence",
    "width_scale",
]

# Candidate widths, as multiples of the median heuristic. Labelled sets of a
# monitoring campaign are small and clustered (a few states, each labelled
# near a few operating points), so the median distance between labelled
# samples is mostly a distance *between* states and the best width lies
# above it; the grid reaches 16 times the heuristic.
WIDTH_FACTORS = (1 / 16, 1 / 8, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
N_FOLDS = 3
# Candidates of gamma="evidence", multiples of the median heuristic: a
# factor of 2 in gamma (of sqrt(2) in the length scale) between neighbours.
EVIDENCE_FACTORS = tuple(2.0**k for k in range(-4, 5))
# With warm_start, gamma="evidence" chooses again once the training set has
# grown by this factor since the last choice (so O(log n) choices in a
# stream of refits, each of nine fits).
REGROWTH = 1.25
# Kernels whose width is a squared-distance scale, a distance scale, or the
# scale of an inner product.
_SQUARED = frozenset({"rbf"})
_ABSOLUTE = frozenset({"laplacian"})


def width_scale(X, kernel):
    """The median heuristic: a width of order one over the data's scale.

    ``1 / median ||x_i - x_j||**2`` for the RBF kernel, ``1 / median
    ||x_i - x_j||_1`` for the Laplacian one, and ``1 / (n_features *
    X.var())`` (scikit-learn's ``gamma="scale"``) for the kernels of an inner
    product. Distances of zero (duplicated samples) are left out; when every
    one is zero the scale is 1.
    """
    if kernel in _SQUARED or kernel in _ABSOLUTE:
        metric = "sqeuclidean" if kernel in _SQUARED else "manhattan"
        distances = pairwise_distances(X, metric=metric)
        distances = distances[np.triu_indices(len(X), 1)]
        distances = distances[distances > 0]
        return 1.0 / np.median(distances) if distances.size else 1.0
    spread = X.shape[1] * X.var()
    return 1.0 / spread if spread > 0 else 1.0


def cyclic_folds(y_index, n_folds):
    """Fold of every sample: each class's samples dealt in turn to the folds.

    Deterministic and stratified as far as the counts allow: the samples of
    each class, in their order, go to folds ``0, 1, 2, ...`` continuing from
    where the previous class stopped, so a class of one sample is held out
    in one fold only. Returns an int array of shape ``(n_samples,)``.
    """
    order = np.argsort(y_index, kind="stable")
    folds = np.empty(y_index.size, dtype=np.intp)
    folds[order] = np.arange(y_index.size) % n_folds
    return folds


def choose_width(estimator, X, y, candidates, classes):
    """The widest candidate within one standard error of the least log loss.

    ``estimator`` is cloned with ``gamma`` set to each candidate and
    ``classes`` to all the classes (so a fold that misses a class still has
    its column); the folds are :func:`cyclic_folds`. The log loss is the mean
    over all held-out samples of ``-log p(y)``; the width chosen is the
    widest (smallest ``gamma``) whose log loss is within one standard error
    (over the samples) of the least, the usual guard against the noise of a
    cross-validation on few labels; a wider kernel is the smoother model.
    Warnings of the inner fits (a fold of a few labels need not
    discriminate) are not shown.
    Returns ``(width, mean log loss of every candidate)``.
    """
    candidates = np.sort(np.asarray(candidates, dtype=float))
    y_index = np.searchsorted(classes, y)
    n_folds = min(N_FOLDS, y.size)
    folds = cyclic_folds(y_index, n_folds)
    losses = np.zeros((candidates.size, y.size))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c, gamma in enumerate(candidates):
            model = clone(estimator).set_params(
                gamma=float(gamma), classes=classes, warm_start=False
            )
            for fold in range(n_folds):
                held_out = folds == fold
                model.fit(X[~held_out], y[~held_out])
                log_proba = model.predict_log_proba(X[held_out])
                rows = np.arange(held_out.sum())
                losses[c, held_out] = -log_proba[rows, y_index[held_out]]
    mean = losses.mean(axis=1)
    best = np.argmin(mean)
    standard_error = losses[best].std() / np.sqrt(y.size)
    # The one-standard-error rule: the widest kernel (the smoothest model)
    # whose loss is within one standard error of the least.
    chosen = np.flatnonzero(mean <= mean[best] + standard_error)[0]
    return float(candidates[chosen]), mean


class WidthChoice:
    """The width ``gamma="auto"`` chooses for one fit, and what it compared.

    Parameters
    ----------
    kernel : str or callable
        The estimator's kernel; it must be one with a width.
    kernel_params : dict or None
        The estimator's further kernel parameters; they must not set the
        width.

    Attributes
    ----------
    candidates : ndarray of shape (9,)
        The widths compared (after :meth:`choose`).
    log_loss : ndarray of shape (9,)
        Their mean held-out log loss (after :meth:`choose`).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm import MulticlassRVC
    >>> from skrbal.rvm._width import WidthChoice
    >>> X = np.array([[0.0], [0.2], [0.4], [3.0], [3.2], [3.4]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> choice = WidthChoice("rbf", None)
    >>> gamma = choice.choose(MulticlassRVC(random_state=0), X, y, np.array([0, 1]))
    >>> bool(gamma in choice.candidates)
    True
    """

    def __init__(self, kernel, kernel_params):
        if callable(kernel) or kernel not in KERNELS_WITH_WIDTH:
            raise ValueError(
                f"gamma='auto' chooses the width of the kernels "
                f"{sorted(KERNELS_WITH_WIDTH)}; kernel={kernel!r} has none. "
                "Give the callable kernel its width in kernel_params."
            )
        if "gamma" in (kernel_params or {}):
            raise ValueError(
                "gamma='auto' and kernel_params['gamma'] both set the width; give one."
            )
        self.kernel = kernel

    def choose(self, estimator, X, y, classes) -> float:
        """The width for ``estimator`` (cloned, silenced) on ``(X, y)``."""
        self.candidates = width_scale(X, self.kernel) * np.asarray(WIDTH_FACTORS)
        inner = clone(estimator).set_params(verbose=0)
        gamma, self.log_loss = choose_width(inner, X, y, self.candidates, classes)
        return gamma


def log_evidence(design, y_index, coef, alpha, intercept, n_quadrature):
    """Approximate log marginal likelihood of the labels of one mRVM fit.

    The fit's Gaussian model of the auxiliary scores has the marginal
    likelihood ``log N(y | Phi w, I) + log N(w | 0, A^-1) + log|2 pi S|/2``
    at its posterior mean ``w`` (``S = (Phi^T Phi + A)^-1``, one per class);
    its data term is replaced by the multinomial-probit likelihood of the
    labels at the fitted scores, a Laplace approximation with the auxiliary
    model's curvature. What remains is the fit of the labels minus the
    Occam factor of every class::

        sum_i log P(y_i | f_i)
        - 1/2 sum_k [w_k^T A_k w_k + log|I + A_k^-1/2 Phi^T Phi A_k^-1/2|]

    ``design`` is the basis of the relevance vectors at the training samples
    (n_samples, n_relevance); ``coef`` and ``alpha`` (n_relevance, K) their
    weights and precisions; ``intercept`` the prior mean of the scores. The
    value does not change when a basis function is rescaled (with its weight
    and precision), so the basis of either method may be passed.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._width import log_evidence
    >>> design = np.array([[1.0, 0.1], [0.1, 1.0]])
    >>> coef = np.array([[2.0, -2.0], [-2.0, 2.0]])
    >>> alpha = np.full((2, 2), 0.25)
    >>> float(np.round(log_evidence(design, np.array([0, 1]), coef, alpha,
    ...                             np.zeros(2), 12), 3))
    -5.22
    """
    scores = design @ coef + intercept
    log_proba = batched_log_proba(scores, n_quadrature)
    fit = log_proba[np.arange(y_index.size), y_index].sum()
    gram = design.T @ design
    occam = 0.0
    for k in range(coef.shape[1]):
        scale = 1.0 / np.sqrt(alpha[:, k])
        inner = np.eye(gram.shape[0]) + scale[:, None] * gram * scale[None, :]
        occam += np.sum(alpha[:, k] * coef[:, k] ** 2)
        occam += np.linalg.slogdet(inner)[1]
    return float(fit - 0.5 * occam)


class EvidenceWidth:
    """The width ``gamma="evidence"`` chooses: the fit of largest evidence.

    Every candidate (:data:`EVIDENCE_FACTORS` times the median heuristic) is
    fitted with the same seed (``random_state`` if an int, else one drawn
    from it, 0 when it is None), so the width and the fit kept are
    reproducible given the data. Each fit's warnings are recorded, not
    shown; the chosen fit's are returned to be raised again.

    Parameters
    ----------
    kernel : str or callable
        The estimator's kernel; it must be one with a width.
    kernel_params : dict or None
        The estimator's further kernel parameters; they must not set the
        width.

    Attributes
    ----------
    candidates : ndarray of shape (9,)
        The widths compared (after :meth:`choose`).
    log_evidence : ndarray of shape (9,)
        The approximate log marginal likelihood of the labels of each
        candidate's fit (:func:`log_evidence`; after :meth:`choose`).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm import MulticlassRVC
    >>> from skrbal.rvm._width import EvidenceWidth
    >>> X = np.array([[0.0], [0.2], [0.4], [3.0], [3.2], [3.4]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> choice = EvidenceWidth("rbf", None)
    >>> fitted, caught = choice.choose(MulticlassRVC(), X, y, np.array([0, 1]))
    >>> bool(fitted.gamma_ == choice.candidates[np.argmax(choice.log_evidence)])
    True
    """

    def __init__(self, kernel, kernel_params):
        WidthChoice(kernel, kernel_params)
        self.kernel = kernel

    def choose(self, estimator, X, y, classes):
        """Fit ``estimator``'s clones at every candidate; keep the best.

        Returns the fitted clone of the largest evidence (ties: the widest)
        and the warnings its fit raised.
        """
        self.candidates = width_scale(X, self.kernel) * np.asarray(EVIDENCE_FACTORS)
        seed = estimator.random_state
        if seed is None:
            seed = 0
        elif not isinstance(seed, (int, np.integer)):
            seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
        params = estimator.get_params()
        y_index = np.searchsorted(classes, y)
        fits, self.log_evidence = [], np.empty(self.candidates.size)
        for c, gamma in enumerate(self.candidates):
            model = clone(estimator).set_params(
                gamma=float(gamma), classes=classes, random_state=seed, verbose=0
            )
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model.fit(X, y)
            basis = KernelBasis(
                params["kernel"],
                gamma=float(gamma),
                degree=params["degree"],
                coef0=params["coef0"],
                kernel_params=params["kernel_params"],
                linear_term=params["linear_term"],
            )
            design = basis.gram(X, model.relevance_vectors_)
            self.log_evidence[c] = log_evidence(
                design,
                y_index,
                model.coef_,
                model.alpha_,
                model.intercept_,
                params["n_quadrature"],
            )
            fits.append((model, [w.message for w in caught]))
        # np.argmax takes the first maximum: candidates run from the widest.
        return fits[int(np.argmax(self.log_evidence))]
