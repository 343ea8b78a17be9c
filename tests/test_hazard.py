"""The idle action's exit rates learnt from the labelled history (history_prior).

The posterior mean rate is checked against a closed form (labels that stay),
adaptive quadrature of the stated likelihood, and a Monte Carlo posterior
whose likelihood comes from matrix powers of the transition model itself; and
the prediction it makes is checked against the drift it replaces.
"""

import numpy as np
import pytest
from scipy import integrate

from skrbal import DecisionProcess, z24_decision_process
from skrbal._learning import StreamState
from skrbal._learning._hazard import (
    PRIOR_SOJOURNS,
    LearntHazard,
    communicating_classes,
)
from skrbal._learning._history import HistoryPrior

Z24 = z24_decision_process()
EYE = np.eye(4)


def _hazard(process=Z24):
    return LearntHazard(process.transition, process.action_utility)


def _beta_prior(q0):
    return PRIOR_SOJOURNS, PRIOR_SOJOURNS * (1.0 / q0 - 1.0)


def test_classes_follow_the_idle_action():
    hazard = _hazard()
    # Z24: normal and cold communicate; incipient damage can be left;
    # advanced damage cannot.
    np.testing.assert_array_equal(
        communicating_classes(Z24.transition[0]), [0, 0, 2, 3]
    )
    assert hazard.idle == 0
    np.testing.assert_array_equal(hazard.members, [[1, 1, 0, 0], [0, 0, 1, 0]])
    np.testing.assert_allclose(hazard.stated, [0.02, 0.2])


def test_labels_that_stay_have_the_closed_form_posterior():
    hazard = _hazard()
    steps = np.array([0, 1, 2, 10, 40, 41, 300])
    dists = EYE[[0, 1, 0, 0, 1, 0, 0]]  # normal and cold: one class
    actions = np.zeros(300, dtype=int)
    actions[100] = 1  # a repair between 41 and 300: that interval is not evidence
    a, b = _beta_prior(0.02)
    expected = a / (a + b + 41)
    np.testing.assert_allclose(hazard.rates(steps, dists, actions)[0], expected)
    # The damage class has no evidence: its stated rate.
    assert hazard.rates(steps, dists, actions)[1] == pytest.approx(0.2)


def _quadrature(a, b, p, r, length):
    """The posterior mean by adaptive quadrature of the stated likelihood."""

    def density(q, power):
        like = np.prod(
            [
                (1 - pi) + pi * (ri * (1 - q) ** L + (1 - ri) * (1 - (1 - q) ** L))
                for pi, ri, L in zip(p, r, length)
            ]
        )
        return q**power * q ** (a - 1) * (1 - q) ** (b - 1) * like

    points = [1e-4, 1e-3, 1e-2, 0.1]
    top = integrate.quad(density, 0, 1, args=(1,), points=points, limit=500)[0]
    bottom = integrate.quad(density, 0, 1, args=(0,), points=points, limit=500)[0]
    return top / bottom


def test_departures_and_reports_match_quadrature():
    hazard = _hazard()
    # Healthy labels, a departure within 7 steps, a soft report that is
    # probably healthy, one probably damaged after a healthy label.
    steps = np.array([0, 5, 12, 19, 30, 37])
    dists = np.array(
        [
            EYE[0],
            EYE[1],
            EYE[2],  # a departure in (5, 12]
            [0.7, 0.1, 0.2, 0.0],  # a report; its start is damage: no evidence
            EYE[0],
            [0.3, 0.1, 0.5, 0.1],  # a report after a healthy label
        ]
    )
    actions = np.zeros(40, dtype=int)
    actions[22] = 1  # the repair between 19 and 30 removes that interval
    got = hazard.rates(steps, dists, actions)
    a, b = _beta_prior(0.02)
    # Only the stays (0 -> 5) are conjugate; 5 -> 12 is the departure,
    # 12 -> 19 starts in damage (no evidence for the healthy class), 30 -> 37
    # is the report (p = 1, r = 0.4) -- and 19 -> 30 is not idle.
    expected = _quadrature(a, b + 5, p=[1.0, 1.0], r=[0.0, 0.4], length=[7, 7])
    assert got[0] == pytest.approx(expected, rel=1e-7)
    # The incipient class: 12 -> 19 starts there (p = 1) and ends with 0.2.
    a2, b2 = _beta_prior(0.2)
    expected2 = _quadrature(a2, b2, p=[1.0], r=[0.2], length=[7])
    assert got[1] == pytest.approx(expected2, rel=1e-7)


