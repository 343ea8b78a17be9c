"""The two mRVM training loops: top-down pruning (mRVM2) and constructive
type-II maximum likelihood (mRVM1).

Both alternate an M-step for the weights on the active samples, an E-step for
the auxiliary scores of all training samples (:mod:`skrbal.rvm._probit`) and an
update of the prior precisions ``alpha``. The design matrix ``Phi`` has one row
per training sample (where the model is evaluated) and one column per basis
function (the sample it is centred on): ``Phi[t, i] = k(x_t, x_i)``.
"""

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.linalg.lapack import dpstrf

from skrbal.rvm._probit import truncated_probit_means

_LOG_2PI = np.log(2.0 * np.pi)
# mRVM2 keeps alpha fixed for this many EM iterations of a cold start: the
# auxiliary scores start random (see random_start), and judging samples on the
# weights that fit this noise would prune before the E-step has pulled the
# scores to the data. On the benchmark sets it also makes the accuracy less
# dependent on the seed of the start.
WARMUP_ITER = 5
# Largest change of any auxiliary score a batch of pruned samples may cause.
PRUNE_SCORE_TOL = 0.05
# Scale of the observed class's random auxiliary score at a cold start
# (10 in the authors' MATLAB code, ``Y = 10*rand(C,N).*t + rand(C,N)``).
START_SCALE = 10.0
_JITTERS = (0.0, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2)
# Largest precision given to a basis function whose marginal-likelihood
# contribution is not positive but that mRVM1 must keep (the last one).
ALPHA_MAX = 1e10
# A candidate whose basis function lies in the span of the active ones up to
# this fraction of its squared norm adds no new direction (a duplicated sample,
# or any sample once a low-rank kernel such as "linear" spans its space); it
# could only shift prior mass along a flat ridge of the marginal likelihood.
_SPAN_TOL = 1e-6


@dataclass
class FitResult:
    """State of an mRVM fit: active set, precisions, weights and diagnostics."""

    active: np.ndarray
    alpha: np.ndarray
    weights: np.ndarray
    n_iter: int = 0
    converged: bool = False
    stop_reason: str = "max_iter"
    n_relevance_trace: list = field(default_factory=list)
    log_evidence_trace: list = field(default_factory=list)


def random_start(y, n_classes, random_state):
    """Random auxiliary scores that follow the labels, as in the authors' code.

    ``aux[i, k] = START_SCALE * U1 * [k == y_i] + U2`` with independent
    ``U1, U2 ~ U(0, 1)`` drawn from the ``RandomState`` ``random_state``: the
    observed class mostly, but not always, has the largest score, at about
    the scale of a fitted model's scores. A start at zero scores (the E-step
    of a zero model) gives every auxiliary score the same small magnitude,
    ``|E f| <= 0.85``; the first M-steps then fit weights so small that alpha
    prunes most samples before the scores can grow, and the solver stays near
    uniform beliefs (test accuracy 0.40 against 0.70 with this start, from 10
    labels of the synthetic degradation stream).
    """
    onehot = np.zeros((y.size, n_classes))
    onehot[np.arange(y.size), y] = 1.0
    noise = random_state.random_sample((2, *onehot.shape))
    return START_SCALE * noise[0] * onehot + noise[1]


def label_start(y, n_classes):
    """Auxiliary scores at the mean of :func:`random_start`: deterministic.

    ``aux[i, k] = START_SCALE / 2 * [k == y_i] + 1 / 2``. mRVM1's cold start:
    the E-step of a model with no weight gives every auxiliary score a
    magnitude below one, too small for any sample to pass the inclusion test
    ``sum_k q_ik**2 > K s_i`` when labels are few, and the fit stays at
    uniform beliefs; scores at the scale of a fitted model's let the samples
    that explain the labels in.
    """
    onehot = np.zeros((y.size, n_classes))
    onehot[np.arange(y.size), y] = 1.0
    return 0.5 * START_SCALE * onehot + 0.5


def warm_aux(scores, y, n_nodes):
    """Auxiliary scores of the E-step at given score means (a warm start)."""
    return truncated_probit_means(scores, y, n_nodes)


