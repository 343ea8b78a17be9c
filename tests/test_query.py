import functools

import numpy as np
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state

from skrbal import synthetic_decision_process
from skrbal.exceptions import MissingStatesWarning
from skrbal.query import (
    EVPISampling,
    entropy_sampling,
    evpi_sampling,
    evpi_scores,
    least_confident_sampling,
    random_sampling,
)
from skrbal.query._strategies import _top


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    centres = np.array([-5.0, -0.7, 5.8, 19.0])
    y = np.repeat([1, 2, 3, 4], 30)
    X = np.column_stack([rng.normal(centres[y - 1], 1.5), rng.normal(0, 1, y.size)])
    pool = np.column_stack([np.linspace(-8, 22, 200), np.zeros(200)])
    return X, y, pool


def test_evpi_scores_is_process_evpi(problem):
    X, y, pool = problem
    clf = GaussianNB().fit(X, y)
    process = synthetic_decision_process()
    proba = clf.predict_proba(pool)
    np.testing.assert_array_equal(evpi_scores(proba, process), process.evpi(proba))
    with pytest.raises(TypeError, match="DecisionProcess"):
        evpi_scores(proba, "not a process")


def test_evpi_sampling_returns_best_first(problem):
    X, y, pool = problem
    clf = GaussianNB().fit(X, y)
    process = synthetic_decision_process()
    scores = process.evpi(clf.predict_proba(pool))
    idx, chosen = evpi_sampling(clf, pool, n_instances=5, process=process)
    assert idx.shape == (5,) and len(set(idx.tolist())) == 5
    np.testing.assert_array_equal(chosen, scores[idx])
    assert np.all(np.diff(chosen) <= 0)
    assert chosen[0] == scores.max()
    assert np.all(scores[np.setdiff1d(np.arange(len(pool)), idx)] <= chosen[-1])


def test_evpi_sampling_maps_classifier_labels(problem):
    """A classifier trained on labels 4 and 1 only still scores correctly."""
    X, y, pool = problem
    mask = np.isin(y, [1, 4])
    clf = GaussianNB().fit(X[mask], y[mask])
    process = synthetic_decision_process()
    with pytest.warns(MissingStatesWarning, match=r"GaussianNB.*state\(s\) \[2, 3\]"):
        _, scores = evpi_sampling(clf, pool, n_instances=3, process=process)
    full = process.align_proba(clf.predict_proba(pool), classes=clf.classes_)
    assert scores[0] == pytest.approx(process.evpi(full).max())


def test_pipeline_classifier(problem):
    X, y, pool = problem
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    idx, _ = EVPISampling(process=synthetic_decision_process())(pipe, pool, 2)
    assert idx.shape == (2,)


def test_ties_are_reproducible():
    class Flat:
        classes_ = np.array([1, 4])

        def predict_proba(self, X):
            return np.full((len(X), 2), 0.5)

    pool = np.zeros((50, 1))
    process = synthetic_decision_process()
    # Flat knows states 1 and 4 only: every call says so.
    missing = functools.partial(
        pytest.warns, MissingStatesWarning, match=r"Flat.*state\(s\) \[2, 3\]"
    )
    with missing():
        idx_default, _ = evpi_sampling(Flat(), pool, 4, process=process)
    np.testing.assert_array_equal(idx_default, [0, 1, 2, 3])
    with missing():
        a, _ = evpi_sampling(Flat(), pool, 4, process=process, random_state=7)
    with missing():
        b, _ = evpi_sampling(Flat(), pool, 4, process=process, random_state=7)
    with missing():
        c, _ = evpi_sampling(Flat(), pool, 4, process=process, random_state=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "strategy, expected",
    [(entropy_sampling, "entropy"), (least_confident_sampling, "least_confident")],
)
def test_uncertainty_baselines(problem, strategy, expected):
    X, y, pool = problem
    clf = GaussianNB().fit(X, y)
    proba = clf.predict_proba(pool)
    if expected == "entropy":
        with np.errstate(divide="ignore", invalid="ignore"):
            ref = -np.nansum(proba * np.log(proba), axis=1)
    else:
        ref = 1 - proba.max(axis=1)
    idx, scores = strategy(clf, pool, n_instances=3)
    np.testing.assert_allclose(scores, ref[idx])
    np.testing.assert_allclose(scores[0], ref.max())


