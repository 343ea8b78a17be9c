"""Tests of latent health-state smoothing (``skrbal.smoothing``).

The reference for small problems is brute-force enumeration of every state path,
computed in log space so that evidence of thousands of nats is checked too; the
reference for long action-free problems is hmmlearn's forward-backward.
"""

import itertools

import numpy as np
import pytest
from _examples import examples  # tests/ is on sys.path
from hmmlearn.base import BaseHMM
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from skrbal import DecisionProcess, synthetic_decision_process
from skrbal.smoothing import (
    ImpossibleEvidenceError,
    SmoothingResult,
    aligned_log_density,
    forward_backward,
    smooth_segment,
    viterbi,
)

SYNTHETIC = synthetic_decision_process()
SYNTHETIC_TRANSITION = np.asarray(SYNTHETIC.transition, dtype=float)
DO_NOTHING, REPAIR = 0, 1


# ---------------------------------------------------------------------- #
# references
# ---------------------------------------------------------------------- #
def _log_vector(anchor, n_states, *, default):
    if anchor is None:
        return default
    if np.ndim(anchor) == 0:
        log_vector = np.full(n_states, -np.inf)
        log_vector[anchor] = 0.0
        return log_vector
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(anchor, dtype=float))


def brute_force(log_emission, transition, actions, start, end):
    """Log joint of every path (y_0, y_1..y_T[, y_T+1]) and the hidden parts."""
    log_emission = np.asarray(log_emission, dtype=float)
    n_steps, n_states = log_emission.shape
    transition = np.asarray(transition, dtype=float).reshape(-1, n_states, n_states)
    if actions is None:
        actions = np.zeros(n_steps + (end is not None), dtype=int)
    with np.errstate(divide="ignore"):
        log_transition = np.log(transition)
    log_start = _log_vector(
        start, n_states, default=np.full(n_states, -np.log(n_states))
    )
    length = 1 + n_steps + (end is not None)
    paths = np.array(list(itertools.product(range(n_states), repeat=length)))
    log_joint = log_start[paths[:, 0]]
    for t in range(1, length):
        log_joint = (
            log_joint + log_transition[actions[t - 1], paths[:, t - 1], paths[:, t]]
        )
        if t <= n_steps:
            log_joint = log_joint + log_emission[t - 1, paths[:, t]]
    if end is not None:
        log_joint = log_joint + _log_vector(end, n_states, default=None)[paths[:, -1]]
    return paths[:, 1 : 1 + n_steps], log_joint


def brute_force_marginals(hidden, log_joint, n_states):
    total = logsumexp(log_joint)
    marginals = np.zeros((hidden.shape[1], n_states))
    for t, k in itertools.product(range(hidden.shape[1]), range(n_states)):
        mask = hidden[:, t] == k
        if mask.any():
            marginals[t, k] = np.exp(logsumexp(log_joint[mask]) - total)
    return marginals, total


def brute_force_best_path(hidden, log_joint):
    """Max over hidden sequences of the joint summed over the two anchors."""
    keys = [tuple(row) for row in hidden]
    by_path = {}
    for key, value in zip(keys, log_joint):
        by_path.setdefault(key, []).append(value)
    scores = {key: logsumexp(values) for key, values in by_path.items()}
    return scores, max(scores.values())


class FixedEmissionHMM(BaseHMM):
    """hmmlearn HMM whose 'observations' are the log emission matrix itself."""

    def _compute_log_likelihood(self, X):
        return X

    def _get_n_fit_scalars_per_param(self):
        return {}

    def _init(self, X, lengths=None):
        pass

    def _check(self):
        pass

    def _generate_sample_from_state(self, state, random_state=None):
        raise NotImplementedError


def hmmlearn_model(startprob, transmat):
    model = FixedEmissionHMM(n_components=len(startprob), implementation="log")
    model.startprob_ = np.asarray(startprob, dtype=float)
    model.transmat_ = np.asarray(transmat, dtype=float)
    return model


class Densities:
    """Minimal estimator exposing the smoothing protocol."""

    def __init__(self, classes, log_density):
        self.classes_ = np.asarray(classes)
        self._log_density = np.asarray(log_density, dtype=float)

    def class_log_density(self, X):
        # X holds row numbers into the fixed density table.
        return self._log_density[np.asarray(X, dtype=int).ravel()]


