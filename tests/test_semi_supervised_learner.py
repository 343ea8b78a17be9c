"""The stream learner's semi-supervised remedies: EM and latent-state smoothing."""

import warnings

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal._learning import SmoothingUpdate, StreamState
from skrbal.active import RiskBasedLearner
from skrbal.datasets import make_degradation_stream, stream_test_split
from skrbal.exceptions import UnlabelledStateSmoothingWarning
from skrbal.mixture import SemiSupervisedGMMClassifier
from skrbal.smoothing import smooth_segment


@pytest.fixture(scope="module")
def split():
    X, y, actions = make_degradation_stream(
        n_cycles=2, n_per_cycle=1000, random_state=0
    )
    return stream_test_split(X, y, actions, initial_size=8, random_state=3)


def _fit(split, **params):
    learner = RiskBasedLearner(
        estimator=BayesianGMMClassifier(),
        process=synthetic_decision_process(),
        **params,
    )
    return learner.fit(
        split.X_stream,
        split.y_stream,
        initial=split.initial_indices,
        X_test=split.X_test,
        y_test=split.y_test,
        actions=split.actions_stream,
    )


def test_em_refits_over_everything_seen(split):
    learner = _fit(split, semi_supervised="em")
    model = learner.estimator_
    assert isinstance(model, SemiSupervisedGMMClassifier)
    assert not model.warm_start  # each refit restarts from the labelled data
    last = learner.labelled_indices_[-1]
    n_initial = split.initial_indices.size
    assert learner.history_.totals["n_inspections"] > 0
    # EM ran over every step up to the last inspection plus the known ones after
    seen = np.arange(split.y_stream.size) <= last
    seen[split.initial_indices] = True
    assert model.transduction_.shape == (seen.sum(),)
    queries = learner.history_.queries
    effective = queries.filter(like="effective_proportion_").to_numpy()
    np.testing.assert_allclose(effective.sum(axis=1), 1)
    # the initial model saw only the labelled set: no unlabelled data yet
    assert queries["n_labelled"].iloc[0] == n_initial


def test_em_transduction_matches_truth(split):
    learner = _fit(split, semi_supervised="em")
    model = learner.estimator_
    last = learner.labelled_indices_[-1]
    idx = np.flatnonzero(
        (np.arange(split.y_stream.size) <= last)
        | np.isin(np.arange(split.y_stream.size), split.initial_indices)
    )
    # Every known label is kept.
    known = np.isin(idx, learner.labelled_indices_)
    np.testing.assert_array_equal(
        model.transduction_[known], split.y_stream[idx][known]
    )
    # State 3 has no label and no sample among the seen steps of this split:
    # EM's spare class for it takes a slice of state 2's cluster (about 5 %).
    assert np.mean(model.transduction_ == split.y_stream[idx]) > 0.93


def test_smoothing_pseudo_labels_are_accurate(split):
    learner = _fit(split, semi_supervised="smoothing")
    assert learner.n_skipped_segments_ == 0
    steps, labels = learner.pseudo_labelled_indices_, learner.pseudo_labels_
    assert np.mean(labels == split.y_stream[steps]) > 0.97
    # Every step up to the last inspection is labelled or pseudo-labelled, and
    # the model is trained on all of them.
    last = np.flatnonzero(learner.history_.steps["inspected"]).max()
    covered = np.union1d(steps, learner.labelled_indices_)
    np.testing.assert_array_equal(covered[covered <= last], np.arange(last + 1))
    n_trained = covered.size  # pseudo-labelled + every known label
    assert learner.estimator_.class_count_.sum() == n_trained
    effective = learner.history_.queries.filter(like="effective_proportion_")
    np.testing.assert_allclose(effective.iloc[-1].sum(), 1)


def test_smoothing_segment_is_what_the_learner_learns(split):
    """Each pseudo-label is the forward-backward MAP of its segment."""
    process = synthetic_decision_process()
    model = BayesianGMMClassifier(classes=[1, 2, 3, 4]).fit(
        split.X_stream[split.initial_indices], split.y_stream[split.initial_indices]
    )
    a, b = split.initial_indices[0], split.initial_indices[1]
    result = smooth_segment(
        model,
        split.X_stream[a + 1 : b],
        process,
        split.actions_stream[a:b],
        start_label=split.y_stream[a],
        end_label=split.y_stream[b],
    )
    assert np.mean(result.pseudo_labels == split.y_stream[a + 1 : b]) > 0.95