def cholesky(matrix):
    """Cholesky factor of a symmetric positive (semi-)definite matrix.

    A nearly singular kernel (duplicated samples, a very wide RBF) can make the
    factorisation fail in floating point; a growing multiple of the mean
    diagonal is then added until it succeeds.
    """
    scale = max(float(np.mean(np.diag(matrix))), np.finfo(float).tiny)
    for jitter in _JITTERS:
        jittered = matrix + (jitter * scale) * np.eye(len(matrix)) if jitter else matrix
        try:
            return cho_factor(jittered, lower=True, check_finite=False)
        except LinAlgError:
            continue
    raise LinAlgError(
        "The regularised kernel Gram matrix is not positive definite even with "
        "jitter; check the kernel (it must be a positive semi-definite, finite "
        "similarity)."
    )


def _log_det(chol):
    return 2.0 * np.sum(np.log(np.abs(np.diag(chol[0]))))


def factor_per_class(gram, alpha):
    """Cholesky factors of ``Phi_A^T Phi_A + diag(alpha[:, k])``, one per class."""
    return [cholesky(gram + np.diag(alpha[:, k])) for k in range(alpha.shape[1])]


def weights_per_class(factors, projected, alpha):
    """M-step with one precision per sample and class (mRVM2).

    Solves ``(Phi_A^T Phi_A + diag(alpha[:, k])) w_k = Phi_A^T f_k`` for each
    class with the factors of :func:`factor_per_class` and returns the weights
    ``(m, K)`` and the log-evidence
    ``sum_k log N(f_k | 0, I + Phi_A diag(alpha_k)^-1 Phi_A^T)`` up to the
    ``-||F||^2 / 2`` and ``2 pi`` terms, which the caller adds.
    """
    weights = np.empty_like(projected)
    log_evidence = 0.0
    for k, chol in enumerate(factors):
        weights[:, k] = cho_solve(chol, projected[:, k], check_finite=False)
        log_evidence -= 0.5 * (_log_det(chol) - np.sum(np.log(alpha[:, k])))
    log_evidence += 0.5 * np.sum(projected * weights)
    return weights, log_evidence


def weights_shared(chol, projected, alpha):
    """M-step with one precision per sample shared by all classes (mRVM1).

    ``chol`` is the Cholesky factor of ``Phi_A^T Phi_A + diag(alpha)``.
    Returns the weights ``(m, K)`` and the log-evidence terms as in
    :func:`weights_per_class`.
    """
    weights = cho_solve(chol, projected, check_finite=False)
    n_classes = projected.shape[1]
    log_evidence = -0.5 * n_classes * (_log_det(chol) - np.sum(np.log(alpha)))
    log_evidence += 0.5 * np.sum(projected * weights)
    return weights, log_evidence


def _evidence_constant(aux):
    n_samples, n_classes = aux.shape
    return -0.5 * (n_samples * n_classes * _LOG_2PI + np.sum(aux * aux))