def test_random_sampling_is_uniform_and_seeded():
    pool = np.zeros((20, 2))
    draws = np.concatenate(
        [random_sampling(None, pool, 5, random_state=s)[0] for s in range(400)]
    )
    counts = np.bincount(draws, minlength=20)
    assert counts.min() > 60 and counts.max() < 140  # expectation 100
    np.testing.assert_array_equal(
        random_sampling(None, pool, 5, random_state=1)[0],
        random_sampling(None, pool, 5, random_state=1)[0],
    )


@pytest.mark.parametrize(
    "n_instances, error", [(0, ValueError), (500, ValueError), (1.5, TypeError)]
)
def test_bad_n_instances(problem, n_instances, error):
    X, y, pool = problem
    clf = GaussianNB().fit(X, y)
    with pytest.raises(error, match="n_instances"):
        evpi_sampling(clf, pool, n_instances, process=synthetic_decision_process())


def test_strategy_object_clones():
    strategy = EVPISampling(process=synthetic_decision_process(), random_state=3)
    cloned = clone(strategy)
    assert cloned.get_params()["random_state"] == 3
    assert "EVPISampling(" in repr(strategy)


# ------------------------------------------------------------------ modAL


modal_models = pytest.importorskip("modAL.models")


@pytest.mark.parametrize("n_instances", [1, 2, 3])
@pytest.mark.parametrize("binding", ["object", "partial"])
def test_inside_modal_active_learner_query(problem, n_instances, binding):
    """modAL's own ActiveLearner queries with our strategy, unpatched."""
    X, y, pool = problem
    process = synthetic_decision_process()
    strategy = (
        EVPISampling(process=process)
        if binding == "object"
        else functools.partial(evpi_sampling, process=process)
    )
    estimator = GaussianNB().fit(X, y)  # modAL's own fit breaks on sklearn>=1.8
    learner = modal_models.ActiveLearner(estimator=estimator, query_strategy=strategy)
    idx, rows, metrics = learner.query(
        pool, n_instances=n_instances, return_metrics=True
    )
    expected, scores = evpi_sampling(estimator, pool, n_instances, process=process)
    np.testing.assert_array_equal(idx, expected)
    np.testing.assert_array_equal(rows, pool[expected])
    np.testing.assert_array_equal(metrics, scores)
    assert len(idx) == n_instances


# ---------------------------------------------------------------- selection
def _top_by_full_sort(scores, n_instances, random_state):
    """The selection as first written: a stable sort of the whole pool."""
    order = np.arange(scores.shape[0])
    if random_state is not None:
        order = check_random_state(random_state).permutation(scores.shape[0])
    ranked = order[np.argsort(-scores[order], kind="stable")[:n_instances]]
    return ranked, scores[ranked]


@st.composite
def _scores_with_ties(draw):
    n = draw(st.integers(1, 300))
    # Few distinct values, zeros and signed zeros: heavy ties everywhere.
    values = draw(
        st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 1e-300, 7.0]), min_size=1)
        | st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=4)
    )
    picks = draw(arrays(np.int64, n, elements=st.integers(0, len(values) - 1)))
    scores = np.asarray(values)[picks]
    k = draw(st.integers(1, n))
    seed = draw(st.none() | st.integers(0, 2**32 - 1))
    return scores, k, seed


@settings(max_examples=examples(200), deadline=None)
@given(_scores_with_ties())
def test_top_matches_the_full_sort_ties_included(case):
    scores, k, seed = case
    ours = _top(scores, k, seed)
    expected = _top_by_full_sort(scores, k, seed)
    np.testing.assert_array_equal(ours[0], expected[0])
    np.testing.assert_array_equal(ours[1], expected[1])


