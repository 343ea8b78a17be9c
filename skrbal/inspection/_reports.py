"""Reports as data: drawing them from a confusion model, learning from them."""

from __future__ import annotations

import numpy as np
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import _num_samples

from skrbal._decision import DecisionProcess
from skrbal._labels import label_positions
from skrbal._validation import check_belief_sums
from skrbal.inspection._method import InspectionMethod

__all__ = ["learnable_posterior", "simulate_reports", "weighted_copies"]


def simulate_reports(
    y_true, process: DecisionProcess, method: InspectionMethod, random_state=None
) -> np.ndarray:
    """Draw the report of each inspection from the method's confusion model.

    The simulated oracle of an imperfect inspection: for true state ``y`` the
    report is ``z`` with probability ``confusion[y, z]``. One uniform number
    is drawn per inspection, whatever the method, so a seeded run draws the
    same numbers whichever methods it uses.

    Parameters
    ----------
    y_true : array-like of shape (n_inspections,)
        True health state at each inspection, labels of ``process``.
    process : DecisionProcess
        The process whose states the confusion rows follow.
    method : InspectionMethod
        The method that inspects.
    random_state : int, RandomState instance or None, default=None
        The generator of the draws.

    Returns
    -------
    reports : ndarray of shape (n_inspections,)
        Labels from ``method.outcomes_``. A perfect method reports the true
        state.

    See Also
    --------
    report_posterior : The belief after a report.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import InspectionMethod, simulate_reports
    >>> process = synthetic_decision_process()
    >>> drone = InspectionMethod(
    ...     name="drone", cost=1.4,
    ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]],
    ...     outcomes=["no damage found", "damage found"])
    >>> simulate_reports([1, 4, 4], process, drone, random_state=0).tolist()
    ['no damage found', 'damage found', 'damage found']
    """
    if not isinstance(process, DecisionProcess):
        raise TypeError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )
    if not isinstance(method, InspectionMethod):
        raise TypeError(
            f"method must be an InspectionMethod, got {type(method).__name__}."
        )
    confusion = method._confusion_for(process)
    outcomes = method.outcomes_
    rows = label_positions(y_true, process.classes_, owner="the process's classes")
    uniform = check_random_state(random_state).random_sample(rows.shape[0])
    cumulative = np.cumsum(confusion[rows], axis=1)
    # The last column is 1 up to rounding; counting the thresholds below the
    # draw, capped at the last outcome, never picks an outcome of probability 0
    # past the last positive one.
    index = np.minimum((cumulative <= uniform[:, None]).sum(axis=1), len(outcomes) - 1)
    last_positive = confusion.shape[1] - 1 - np.argmax(confusion[:, ::-1] > 0, axis=1)
    index = np.minimum(index, last_positive[rows])
    return outcomes[index]


def learnable_posterior(posterior, likelihood, known) -> np.ndarray:
    """The part of a report's posterior that a model may learn as data.

    After a report ``z``, the posterior gives some mass to every state the
    report does not rule out, including states no label has yet shown (a
    new structure's damage states). For such a state that mass comes from
    the prior's tail, not from data, and learning it as soft evidence
    (:func:`weighted_copies`) places the state, by a small weight at each
    report, where the reports were made. Reports of healthy steps then pull
    a never-labelled damage state into the healthy data, raising its belief
    there, which buys more reports: the loop that makes an imperfect method
    lose to a perfect one under a stated direction (issue 26,
    ``benchmarks/results/unseen_evsi.md``).

    The rule: a state without a label (``known`` False; the learners and
    the agent also count as known a state with no stated prior, which has
    no stated location to lose) whose likelihood of the report is
    below that of some labelled state (the report counts against it
    relative to a state the model knows) gets none of the mass; the rest is
    renormalised. A report that points at a never-labelled state (a "damage
    found" as likely under it as under any labelled state) is learnt as it
    is, and so is every report once each state has a label. The action is
    still taken on the full posterior: this is what is learnt, not what is
    believed.

    Parameters
    ----------
    posterior : array-like of shape (n_states,)
        The posterior after the report (:func:`report_posterior`).
    likelihood : array-like of shape (n_states,)
        ``P(z | y)`` of the report ``z`` for each state ``y``: the report's
        column of the method's confusion matrix.
    known : array-like of bool of shape (n_states,)
        Whether each state has at least one label in the training data.

    Returns
    -------
    learnable : ndarray of shape (n_states,)
        The posterior with the mass of the states described above removed
        and renormalised; the posterior itself when nothing is removed, no
        state has a label, or the removed states hold all the mass.

    See Also
    --------
    weighted_copies : Training rows for a posterior.

    Examples
    --------
    A "no damage found" report (damage detected with probability 0.85,
    false calls 0.04) on a structure with labels of the first state only:

    >>> import numpy as np
    >>> from skrbal.inspection import learnable_posterior
    >>> posterior = np.array([0.9, 0.0965, 0.00175, 0.00175])
    >>> learnable_posterior(posterior, [0.96, 0.96, 0.15, 0.15],
    ...                     [True, False, False, False]).round(4).tolist()
    [0.9032, 0.0968, 0.0, 0.0]

    A "damage found" report is learnt whole:

    >>> learnable_posterior([0.3, 0.1, 0.3, 0.3], [0.04, 0.04, 0.85, 0.85],
    ...                     [True, False, False, False]).tolist()
    [0.3, 0.1, 0.3, 0.3]
    """
    posterior = np.asarray(posterior, dtype=np.float64)
    likelihood = np.asarray(likelihood, dtype=np.float64)
    known = np.asarray(known, dtype=bool)
    if not (posterior.shape == likelihood.shape == known.shape) or posterior.ndim != 1:
        raise ValueError(
            "posterior, likelihood and known must be 1-d arrays of one entry per "
            f"state, got shapes {posterior.shape}, {likelihood.shape} and "
            f"{known.shape}."
        )
    if not known.any():
        return posterior
    drop = ~known & (likelihood < likelihood[known].max())
    kept = np.where(drop, 0.0, posterior)
    total = kept.sum()
    if not drop.any() or total <= 0.0:
        return posterior
    return kept / total