def test_smoothing_skips_a_segment_the_actions_cannot_explain():
    """Failure then undamaged with no repair in between is impossible."""
    process = synthetic_decision_process()
    rng = np.random.default_rng(0)
    y = np.array([4, 4, 4, 1, 1, 1])
    X = np.column_stack([np.where(y == 4, 19.0, -5.0), np.zeros(6)])
    X += rng.normal(scale=0.1, size=X.shape)

    def smoothed(record_actions):
        model = BayesianGMMClassifier(classes=[1, 2, 3, 4]).fit(X, y)
        update = SmoothingUpdate(process, "auto", initial_state=4)
        known = np.zeros(6, dtype=bool)
        known[[0, 5]] = True
        state = StreamState(
            X=X,
            y=y,
            known=known,
            labelled=[0, 5],
            action=np.zeros(6, dtype=np.intp),  # the agent never repaired
            exogenous_actions=record_actions,
        )
        update.learn(model, state, 5)
        return update

    repaired = smoothed(np.array([0, 0, 1, 0, 0, 0]))  # repair after step 2
    assert repaired.n_skipped_segments == 0
    assert [repaired.pseudo[t] for t in (1, 2, 3, 4)] == [4, 4, 1, 1]
    # Without the record's repair (the agent's own actions), no state path
    # explains the segment: it is skipped, not mislabelled.
    unexplained = smoothed(None)
    assert unexplained.n_skipped_segments == 1
    assert unexplained.pseudo == {}


def test_semi_supervised_errors(split):
    with pytest.raises(ValueError, match="class_log_density"):
        RiskBasedLearner(
            estimator=GaussianNB(),
            process=synthetic_decision_process(),
            semi_supervised="smoothing",
        ).fit(split.X_stream, split.y_stream, initial=split.initial_indices)
    with pytest.raises(ValueError, match="semi_supervised must be"):
        _fit(split, semi_supervised="self-training")
    with pytest.raises(ValueError, match="actions must hold one action index"):
        RiskBasedLearner(
            estimator=BayesianGMMClassifier(), process=synthetic_decision_process()
        ).fit(
            split.X_stream,
            split.y_stream,
            initial=split.initial_indices,
            actions=split.actions_stream[:-1],
        )


def test_em_restarts_from_the_labelled_data(split):
    """The final model is a cold EM fit over what the learner had seen."""
    learner = _fit(split, semi_supervised="em")
    model = learner.estimator_
    last = learner.labelled_indices_[-1]
    n = split.y_stream.size
    seen = (np.arange(n) <= last) | np.isin(np.arange(n), split.initial_indices)
    known = np.isin(np.arange(n), learner.labelled_indices_)[seen]
    labels = np.where(known, split.y_stream[seen], -1)
    cold = SemiSupervisedGMMClassifier(classes=[1, 2, 3, 4]).fit(
        split.X_stream[seen], labels
    )
    np.testing.assert_array_equal(model.means_, cold.means_)
    np.testing.assert_array_equal(model.weights_, cold.weights_)


def test_em_warm_start_is_an_explicit_option(split):
    learner = _fit(split, semi_supervised="em", em_start="previous")
    assert learner.estimator_.warm_start
    with pytest.raises(ValueError, match="em_start must be one of"):
        _fit(split, semi_supervised="em", em_start="warm")


def _string_process():
    process = synthetic_decision_process()
    return process.set_params(classes=np.array(["ok", "minor", "major", "failed"]))


def test_em_with_string_labels(split):
    names = np.array(["ok", "minor", "major", "failed"])
    learner = RiskBasedLearner(
        estimator=BayesianGMMClassifier(),
        process=_string_process(),
        semi_supervised="em",
    ).fit(
        split.X_stream,
        names[split.y_stream - 1],
        initial=split.initial_indices,
    )
    model = learner.estimator_
    assert set(model.classes_.tolist()) == set(names.tolist())
    assert learner.history_.totals["n_inspections"] > 0
    # no unlabelled marker leaked into the labels as a string
    assert "-1" not in set(model.transduction_.tolist())
    assert set(model.transduction_.tolist()) <= set(names.tolist())
    effective = learner.history_.queries.filter(like="effective_proportion_")
    np.testing.assert_allclose(effective.sum(axis=1), 1)


def test_em_with_a_pipeline(split):
    learner = RiskBasedLearner(
        estimator=make_pipeline(StandardScaler(), BayesianGMMClassifier()),
        process=synthetic_decision_process(),
        semi_supervised="em",
    ).fit(split.X_stream, split.y_stream, initial=split.initial_indices)
    final = learner.estimator_[-1]
    assert isinstance(final, SemiSupervisedGMMClassifier)
    np.testing.assert_array_equal(final.classes_, [1, 2, 3, 4])
    assert learner.history_.totals["n_inspections"] > 0
    effective = learner.history_.queries.filter(like="effective_proportion_")
    assert effective.notna().all().all()


