"""What a model learns from a report about never-labelled states (issue 26.5)."""

import numpy as np
import pandas as pd
import pytest

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal._learning._kernel import DecisionKernel
from skrbal.active import RiskBasedLearner
from skrbal.datasets import make_degradation_stream, stream_test_split
from skrbal.inspection import (
    InspectionMethod,
    learnable_posterior,
    perfect_inspection,
    report_posterior,
    simulate_reports,
)
from skrbal.online import RiskBasedAgent

SEED = 0
NO_DAMAGE = [0.96, 0.96, 0.15, 0.15]
DAMAGE = [0.04, 0.04, 0.85, 0.85]


def _cheap(process):
    return InspectionMethod(
        name="cheap",
        cost=0.2 * process.inspection_cost,
        confusion=[[0.96, 0.04], [0.96, 0.04], [0.15, 0.85], [0.15, 0.85]],
        outcomes=["no damage found", "damage found"],
    )


def test_mass_a_report_counts_against_is_not_learnt_for_unlabelled_states():
    posterior = np.array([0.6, 0.3, 0.06, 0.04])
    known = [True, False, False, False]
    # "no damage found": states 3 and 4 are less likely to give it than
    # state 1; state 2 (no label either) as likely, so it keeps its mass.
    got = learnable_posterior(posterior, NO_DAMAGE, known)
    np.testing.assert_allclose(got, [0.6 / 0.9, 0.3 / 0.9, 0.0, 0.0])
    # a labelled state keeps its mass whatever the report says of it
    got = learnable_posterior(posterior, NO_DAMAGE, [True, False, True, False])
    np.testing.assert_allclose(got, np.array([0.6, 0.3, 0.06, 0.0]) / 0.96)
    # "damage found" points at the damage states: learnt whole
    np.testing.assert_array_equal(
        learnable_posterior(posterior, DAMAGE, known), posterior
    )


def test_nothing_is_removed_without_labels_or_when_it_would_remove_everything():
    posterior = np.array([0.0, 0.0, 0.5, 0.5])
    np.testing.assert_array_equal(
        learnable_posterior(posterior, NO_DAMAGE, [False] * 4), posterior
    )
    # all the mass on the states the report counts against: kept as it is
    np.testing.assert_array_equal(
        learnable_posterior(posterior, NO_DAMAGE, [True, True, False, False]),
        posterior,
    )
    with pytest.raises(ValueError, match="one entry per state"):
        learnable_posterior(posterior, NO_DAMAGE[:3], [True] * 4)


def test_the_kernel_acts_on_the_full_posterior_and_learns_the_learnable_part():
    process = synthetic_decision_process()
    methods = [perfect_inspection(process), _cheap(process)]
    kernel = DecisionKernel(process, methods)
    belief = np.array([0.5, 0.2, 0.2, 0.1])
    known = np.array([True, False, False, False])
    for report in ("no damage found", "damage found"):
        full = report_posterior(belief[None], [report], process, methods[1])[0]
        result = kernel.read_result(1, belief, report=report, known=known)
        column = ["no damage found", "damage found"].index(report)
        likelihood = np.array([NO_DAMAGE, DAMAGE])[column]
        np.testing.assert_array_equal(
            result.posterior, learnable_posterior(full, likelihood, known)
        )
        assert result.action == process.optimal_action(full[None])[0]
        assert result.label is None
    # without ``known`` the whole posterior is learnt, as before
    result = kernel.read_result(1, belief, report="no damage found")
    full = report_posterior(belief[None], ["no damage found"], process, methods[1])
    np.testing.assert_array_equal(result.posterior, full[0])


@pytest.fixture(scope="module")
def healthy_start():
    """A synthetic stream whose first 30 steps, all labelled, are in state 1."""
    X, y, _ = make_degradation_stream(n_cycles=2, n_per_cycle=300, random_state=0)
    split = stream_test_split(X, y, initial_size=8, random_state=3)
    X, y = split.X_stream, split.y_stream
    healthy = np.flatnonzero(y == 1)[:30]
    order = np.concatenate([healthy, np.setdiff1d(np.arange(y.size), healthy)])
    return X[order], y[order], healthy.size