def _power_stay(process, q, start, length):
    """P(still in the healthy class after ``length`` idle steps) for each
    sample of the healthy class's rate ``q``, by matrix powers of the
    transition model with the rate put in (independent of the closed form)."""
    idle = np.array(process.transition[0], dtype=float)
    stated = idle[0, 2:].sum()
    T = np.broadcast_to(idle, (q.size, 4, 4)).copy()
    for k in (0, 1):
        exit_ = idle[k, 2:] * (q / stated)[:, None]
        T[:, k, 2:] = exit_
        T[:, k, :2] = idle[k, :2] * ((1 - exit_.sum(1)) / (1 - stated))[:, None]
    v = np.broadcast_to(start, (q.size, 4))[:, None, :]
    for _ in range(length):
        v = v @ T
    return v[:, 0, :2].sum(axis=1)


def test_the_posterior_mean_matches_monte_carlo_through_matrix_powers():
    # A departure after a stay from the cold state, and a report: the
    # likelihood of each interval is the Markov chain's own (matrix powers),
    # the posterior mean an importance-weighted average over prior draws.
    hazard = _hazard()
    steps = np.array([0, 9, 15, 24])
    dists = np.array([EYE[1], EYE[0], EYE[3], [0.6, 0.0, 0.4, 0.0]])
    actions = np.zeros(24, dtype=int)
    actions[15] = 1  # repaired at the damage: 15 -> 24 is not evidence
    got = hazard.rates(steps, dists, actions)[0]
    rng = np.random.default_rng(0)
    a, b = _beta_prior(0.02)
    q = rng.beta(a, b, size=200_000)
    weight = _power_stay(Z24, q, EYE[1], 9) * (1 - _power_stay(Z24, q, EYE[0], 6))
    estimate = (weight * q).sum() / weight.sum()
    ess = weight.sum() ** 2 / (weight**2).sum()
    sd = np.sqrt(((q - estimate) ** 2 * weight).sum() / weight.sum() / ess)
    assert abs(got - estimate) < 4 * sd
    assert sd < 0.02 * got  # the check is sharp enough to mean something


def test_the_learnt_transition_keeps_rows_and_destinations():
    hazard = _hazard()
    steps = np.arange(0, 400, 20)
    dists = EYE[np.zeros(steps.size, dtype=int)]
    learnt = hazard.learnt(steps, dists, np.zeros(400, dtype=int))
    np.testing.assert_allclose(learnt.sum(axis=-1), 1.0)
    np.testing.assert_array_equal(learnt[1], np.asarray(Z24.transition)[1])
    idle = np.asarray(Z24.transition)[0]
    q = hazard.rates(steps, dists, np.zeros(400, dtype=int))[0]
    np.testing.assert_allclose(learnt[0, :2, 2:], idle[:2, 2:] * q / 0.02)
    # Moves within the healthy class keep their stated proportions.
    np.testing.assert_allclose(
        learnt[0, :2, 0] / learnt[0, :2, 1], idle[:2, 0] / idle[:2, 1]
    )
    # The same evidence returns the same object (the campaign asks every step).
    assert hazard.learnt(steps, dists, np.zeros(400, dtype=int)) is learnt


def test_a_long_healthy_record_keeps_the_prediction_healthy():
    # The stated rate (0.2 a step) would put almost all the prior on damage
    # 30 steps after the last of 60 daily healthy labels; the learnt one
    # keeps most of it healthy.
    process = DecisionProcess(
        transition=[
            [[0.8, 0.15, 0.05], [0.0, 0.8, 0.2], [0.0, 0.0, 1.0]],
            [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
        ],
        state_utility=[0.0, -20.0, -200.0],
        action_utility=[0.0, -40.0],
        inspection_cost=5.0,
        classes=["healthy", "damaged", "severe"],
    )
    labelled = list(range(0, 600, 10))
    n = 630
    state = StreamState(
        X=np.zeros((n, 1)),
        y=np.array(["healthy"] * n, dtype=object),
        known=np.isin(np.arange(n), labelled),
        labelled=labelled,
        action=np.zeros(n, dtype=int),
        exogenous_actions=None,
    )
    proba = np.full((1, 3), 1 / 3)
    weights = np.full(3, 1 / 3)
    history = HistoryPrior(process, 1.0)
    belief = history.beliefs(proba, weights, state, n)
    stated_prior = EYE[0, :3] @ np.linalg.matrix_power(
        np.asarray(process.transition[0]), n - 590
    )
    assert stated_prior[0] < 0.01
    a, b = _beta_prior(0.2)
    q = a / (a + b + 590)
    assert belief[0, 0] == pytest.approx((1 - q) ** (n - 590), rel=1e-12)
    assert belief[0, 0] > 0.9