def test_em_refuses_minus_one_as_a_state(split):
    process = synthetic_decision_process().set_params(classes=np.array([-1, 2, 3, 4]))
    y = np.where(split.y_stream == 1, -1, split.y_stream)
    with pytest.raises(ValueError, match="marks unlabelled samples with -1"):
        RiskBasedLearner(
            estimator=BayesianGMMClassifier(), process=process, semi_supervised="em"
        ).fit(split.X_stream, y, initial=split.initial_indices)


def _unlabelled_state_case(y, labelled):
    """Smooth ``y`` between its ``labelled`` steps (the last one just inspected).

    The stream starts with labelled clusters of states 1, 2 and 4 at -5, 0
    and 19 (the initial set, learned already); state 3 (data near 6) has no
    label unless one of ``labelled`` shows it, and then only the prior's
    density, centred on 0. Returns the update, the model, the stream state and
    the stream step just inspected.
    """
    process = synthetic_decision_process()
    rng = np.random.default_rng(0)
    initial = np.repeat([1, 2, 4], 5)
    y = np.r_[initial, y]
    labelled = np.r_[np.arange(initial.size), initial.size + np.asarray(labelled)]
    centre = {1: -5.0, 2: 0.0, 3: 6.0, 4: 19.0}
    X = np.column_stack([[centre[c] for c in y], np.zeros(y.size)])
    X += rng.normal(scale=0.3, size=X.shape)
    model = BayesianGMMClassifier(
        classes=[1, 2, 3, 4], mean_prior=0.0, covariance_prior=1.0
    ).fit(X[labelled], y[labelled])
    update = SmoothingUpdate(process, "auto", initial_state=1)
    update.last_anchor = initial.size  # the initial set and the first anchor
    known = np.zeros(y.size, dtype=bool)
    known[labelled] = True
    state = StreamState(
        X=X,
        y=y,
        known=known,
        labelled=labelled.tolist(),
        action=np.zeros(y.size, dtype=np.intp),
        exogenous_actions=None,
    )
    return update, model, state, int(labelled[-1])


def test_smoothing_warns_when_a_state_has_no_label():
    """Damaged (2) then failed (4): the hidden steps in state 3, which no
    label shows, get another state's pseudo-label; the learner says so."""
    y = [2, 2, 3, 3, 3, 3, 4, 4]
    update, model, state, end = _unlabelled_state_case(y, labelled=[0, 7])
    with pytest.warns(UnlabelledStateSmoothingWarning, match=r"\[3\]") as caught:
        update.learn(model, state, end)
    assert len(caught) == 1
    # The situation it names: the state-3 steps are pseudo-labelled failed.
    assert [update.pseudo[t] for t in range(16, 22)] == [2, 4, 4, 4, 4, 4]
    assert len(update.warnings) == 1 and "[3]" in update.warnings[0]
    # Once per fit: a second such segment does not warn again.
    state.known[end] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnlabelledStateSmoothingWarning)
        update.learn(model, state, end)
    assert len(update.warnings) == 1


def test_smoothing_does_not_warn_once_every_state_has_a_label():
    """The same segment with one state-3 step inspected: every state has a
    label, and the smoother names state 3 where it is."""
    y = [2, 2, 3, 3, 3, 3, 4, 4]
    update, model, state, end = _unlabelled_state_case(y, labelled=[0, 3, 7])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnlabelledStateSmoothingWarning)
        update.learn(model, state, end)
    assert update.warnings == []
    assert [update.pseudo[t] for t in (16, 17, 19, 20, 21)] == [2, 3, 3, 3, 4]


def test_smoothing_warns_in_a_study_repetition_that_ends_badly():
    """Repetition 578 of the synthetic study: no state-3 label at the start;
    gmm-smoothing ends at decision accuracy 0.73. The warning is counted."""
    from skrbal.experiments import get_case_study, get_method
    from skrbal.experiments._runner import run_repetition

    result = run_repetition(
        get_case_study("synthetic"),
        [get_method("gmm-evpi"), get_method("gmm-smoothing")],
        578,
    )
    totals = result.totals.set_index("method")
    assert totals.loc["gmm-smoothing", "final_decision_accuracy"] < 0.9
    assert (
        "UnlabelledStateSmoothingWarning:1" in totals.loc["gmm-smoothing", "warnings"]
    )
    assert totals.loc["gmm-evpi", "final_decision_accuracy"] > 0.99


def test_the_learner_keeps_the_smoothing_warning_in_its_history():
    """history_.warnings and totals['n_warnings'] count the update rule's
    warning, not only the learner's own MissingStatesWarning."""
    from skrbal.experiments import get_case_study
    from skrbal.experiments._runner import replay_repetition

    with pytest.warns(UnlabelledStateSmoothingWarning):
        replay = replay_repetition(get_case_study("synthetic"), "gmm-smoothing", 578)
    history = replay.learner.history_
    assert [w for w in history.warnings if "no labelled example" in w]
    assert history.totals["n_warnings"] == len(history.warnings) >= 1