# ---------------------------------------------------------------------- #
# brute force on random small problems
# ---------------------------------------------------------------------- #
@st.composite
def segments(draw):
    n_states = draw(st.integers(1, 3))
    n_actions = draw(st.integers(1, 2))
    n_steps = draw(st.integers(0, 5))
    start_kind = draw(st.sampled_from(["free", "index", "vector"]))
    end_kind = draw(st.sampled_from(["free", "index", "vector"]))
    scale = draw(st.sampled_from([1.0, 3.0, 1e3]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    transition = rng.dirichlet(np.ones(n_states), size=(n_actions, n_states))
    keep = rng.random(transition.shape) < 0.6
    keep[np.arange(n_actions)[:, None], np.arange(n_states), transition.argmax(2)] = 1
    transition = transition * keep
    transition /= transition.sum(axis=2, keepdims=True)

    log_emission = scale * rng.normal(size=(n_steps, n_states))
    log_emission[rng.random(log_emission.shape) < 0.1] = -np.inf

    has_end = end_kind != "free"
    actions = rng.integers(0, n_actions, n_steps + has_end)
    if n_actions == 1 and draw(st.booleans()):
        actions = None

    start = {
        "free": None,
        "index": int(rng.integers(n_states)),
        "vector": rng.dirichlet(np.ones(n_states))
        * (rng.random(n_states) < 0.7 if n_states > 1 else 1),
    }[start_kind]
    if start_kind == "vector":
        if not start.any():
            start[0] = 1.0
        start = start / start.sum()
    end = {
        "free": None,
        "index": int(rng.integers(n_states)),
        "vector": rng.uniform(0.1, 2.0, n_states) * (rng.random(n_states) < 0.7),
    }[end_kind]
    if end_kind == "vector" and not end.any():
        end[-1] = 0.5
    return log_emission, transition, actions, start, end


@settings(max_examples=examples(300), deadline=None)
@given(segments())
def test_forward_backward_matches_enumeration(segment):
    log_emission, transition, actions, start, end = segment
    hidden, log_joint = brute_force(*segment)
    n_states = log_emission.shape[1]
    if logsumexp(log_joint) == -np.inf:
        with pytest.raises(ImpossibleEvidenceError):
            forward_backward(log_emission, transition, actions, start=start, end=end)
        with pytest.raises(ImpossibleEvidenceError):
            viterbi(log_emission, transition, actions, start=start, end=end)
        return
    expected, log_likelihood = brute_force_marginals(hidden, log_joint, n_states)

    result = forward_backward(log_emission, transition, actions, start=start, end=end)

    assert isinstance(result, SmoothingResult)
    assert result.marginals.shape == log_emission.shape
    np.testing.assert_allclose(result.marginals, expected, rtol=0, atol=1e-10)
    assert result.log_likelihood == pytest.approx(log_likelihood, rel=1e-12, abs=1e-10)
    np.testing.assert_array_equal(result.pseudo_labels, expected.argmax(axis=1))
    np.testing.assert_array_equal(result.classes, np.arange(n_states))


@settings(max_examples=examples(200), deadline=None)
@given(segments())
def test_viterbi_matches_enumeration(segment):
    log_emission, transition, actions, start, end = segment
    hidden, log_joint = brute_force(*segment)
    if logsumexp(log_joint) == -np.inf:
        return
    scores, best = brute_force_best_path(hidden, log_joint)

    path, log_probability = viterbi(
        log_emission, transition, actions, start=start, end=end
    )

    assert log_probability == pytest.approx(best, rel=1e-12, abs=1e-10)
    # Ties make the path non-unique; what matters is that it attains the max.
    assert scores[tuple(path)] == pytest.approx(best, rel=1e-12, abs=1e-10)


def test_evidence_contradicting_the_model_by_thousands_of_nats():
    # A linear-domain smoother loses state 0's e^-2500 forward mass and then
    # cannot explain the third observation; in log space it is exact.
    degrade = [[0.5, 0.5], [0.0, 1.0]]
    log_emission = np.array([[-2500.0, 0.0], [-1e4, -1e4 + 1.0], [0.0, -3000.0]])
    result = forward_backward(log_emission, degrade, start=0)
    expected, log_likelihood = brute_force_marginals(
        *brute_force(log_emission, degrade, None, 0, None), 2
    )
    np.testing.assert_allclose(result.marginals, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(result.pseudo_labels, [0, 0, 0])
    assert result.log_likelihood == pytest.approx(log_likelihood, rel=1e-13)


def test_backward_step_uses_the_action_out_of_the_step():
    # Failed (state 3), repaired at step 0, nothing done at step 1, found
    # undamaged at step 2: y_1 must be undamaged, since doing nothing cannot
    # restore it. Using d_0 (repair) in the backward step would let y_1 = 3
    # through, which the emissions favour strongly.
    log_emission = np.array([[-50.0, -50.0, -50.0, 0.0]])
    result = forward_backward(
        log_emission, SYNTHETIC_TRANSITION, [REPAIR, DO_NOTHING], start=3, end=0
    )
    np.testing.assert_array_equal(result.marginals, [[1.0, 0.0, 0.0, 0.0]])
    assert result.log_likelihood == pytest.approx(np.log(0.99 * 0.8) - 50.0)


def test_segment_without_hidden_steps():
    transition = SYNTHETIC_TRANSITION
    result = forward_backward(
        np.empty((0, 4)), transition, [DO_NOTHING], start=0, end=1
    )
    assert result.marginals.shape == (0, 4)
    assert result.pseudo_labels.shape == (0,)
    assert result.log_likelihood == pytest.approx(np.log(0.18))
    path, log_probability = viterbi(np.empty((0, 4)), transition, [1], start=3, end=0)
    assert path.shape == (0,)
    assert log_probability == pytest.approx(np.log(0.99))
    free = forward_backward(np.empty((0, 2)), [[1.0, 0.0], [0.0, 1.0]])
    assert free.log_likelihood == 0.0


# ---------------------------------------------------------------------- #
# hmmlearn, no actions, no anchors
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize(("n_steps", "n_states"), [(1, 2), (300, 3), (20_000, 4)])
@pytest.mark.parametrize("soft_start", [False, True])
def test_matches_hmmlearn_without_actions_or_anchors(n_steps, n_states, soft_start):
    rng = np.random.default_rng(n_steps + n_states)
    transmat = rng.dirichlet(np.ones(n_states), size=n_states)
    # Densities near -1e3 that differ between states by up to tens of nats.
    log_emission = -1e3 + 10.0 * rng.normal(size=(n_steps, n_states))
    start = rng.dirichlet(np.ones(n_states)) if soft_start else None
    prior = start if soft_start else np.full(n_states, 1.0 / n_states)
    # Our start is y_0, one transition before the first observation.
    model = hmmlearn_model(prior @ transmat, transmat)

    result = forward_backward(log_emission, transmat, start=start)
    path, log_probability = viterbi(log_emission, transmat, start=start)

    # hmmlearn's log lattice grows to ~-1e3 * n_steps and loses ~1e-9 of
    # precision over 20,000 steps; shifting each row of the emissions, which
    # changes no posterior, gives it an accurate reference.
    shift = log_emission.max(axis=1, keepdims=True)
    reference = log_emission - shift
    np.testing.assert_allclose(
        result.marginals, model.predict_proba(reference), rtol=0, atol=1e-10
    )
    assert result.log_likelihood == pytest.approx(
        model.score(reference) + shift.sum(), rel=1e-12
    )
    expected_log_probability, expected_path = model.decode(reference)
    assert log_probability == pytest.approx(
        expected_log_probability + shift.sum(), rel=1e-12
    )
    np.testing.assert_array_equal(path, expected_path)


# ---------------------------------------------------------------------- #
# the paper's inference under monotone degradation
# ---------------------------------------------------------------------- #
@settings(max_examples=examples(50), deadline=None)
@given(
    n_steps=st.integers(1, 40),
    scale=st.sampled_from([1.0, 100.0, 1e4]),
    seed=st.integers(0, 2**32 - 1),
)
def test_undamaged_at_both_inspections_without_repair_is_undamaged(
    n_steps, scale, seed
):
    rng = np.random.default_rng(seed)
    log_emission = scale * rng.normal(size=(n_steps, 4))
    # The data point at damage as hard as they can.
    log_emission[:, 0] -= scale * 10.0
    actions = np.full(n_steps + 1, DO_NOTHING)

    result = forward_backward(
        log_emission, SYNTHETIC_TRANSITION, actions, start=0, end=0
    )

    expected = np.zeros((n_steps, 4))
    expected[:, 0] = 1.0
    np.testing.assert_array_equal(result.marginals, expected)
    np.testing.assert_array_equal(
        viterbi(log_emission, SYNTHETIC_TRANSITION, actions, start=0, end=0)[0],
        np.zeros(n_steps),
    )
    # Through the label adapter too: classes 1..4, pseudo-labels all 1.
    estimator = Densities([1, 2, 3, 4], log_emission)
    labelled = smooth_segment(
        estimator, np.arange(n_steps), SYNTHETIC, actions, start_label=1, end_label=1
    )
    np.testing.assert_array_equal(labelled.pseudo_labels, np.ones(n_steps))
    np.testing.assert_array_equal(labelled.classes, [1, 2, 3, 4])


def test_same_data_without_the_end_inspection_point_at_damage():
    log_emission = np.tile([-100.0, 0.0, 0.0, 0.0], (5, 1))
    actions = np.full(5, DO_NOTHING)
    result = forward_backward(log_emission, SYNTHETIC_TRANSITION, actions, start=0)
    assert (result.marginals[:, 0] < 1e-30).all()
    assert (result.pseudo_labels != 0).all()


# ---------------------------------------------------------------------- #
# long sequences
# ---------------------------------------------------------------------- #
def test_long_sequence_with_tiny_densities_is_finite_and_normalised():
    rng = np.random.default_rng(7)
    n_steps = 20_000
    log_emission = -1e3 + 30.0 * rng.normal(size=(n_steps, 4))
    actions = rng.integers(0, 2, n_steps + 1)
    actions[-1] = REPAIR  # makes the end anchor reachable from any state

    result = forward_backward(
        log_emission, SYNTHETIC_TRANSITION, actions, start=0, end=0
    )
    path, log_probability = viterbi(
        log_emission, SYNTHETIC_TRANSITION, actions, start=0, end=0
    )

    assert np.isfinite(result.marginals).all()
    assert (result.marginals >= 0).all()
    np.testing.assert_allclose(result.marginals.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.isfinite(result.log_likelihood)
    assert -1.1e3 * n_steps < result.log_likelihood < -0.9e3 * n_steps
    assert np.isfinite(log_probability)
    assert log_probability <= result.log_likelihood
    assert path.shape == (n_steps,)


# ---------------------------------------------------------------------- #
# start option and anchors
# ---------------------------------------------------------------------- #
def _random_problem(n_steps=6, seed=3):
    rng = np.random.default_rng(seed)
    log_emission = 3.0 * rng.normal(size=(n_steps, 4))
    actions = rng.integers(0, 2, n_steps + 1)
    return log_emission, actions


def _assert_same(result, other):
    np.testing.assert_allclose(result.marginals, other.marginals, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(result.pseudo_labels, other.pseudo_labels)
    assert result.log_likelihood == pytest.approx(other.log_likelihood, rel=1e-14)


def test_started_undamaged_equals_anchoring_to_state_one():
    log_emission, actions = _random_problem()
    estimator = Densities([1, 2, 3, 4], log_emission)
    X = np.arange(len(log_emission))

    assumed = smooth_segment(
        estimator, X, SYNTHETIC, actions, initial_state=1, end_label=2
    )
    inspected = smooth_segment(
        estimator, X, SYNTHETIC, actions, start_label=1, end_label=2
    )
    as_vector = smooth_segment(
        estimator, X, SYNTHETIC, actions, initial_state=[1, 0, 0, 0], end_label=2
    )
    uniform = smooth_segment(estimator, X, SYNTHETIC, actions, end_label=2)

    _assert_same(assumed, inspected)
    _assert_same(as_vector, inspected)
    assert not np.allclose(uniform.marginals, inspected.marginals)
    free = forward_backward(log_emission, SYNTHETIC_TRANSITION, actions, end=1)
    np.testing.assert_allclose(uniform.marginals, free.marginals, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(uniform.pseudo_labels, free.pseudo_labels + 1)
    assert uniform.log_likelihood == pytest.approx(free.log_likelihood, rel=1e-14)


def test_start_label_overrides_initial_state():
    log_emission, actions = _random_problem()
    estimator = Densities([1, 2, 3, 4], log_emission)
    X = np.arange(len(log_emission))
    both = smooth_segment(
        estimator, X, SYNTHETIC, actions[:-1], start_label=3, initial_state=1
    )
    _assert_same(
        both, smooth_segment(estimator, X, SYNTHETIC, actions[:-1], start_label=3)
    )


def test_free_start_is_uniform_and_index_is_one_hot():
    log_emission, actions = _random_problem()
    transition = SYNTHETIC_TRANSITION
    _assert_same(
        forward_backward(log_emission, transition, actions, start=None, end=0),
        forward_backward(
            log_emission, transition, actions, start=np.full(4, 0.25), end=0
        ),
    )
    _assert_same(
        forward_backward(log_emission, transition, actions, start=np.int64(2), end=0),
        forward_backward(log_emission, transition, actions, start=[0, 0, 1, 0], end=0),
    )
    # Soft-end weights are a likelihood: scaling them scales only the evidence.
    hard = forward_backward(log_emission, transition, actions, start=1, end=3)
    soft = forward_backward(
        log_emission, transition, actions, start=1, end=[0, 0, 0, 7.0]
    )
    np.testing.assert_allclose(soft.marginals, hard.marginals, rtol=0, atol=1e-14)
    assert soft.log_likelihood == pytest.approx(hard.log_likelihood + np.log(7.0))


# ---------------------------------------------------------------------- #
# label adapter
# ---------------------------------------------------------------------- #
def test_smooth_segment_maps_estimator_classes_onto_process_states():
    log_emission, actions = _random_problem()
    order = [2, 0, 3, 1]  # the estimator knows the classes as [3, 1, 4, 2]
    estimator = Densities(SYNTHETIC.classes_[order], log_emission[:, order])
    X = np.arange(len(log_emission))

    result = smooth_segment(
        estimator, X, SYNTHETIC, actions, start_label=2, end_label=4
    )

    expected = forward_backward(
        log_emission, SYNTHETIC_TRANSITION, actions, start=1, end=3
    )
    np.testing.assert_allclose(result.marginals, expected.marginals, atol=1e-14)
    np.testing.assert_array_equal(result.pseudo_labels, expected.pseudo_labels + 1)
    np.testing.assert_array_equal(result.classes, [1, 2, 3, 4])


def test_smooth_segment_with_string_classes():
    process = DecisionProcess(
        transition=[[[0.9, 0.1], [0.0, 1.0]]],
        state_utility=[0.0, -1.0],
        action_utility=[0.0],
        classes=["healthy", "damaged"],
    )
    estimator = Densities(["damaged", "healthy"], [[0.0, -5.0], [-5.0, 0.0]])
    result = smooth_segment(estimator, [0, 0], process, start_label="healthy")
    np.testing.assert_array_equal(result.pseudo_labels, ["damaged", "damaged"])
    assert result.marginals[0, 1] > 0.5


def test_with_the_bayesian_gmm_states_without_data_use_the_prior_predictive():
    from skrbal.mixture import BayesianGMMClassifier

    rng = np.random.default_rng(5)
    X_train = np.r_[rng.normal(0, 1, (20, 2)), rng.normal(5, 1, (20, 2))]
    # Trained on states 1 and 2 only, but told about all four.
    clf = BayesianGMMClassifier(classes=[1, 2, 3, 4]).fit(X_train, [1] * 20 + [2] * 20)
    X = np.r_[
        rng.normal(0, 1, (3, 2)), rng.normal(5, 1, (3, 2)), rng.normal(30, 1, (3, 2))
    ]
    actions = np.full(10, DO_NOTHING)

    aligned = aligned_log_density(clf, X, SYNTHETIC)
    result = smooth_segment(clf, X, SYNTHETIC, actions, start_label=1, end_label=4)

    np.testing.assert_array_equal(aligned, clf.class_log_density(X))
    expected = forward_backward(aligned, SYNTHETIC_TRANSITION, actions, start=0, end=3)
    np.testing.assert_array_equal(result.marginals, expected.marginals)
    np.testing.assert_array_equal(result.pseudo_labels[:6], [1, 1, 1, 2, 2, 2])
    # Far from both fitted classes, only the (prior predictive) damage states fit.
    assert set(result.pseudo_labels[6:]) <= {3, 4}


def test_segment_without_rows_does_not_call_the_estimator():
    class NoCall(Densities):
        def class_log_density(self, X):
            raise AssertionError("called on an empty segment")

    estimator = NoCall([1, 2, 3, 4], np.zeros((0, 4)))
    result = smooth_segment(
        estimator, np.empty((0, 2)), SYNTHETIC, [REPAIR], start_label=4, end_label=1
    )
    assert result.marginals.shape == (0, 4)
    assert result.log_likelihood == pytest.approx(np.log(0.99))


# ---------------------------------------------------------------------- #
# errors
# ---------------------------------------------------------------------- #
GOOD_EMISSION = np.zeros((3, 4))
GOOD_ACTIONS = [0, 1, 0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"log_emission": np.zeros(4)}, r"log_emission must be 2-d"),
        ({"log_emission": np.zeros((3, 0))}, r"log_emission must be 2-d"),
        ({"log_emission": [["a", "b", "c", "d"]]}, r"log_emission must be numeric"),
        (
            {"log_emission": [[0, 0, 0, np.nan]] * 3},
            r"log_emission\[0, 3\] = nan",
        ),
        ({"log_emission": [[0, np.inf, 0, 0]] * 3}, r"log_emission\[0, 1\] = inf"),
        ({"transition": np.ones((2, 4, 3)) / 3}, r"transition must have shape"),
        ({"transition": np.full((2, 3, 3), 1 / 3)}, r"transition has 3 states"),
        ({"transition": np.ones((4, 4))}, r"row 0 for action 0 sums to 4"),
        (
            {
                "transition": SYNTHETIC_TRANSITION
                * [[[1], [1], [1], [1]], [[1], [1], [1], [0.5]]]
            },
            r"row 3 for action 1 sums to 0.5",
        ),
        (
            {"transition": [[[1.5, -0.5, 0, 0]] + [[0.25] * 4] * 3] * 2},
            r"transition\[0, 0, 1\] = -0.5",
        ),
        ({"transition": [[[np.nan] * 4] * 4]}, r"transition\[0, 0, 0\] = nan"),
        ({"actions": None}, r"actions is required: transition has 2 actions"),
        ({"actions": [0, 1]}, r"actions must have 3 entries \(one per hidden step,"),
        ({"actions": [0, 1, 0, 0], "end": 0, "start": 0}, None),
        ({"actions": [0, 1, 0], "end": 0}, r"actions must have 4 entries \(one per"),
        (
            {"actions": [0, 2, 0]},
            r"actions\[1\] = 2 is not an action index in \[0, 2\)",
        ),
        ({"actions": [0, -1, 0]}, r"actions\[1\] = -1 is not an action index"),
        ({"actions": [0.0, 1.0, 0.0]}, r"integer action indices, got dtype float64"),
        ({"actions": [True, False, True]}, r"integer action indices, got dtype bool"),
        ({"actions": [[0, 1, 0]]}, r"actions must be 1-d"),
        ({"start": 4}, r"start = 4 is not a state index in \[0, 4\)"),
        ({"start": -1}, r"start = -1 is not a state index"),
        ({"start": True}, r"start must be None, an integer state index"),
        ({"start": 1.0}, r"start must be None, an integer state index"),
        ({"start": [0.5, 0.5, 0.5, 0]}, r"start sums to 1.5, not 1"),
        ({"start": [0.5, 0.5]}, r"start must have shape \(4,\)"),
        ({"start": [1.5, -0.5, 0, 0]}, r"start\[1\] = -0.5"),
        ({"end": 9, "actions": [0, 0, 0, 0]}, r"end = 9 is not a state index"),
        ({"end": [0, 0, 0, 0], "actions": [0, 0, 0, 0]}, r"end is all zeros"),
        ({"end": [0, np.nan, 0, 1], "actions": [0, 0, 0, 0]}, r"end\[1\] = nan"),
    ],
)
@pytest.mark.parametrize("function", [forward_backward, viterbi])
def test_bad_input_raises_a_clear_error(function, kwargs, match):
    arguments = {
        "log_emission": GOOD_EMISSION,
        "transition": SYNTHETIC_TRANSITION,
        "actions": GOOD_ACTIONS,
    } | kwargs
    log_emission = arguments.pop("log_emission")
    transition = arguments.pop("transition")
    actions = arguments.pop("actions")
    if match is None:  # the control case: a valid call
        function(log_emission, transition, actions, **arguments)
        return
    with pytest.raises(ValueError, match=match):
        function(log_emission, transition, actions, **arguments)


@pytest.mark.parametrize("function", [forward_backward, viterbi])
def test_unreachable_end_anchor_is_impossible_evidence(function):
    # Failed at the start, nothing done, undamaged at the end.
    with pytest.raises(ImpossibleEvidenceError, match="end anchor is unreachable"):
        function(GOOD_EMISSION, SYNTHETIC_TRANSITION, [0, 0, 0, 0], start=3, end=0)
    with pytest.raises(ImpossibleEvidenceError, match="end anchor is unreachable"):
        function(np.empty((0, 4)), SYNTHETIC_TRANSITION, [0], start=3, end=0)


@pytest.mark.parametrize("function", [forward_backward, viterbi])
def test_step_with_no_possible_state_is_impossible_evidence(function):
    log_emission = np.zeros((3, 4))
    log_emission[1, 2:] = -np.inf  # the data rule out states 3 and 4 ...
    actions = [DO_NOTHING] * 3  # ... which are all that a failed structure can be
    with pytest.raises(ImpossibleEvidenceError, match="hidden step 2"):
        function(log_emission, SYNTHETIC_TRANSITION, actions, start=2)


def test_impossible_evidence_is_a_value_error():
    assert issubclass(ImpossibleEvidenceError, ValueError)


@pytest.mark.parametrize(
    ("estimator", "kwargs", "match"),
    [
        (
            Densities([1, 2, 3, 4], np.zeros((3, 4))),
            {"start_label": 5},
            r"start_label = 5 is not a state",
        ),
        (
            Densities([1, 2, 3, 4], np.zeros((3, 4))),
            {"end_label": "1"},
            r"end_label = '1' is not a state",
        ),
        (
            Densities([1, 2, 3, 4], np.zeros((3, 4))),
            {"initial_state": 0},
            r"initial_state = 0 is not a state",
        ),
        (
            Densities([1, 2, 3, 4], np.zeros((3, 4))),
            {"initial_state": [1, 0]},
            r"start must have shape \(4,\)",
        ),
        (
            Densities([1, 2, 3, 5], np.zeros((3, 4))),
            {},
            r"estimator's classes \[5\] are not states",
        ),
        (Densities([1, 2, 4], np.zeros((3, 3))), {}, r"no class \[3\] of the process"),
        (
            Densities([1, 2, 3, 4], np.zeros((3, 3))),
            {},
            r"class_log_density\(X\) has shape \(3, 3\)",
        ),
    ],
)
def test_smooth_segment_bad_input(estimator, kwargs, match):
    with pytest.raises(ValueError, match=match):
        smooth_segment(
            estimator,
            np.arange(3),
            SYNTHETIC,
            [0, 0, 0, 0][: 3 + ("end_label" in kwargs)],
            **kwargs,
        )


# ---------------------------------------------------------------------- #
# log densities at the edge of the float range (issue 10, item 5)
# ---------------------------------------------------------------------- #
# Two paths tie at 26e307 units, their -1e308 at different steps: the forward
# message of state 0 at step 3 is -1e308 relative to the others (representable)
# but -2.4e308 before its shift; computed unshifted it overflowed to -inf and
# the marginals of steps 3 and 4 came out certain instead of 0.08 / 0.92.
_TIE_ACROSS_STEPS = (
    np.array(
        [
            [0.2117331, -1.57312007, 1.60610917],
            [0.0999926, -np.inf, 0.01753252],
            [0.07351142, -np.inf, -0.25506968],
            [0.78618273, 1.1105435, 0.8866692],
        ]
    ),
    np.array(
        [
            [
                [0.0, 0.9754044662949639, 0.02459553370503604],
                [0.11201354432484993, 0.8448927746712616, 0.04309368100388859],
                [1.0, 0.0, 0.0],
            ],
            [
                [0.32709229411402085, 0.3865448561576529, 0.2863628497283263],
                [0.0, 0.7210388391771982, 0.2789611608228018],
                [0.0, 1.0, 0.0],
            ],
        ]
    ),
    np.array([1, 1, 1, 0]),
    None,
    None,
)


@settings(max_examples=examples(300), deadline=None)
@given(segment=segments(), seed=st.integers(0, 2**32 - 1))
@example(segment=_TIE_ACROSS_STEPS, seed=1772443)
def test_log_densities_near_the_float_limit_give_exact_marginals(segment, seed):
    fine, transition, actions, start, end = segment
    rng = np.random.default_rng(seed)
    # Half the finite log densities become -units * 1e307, units in 1..17.
    units = rng.choice([1, 10, 15, 17], size=fine.shape)
    units[(rng.random(fine.shape) < 0.5) | ~np.isfinite(fine)] = 0
    log_emission = np.where(units > 0, -1e307 * units, fine)
    fine = np.where(units > 0, 0.0, fine)
    # Exact reference: a path's log joint is -1e307 * (its units) + (its fine
    # part); only the paths with the fewest units have a non-zero share.
    hidden, log_joint = brute_force(fine, transition, actions, start, end)
    path_units = units[np.arange(units.shape[0]), hidden].sum(axis=1)
    possible = log_joint > -np.inf
    if not possible.any():
        with pytest.raises(ImpossibleEvidenceError):
            forward_backward(log_emission, transition, actions, start=start, end=end)
        with pytest.raises(ImpossibleEvidenceError):
            viterbi(log_emission, transition, actions, start=start, end=end)
        return
    fewest = path_units[possible].min()
    log_joint = np.where(possible & (path_units == fewest), log_joint, -np.inf)
    expected, log_fine = brute_force_marginals(hidden, log_joint, fine.shape[1])
    scores, best = brute_force_best_path(hidden, log_joint)
    with np.errstate(over="ignore"):
        offset = -1e307 * float(fewest)

    try:
        result = forward_backward(
            log_emission, transition, actions, start=start, end=end
        )
        path, log_probability = viterbi(
            log_emission, transition, actions, start=start, end=end
        )
    except ValueError as exc:
        # Paths that differ by O(1) nats after sums of order 1e308 cannot be
        # told apart in double precision: refusing is right, guessing is not.
        assert "beyond double precision" in str(exc)
        assert not isinstance(exc, ImpossibleEvidenceError)
        return

    np.testing.assert_allclose(result.marginals, expected, rtol=0, atol=1e-10)
    assert result.log_likelihood == pytest.approx(
        offset + log_fine, rel=1e-12, abs=1e-10
    )
    assert scores[tuple(path)] == pytest.approx(best, rel=1e-12, abs=1e-10)
    assert log_probability == pytest.approx(offset + best, rel=1e-12, abs=1e-10)


def test_paths_tied_at_1e308_nats_are_refused_not_guessed():
    # Both paths carry one -1.7e308 emission; the O(1) densities that decide
    # between them (95:5) are lost in the rounding of -1.7e308.
    log_emission = np.array([[-1.7e308, -0.1], [-0.17, -1.56], [0.15, -1.7e308]])
    stay = [[[1.0, 0.0], [0.0, 1.0]]]
    with pytest.raises(ValueError, match="beyond double precision at hidden step"):
        forward_backward(log_emission, stay)
    with pytest.raises(ValueError, match="beyond double precision at hidden step"):
        viterbi(log_emission, stay)
    # When one path carries no such emission, it is the answer, exactly.
    log_emission[2] = [0.15, -1.2]
    result = forward_backward(log_emission, stay)
    np.testing.assert_array_equal(result.marginals, [[0.0, 1.0]] * 3)
    assert result.log_likelihood == pytest.approx(np.log(0.5) - 0.1 - 1.56 - 1.2)
    np.testing.assert_array_equal(viterbi(log_emission, stay)[0], [1, 1, 1])


def test_log_likelihood_below_the_float_range_is_minus_infinity():
    # Two steps of -1e308 nats each: the marginals are those of equal
    # emissions, the log-likelihood (-2e308) is below the float range.
    transition = [[0.9, 0.1], [0.2, 0.8]]
    result = forward_backward(np.full((2, 2), -1e308), transition, start=0)
    expected = forward_backward(np.zeros((2, 2)), transition, start=0)
    np.testing.assert_allclose(result.marginals, expected.marginals, atol=1e-15)
    assert result.log_likelihood == -np.inf


# ---------------------------------------------------------------------- #
# the vectorised recursion against the step-by-step one it replaced
# ---------------------------------------------------------------------- #
# The log-space implementation of skrbal 0.x before the blocked, scaled
# recursion (issue 14), kept verbatim as the reference: one small numpy
# operation per step and state, exact to rounding for moderate densities.
_OLD_FLOOR = -1e300


def _old_matvec_columns(log_vector, log_matrix):
    terms = log_vector[:, np.newaxis] + log_matrix
    peak = terms.max(axis=0)
    np.maximum(peak, _OLD_FLOOR, out=peak)
    return np.log(np.exp(terms - peak).sum(axis=0)) + peak


def _old_matvec_rows(log_matrix, log_vector):
    terms = log_matrix + log_vector
    peak = terms.max(axis=1)
    np.maximum(peak, _OLD_FLOOR, out=peak)
    return np.log(np.exp(terms - peak[:, np.newaxis]).sum(axis=1)) + peak


def _old_log_sum(log_vector):
    peak = max(float(log_vector.max()), _OLD_FLOOR)
    return float(np.log(np.exp(log_vector - peak).sum()) + peak)


def _old_inputs(log_emission, transition, actions, start, end):
    log_emission = np.asarray(log_emission, dtype=float)
    n_steps, n_states = log_emission.shape
    transition = np.asarray(transition, dtype=float).reshape(-1, n_states, n_states)
    if actions is None:
        actions = np.zeros(n_steps + (end is not None), dtype=int)
    log_transition = np.log(transition)
    log_start = _log_vector(
        start, n_states, default=np.full(n_states, -np.log(n_states))
    )
    if start is not None and np.ndim(start) == 1:
        log_start = np.log(np.asarray(start) / np.sum(start))
    log_end = None if end is None else _log_vector(end, n_states, default=None)
    end_message = (
        np.zeros(n_states)
        if log_end is None
        else _old_matvec_rows(log_transition[actions[-1]], log_end)
    )
    return log_emission, log_transition, list(actions), log_start, end_message


def old_forward_backward(log_emission, transition, actions, start, end):
    """Marginals and log-likelihood as the step-by-step recursion gave them."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_emission, log_transition, actions, log_start, end_message = _old_inputs(
            log_emission, transition, actions, start, end
        )
        n_steps, n_states = log_emission.shape
        log_alpha = np.empty((n_steps, n_states))
        log_shift, message = 0.0, log_start
        for t in range(n_steps):
            message = (
                _old_matvec_columns(message, log_transition[actions[t]])
                + log_emission[t]
            )
            peak = message.max()
            message -= peak
            log_shift += peak
            log_alpha[t] = message
        log_evidence = _old_log_sum(log_alpha[-1] + end_message)
        log_beta = np.empty((n_steps, n_states))
        message = end_message - end_message.max()
        log_beta[-1] = message
        for t in range(n_steps - 1, 0, -1):
            message = _old_matvec_rows(
                log_transition[actions[t]], log_emission[t] + message
            )
            message -= message.max()
            log_beta[t - 1] = message
        log_posterior = log_alpha + log_beta
        log_posterior -= log_posterior.max(axis=1, keepdims=True)
        marginals = np.exp(log_posterior)
        marginals /= marginals.sum(axis=1, keepdims=True)
    return marginals, float(log_shift + log_evidence)


def old_viterbi(log_emission, transition, actions, start, end):
    """Path and log probability as the step-by-step recursion gave them."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_emission, log_transition, actions, log_start, end_message = _old_inputs(
            log_emission, transition, actions, start, end
        )
        n_steps, n_states = log_emission.shape
        backpointer = np.empty((n_steps, n_states), dtype=np.intp)
        states = np.arange(n_states)
        score = _old_matvec_columns(log_start, log_transition[actions[0]])
        score += log_emission[0]
        log_shift = 0.0
        for t in range(1, n_steps + 1):
            peak = score.max()
            score -= peak
            log_shift += peak
            if t == n_steps:
                break
            terms = score[:, np.newaxis] + log_transition[actions[t]]
            backpointer[t] = terms.argmax(axis=0)
            score = terms[backpointer[t], states] + log_emission[t]
        final = score + end_message
    last = int(final.argmax())
    path = np.empty(n_steps, dtype=np.intp)
    path[-1] = last
    for t in range(n_steps - 1, 0, -1):
        path[t - 1] = backpointer[t, path[t]]
    return path, float(log_shift + final[last])


def path_log_probability(log_emission, transition, actions, start, end, path):
    """``log p(y_1..y_T = path, x, end | start, actions)``, anchors summed."""
    with np.errstate(divide="ignore"):
        log_emission, log_transition, actions, log_start, end_message = _old_inputs(
            log_emission, transition, actions, start, end
        )
    steps = np.arange(len(path))
    moves = log_transition[
        np.asarray(actions[1 : len(path)], dtype=int), path[:-1], path[1:]
    ]
    return (
        logsumexp(log_start + log_transition[actions[0]][:, path[0]])
        + log_emission[steps, path].sum()
        + moves.sum()
        + end_message[path[-1]]
    )


@st.composite
def long_segments(draw):
    """Segments long enough for many blocks, with actions and anchors."""
    n_states = draw(st.integers(1, 5))
    n_actions = draw(st.integers(1, 3))
    n_steps = draw(st.sampled_from([1, 2, 17, 50, 333, 1000, 4099]))
    scale = draw(st.sampled_from([0.3, 3.0, 30.0]))
    sparse = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    transition = rng.dirichlet(np.ones(n_states), size=(n_actions, n_states))
    if sparse:  # structural zeros, as in monotone degradation
        keep = rng.random(transition.shape) < 0.6
        keep[:, np.arange(n_states), np.arange(n_states)] = True
        transition = transition * keep
        transition /= transition.sum(axis=2, keepdims=True)
    log_emission = scale * rng.normal(size=(n_steps, n_states)) - 1e3
    start = draw(
        st.sampled_from(
            [None, int(rng.integers(n_states)), rng.dirichlet(np.ones(n_states))]
        )
    )
    end = draw(
        st.sampled_from(
            [None, int(rng.integers(n_states)), rng.uniform(0.1, 2, n_states)]
        )
    )
    has_end = end is not None
    actions = rng.integers(0, n_actions, n_steps + has_end)
    return log_emission, transition, actions, start, end


def _assert_same_as_old(segment):
    log_emission, transition, actions, start, end = segment
    try:
        old_marginals, old_log_likelihood = old_forward_backward(*segment)
    except (IndexError, ValueError):
        old_marginals = None
    if old_marginals is None or not np.isfinite(old_marginals).all():
        with pytest.raises(ImpossibleEvidenceError):
            forward_backward(log_emission, transition, actions, start=start, end=end)
        return

    result = forward_backward(log_emission, transition, actions, start=start, end=end)
    path, log_probability = viterbi(
        log_emission, transition, actions, start=start, end=end
    )

    np.testing.assert_allclose(result.marginals, old_marginals, rtol=0, atol=1e-10)
    assert result.log_likelihood == pytest.approx(old_log_likelihood, rel=1e-12)
    ordered = np.sort(old_marginals, axis=1)
    clear = ordered[:, -1] - (ordered[:, -2] if ordered.shape[1] > 1 else 0) > 1e-9
    np.testing.assert_array_equal(
        result.pseudo_labels[clear], old_marginals.argmax(axis=1)[clear]
    )
    _, old_log_probability = old_viterbi(*segment)
    assert log_probability == pytest.approx(old_log_probability, rel=1e-12)
    # Ties between paths may be broken otherwise; the path must be optimal.
    assert path_log_probability(*segment, path) == pytest.approx(
        old_log_probability, rel=1e-12
    )


@settings(max_examples=examples(60), deadline=None)
@given(long_segments())
def test_same_results_as_the_step_by_step_recursion(segment):
    _assert_same_as_old(segment)


@pytest.mark.parametrize("end", [None, 0, 3])
def test_same_results_as_the_step_by_step_recursion_on_the_synthetic_process(end):
    # 20,000 steps generated from the process itself: long stretches without
    # repair, states that degrade for good, repairs that reset them.
    rng = np.random.default_rng(11)
    n_steps = 20_000
    states = np.empty(n_steps + 1, dtype=int)
    actions = (rng.random(n_steps + 1) < 0.01).astype(int)
    states[0] = 0
    for t in range(n_steps):
        states[t + 1] = rng.choice(4, p=SYNTHETIC_TRANSITION[actions[t], states[t]])
    log_emission = -0.5 * (rng.normal(states[1:, None], 1.0) - np.arange(4)) ** 2
    if end is not None:
        actions[-1] = REPAIR if end == 0 else actions[-1]
    else:
        actions = actions[:-1]
    _assert_same_as_old((log_emission, SYNTHETIC_TRANSITION, actions, 0, end))


def test_the_blocked_scaled_recursion_serves_ordinary_segments():
    # The exact log-space recursion is a fallback for extreme densities only.
    from skrbal.smoothing import _scaled

    rng = np.random.default_rng(3)
    log_emission = 10.0 * rng.normal(size=(5_000, 4))
    actions = rng.integers(0, 2, 5_001)
    peak = log_emission.max(axis=1)
    marginals, _ = _scaled.forward_backward(
        log_emission, peak, SYNTHETIC_TRANSITION, actions, np.eye(4)[0], np.eye(4)[2]
    )
    expected, _ = old_forward_backward(
        log_emission, SYNTHETIC_TRANSITION, actions, 0, 2
    )
    np.testing.assert_allclose(marginals, expected, rtol=0, atol=1e-10)


def test_a_state_flushed_by_the_scaled_recursion_that_decides_the_posterior():
    # State 1 of step 2 falls below 1e-290 of the forward mass, but step 3
    # (e^-124 for state 0) and step 4 (e^-665) make the paths through it the
    # only likely ones: the scaled recursion must notice and defer to log
    # space rather than report state 0 with certainty.
    log_emission = np.array([[279.13, -414.54], [-1288.24, -1164.31], [45.86, 711.0]])
    transition = np.array([[[0.1, 0.9], [0.44, 0.56]], [[1.0, 0.0], [0.74, 0.26]]])
    actions = np.array([0, 1, 1])
    expected, log_likelihood = brute_force_marginals(
        *brute_force(log_emission, transition, actions, None, None), 2
    )
    result = forward_backward(log_emission, transition, actions)
    np.testing.assert_allclose(result.marginals, expected, rtol=0, atol=1e-12)
    assert result.log_likelihood == pytest.approx(log_likelihood, rel=1e-12)
    assert expected[1, 1] > 0.999


def test_impossible_evidence_is_named_before_overflow_hides_it():
    # Found by hypothesis: the end anchor (state 0) is unreachable, but the
    # forward messages overflow first; the answer is "impossible", not a
    # precision error, and forward_backward must agree with viterbi.
    inf = np.inf
    log_emission = np.array(
        [
            [-inf, -1.5e308, -1e307],
            [-0.02790267, -1.56368692, 0.4739866],
            [0.00990356, -1e308, -inf],
            [-1e308, -1e308, -1.46313377],
        ]
    )
    transition = np.array(
        [[[0.0, 0.18705857, 0.81294143], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]
    )
    actions = np.zeros(5, dtype=int)
    end = np.array([1.86149296, 0.0, 0.0])
    for smoother in (forward_backward, viterbi):
        with pytest.raises(ImpossibleEvidenceError, match="end anchor"):
            smoother(log_emission, transition, actions, start=None, end=end)
