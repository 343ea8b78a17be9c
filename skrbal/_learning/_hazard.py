"""The rate of leaving each state, learnt from the labelled history (private).

A decision process states how likely each state is to be left in a step when
nothing is done; the processes in use state damage rates far above what their
records show (a hand-typed one 17 times, the paper's by orders of magnitude).
Carried through such a process, the prediction from the last label
(:class:`~skrbal._learning._history.HistoryPrior`) drifts towards damage over
every healthy stretch. :class:`LearntHazard` replaces the stated rates of the
idle action by their posterior means given the labelled history.

The model
---------
The idle action is the one that costs nothing (the largest action utility:
"do nothing"). Under it the states fall into communicating classes (the
strongly connected components of its transition graph): Z24's normal and cold
states form one, each damage state its own. A class ``C`` that can be left is
left in a step with probability ``q_C``; it cannot be re-entered once left.
The stated ``q_C`` is the mean of its states' exit probabilities; a learnt
``q_C`` scales every state's exit (and so keeps the stated destinations and
moves within the class). The prior on ``q_C`` is ``Beta(c, c (1 / q_0 - 1))``
with ``c`` = :data:`PRIOR_SOJOURNS` = 1: its mean is the stated rate and it
weighs as much as one stay of the stated mean length (``1 / q_0`` steps) ended
by one departure, so a healthy record longer than the stated sojourn soon
outweighs it.

The evidence is every pair of consecutive known steps ``a < b`` (labels, or an
imperfect report's posterior; a label wins at its step) with only the idle
action taken at ``a .. b - 1``. With mass ``p`` in ``C`` at ``a`` and ``r`` at
``b``, ``u = 1 - q_C`` and ``L = b - a``, its likelihood is

    (1 - p) + p (r u^L + (1 - r) (1 - u^L)),

the interval-censored evidence of a stay (``u^L``) or of a departure somewhere
in the interval (``1 - u^L``), each weighted by the reports' posteriors. Labels
that stay (``p = r = 1``) are conjugate: they add ``L`` to the Beta's second
parameter, so a history of labels that stay has the closed-form posterior mean
``c / (c / q_0 + S)`` after ``S`` steps of stays. Departures and imperfect
reports are not conjugate; their product with the Beta is integrated on a fixed
grid of :data:`GRID_SIZE` points uniform in ``logit q_C`` (a smooth, decaying
integrand: the trapezoid rule is accurate to many digits), vectorised over the
grid and the intervals.

The learnt transition uses the posterior mean, the exact predictive
probability of leaving in the next step. Nothing is stored: the estimate is a
function of the labels, reports and actions the campaign keeps.

Assumptions, stated: the process's classes cannot be re-entered once left; the
steps a campaign chooses to inspect are not selected on the rate (they are
chosen from the observations, which the labels-only likelihood ignores).
"""

from __future__ import annotations

import numpy as np

__all__ = ["GRID_SIZE", "PRIOR_SOJOURNS", "LearntHazard", "communicating_classes"]

#: The prior's strength, in stated sojourns: ``Beta(c, c (1/q_0 - 1))``.
PRIOR_SOJOURNS = 1.0
#: Points of the ``logit q`` grid on which non-conjugate evidence is integrated.
GRID_SIZE = 4097
#: The grid's range in ``logit q``: ``q`` from about 1e-13 to 1 - 1e-6.
GRID_RANGE = (-30.0, 14.0)


def communicating_classes(transition) -> np.ndarray:
    """The communicating class of each state under ``transition`` (K, K).

    Two states share a class when each can reach the other. Classes are
    numbered by their first state.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._learning._hazard import communicating_classes
    >>> communicating_classes(np.array([[0.7, 0.2, 0.1], [0.4, 0.6, 0.0],
    ...                                 [0.0, 0.0, 1.0]]))
    array([0, 0, 2])
    """
    transition = np.asarray(transition)
    k = transition.shape[0]
    reach = (transition > 0) | np.eye(k, dtype=bool)
    for _ in range(max(1, int(np.ceil(np.log2(max(k, 2)))))):
        reach = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
    mutual = reach & reach.T
    return np.argmax(mutual, axis=1)


