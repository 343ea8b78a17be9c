"""mRVM1's keepers: a relevance vector of its own for a class the fit lost.

mRVM1 ties the precision of a sample's weights across the ``K`` classes, so
a sample is included only if ``sum_k q_ik**2 > K s_i``: it must carry ``K``
times its sparsity in quality. A sample that serves one class has quality in
that class only, and a class of two to four labels never gets there; the
fit then predicts the class for none of its labels (a lost class). The
papers' model itself has a precision per sample and class (``w_ik ~ N(0,
1 / alpha_ik)``); the tie is mRVM1's simplification. :class:`Keepers`
relaxes it where it loses a class, and only there: for a lost class ``c``
the sample of that class with the largest ``q_ic**2 - s_i`` gets a weight in
class ``c`` alone, at the precision that maximises class ``c``'s marginal
likelihood, ``s_i**2 / (q_ic**2 - s_i)`` (Tipping and Faul's single-output
optimum; its weights in the other classes stay at zero), provided that the
class's own test ``q_ic**2 > s_i`` passes. The shared relevance vectors and
their precisions stay as fitted; the keepers' precisions, all weights and
the auxiliary scores are then iterated to convergence. A class whose test
fails stays lost (and is reported as such by the estimator).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve

from skrbal.rvm._diagnostics import lost_classes
from skrbal.rvm._probit import truncated_probit_means
from skrbal.rvm._solvers import ALPHA_MAX, cholesky

__all__ = ["Keepers"]


class Keepers:
    """A class-specific relevance vector for each class an mRVM1 fit lost.

    Parameters
    ----------
    design : ndarray of shape (n_samples, n_samples)
        The basis at the training samples, ``Phi[t, i] = k(x_t, x_i)``.
    y_index : ndarray of shape (n_samples,)
        The labels as class indices.
    offset : ndarray of shape (n_classes,)
        The prior mean of the auxiliary scores.
    n_nodes : int
        Quadrature nodes of the E-step.

    Attributes
    ----------
    indices : ndarray of shape (n_keepers,)
        The keepers' training samples (after :meth:`fit`).
    classes : ndarray of shape (n_keepers,)
        The class each one serves.
    alpha : ndarray of shape (n_keepers,)
        Their precisions in the class they serve.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from skrbal.rvm._keepers import Keepers
    >>> X = np.r_[0.0, 0.1, 0.2, np.linspace(2.0, 2.2, 5)][:, None]
    >>> y = np.array([0, 0, 0, 1, 1, 1, 1, 1])

    A fit with one shared relevance vector (sample 1) that predicts class 0
    everywhere: class 1 is lost, and gets a relevance vector of its own.

    >>> keepers = Keepers(rbf_kernel(X), y, np.zeros(2), 12)
    >>> weights, alpha = keepers.fit(np.array([1]), np.array([1.0]),
    ...                              np.array([[2.0, -2.0]]), max_iter=50, tol=1e-2)
    >>> keepers.indices.tolist(), keepers.classes.tolist()
    ([6], [1])
    >>> float(weights[1, 0]), bool(weights[1, 1] > 0)
    (0.0, True)
    """

    def __init__(self, design, y_index, offset, n_nodes):
        self.design = design
        self.y_index = y_index
        self.offset = offset
        self.n_nodes = n_nodes
        self.gram_diag = np.einsum("ti,ti->i", design, design)

    def _aux(self, scores):
        return truncated_probit_means(scores + self.offset, self.y_index, self.n_nodes)

    def _residual_projection(self, shared, chol, columns, aux):
        """``phi_j^T C^-1 f`` and ``phi_j^T C^-1 phi_j`` for candidate columns.

        ``C = I + Phi_A A^-1 Phi_A^T`` of the shared relevance vectors ``A``
        (Woodbury, with ``chol`` the factor of ``Phi_A^T Phi_A + A``).
        """
        basis = self.design[:, shared]
        cross = basis.T @ self.design[:, columns]
        sigma_cross = cho_solve(chol, cross, check_finite=False)
        sparsity = self.gram_diag[columns] - np.einsum("mj,mj->j", cross, sigma_cross)
        quality = self.design[:, columns].T @ aux - sigma_cross.T @ (basis.T @ aux)
        return np.maximum(sparsity, np.finfo(float).tiny), quality

    def fit(self, shared, alpha, weights, *, max_iter, tol):
        """Add keepers to a fit that loses classes, and refit their weights.

        ``shared`` (m,), ``alpha`` (m,) and ``weights`` (m, K) are the
        mRVM1 fit's relevance vectors, shared precisions and weights.
        Returns the weights (m + n_keepers, K) and the precisions
        (m + n_keepers, K) of the shared relevance vectors followed by the
        keepers (whose precision in every other class is ``ALPHA_MAX``, with
        a weight of zero there). With no lost class, or none whose own test
        passes, there are no keepers and the fit is returned unchanged.
        """
        n_classes = weights.shape[1]
        self.indices = np.empty(0, dtype=np.intp)
        self.classes = np.empty(0, dtype=np.intp)
        self.alpha = np.empty(0)
        basis = self.design[:, shared]
        chol = cholesky(basis.T @ basis + np.diag(alpha))
        scores = basis @ weights
        lost = lost_classes(scores + self.offset, self.y_index)
        aux = self._aux(scores) - self.offset
        candidates = np.setdiff1d(np.flatnonzero(np.isin(self.y_index, lost)), shared)
        if candidates.size:
            sparsity, quality = self._residual_projection(shared, chol, candidates, aux)
            own = quality[np.arange(candidates.size), self.y_index[candidates]] ** 2
            gain = own - sparsity
            for label in lost:
                members = np.flatnonzero(self.y_index[candidates] == label)
                if members.size and gain[members].max() > 0:
                    best = members[np.argmax(gain[members])]
                    self.indices = np.append(self.indices, candidates[best])
                    self.classes = np.append(self.classes, label)
                    self.alpha = np.append(self.alpha, sparsity[best] ** 2 / gain[best])
        if not self.indices.size:
            return weights, np.repeat(alpha[:, None], n_classes, axis=1)
        for _ in range(max_iter):
            weights = self._m_step(shared, alpha, chol, aux)
            scores = (
                basis @ weights[: shared.size]
                + self.design[:, self.indices] @ (weights[shared.size :])
            )
            aux = self._aux(scores) - self.offset
            sparsity, quality = self._residual_projection(
                shared, chol, self.indices, aux
            )
            own = quality[np.arange(self.indices.size), self.classes] ** 2
            new_alpha = np.where(
                own > sparsity,
                sparsity**2 / np.maximum(own - sparsity, np.finfo(float).tiny),
                ALPHA_MAX,
            )
            new_alpha = np.minimum(new_alpha, ALPHA_MAX)
            change = np.max(np.abs(np.log(new_alpha) - np.log(self.alpha)))
            self.alpha = new_alpha
            if change < tol:
                break
        # A keeper whose class's test fails again is dropped: its class is lost.
        held = self.alpha < ALPHA_MAX
        self.indices, self.classes = self.indices[held], self.classes[held]
        self.alpha = self.alpha[held]
        weights = self._m_step(shared, alpha, chol, aux)
        precisions = np.full((shared.size + self.indices.size, n_classes), ALPHA_MAX)
        precisions[: shared.size] = alpha[:, None]
        precisions[shared.size + np.arange(self.indices.size), self.classes] = (
            self.alpha
        )
        return weights, precisions

    def _m_step(self, shared, alpha, chol, aux):
        """Weights of the shared relevance vectors and of the keepers.

        A class without a keeper solves the shared system; a class with one
        adds its basis function (at its precision) to the shared ones.
        """
        n_shared, n_classes = shared.size, aux.shape[1]
        basis = self.design[:, shared]
        weights = np.zeros((n_shared + self.indices.size, n_classes))
        weights[:n_shared] = cho_solve(chol, basis.T @ aux, check_finite=False)
        for slot, (index, label) in enumerate(zip(self.indices, self.classes)):
            extended = np.column_stack([basis, self.design[:, index]])
            precisions = np.append(alpha, self.alpha[slot])
            factor = cholesky(extended.T @ extended + np.diag(precisions))
            solved = cho_solve(factor, extended.T @ aux[:, label], check_finite=False)
            weights[:n_shared, label] = solved[:-1]
            weights[n_shared + slot, label] = solved[-1]
        return weights