def fit_top_down(
    design,
    y,
    *,
    active,
    alpha,
    aux,
    tau,
    nu,
    prune_threshold,
    max_iter,
    tol,
    n_nodes,
    initial_alpha=1.0,
    warmup=0,
    max_alpha_updates=None,
    offset=None,
    verbose=0,
):
    """mRVM2: EM from a (large) active set, pruning samples as alpha diverges.

    ``alpha`` has shape ``(len(active), K)``, with NaN rows for samples that
    start at ``initial_alpha``; ``aux`` (n, K) are the auxiliary scores the
    first M-step fits (see :func:`random_start` and :func:`warm_aux`). The
    active set is first reduced to linearly independent basis functions
    (:func:`_independent_columns`). During the
    first ``warmup`` iterations only the weights and scores are updated;
    afterwards ``alpha = (2 tau + 1) / (w**2 + 2 nu)`` and samples whose
    ``alpha`` exceeds ``prune_threshold`` for every class leave the active set
    (see :func:`_keep_after_pruning`). Convergence: the largest change of
    ``log alpha`` over the active samples is below ``tol`` and nothing was
    pruned (``stop_reason`` "converged"). With ``max_alpha_updates`` the loop
    also stops after that many updates of ``alpha`` (the iterations after the
    warm-up; ``stop_reason`` "alpha_update_limit"); otherwise it runs to
    ``max_iter`` ("max_iter").

    ``offset`` (K,) is the prior mean of every sample's auxiliary scores (the
    scores are ``basis @ weights + offset``): the weights fit the departure
    of the scores from it. ``None`` means zero.

    The basis functions are scaled to unit norm over the training samples
    (as in Tipping's SparseBayes) for the numerics; the hyperprior and the
    pruning threshold apply, as in the papers, to the basis functions scaled
    to 1 at their own centre (:func:`_papers_to_unit_norm`), so a sample is
    pruned when ``|w_ik| * sqrt(k(x_i, x_i))`` is below about
    ``prune_threshold ** -0.5`` for every class. ``initial_alpha`` is in
    unit-norm units; ``alpha`` given and returned, and the returned weights,
    are in the units of the unscaled basis.
    """
    norms = np.sqrt(np.einsum("ti,ti->i", design, design))
    norms[norms == 0] = 1.0
    to_unit = _papers_to_unit_norm(design, norms)
    sample_threshold = prune_threshold * to_unit
    sample_nu = nu / to_unit
    design = design / norms
    alpha = np.where(np.isnan(alpha), initial_alpha, alpha / norms[active, None] ** 2)
    active, alpha, basis, gram = _independent_start(design, active, alpha)
    result = FitResult(active=active, alpha=alpha, weights=None)
    offset = np.zeros(aux.shape[1]) if offset is None else offset
    aux = aux - offset
    factors = None
    for n_iter in range(1, max_iter + 1):
        projected = basis.T @ aux
        if factors is None:
            factors = factor_per_class(gram, alpha)
        weights, log_evidence = weights_per_class(factors, projected, alpha)
        result.log_evidence_trace.append(log_evidence + _evidence_constant(aux))
        aux = truncated_probit_means(basis @ weights + offset, y, n_nodes) - offset
        if n_iter <= warmup:
            result.n_relevance_trace.append(active.size)
            if verbose:
                print(f"[mRVM2] iter {n_iter:4d}  active {active.size:5d}  warm-up")
            continue
        new_alpha = (2.0 * tau + 1.0) / (
            weights * weights + 2.0 * sample_nu[active, None]
        )
        change = np.max(np.abs(np.log(new_alpha) - np.log(alpha)))
        keep = _keep_after_pruning(
            new_alpha, sample_threshold[active, None], basis, weights
        )
        n_pruned = int(keep.size - keep.sum())
        alpha, factors = new_alpha, None
        if n_pruned:
            active, alpha, basis = active[keep], alpha[keep], basis[:, keep]
            gram = gram[np.ix_(keep, keep)]
        result.n_relevance_trace.append(active.size)
        if verbose:
            print(
                f"[mRVM2] iter {n_iter:4d}  active {active.size:5d}  "
                f"pruned {n_pruned:4d}  max|dlog alpha| {change:.3e}"
            )
        if change < tol and n_pruned == 0:
            result.converged = True
            result.stop_reason = "converged"
            break
        if max_alpha_updates is not None and n_iter - warmup >= max_alpha_updates:
            result.stop_reason = "alpha_update_limit"
            break
    result.n_iter = n_iter
    factors = factor_per_class(gram, alpha)
    weights, _ = weights_per_class(factors, basis.T @ aux, alpha)
    result.weights = weights / norms[active, None]
    result.active, result.alpha = active, alpha * norms[active, None] ** 2
    return result


def _papers_to_unit_norm(design, norms):
    """Factor from a precision in the papers' units to the unit-norm basis.

    The papers' basis function of sample ``i`` is ``k(., x_i)`` scaled to 1 at
    its own centre (the authors' code divides the kernel by
    ``sqrt(k(x, x) k(x_i, x_i))``; an RBF kernel is already so scaled). With
    ``b_i = k_i / sqrt(k_ii)`` and the unit-norm ``u_i = k_i / ||k_i||``, a
    precision on ``b_i`` times ``k_ii / ||k_i||**2`` is the precision on
    ``u_i``. Where ``k_ii`` vanishes (a linear kernel at the origin) the
    unit-norm basis is taken as the papers'.
    """
    self_similarity = np.abs(np.diagonal(design)).copy()
    degenerate = self_similarity <= 1e-12 * norms**2
    self_similarity[degenerate] = norms[degenerate] ** 2
    return self_similarity / norms**2


