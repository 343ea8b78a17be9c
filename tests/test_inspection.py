"""Inspection methods, their EVSI, the query rule and the report posterior.

Tolerances: the EVSI is compared with the definition (posteriors divided by
``P(z)``) to ``1e-9 * (1 + max |Q|)``, absolute. Both sides sum a handful of
products of probabilities and utilities, so their rounding errors are of the
order of ``1e-15 * max |Q|``; the margin of a million leaves room for the
definition's division and nothing for a wrong formula. The bounds
``0 <= EVSI <= EVPI`` and ``EVSI == EVPI`` for a perfect method hold exactly.
"""

from pathlib import Path

import numpy as np
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skrbal import DecisionProcess, synthetic_decision_process, z24_decision_process
from skrbal.inspection import (
    ImpossibleReportError,
    InspectionMethod,
    check_methods,
    choose_inspection,
    evsi,
    follow_up_cost,
    perfect_inspection,
    report_posterior,
)
from skrbal.smoothing import ImpossibleEvidenceError

PAGE = Path(__file__).resolve().parents[1] / "docs/user_guide/imperfect_inspections.rst"

DRONE = InspectionMethod(
    name="drone",
    cost=1.4,
    confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]],
    outcomes=["no damage found", "damage found"],
)


def _tolerance(process) -> float:
    return 1e-9 * (1.0 + np.abs(process.state_action_utility).max())


def evsi_by_definition(p, process, confusion) -> np.ndarray:
    """``E_z[max_d E[Q | z, d]] - max_d E[Q | d]`` with explicit posteriors."""
    q = process.state_action_utility
    out = np.empty(len(p))
    for i, belief in enumerate(np.asarray(p, dtype=float)):
        value = 0.0
        for z in range(confusion.shape[1]):
            p_z = belief @ confusion[:, z]
            if p_z > 0:
                posterior = belief * confusion[:, z] / p_z
                value += p_z * (posterior @ q).max()
        out[i] = value - (belief @ q).max()
    return out


def _random_process(rng, n_actions, n_states):
    return DecisionProcess(
        transition=rng.dirichlet(np.ones(n_states), size=(n_actions, n_states)),
        state_utility=rng.normal(scale=100, size=n_states),
        action_utility=rng.normal(scale=100, size=n_actions),
        inspection_cost=1.0,
    )


def _stochastic(rng, n_rows, n_cols, sparse):
    """Row-stochastic matrix, with exact zeros when ``sparse``."""
    matrix = rng.dirichlet(np.ones(n_cols), size=n_rows)
    if sparse:
        matrix[rng.random(matrix.shape) < 0.4] = 0.0
        matrix[np.arange(n_rows), rng.integers(n_cols, size=n_rows)] += 0.1
        matrix /= matrix.sum(axis=1, keepdims=True)
    return matrix