@pytest.mark.parametrize("k", [1, 2, 10, 100, 5000])
def test_top_on_a_large_tied_pool(k):
    rng = np.random.default_rng(k)
    scores = rng.integers(0, 50, 20_000) / 7.0  # every value about 400 times
    for seed in (None, 0, np.random.RandomState(5)):
        ours = _top(scores, k, seed)
        if isinstance(seed, np.random.RandomState):
            seed = np.random.RandomState(5)  # the same stream for the reference
        np.testing.assert_array_equal(ours[0], _top_by_full_sort(scores, k, seed)[0])


def test_seeded_generator_advances_as_before():
    """The draw consumes the generator exactly as the full sort did."""
    scores = np.zeros(50)
    ours, reference = np.random.RandomState(1), np.random.RandomState(1)
    _top(scores, 3, ours)
    _top_by_full_sort(scores, 3, reference)
    assert ours.randint(10**9) == reference.randint(10**9)


def test_top_rejects_non_finite_scores():
    with pytest.raises(ValueError, match="NaN or infinite"):
        _top(np.array([1.0, np.nan, 2.0]), 1, None)
    with pytest.raises(ValueError, match="NaN or infinite"):
        _top(np.array([1.0, np.inf]), 1, None)
    # Finite scores whose sum overflows are fine.
    np.testing.assert_array_equal(
        _top(np.array([1e308, 1e308, 1.0]), 2, None)[0], [0, 1]
    )


# ---------------------------------------------------------------- pool blocks
@pytest.mark.parametrize(
    "strategy",
    [
        functools.partial(evpi_sampling, process=synthetic_decision_process()),
        entropy_sampling,
        least_confident_sampling,
    ],
)
@pytest.mark.parametrize("container", [np.asarray, lambda a: a.tolist()])
def test_pool_scored_in_blocks_gives_the_same_choice(
    problem, monkeypatch, strategy, container
):
    X, y, pool = problem
    clf = GaussianNB().fit(X, y)
    whole = strategy(clf, container(pool), n_instances=12)
    monkeypatch.setattr("skrbal.query._strategies._POOL_BLOCK", 7)
    calls = []
    predict = clf.predict_proba
    monkeypatch.setattr(clf, "predict_proba", lambda X: calls.append(1) or predict(X))
    blocked = strategy(clf, container(pool), n_instances=12)
    assert len(calls) == -(-len(pool) // 7)
    np.testing.assert_array_equal(blocked[0], whole[0])
    np.testing.assert_array_equal(blocked[1], whole[1])


def test_bad_beliefs_in_a_later_block_are_located(problem, monkeypatch):
    X, y, pool = problem

    class Broken(GaussianNB):
        def predict_proba(self, X):
            proba = super().predict_proba(X)
            proba[X[:, 0] == pool[45, 0]] *= 2.0  # pool row 45 sums to 2
            return proba

    clf = Broken().fit(X, y)
    monkeypatch.setattr("skrbal.query._strategies._POOL_BLOCK", 20)
    with pytest.raises(ValueError, match=r"row 5 sums to 2.*from pool row 40"):
        evpi_sampling(clf, pool, process=synthetic_decision_process())


def test_predict_kwargs_score_the_pool_in_one_call(problem, monkeypatch):
    X, y, pool = problem
    clf = GaussianNB().fit(X, y)
    monkeypatch.setattr("skrbal.query._strategies._POOL_BLOCK", 7)
    seen = []

    class Recording:
        classes_ = clf.classes_

        def predict_proba(self, X, **kwargs):
            seen.append((len(X), kwargs))
            return clf.predict_proba(X)

    entropy_sampling(Recording(), pool, flag=True)
    assert seen == [(len(pool), {"flag": True})]