def _independent_start(design, active, alpha):
    """Active set, precisions, basis and Gram matrix of independent columns.

    The basis and its Gram matrix are kept by the caller and gathered again
    only when samples are pruned: copying ``n x n`` blocks every iteration
    would cost more than the iteration itself.
    """
    basis = design[:, active]
    gram = basis.T @ basis
    independent = _independent_columns(gram)
    if independent.size < active.size:
        active, alpha = active[independent], alpha[independent]
        basis = basis[:, independent]
        gram = gram[np.ix_(independent, independent)]
    return active, alpha, basis, gram


def _independent_columns(gram):
    """Sorted indices of a maximal set of numerically independent columns.

    Pivoted Cholesky of the Gram matrix of unit-norm basis functions (LAPACK
    ``dpstrf``) stops once every remaining column lies in the span of the
    chosen ones up to ``_SPAN_TOL`` of its squared norm. Redundant columns
    would only share their weight with the chosen ones, and the EM would prune
    them all together, chosen ones included.
    """
    _, piv, rank, _ = dpstrf(gram, tol=_SPAN_TOL, lower=1)
    return np.sort(piv[: max(rank, 1)] - 1)


def _keep_after_pruning(alpha, prune_threshold, basis, weights):
    """Samples that stay active: some class has ``alpha <= prune_threshold``.

    The pruned samples go together only if the scores they carry together,
    ``basis[:, pruned] @ weights[pruned]``, are negligible; otherwise (many
    redundant samples sharing one direction with tiny weights each, as with a
    low-rank kernel) pruning waits while the EM moves the weight onto a few of
    them. The last sample is never pruned.
    """
    keep = (alpha <= prune_threshold).any(axis=1)
    if not keep.any():
        keep[np.argmin(alpha.min(axis=1))] = True
    pruned = ~keep
    if pruned.any():
        carried = basis[:, pruned] @ weights[pruned]
        if np.max(np.abs(carried)) > PRUNE_SCORE_TOL:
            keep[:] = True
    return keep


class _GramColumns:
    """Columns of ``Phi^T Phi`` computed on demand and cached.

    mRVM1 only ever needs the columns of the active samples, so the full
    ``n x n`` product (cubic in ``n``) is never formed.
    """

    def __init__(self, design):
        self.design = design
        n_samples = design.shape[1]
        self.slot = np.full(n_samples, -1)
        self.columns = np.empty((n_samples, 0))

    def __getitem__(self, indices):
        missing = indices[self.slot[indices] < 0]
        if missing.size:
            start = self.columns.shape[1]
            fresh = self.design.T @ self.design[:, missing]
            self.columns = np.concatenate([self.columns, fresh], axis=1)
            self.slot[missing] = np.arange(start, start + missing.size)
        return self.columns[:, self.slot[indices]]


def _sparsity_quality(
    gram_diag, gram_active, projected_all, chol, weights, active, alpha
):
    """Sparsity ``s_i`` and quality ``q_ik`` factors of every sample.

    With ``Sigma = (Phi_A^T Phi_A + A)^-1``, the Woodbury forms
    ``S_i = k_i^T k_i - k_i^T Phi_A Sigma Phi_A^T k_i`` and
    ``Q_ik = k_i^T f_k - k_i^T Phi_A Sigma Phi_A^T f_k`` are converted to the
    leave-one-out ``s_i = alpha_i S_i / (alpha_i - S_i)`` (same for ``q``) for
    the active samples. Returns ``S, s, q``.
    """
    sigma_gram = cho_solve(chol, gram_active.T, check_finite=False)
    big_s = gram_diag - np.einsum("im,mi->i", gram_active, sigma_gram)
    big_q = projected_all - gram_active @ weights
    np.maximum(big_s, 0.0, out=big_s)
    s, q = big_s.copy(), big_q.copy()
    factor = alpha / np.maximum(alpha - big_s[active], np.finfo(float).tiny)
    s[active] = factor * big_s[active]
    q[active] = factor[:, None] * big_q[active]
    return big_s, s, q


def _outside_span(gram_diag, gram_active, active):
    """Whether each basis function has a component outside the active span.

    The squared residual of ``phi_i`` after projection on the active basis is
    ``G_ii - G_iA G_AA^-1 G_Ai``; it is compared with ``_SPAN_TOL * G_ii``.
    """
    chol = cholesky(gram_active[active])
    projection = cho_solve(chol, gram_active.T, check_finite=False)
    residual = gram_diag - np.einsum("im,mi->i", gram_active, projection)
    return residual > _SPAN_TOL * gram_diag