#: Where damage lies, stated as a user would: up the first feature.
STATED = {3: {"shift": [4.0, 0.0]}, 4: {"shift": [8.0, 0.0]}}


def _params(process, class_priors=STATED):
    return dict(
        estimator=BayesianGMMClassifier(class_priors=class_priors),
        process=process,
        inspections=[perfect_inspection(process), _cheap(process)],
    )


def test_a_no_damage_report_teaches_no_never_labelled_damage(healthy_start):
    """Fails on the old code: a report's mass on states 3 and 4 was learnt."""
    X, y, n0 = healthy_start
    process = synthetic_decision_process()
    learner = RiskBasedLearner(**_params(process), random_state=SEED)
    learner.fit(X, y, initial=np.arange(n0))
    queries = learner.history_.queries
    columns = [f"posterior_{c}" for c in process.classes_]
    reports = queries[queries["report"] == "no damage found"]
    labelled = queries[queries["method"] == "perfect"]["label"]
    first = {
        c: labelled.index[labelled == c].min() if (labelled == c).any() else np.inf
        for c in (3, 4)
    }
    before = reports[[i < min(first.values()) for i in reports.index]]
    assert len(before) > 0
    np.testing.assert_array_equal(before[columns[2:]].to_numpy(), 0.0)
    assert np.all(before[columns[:2]].to_numpy().sum(axis=1) == pytest.approx(1.0))


def test_without_a_statement_the_whole_posterior_is_learnt(healthy_start):
    """The broad default prior has no stated location to keep: nothing removed."""
    X, y, n0 = healthy_start
    process = synthetic_decision_process()
    learner = RiskBasedLearner(**_params(process, None), random_state=SEED)
    learner.fit(X, y, initial=np.arange(n0))
    queries = learner.history_.queries
    columns = [f"posterior_{c}" for c in process.classes_]
    reports = queries[queries["report"] == "no damage found"]
    assert len(reports) > 0
    assert np.all(reports[columns[2:]].to_numpy() > 0)


def test_learner_and_agent_learn_the_same_reports(healthy_start):
    X, y, n0 = healthy_start
    process = synthetic_decision_process()
    params = _params(process)
    stop = y.size
    learner = RiskBasedLearner(**params, random_state=SEED)
    learner.fit(X[:stop], y[:stop], initial=np.arange(n0))
    rng = np.random.RandomState(SEED)
    names = {m.name: m for m in params["inspections"]}
    rows, actions = [], []
    with RiskBasedAgent(**params).fit(X[:n0], y[:n0]) as agent:
        for t in range(n0, stop):
            row = agent.observe(X[t : t + 1])
            rows.append(row)
            row = row.iloc[0]
            if not row["inspect"]:
                actions.append(int(row["action"]))
                continue
            method = names[row["method"]]
            report = simulate_reports([y[t]], process, method, rng)[0]
            rid = int(row["request_id"])
            actions.append(agent.record_inspection(rid, report=report))
        history = agent.history_.steps
    decided = pd.concat(rows, ignore_index=True)
    steps = learner.history_.steps.iloc[n0:]
    np.testing.assert_array_equal(decided["inspect"], steps["inspected"])
    np.testing.assert_array_equal(actions, steps["action"])
    queries = learner.history_.queries.iloc[1:]
    columns = [f"posterior_{c}" for c in process.classes_]
    inspected = history.iloc[n0:][decided["inspect"].to_numpy()]
    np.testing.assert_allclose(
        inspected[columns].to_numpy(), queries[columns].to_numpy(), atol=1e-15
    )
    # the rule was used: some report had its damage mass removed
    soft = queries[queries["method"] == "cheap"]
    assert (soft[columns[2:]].to_numpy().sum(axis=1) == 0).any()