@st.composite
def cases(draw):
    """A process (random or built-in), beliefs and a confusion matrix."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["random", "synthetic", "z24"]))
    if kind == "random":
        process = _random_process(rng, draw(st.integers(1, 4)), draw(st.integers(1, 5)))
    else:
        process = {
            "synthetic": synthetic_decision_process,
            "z24": z24_decision_process,
        }[kind]()
    n_states = process.n_states
    n_beliefs = draw(st.integers(1, 6))
    concentration = draw(st.sampled_from([0.1, 1.0, 10.0]))
    beliefs = rng.dirichlet(np.full(n_states, concentration), size=n_beliefs)
    if draw(st.booleans()):  # a certain belief, where EVPI and EVSI vanish
        beliefs[0] = np.eye(n_states)[rng.integers(n_states)]
    n_outcomes = draw(st.integers(1, 5))
    confusion = _stochastic(rng, n_states, n_outcomes, draw(st.booleans()))
    return process, beliefs, confusion, rng


def _method(confusion, name="m", cost=0.0):
    return InspectionMethod(name=name, cost=cost, confusion=confusion)


# ---------------------------------------------------------------- properties


@settings(max_examples=examples(80), deadline=None)
@given(cases())
def test_evsi_matches_the_definition_and_lies_between_zero_and_evpi(case):
    process, beliefs, confusion, _ = case
    value = evsi(beliefs, process, [_method(confusion)])[:, 0]
    np.testing.assert_allclose(
        value,
        evsi_by_definition(beliefs, process, confusion),
        rtol=0,
        atol=_tolerance(process),
    )
    evpi = process.evpi(beliefs)
    assert np.all(value >= 0) and np.all(value <= evpi)


@settings(max_examples=examples(40), deadline=None)
@given(cases())
def test_a_perfect_report_is_worth_exactly_the_evpi(case):
    process, beliefs, _, rng = case
    n_states = process.n_states
    # Any relabelling of the states is still a perfect report.
    permuted = np.eye(n_states)[rng.permutation(n_states)]
    values = evsi(
        beliefs,
        process,
        [perfect_inspection(process), _method(permuted, name="permuted")],
    )
    evpi = process.evpi(beliefs)
    np.testing.assert_array_equal(values[:, 0], evpi)
    np.testing.assert_array_equal(values[:, 1], evpi)


@settings(max_examples=examples(40), deadline=None)
@given(cases())
def test_a_report_independent_of_the_state_is_worth_nothing(case):
    process, beliefs, confusion, _ = case
    # Every state draws the report from the same distribution.
    independent = np.tile(confusion[0], (process.n_states, 1))
    value = evsi(beliefs, process, [_method(independent)])[:, 0]
    np.testing.assert_allclose(value, 0.0, rtol=0, atol=_tolerance(process))


@settings(max_examples=examples(80), deadline=None)
@given(cases(), st.integers(1, 5), st.booleans())
def test_garbling_a_report_never_increases_its_value(case, n_garbled, sparse):
    # Blackwell: C' = C @ G for a row-stochastic G is a report computed from
    # the report of C plus noise, so it cannot be worth more.
    process, beliefs, confusion, rng = case
    garbling = _stochastic(rng, confusion.shape[1], n_garbled, sparse)
    values = evsi(
        beliefs,
        process,
        [_method(confusion, "sharp"), _method(confusion @ garbling, "garbled")],
    )
    assert np.all(values[:, 1] <= values[:, 0] + _tolerance(process))


def test_a_garbled_report_can_be_worth_strictly_less():
    # Guards the Blackwell test against an EVSI that ignores the confusion.
    process = synthetic_decision_process()
    blur = np.array([[0.7, 0.3], [0.3, 0.7]])
    values = evsi([[0.5, 0, 0, 0.5]], process, [DRONE, _method(DRONE.confusion @ blur)])
    assert values[0, 1] < values[0, 0] - 1.0


@settings(max_examples=examples(40), deadline=None)
@given(cases())
def test_the_posterior_reproduces_the_evsi(case):
    # EVSI from report_posterior (explicit Bayes' rule) and P(z).
    process, beliefs, confusion, _ = case
    method = _method(confusion)
    q = process.state_action_utility
    expected = -process.meu(beliefs)
    for z in range(confusion.shape[1]):
        p_z = beliefs @ confusion[:, z]
        possible = p_z > 0
        if possible.any():
            posterior = report_posterior(
                beliefs[possible], np.full(possible.sum(), z), process, method
            )
            expected[possible] += p_z[possible] * (posterior @ q).max(axis=1)
    np.testing.assert_allclose(
        evsi(beliefs, process, [method])[:, 0],
        expected,
        rtol=0,
        atol=_tolerance(process),
    )


def test_evsi_by_hand_on_the_synthetic_process():
    process = synthetic_decision_process()
    # Report "damage found" (z = 1): do nothing 0.025 * 9.5 + 0.45 * -75,
    # repair 0.025 * -20 + 0.45 * -20.85; not found: 0.475 * 9.5 + 0.05 * -75
    # against 0.475 * -20 + 0.05 * -20.85.
    found = max(0.025 * 9.5 + 0.45 * -75, 0.025 * -20 + 0.45 * -20.85)
    missed = max(0.475 * 9.5 + 0.05 * -75, 0.475 * -20 + 0.05 * -20.85)
    meu = max(0.5 * 9.5 + 0.5 * -75, 0.5 * -20 + 0.5 * -20.85)
    value = evsi([[0.5, 0, 0, 0.5]], process, [DRONE])
    assert value[0, 0] == pytest.approx(found + missed - meu, abs=1e-12)


def test_evsi_maps_columns_by_classes():
    process = synthetic_decision_process()
    full = evsi([[0.5, 0, 0, 0.5]], process, [DRONE])
    mapped = evsi([[0.5, 0.5]], process, [DRONE], classes=[4, 1])
    np.testing.assert_array_equal(full, mapped)
    choice, net = choose_inspection([[0.5, 0.5]], process, [DRONE], classes=[4, 1])
    np.testing.assert_array_equal(net, full - 1.4)
    assert choice.tolist() == [0]
    posterior = report_posterior(
        [[0.2, 0.8]], ["damage found"], process, DRONE, classes=[4, 1]
    )
    np.testing.assert_allclose(
        posterior, [[0.8 * 0.05 / 0.22, 0, 0, 0.2 * 0.9 / 0.22]], rtol=1e-14
    )


def test_evsi_of_no_beliefs_is_empty():
    values = evsi(np.empty((0, 4)), synthetic_decision_process(), [DRONE])
    assert values.shape == (0, 1)


# ---------------------------------------------------------------- query rule


@pytest.mark.parametrize(
    "make_process", [synthetic_decision_process, z24_decision_process]
)
def test_one_perfect_method_is_exactly_the_evpi_rule(make_process):
    rng = np.random.default_rng(0)
    process = make_process()
    beliefs = np.vstack(
        [
            rng.dirichlet(np.full(4, 0.3), size=500),
            np.eye(4),
            # Between states 3 and 4, through the switch of the optimal action.
            np.column_stack(
                [
                    np.zeros(101),
                    np.zeros(101),
                    1 - np.linspace(0, 1, 101),
                    np.linspace(0, 1, 101),
                ]
            ),
        ]
    )
    evpi = process.evpi(beliefs)
    # Costs at which the EVPI rule sits exactly on its threshold for some
    # beliefs, and just either side of it.
    ties = evpi[evpi > 0][[0, 17, 300]]
    costs = [
        process.inspection_cost,
        *ties,
        *np.nextafter(ties, np.inf),
        *np.nextafter(ties, -np.inf),
    ]
    n_ties = 0
    for cost in costs:
        at_cost = clone(process).set_params(inspection_cost=float(cost))
        choice, net = choose_inspection(beliefs, at_cost, [perfect_inspection(at_cost)])
        rule = at_cost.should_inspect(beliefs)
        np.testing.assert_array_equal(choice == 0, rule)
        np.testing.assert_array_equal(choice[~rule], -1)
        np.testing.assert_array_equal(net[:, 0], evpi - cost)
        n_ties += int(np.sum(evpi == cost))
    assert n_ties >= 3  # the tie at equality was exercised


def test_the_rule_takes_the_largest_positive_net_value():
    process = synthetic_decision_process()
    beliefs = [[0.5, 0, 0, 0.5], [0.7, 0, 0.2, 0.1], [1, 0, 0, 0]]
    methods = [perfect_inspection(process), DRONE]
    choice, net = choose_inspection(beliefs, process, methods)
    values = evsi(beliefs, process, methods)
    np.testing.assert_array_equal(net, values - [7.0, 1.4])
    expected = np.where(net.max(axis=1) > 0, net.argmax(axis=1), -1)
    np.testing.assert_array_equal(choice, expected)
    assert choice.tolist() == [1, 1, -1]


def test_ties_between_methods_go_to_the_lowest_index():
    process = synthetic_decision_process()
    twin = clone(DRONE).set_params(name="twin")
    choice, net = choose_inspection([[0.5, 0, 0, 0.5]], process, [DRONE, twin])
    assert net[0, 0] == net[0, 1] > 0
    assert choice.tolist() == [0]


# ---------------------------------------------------------------- posterior


def test_posterior_by_hand():
    process = synthetic_decision_process()
    posterior = report_posterior(
        [[0.5, 0, 0, 0.5], [0.5, 0, 0, 0.5]],
        ["damage found", "no damage found"],
        process,
        DRONE,
    )
    np.testing.assert_allclose(
        posterior,
        [[0.025 / 0.475, 0, 0, 0.45 / 0.475], [0.475 / 0.525, 0, 0, 0.05 / 0.525]],
        rtol=1e-14,
    )


def test_a_perfect_report_gives_the_reported_state_exactly():
    process = synthetic_decision_process()
    beliefs = np.random.default_rng(1).dirichlet(np.ones(4), size=20)
    reports = np.array([1, 2, 3, 4] * 5)
    posterior = report_posterior(beliefs, reports, process, perfect_inspection(process))
    np.testing.assert_array_equal(posterior, np.eye(4)[reports - 1])


def test_the_posterior_does_not_underflow():
    # p(y) P(z | y) is 1e-350 for state 0: zero in floating point, but its
    # posterior 1e-350 / 2e-250 = 5e-101 is representable.
    process = DecisionProcess(
        transition=[[[1.0, 0.0], [0.0, 1.0]]],
        state_utility=[0.0, 0.0],
        action_utility=[0.0],
    )
    method = _method([[1e-250, 1 - 1e-250], [2e-250, 1 - 2e-250]])
    posterior = report_posterior([[1e-100, 1 - 1e-100]], [0], process, method)
    np.testing.assert_allclose(posterior, [[5e-101, 1.0]], rtol=1e-12)


def test_an_impossible_report_raises():
    process = synthetic_decision_process()
    # The classifier has never seen state 4; a perfect inspection finds it.
    with pytest.raises(ImpossibleReportError, match="report 4 of inspection method"):
        report_posterior(
            [[0.9, 0.1], [0.2, 0.8]],
            [1, 4],
            process,
            perfect_inspection(process),
            classes=[1, 2],
        )
    assert issubclass(ImpossibleReportError, ImpossibleEvidenceError)
    assert issubclass(ImpossibleReportError, ValueError)


@pytest.mark.parametrize(
    ("reports", "message"),
    [
        (["crack"], "unknown label 'crack'"),
        (["damage found", "damage found"], "reports has 2 entries but proba has 1"),
        ([["damage found"]], "y must be 1-d"),
    ],
)
def test_posterior_rejects_bad_reports(reports, message):
    with pytest.raises(ValueError, match=message):
        report_posterior(
            [[0.5, 0, 0, 0.5]], reports, synthetic_decision_process(), DRONE
        )


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"confusion": [0.5, 0.5]}, "must be a 2-d array"),
        (
            {"confusion": [[0.5, np.nan]]},
            r"'m' has a non-finite value at index \(0, 1\)",
        ),
        ({"confusion": [[1.2, -0.2]]}, r"entry \[0, 1\] = -0.2 is negative"),
        ({"confusion": [[1.0, 0.0], [0.5, 0.4]]}, "row 1 sums to 0.9, not 1"),
        ({"confusion": np.empty((2, 0))}, "both >= 1"),
        ({"confusion": "abc"}, "must be numeric"),
        ({"cost": -1.0}, "cost of inspection method 'm' must be a finite number"),
        ({"cost": np.inf}, "must be a finite number"),
        ({"cost": True}, "must be a finite number"),
        ({"cost": "1"}, "must be a finite number"),
        ({"outcomes": ["a"]}, r"must have shape \(2,\)"),
        ({"outcomes": ["a", "a"]}, "must be distinct"),
        ({"name": ""}, "name must be a non-empty string"),
        ({"name": 3}, "name must be a non-empty string"),
    ],
)
def test_method_validation_names_the_entry(params, message):
    base = {"name": "m", "cost": 1.0, "confusion": [[0.9, 0.1], [0.2, 0.8]]}
    method = InspectionMethod(**{**base, **params})
    with pytest.raises(ValueError, match=message):
        _ = method.n_outcomes


def test_methods_must_fit_the_process():
    process = synthetic_decision_process()
    small = _method([[1.0, 0.0], [0.0, 1.0]], name="small")
    for call in (
        lambda: evsi([[1, 0, 0, 0]], process, [small]),
        lambda: choose_inspection([[1, 0, 0, 0]], process, [small]),
        lambda: report_posterior([[1, 0, 0, 0]], [0], process, small),
    ):
        with pytest.raises(
            ValueError, match="'small' has 2 rows but the process has 4"
        ):
            call()


@pytest.mark.parametrize(
    ("methods", "error", "message"),
    [
        (DRONE, TypeError, r"pass \[method\] for one"),
        ([], ValueError, "at least one"),
        ([DRONE, "perfect"], TypeError, r"methods\[1\] must be an InspectionMethod"),
        ([DRONE, clone(DRONE)], ValueError, "distinct names"),
    ],
)
def test_method_lists_are_checked(methods, error, message):
    process = synthetic_decision_process()
    for function in (evsi, choose_inspection):
        with pytest.raises(error, match=message):
            function([[1, 0, 0, 0]], process, methods)
    with pytest.raises(error, match=message):
        check_methods(methods, process)


def test_check_methods_returns_the_validated_confusions():
    process = synthetic_decision_process()
    confusions = check_methods([DRONE, perfect_inspection(process)], process)
    np.testing.assert_array_equal(confusions[0], DRONE.confusion)
    np.testing.assert_array_equal(confusions[1], np.eye(4))
    with pytest.raises(ValueError, match="'small' has 2 rows but the process has 4"):
        check_methods([_method([[1.0, 0.0], [0.0, 1.0]], name="small")], process)


def test_a_method_round_trips_through_json():
    import json

    for method in (DRONE, perfect_inspection(z24_decision_process()), _method([[1.0]])):
        data = json.loads(json.dumps(method.to_dict()))
        assert list(data) == ["name", "cost", "confusion", "outcomes"]
        twin = InspectionMethod.from_dict(data)
        assert twin.name == method.name and twin.cost_ == method.cost_
        np.testing.assert_array_equal(twin.confusion, method._validated().confusion)
        np.testing.assert_array_equal(twin.outcomes_, method.outcomes_)
        assert twin.to_dict() == method.to_dict()
    # Full precision: a cost and a probability that a short repr would round.
    exact = InspectionMethod(name="m", cost=0.1 + 0.2, confusion=[[1 / 3, 2 / 3]])
    back = InspectionMethod.from_dict(json.loads(json.dumps(exact.to_dict())))
    assert back.cost_ == 0.1 + 0.2 and back.confusion[0][0] == 1 / 3


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (["drone"], "must be a dict with exactly the keys name, cost"),
        ({"name": "m", "cost": 1.0, "confusion": [[1.0]]}, "exactly the keys"),
        (
            {"name": "m", "cost": 1.0, "confusion": [[1.0]], "outcomes": None, "x": 1},
            "exactly the keys",
        ),
        (
            {"name": "m", "cost": -1.0, "confusion": [[1.0]], "outcomes": None},
            "cost of inspection method 'm' must be a finite number",
        ),
        (
            {"name": "m", "cost": 1.0, "confusion": [[0.5]], "outcomes": None},
            "inspection method 'm'",
        ),
    ],
)
def test_from_dict_refuses_a_bad_value(data, message):
    with pytest.raises(ValueError, match=message):
        InspectionMethod.from_dict(data)


def test_cost_is_read_validated():
    assert DRONE.cost_ == 1.4 and isinstance(_method([[1.0]]).cost_, float)
    with pytest.raises(ValueError, match="must be a finite number"):
        _ = InspectionMethod(name="m", cost=np.nan, confusion=[[1.0]]).cost_


def test_process_and_beliefs_are_checked():
    process = synthetic_decision_process()
    with pytest.raises(TypeError, match="process must be a DecisionProcess"):
        evsi([[1, 0, 0, 0]], "process", [DRONE])
    with pytest.raises(TypeError, match="method must be an InspectionMethod"):
        report_posterior([[1, 0, 0, 0]], [0], process, [DRONE])
    with pytest.raises(ValueError, match=r"proba row 0 sums to 0\.5"):
        evsi([[0.5, 0, 0, 0]], process, [DRONE])
    with pytest.raises(TypeError, match="process must be a DecisionProcess"):
        perfect_inspection("process")


def test_method_is_a_base_estimator():
    twin = clone(DRONE)
    assert twin is not DRONE and twin.get_params()["name"] == "drone"
    assert "InspectionMethod(" in repr(DRONE) and "drone" in repr(DRONE)
    assert clone(perfect_inspection(synthetic_decision_process(), cost=2.0)).cost == 2.0
    assert DRONE.n_states == 4 and DRONE.n_outcomes == 2
    np.testing.assert_array_equal(_method([[1.0]]).outcomes_, [0])


# ---------------------------------------------------------------- user guide


def test_imperfect_inspections_page_numbers():
    # Every number the page derives in prose, recomputed and found on the page.
    text = " ".join(PAGE.read_text().split())
    process = synthetic_decision_process()
    belief = np.array([[0.5, 0.0, 0.0, 0.5]])
    q = process.state_action_utility
    confusion = np.asarray(DRONE.confusion)

    def quoted(value, digits):
        shown = f"{value:.{digits}f}"
        assert shown in text, f"the page should quote {shown}"

    p_found = belief[0] @ confusion[:, 1]
    assert 0.5 * 0.05 + 0.5 * 0.9 == pytest.approx(p_found)
    quoted(p_found, 3)
    posterior = report_posterior(
        np.vstack([belief, belief]), ["damage found", "no damage found"], process, DRONE
    )
    quoted(posterior[0, 3], 3)  # p(4 | found) = 0.45 / 0.475
    quoted(posterior[1, 3], 3)  # p(4 | not found) = 0.05 / 0.525
    joint = belief[0, :, None] * confusion  # p(y) C[y, z]
    found = joint[:, 1] @ q  # repair is best after "found"
    missed = joint[:, 0] @ q  # do nothing is best after "not found"
    assert found.argmax() == 1 and missed.argmax() == 0
    quoted(found[1], 4)
    quoted(missed[0], 4)
    with_report = found.max() + missed.max()
    quoted(with_report, 2)
    meu = process.meu(belief)[0]
    quoted(meu, 3)
    value = evsi(belief, process, [DRONE])[0, 0]
    assert with_report - meu == pytest.approx(value, abs=1e-12)
    quoted(value, 3)
    regret = q.max(axis=1, keepdims=True) - q
    residual = (joint.T @ regret).min(axis=1)
    quoted(residual[1], 4)
    quoted(residual[0], 4)
    quoted(residual.sum(), 3)
    assert process.evpi(belief)[0] - residual.sum() == pytest.approx(value, abs=1e-12)
    quoted(regret[3, 0], 2)  # 54.15
    quoted(regret[0, 1], 1)  # 29.5
    # The second belief: a perfect inspection is not worth its cost.
    assert process.evpi([[0.7, 0, 0.2, 0.1]])[0] < process.inspection_cost
    quoted(process.evpi([[0.7, 0, 0.2, 0.1]])[0], 3)


def test_rounding_is_no_value_for_the_rules_and_the_learners_alike():
    # An EVPI of a few ulps of the utilities (5e-13 here) is rounding: the
    # learners' kernel reads it as 0 and does not inspect at a cost of 0;
    # should_inspect and choose_inspection said yes (they had no floor).
    from skrbal._learning import DecisionKernel

    process = synthetic_decision_process().set_params(inspection_cost=0.0)
    belief = np.array([[1 - 1e-14, 0.0, 0.0, 1e-14]])
    assert 0 < process.evpi(belief)[0] < process.value_tolerance
    decided = DecisionKernel(process).decide(belief, np.zeros(1), {})
    assert decided.requested.size == 0
    assert not process.should_inspect(belief)[0]
    choice, _ = choose_inspection(belief, process, [perfect_inspection(process)])
    assert choice.tolist() == [-1]


# ------------------------------------------------------------ follow-up


def two_stage_by_enumeration(p, process, confusion, cost) -> np.ndarray:
    """Each report's better of acting now and a perfect inspection, enumerated.

    ``sum_z P(z) max(max_d E[Q | z], E[max_d Q | z] - cost) - max_d E[Q]``
    with the posterior of every report written out.
    """
    q = process.state_action_utility
    out = np.empty(len(p))
    for i, belief in enumerate(np.asarray(p, dtype=float)):
        value = 0.0
        for z in range(confusion.shape[1]):
            p_z = belief @ confusion[:, z]
            if p_z > 0:
                posterior = belief * confusion[:, z] / p_z
                act_now = (posterior @ q).max()
                inspect = posterior @ q.max(axis=1) - cost
                value += p_z * max(act_now, inspect)
        out[i] = value - (belief @ q).max()
    return out


@settings(max_examples=examples(80), deadline=None)
@given(cases(), st.sampled_from([0.0, 0.3, 1.0, 5.0, 1e4]))
def test_the_follow_up_value_is_the_enumerated_two_stage_value(case, cost):
    process, beliefs, confusion, _ = case
    methods = [
        _method(confusion, "cheap", cost=0.1),
        perfect_inspection(process).set_params(cost=cost),
        perfect_inspection(process).set_params(name="dearer", cost=cost + 1.0),
    ]
    values = evsi(beliefs, process, methods, follow_up=True)
    expected = two_stage_by_enumeration(beliefs, process, confusion, cost)
    tolerance = _tolerance(process)
    np.testing.assert_allclose(values[:, 0], expected, rtol=0, atol=tolerance)
    # A perfect method keeps the EVPI; the two-stage value lies between the
    # one-stage EVSI and the EVPI, and is at least EVPI - cost.
    evpi = process.evpi(beliefs)
    np.testing.assert_array_equal(values[:, 1], evpi)
    one_stage = evsi(beliefs, process, methods)[:, 0]
    assert np.all(values[:, 0] >= one_stage - tolerance)
    assert np.all(values[:, 0] <= evpi)
    assert np.all(values[:, 0] >= evpi - cost - tolerance)


def test_the_follow_up_by_hand_and_the_choice_it_makes():
    process = synthetic_decision_process()
    methods = [perfect_inspection(process), DRONE]
    belief = [[0.5, 0.0, 0.0, 0.5]]
    # By hand (the synthetic process's regrets: 29.5 for repairing state 1,
    # 54.15 for leaving state 4): "no damage found" has P = 0.525 and
    # residual 0.5 * 0.1 * 54.15 = 2.71 < 7 * 0.525 = 3.675; "damage found"
    # has P = 0.475 and residual 0.5 * 0.05 * 29.5 = 0.74 < 7 * 0.475: both
    # reports are acted on, so the two-stage value is the one-stage EVSI.
    np.testing.assert_allclose(
        evsi(belief, process, methods, follow_up=True),
        evsi(belief, process, methods),
    )
    # Where damage is likely, "no damage found" warrants the follow-up: the
    # drone alone is not worth its cost, nor is the perfect inspection, but
    # the drone with its follow-up is.
    likely = [[0.2, 0.0, 0.0, 0.8]]
    one, net_one = choose_inspection(likely, process, methods)
    two, net_two = choose_inspection(likely, process, methods, follow_up=True)
    assert one.tolist() == [-1]
    assert two.tolist() == [1]
    assert net_two[0, 1] > 0 > max(net_one[0, 1], net_two[0, 0])
    np.testing.assert_allclose(
        net_two[0, 1] + DRONE.cost,
        two_stage_by_enumeration(
            np.asarray(likely), process, DRONE._confusion_for(process), 7.0
        )[0],
    )
    assert net_two[0, 0] == net_one[0, 0]


def test_the_follow_up_needs_a_perfect_method():
    process = synthetic_decision_process()
    assert follow_up_cost([DRONE, perfect_inspection(process)], process) == 7.0
    with pytest.raises(ValueError, match="reveals the state"):
        evsi([[0.5, 0, 0, 0.5]], process, [DRONE], follow_up=True)
    with pytest.raises(ValueError, match="reveals the state"):
        choose_inspection([[0.5, 0, 0, 0.5]], process, [DRONE], follow_up=True)