def _seed(gram_diag, projected_all, y, design, per_class):
    """First active samples: the one of largest ``theta``, or one per class.

    ``theta_i = sum_k q_ik**2 - K s_i`` with no sample active. With
    ``per_class`` each labelled class's sample of largest ``theta``: from a
    handful of labels the constructive path rarely gets round to adding a
    class that the first samples already seem to explain, and that class is
    lost. The seeds' precisions are ``K s_i**2 / theta_i`` (``ALPHA_MAX``
    where ``theta_i`` is not positive); a seed whose basis function lies in
    the span of the previous ones is skipped.
    """
    n_classes = projected_all.shape[1]
    theta = np.sum(projected_all**2, axis=1) - n_classes * gram_diag
    if per_class:
        seeds = [
            members[np.argmax(theta[members])]
            for members in (np.flatnonzero(y == label) for label in np.unique(y))
        ]
    else:
        seeds = [int(np.argmax(theta))]
    seeds = np.array(sorted(seeds, key=lambda i: -theta[i]))
    basis = design[:, seeds]
    independent = _independent_columns(
        basis.T @ basis / np.outer(np.sqrt(gram_diag[seeds]), np.sqrt(gram_diag[seeds]))
    )
    seeds = seeds[independent]
    alpha = np.where(
        theta[seeds] > 0,
        n_classes * gram_diag[seeds] ** 2 / np.where(theta[seeds] > 0, theta[seeds], 1),
        ALPHA_MAX,
    )
    return seeds, np.minimum(alpha, ALPHA_MAX)


def _likelihood_gains(s, q, theta, alpha, new_alpha, active, addable):
    """Increase of the marginal likelihood of each single-sample change.

    With ``ell(a) = 1/2 sum_k [log(a / (a + s)) + q_k^2 / (a + s)]`` the
    contribution of a sample at precision ``a``: adding sample ``i`` at its
    optimum gains ``ell(K s^2 / theta)``, which simplifies to
    ``(theta / s + K log(K s / sum_k q_k^2)) / 2``; re-estimating an active
    one gains ``ell(new) - ell(old)``; deleting it gains ``-ell(old)``.
    Returns the gains of the inactive samples (``-inf`` where not addable) and
    of the active ones.
    """
    n_classes = q.shape[1]
    q2 = np.sum(q * q, axis=1)
    gain_add = np.full(s.shape, -np.inf)
    gain_add[addable] = 0.5 * (
        theta[addable] / s[addable]
        + n_classes * np.log(n_classes * s[addable] / q2[addable])
    )
    s_act, q2_act = s[active], q2[active]

    def ell(a):
        return 0.5 * (n_classes * np.log(a / (a + s_act)) + q2_act / (a + s_act))

    positive = theta[active] > 0
    gain_active = np.where(positive, ell(new_alpha) - ell(alpha), -ell(alpha))
    if active.size == 1:
        gain_active[~positive] = -np.inf  # the last sample is never deleted
    return gain_add, gain_active


def _reestimated_alpha(s, theta, active, alpha, n_classes):
    """``K s_i^2 / theta_i`` for the active samples with ``theta_i > 0``."""
    theta_active = theta[active]
    positive = theta_active > 0
    new_alpha = np.where(
        positive,
        n_classes * s[active] ** 2 / np.where(positive, theta_active, 1.0),
        alpha,
    )
    return np.clip(new_alpha, np.finfo(float).tiny, ALPHA_MAX)


def _best_change(s, q, theta, active, alpha, new_alpha, addable):
    """Make the add, re-estimation or deletion of largest likelihood gain.

    Returns the new active set, its precisions and a description of the step.
    """
    n_classes = q.shape[1]
    gain_add, gain_active = _likelihood_gains(
        s, q, theta, alpha, new_alpha, active, addable
    )
    if gain_add.max() >= gain_active.max():
        i = int(np.argmax(gain_add))
        new = min(n_classes * s[i] ** 2 / theta[i], ALPHA_MAX)
        return np.append(active, i), np.append(alpha, new), f"add {i}"
    j = int(np.argmax(gain_active))
    if theta[active[j]] > 0:
        alpha = alpha.copy()
        alpha[j] = new_alpha[j]
        return active, alpha, f"re-estimate {active[j]}"
    return np.delete(active, j), np.delete(alpha, j), f"delete {active[j]}"