class LearntHazard:
    """The idle action's exit rates, learnt from the labelled history.

    Parameters
    ----------
    transition : ndarray of shape (n_actions, n_states, n_states)
        The process's transition model.
    action_utility : ndarray of shape (n_actions,)
        The actions' utilities: the idle action is the largest.

    Attributes
    ----------
    idle : int
        The idle action.
    members : ndarray of shape (n_learnt, n_states)
        One row per class whose rate is learnt: its states.
    stated : ndarray of shape (n_learnt,)
        Each learnt class's stated rate ``q_0``.
    """

    def __init__(self, transition, action_utility):
        self.transition = np.asarray(transition, dtype=np.float64)
        self.idle = int(np.argmax(np.asarray(action_utility)))
        idle = self.transition[self.idle]
        label = communicating_classes(idle)
        outside = label[:, None] != label[None, :]
        #: Each state's stated probability of leaving its class in a step.
        self.exit = (idle * outside).sum(axis=1)
        members, stated = [], []
        for c in np.unique(label).tolist():
            inside = label == c
            q0 = float(self.exit[inside].mean())
            if 0.0 < q0 < 1.0:
                members.append(inside)
                stated.append(q0)
        self.members = np.array(members, dtype=bool).reshape(-1, label.size)
        self.stated = np.array(stated)
        self._outside = outside
        self._key = None
        self._value = None

    # -------------------------------------------------------------- #
    def rates(self, steps, dists, actions) -> np.ndarray:
        """The posterior mean rate of each learnt class.

        ``steps`` (m,) are the known steps in increasing order, ``dists``
        (m, n_states) their distributions, ``actions`` the actions taken at
        every step up to the last known one.
        """
        steps = np.asarray(steps, dtype=np.int64)
        c = PRIOR_SOJOURNS
        a = np.full(self.stated.size, c)
        b = c * (1.0 / self.stated - 1.0)
        if steps.size < 2 or not self.stated.size:
            return a / (a + b)
        actions = np.asarray(actions)[: steps[-1]]
        busy = np.concatenate([[0], np.cumsum(actions != self.idle)])
        idle_only = busy[steps[1:]] == busy[steps[:-1]]
        length = (steps[1:] - steps[:-1])[idle_only].astype(np.float64)
        mass = np.asarray(dists, dtype=np.float64) @ self.members.T.astype(np.float64)
        p = mass[:-1][idle_only]  # (pairs, classes)
        r = mass[1:][idle_only]
        stays = (p == 1.0) & (r == 1.0)
        b = b + (stays * length[:, None]).sum(axis=0)
        other = ~stays & (p > 0.0)
        out = a / (a + b)
        for j in np.flatnonzero(other.any(axis=0)).tolist():
            rows = other[:, j]
            out[j] = _posterior_mean(a[j], b[j], p[rows, j], r[rows, j], length[rows])
        return out

    def learnt(self, steps, dists, actions) -> np.ndarray:
        """The transition model with the idle action's exit rates learnt.

        Cached on its evidence: a campaign asks at every step.
        """
        steps = np.asarray(steps, dtype=np.int64)
        dists = np.asarray(dists, dtype=np.float64)
        last = int(steps[-1]) if steps.size else 0
        window = np.asarray(actions)[:last]
        key = (steps.tobytes(), dists.tobytes(), (window != self.idle).tobytes())
        if key == self._key:
            return self._value
        rates = self.rates(steps, dists, window)
        transition = self.transition.copy()
        idle = transition[self.idle]
        for inside, q0, q in zip(self.members, self.stated, rates):
            rows = np.flatnonzero(inside)
            exit_ = np.minimum(self.exit[rows] * (q / q0), 1.0)
            leave = np.where(self.exit[rows] > 0, exit_ / self.exit[rows], 0.0)
            stay = np.where(
                self.exit[rows] < 1, (1.0 - exit_) / (1.0 - self.exit[rows]), 0.0
            )
            factor = np.where(self._outside[rows], leave[:, None], stay[:, None])
            idle[rows] = idle[rows] * factor
        self._key, self._value = key, transition
        return transition


def _posterior_mean(a, b, p, r, length) -> float:
    """``E[q]`` under ``Beta(a, b)`` times ``prod (1 - p + p r + p (2r - 1)
    (u^L - 1))``, ``u = 1 - q``, on the ``logit q`` grid."""
    z = np.linspace(*GRID_RANGE, GRID_SIZE)
    log_q = -np.logaddexp(0.0, -z)
    log_u = -np.logaddexp(0.0, z)
    # The Beta density times the Jacobian dq/dz = q u.
    log_w = a * log_q + b * log_u
    with np.errstate(divide="ignore"):
        factor = (1.0 - p + p * r)[:, None] + (p * (2.0 * r - 1.0))[:, None] * np.expm1(
            length[:, None] * log_u[None, :]
        )
        log_w = log_w + np.log(np.maximum(factor, 0.0)).sum(axis=0)
    w = np.exp(log_w - log_w.max())
    return float((w * np.exp(log_q)).sum() / w.sum())