def weighted_copies(X, posterior, classes, mean_precision=None):
    """One weighted copy of each sample per state it may be in.

    Soft evidence for an estimator that accepts ``sample_weight``: a sample
    whose state is known only as a posterior ``p`` becomes one copy per state
    ``k`` with ``p[k] > 0``, labelled ``k``. By default the copy is weighted
    ``p[k]``: for a conjugate model whose statistics are weighted sums (such
    as :class:`~skrbal.mixture.BayesianGMMClassifier`) this is the update
    with fractional responsibilities ``p``.

    With ``mean_precision`` (how many samples each class's mean rests on,
    ``kappa``, e.g. ``mean_precision_posterior_`` of a fitted
    :class:`~skrbal.mixture.BayesianGMMClassifier`) the weights are instead
    those whose conjugate update gives the exact posterior mean of each
    class's mean (assumed-density filtering). The exact posterior of a
    class's parameters after a sample that belongs to it with probability
    ``p`` is the mixture ``p * (updated with the sample) + (1 - p) *
    (unchanged)``, whose class mean is ``m + p (x - m) / (kappa + 1)``; a
    weighted update gives ``m + w (x - m) / (kappa + w)``, equal for::

        w = p * kappa / (kappa + 1 - p)

    A certain row (``p = 1``) keeps weight 1 (a label); for a class resting
    on many samples ``w`` tends to ``p``; for a class resting on its prior
    alone (``kappa`` small, no label) it is much smaller than ``p``, so a
    report that only might belong to a never-seen state does not move that
    state's whole prior mass onto the sample. Rows are taken in order, each
    class's ``kappa`` growing by the weights before them.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The samples (a DataFrame stays one).
    posterior : array-like of shape (n_samples, n_classes)
        Probability of each state for each sample; rows sum to one.
    classes : array-like of shape (n_classes,)
        Labels of the columns of ``posterior``.
    mean_precision : array-like of shape (n_classes,), default=None
        Positive ``kappa`` of each class before the first sample; ``None``
        gives the fractional weights ``p``.

    Returns
    -------
    X_copies : ndarray of shape (n_copies, n_features)
    y_copies : ndarray of shape (n_copies,)
    sample_weight : ndarray of shape (n_copies,)
        In the order of the samples, then of the states.

    Examples
    --------
    >>> from skrbal.inspection import weighted_copies
    >>> X, y, w = weighted_copies([[0.5]], [[0.25, 0.0, 0.75]], [1, 2, 3])
    >>> X.ravel().tolist(), y.tolist(), w.tolist()
    ([0.5, 0.5], [1, 3], [0.25, 0.75])

    A class whose mean rests on 100 samples takes about ``p``; one resting on
    its prior alone (``kappa = 1``) much less:

    >>> _, _, w = weighted_copies([[0.5]], [[0.8, 0.2]], [1, 2],
    ...                           mean_precision=[100.0, 1.0])
    >>> w.round(4).tolist()
    [0.7984, 0.1111]
    """
    if not hasattr(X, "shape"):
        X = np.asarray(X)
    posterior = np.asarray(posterior, dtype=np.float64)
    classes = np.asarray(classes)
    n_samples = _num_samples(X)
    if posterior.ndim != 2 or posterior.shape != (n_samples, classes.shape[0]):
        raise ValueError(
            f"posterior must have shape (n_samples, n_classes) = ({n_samples}, "
            f"{classes.shape[0]}), got {posterior.shape}."
        )
    if not np.all(np.isfinite(posterior)) or np.any(posterior < 0):
        raise ValueError("posterior must hold finite, non-negative probabilities.")
    check_belief_sums(
        posterior.sum(axis=1),
        "posterior",
        "each row must be a probability distribution over the classes",
    )
    weight = posterior
    if mean_precision is not None:
        weight = _moment_matched(posterior, mean_precision)
    rows, columns = np.nonzero(posterior > 0)
    return _safe_indexing(X, rows), classes[columns], weight[rows, columns]


def _moment_matched(posterior: np.ndarray, mean_precision) -> np.ndarray:
    """Weights giving each class's exact posterior mean, row after row."""
    kappa = np.array(mean_precision, dtype=np.float64)
    if kappa.shape != posterior.shape[1:]:
        raise ValueError(
            f"mean_precision must have shape ({posterior.shape[1]},), one per "
            f"class, got {kappa.shape}."
        )
    if not (np.all(np.isfinite(kappa)) and np.all(kappa > 0)):
        raise ValueError(
            f"mean_precision must be finite and positive, got {kappa.tolist()}."
        )
    # Rounding may leave a probability a hair above 1; w = 1 is then exact.
    p = np.minimum(posterior, 1.0)
    weight = np.empty_like(p)
    # Each row's weights depend on the previous rows' (kappa grows): one
    # vector step per row, over the classes.
    for i, row in enumerate(p):
        weight[i] = row * kappa / (kappa + (1.0 - row))
        kappa += weight[i]
    return weight
