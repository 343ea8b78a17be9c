"""The kernel basis of an mRVM: the Gram matrix between two sets of samples."""

from __future__ import annotations

import numpy as np
from sklearn import config_context
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels

KERNELS = frozenset(PAIRWISE_KERNEL_FUNCTIONS) - {"precomputed"}
# The kernels of pairwise_kernels that take a width ``gamma``.
KERNELS_WITH_WIDTH = frozenset(
    {"rbf", "laplacian", "poly", "polynomial", "sigmoid", "chi2"}
)


class KernelBasis:
    """A kernel with its parameters fixed, at one width.

    Parameters
    ----------
    kernel : str or callable
        A kernel of :func:`sklearn.metrics.pairwise.pairwise_kernels` or a
        callable ``kernel(X, Y, **kernel_params)`` returning the Gram matrix.
    gamma : float
        The width, for the named kernels that take one.
    degree, coef0 : float
        Parameters of the "poly" and "sigmoid" kernels.
    kernel_params : dict or None
        Further keyword arguments; they override the above, and are the only
        ones passed to a callable kernel.
    linear_term : float, default=0.0
        Weight ``beta`` of a linear kernel added to the kernel:
        ``k(x, y) + beta * g * (1 + x . y)``, with ``g`` the width ``gamma``
        (1 for a kernel without one), so that the linear part scales with the
        features as the kernel's width does.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._basis import KernelBasis
    >>> basis = KernelBasis("rbf", gamma=0.5, degree=3, coef0=1.0, kernel_params=None)
    >>> basis.gram(np.zeros((1, 2)), np.array([[0.0, 0.0], [2.0, 0.0]])).round(3)
    array([[1.   , 0.135]])

    With a linear term, far from ``x`` the kernel grows linearly instead of
    vanishing:

    >>> linear = KernelBasis("rbf", gamma=0.5, degree=3, coef0=1.0,
    ...                      kernel_params=None, linear_term=0.2)
    >>> linear.gram(np.ones((1, 2)), np.array([[1.0, 1.0], [10.0, 10.0]])).round(3)
    array([[1.3, 2.1]])
    """

    def __init__(self, kernel, *, gamma, degree, coef0, kernel_params, linear_term=0.0):
        self.kernel = kernel
        self.linear_term = linear_term
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = dict(kernel_params or {})

    def gram(self, X, Y) -> np.ndarray:
        """Gram matrix ``k(X, Y)`` of shape ``(len(X), len(Y))``.

        Raises
        ------
        ValueError
            If a callable kernel returns the wrong shape, or any kernel a
            non-finite value.
        """
        if callable(self.kernel):
            gram = np.asarray(self.kernel(X, Y, **self.kernel_params), dtype=float)
            if gram.shape != (X.shape[0], Y.shape[0]):
                raise ValueError(
                    f"The callable kernel returned shape {gram.shape}; expected "
                    f"the Gram matrix of shape {(X.shape[0], Y.shape[0])}."
                )
        else:
            params = {
                "gamma": self.gamma,
                "degree": self.degree,
                "coef0": self.coef0,
                **self.kernel_params,
            }
            # X and Y were validated (finite float64) by fit or predict: skip
            # scikit-learn's second pass over them, a third of the kernel's
            # time when the stream learner scores its held-out set.
            with config_context(assume_finite=True, skip_parameter_validation=True):
                gram = pairwise_kernels(
                    X, Y, metric=self.kernel, filter_params=True, **params
                )
        if self.linear_term:
            scale = self.linear_term * self._width()
            gram = gram + scale * (1.0 + X @ Y.T)
        if not np.all(np.isfinite(gram)):
            raise ValueError("The kernel returned non-finite values.")
        return gram

    def _width(self):
        """The width the linear term is scaled by: 1 without one."""
        if callable(self.kernel) or self.kernel not in KERNELS_WITH_WIDTH:
            return 1.0
        return float(self.kernel_params.get("gamma", self.gamma))
