"""Latent health-state smoothing between inspections.

Between two inspections the health state is hidden, but the actions taken in
the meantime are known and each one selects the transition model of its step.
The hidden steps therefore form a hidden Markov model with exogenous inputs,
anchored at both ends by the inspected labels. Forward-backward message
passing gives the posterior marginal of every hidden state given the anchors,
the actions and the observations; its arg-max is the pseudo-label of each
unlabelled observation (Hughes et al., "Latent Health-State Smoothing").

Log densities are taken relative to each step's largest one. Forward-backward
then runs in probability space with per-step normalisation (Rabiner's
scaling), vectorised over blocks of steps so that Python loops ``~2 sqrt(T)``
times instead of ``T`` times; Viterbi runs the same way in max-plus algebra.
Both check their own result (no state the model allows may be lost to
underflow unless its paths carry a negligible share of the posterior; carried
block starts must match). Evidence that needs more than the float range (a
state resurrected after ``1e290``-fold odds, log densities that contradict the
model by thousands of nats) is handled by an exact log-space recursion, one
step at a time, which also bounds its rounding errors: log densities so large
(of order ``1e10`` and beyond, such as ``-1e308``) that rounding rather than
evidence would decide the answer raise a ``ValueError`` instead of returning
a guess, and impossible evidence raises :class:`ImpossibleEvidenceError`.
The result never holds NaN.

The time convention shared by every function of this module, for a segment of
``T`` hidden steps between a start state ``y_0`` and an optional end state
``y_{T+1}``::

    step        0        1        2              T        T+1
    state      y_0  ->  y_1  ->  y_2  -> ... ->  y_T  ->  y_{T+1}
    action     d_0      d_1      d_2             d_T
    emission            e_1      e_2             e_T

    start   = y_0      (an inspection, an assumed initial state, or a belief)
    end     = y_{T+1}  (the next inspection, or None when there is none yet)
    log_emission[t - 1] = log p(x_t | y_t)                 for t = 1..T
    actions[t]          = d_t, and y_{t+1} ~ transition[d_t, y_t, :]

``actions[t]`` is the action taken at step ``t``; it drives the transition out
of that step. There are ``T + 1`` actions when ``end`` is given (the last one
leads into the end inspection) and ``T`` otherwise. With inspections at stream
steps ``a`` and ``b`` this is: ``log_emission`` holds the rows of steps
``a+1 .. b-1`` and ``actions`` the actions of steps ``a .. b-1``.
"""

from skrbal.exceptions import ImpossibleEvidenceError
from skrbal.smoothing._adapter import aligned_log_density, smooth_segment
from skrbal.smoothing._result import SmoothingResult
from skrbal.smoothing._segment import forward_backward, viterbi

__all__ = [
    "ImpossibleEvidenceError",
    "SmoothingResult",
    "aligned_log_density",
    "forward_backward",
    "smooth_segment",
    "viterbi",
]