def fit_constructive(
    design,
    y,
    *,
    active,
    alpha,
    aux,
    max_iter,
    tol,
    n_nodes,
    offset=None,
    max_alpha_updates=None,
    seed_per_class=False,
    min_iter=1,
    verbose=0,
):
    """mRVM1: fast type-II maximum likelihood with one alpha per sample.

    Starts from ``active`` (seeded with the best single sample when empty, or
    the best of each class with ``seed_per_class``, see :func:`_seed`).
    It cannot converge before iteration ``min_iter``: ``min_iter=2`` when
    ``aux`` is not an E-step's (the first iteration would judge the start).
    With ``theta_i = sum_k q_ik^2 - K s_i``, each iteration makes the one
    change that raises the marginal likelihood most (Tipping & Faul): add an
    inactive sample with ``theta_i > 0`` at ``alpha_i = K s_i^2 / theta_i``,
    re-estimate an active one with ``theta_i > 0`` to that value, or delete
    an active one with ``theta_i <= 0`` (never the last). Then the weights and
    the auxiliary scores of all samples are updated. Converged when nothing is
    to be added or deleted and the largest change of ``log alpha`` a
    re-estimation would make is below ``tol``. ``offset`` is the prior mean
    of the auxiliary scores, as in :func:`fit_top_down`. With
    ``max_alpha_updates`` it stops after that many changes (each iteration
    changes one precision; ``stop_reason`` "alpha_update_limit").
    """
    n_samples, n_classes = aux.shape
    offset = np.zeros(n_classes) if offset is None else offset
    aux = aux - offset
    gram_diag = np.einsum("ti,ti->i", design, design)
    gram = _GramColumns(design)
    projected_all = design.T @ aux
    if active.size == 0:
        active, alpha = _seed(gram_diag, projected_all, y, design, seed_per_class)
    result = FitResult(active=active, alpha=alpha, weights=None)
    gram_active = gram[active]
    chol = cholesky(gram_active[active] + np.diag(alpha))
    span_of = span = None
    for n_iter in range(1, max_iter + 1):
        weights, log_evidence = weights_shared(chol, projected_all[active], alpha)
        result.log_evidence_trace.append(log_evidence + _evidence_constant(aux))
        _, s, q = _sparsity_quality(
            gram_diag, gram_active, projected_all, chol, weights, active, alpha
        )
        theta = np.sum(q * q, axis=1) - n_classes * s
        is_active = np.zeros(n_samples, dtype=bool)
        is_active[active] = True
        addable = ~is_active & (theta > 0)
        if addable.any():
            # Re-estimations keep the active set, and with it the span.
            if span_of is None or not np.array_equal(span_of, active):
                span_of = active
                span = _outside_span(gram_diag, gram_active, active)
            addable &= span
        positive = theta[active] > 0
        new_alpha = _reestimated_alpha(s, theta, active, alpha, n_classes)
        change = np.abs(np.log(new_alpha) - np.log(alpha))
        deletable = ~positive if active.size > 1 else np.zeros(1, dtype=bool)
        settled = not addable.any() and not deletable.any() and change.max() < tol
        if settled and n_iter >= min_iter:
            result.converged = True
            result.stop_reason = "converged"
            result.n_relevance_trace.append(active.size)
            break
        active, alpha, step = _best_change(
            s, q, theta, active, alpha, new_alpha, addable
        )
        result.n_relevance_trace.append(active.size)
        if verbose:
            print(
                f"[mRVM1] iter {n_iter:4d}  active {active.size:5d}  {step:<18s} "
                f"max|dlog alpha| {change.max():.3e}"
            )
        gram_active = gram[active]
        chol = cholesky(gram_active[active] + np.diag(alpha))
        weights = cho_solve(chol, projected_all[active], check_finite=False)
        aux = (
            truncated_probit_means(design[:, active] @ weights + offset, y, n_nodes)
            - offset
        )
        projected_all = design.T @ aux
        if max_alpha_updates is not None and n_iter >= max_alpha_updates:
            result.stop_reason = "alpha_update_limit"
            break
    result.n_iter = n_iter
    result.active, result.alpha, result.weights = active, alpha, weights
    return result
