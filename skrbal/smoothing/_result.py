"""What a smoothed segment returns, and the error of impossible evidence."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Defined here before skrbal.exceptions became its home.
from skrbal.exceptions import ImpossibleEvidenceError  # noqa: F401


@dataclass(frozen=True, eq=False)
class SmoothingResult:
    """Posterior of the hidden health states of one segment.

    Parameters
    ----------
    marginals : ndarray of shape (n_steps, n_states)
        ``marginals[t - 1, k] = P(y_t = classes[k] | start, end, actions,
        x_1..x_T)``; every row sums to one.
    pseudo_labels : ndarray of shape (n_steps,)
        ``classes[argmax(marginals[t - 1])]``, the maximum a posteriori state
        of each hidden step on its own (ties go to the first column). These
        states need not form a feasible path; see :func:`viterbi` for the most
        probable joint sequence.
    log_likelihood : float
        Log probability of the evidence given the start: ``log p(x_1..x_T,
        y_{T+1} = end | start, actions)``, or ``log p(x_1..x_T | start,
        actions)`` without an end. With a soft end it is weighted by the end's
        likelihood vector. ``-inf`` only when it lies below the float range
        (about ``-1.8e308``); impossible evidence raises instead.
    classes : ndarray of shape (n_states,)
        The label of each column: state indices ``0..K-1`` for
        :func:`forward_backward`, the process's ``classes_`` for
        :func:`smooth_segment`.

    See Also
    --------
    forward_backward : Computes this result from log emissions.
    smooth_segment : Computes it from a classifier and a decision process.

    Examples
    --------
    >>> from skrbal.smoothing import forward_backward
    >>> result = forward_backward([[0.0, -1.0]], [[0.5, 0.5], [0.5, 0.5]])
    >>> result.pseudo_labels
    array([0])
    >>> result.classes
    array([0, 1])
    """

    marginals: np.ndarray
    pseudo_labels: np.ndarray
    log_likelihood: float
    classes: np.ndarray
