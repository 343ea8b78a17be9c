"""Query strategies on a 1,000,000-point pool, paired against modAL and scikit-activeml.

Run with::

    OPENBLAS_NUM_THREADS=1 pytest benchmarks/bench_query.py --benchmark-only -s

Every comparison times skrbal and its peer in alternating rounds within one
run, with the same fitted model (a ``BayesianGMMClassifier``, 4 classes, 2
features) and the same pool, and reports the median of the per-round ratios
``skrbal / peer`` with its spread (interquartile range and extremes); the
medians and their targets are printed at the end (see
``benchmarks/conftest.py``). Targets (issue 14):

- an EVPI query through modAL's ``ActiveLearner.query`` takes at most the time
  of modAL's own ``uncertainty_sampling`` through the same learner, for 1, 10
  and 100 instances (ratio <= 1);
- skrbal's ``entropy_sampling`` and ``least_confident_sampling`` at most
  modAL's ``entropy_sampling`` and ``uncertainty_sampling`` (ratio <= 1);
- ``BayesianGMMClassifier.predict_proba`` at most 0.9x
  ``QuadraticDiscriminantAnalysis.predict_proba`` fitted to the same data.

For scale, the EVPI query is also paired with the model's own
``predict_proba`` on the whole pool (issue 14 measured 2.35x). The strategies
score a large pool in blocks of rows, so a query can cost less than that one
call, whose temporaries span the whole pool.

scikit-activeml's ``UncertaintySampling`` (least confident) is a further peer
when installed (the ``bench`` extra); its query loops over the batch, so it is
timed for 1 and 10 instances only. BLAS runs single-threaded
(``SKRBAL_BENCH_BLAS_THREADS`` overrides it).
"""

import numpy as np
import pytest
from _paired import quartiles, time_paired
from modAL.models import ActiveLearner
from modAL.uncertainty import entropy_sampling as modal_entropy_sampling
from modAL.uncertainty import uncertainty_sampling as modal_uncertainty_sampling
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis

from skrbal import synthetic_decision_process
from skrbal.mixture import BayesianGMMClassifier
from skrbal.query import EVPISampling, entropy_sampling, least_confident_sampling

N_TRAIN = 1_000
N_POOL = 1_000_000
CLASSES = np.array([1, 2, 3, 4])
ROUNDS = 31
N_INSTANCES = (1, 10, 100)

BENCHMARK_RATIOS = (
    [
        (
            f"EVPI query / modAL uncertainty_sampling, ActiveLearner.query, n={n}",
            f"evpi_vs_modal_{n}",
            None,
            1.0,
            "lower",
        )
        for n in N_INSTANCES
    ]
    + [
        (
            f"skrbal entropy_sampling / modAL entropy_sampling, n={n}",
            f"entropy_vs_modal_{n}",
            None,
            1.0,
            "lower",
        )
        for n in N_INSTANCES
    ]
    + [
        (
            f"skrbal least_confident_sampling / modAL uncertainty_sampling, n={n}",
            f"least_confident_vs_modal_{n}",
            None,
            1.0,
            "lower",
        )
        for n in N_INSTANCES
    ]
    + [
        (
            f"EVPI query (modAL) / scikit-activeml UncertaintySampling, n={n}",
            f"evpi_vs_skactiveml_{n}",
            None,
            1.0,
            "lower",
        )
        for n in (1, 10)
    ]
    + [
        (
            "EVPI query (modAL, n=10) / the model's predict_proba on the pool",
            "evpi_vs_predict_proba",
            None,
            1.0,
            "lower",
        ),
        (
            "BayesianGMMClassifier / QDA predict_proba, 1e6 x 2",
            "proba_vs_qda",
            None,
            0.9,
            "lower",
        ),
    ]
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0], [3.0, 3.0]])
    y = rng.choice(CLASSES, size=N_TRAIN)
    X = centres[y - 1] + rng.normal(size=(N_TRAIN, 2))
    pool = rng.normal(loc=1.5, scale=3.0, size=(N_POOL, 2))
    return X, y, pool


@pytest.fixture(scope="module")
def model(data):
    return BayesianGMMClassifier().fit(*data[:2])


def _paired(benchmark, record_median, name, ours, peer, rounds=ROUNDS):
    """Time ``ours`` and ``peer`` in paired rounds; keep the ratio's median."""
    skrbal_time, peer_time = time_paired(
        benchmark, ours, peer, rounds=rounds, alternate=True
    )
    ratio = skrbal_time / peer_time
    q1, median, q3 = quartiles(ratio)
    print(
        f"\n  {name}: skrbal {np.median(skrbal_time) * 1e3:.1f} ms, peer "
        f"{np.median(peer_time) * 1e3:.1f} ms; ratio median {median:.3f} "
        f"(IQR {q1:.3f}-{q3:.3f}, range {ratio.min():.3f}-{ratio.max():.3f}, "
        f"{rounds} rounds)"
    )
    record_median(name, seconds=median)


@pytest.mark.parametrize("n", N_INSTANCES)
def test_evpi_query_vs_modal_uncertainty(benchmark, record_median, data, model, n):
    benchmark.group = "query, paired"
    pool = data[2]
    ours = ActiveLearner(
        estimator=model,
        query_strategy=EVPISampling(process=synthetic_decision_process()),
    )
    peer = ActiveLearner(estimator=model, query_strategy=modal_uncertainty_sampling)
    idx, _ = ours.query(pool, n_instances=n)
    assert len(set(np.asarray(idx).tolist())) == n
    _paired(
        benchmark,
        record_median,
        f"evpi_vs_modal_{n}",
        lambda: ours.query(pool, n_instances=n),
        lambda: peer.query(pool, n_instances=n),
    )


@pytest.mark.parametrize("n", N_INSTANCES)
def test_entropy_vs_modal(benchmark, record_median, data, model, n):
    benchmark.group = "query, paired"
    pool = data[2]
    ours, _ = entropy_sampling(model, pool, n)
    theirs, _ = modal_entropy_sampling(model, pool, n)
    assert set(ours.tolist()) == set(np.asarray(theirs).tolist())
    _paired(
        benchmark,
        record_median,
        f"entropy_vs_modal_{n}",
        lambda: entropy_sampling(model, pool, n),
        lambda: modal_entropy_sampling(model, pool, n),
    )


@pytest.mark.parametrize("n", N_INSTANCES)
def test_least_confident_vs_modal(benchmark, record_median, data, model, n):
    benchmark.group = "query, paired"
    pool = data[2]
    ours, _ = least_confident_sampling(model, pool, n)
    theirs, _ = modal_uncertainty_sampling(model, pool, n)
    assert set(ours.tolist()) == set(np.asarray(theirs).tolist())
    _paired(
        benchmark,
        record_median,
        f"least_confident_vs_modal_{n}",
        lambda: least_confident_sampling(model, pool, n),
        lambda: modal_uncertainty_sampling(model, pool, n),
    )


@pytest.mark.parametrize("n", [1, 10])
def test_evpi_query_vs_skactiveml(benchmark, record_median, data, model, n):
    skactiveml = pytest.importorskip("skactiveml")
    from skactiveml.classifier import SklearnClassifier
    from skactiveml.pool import UncertaintySampling

    benchmark.group = "query, paired"
    X, y, pool = data
    wrapped = SklearnClassifier(
        BayesianGMMClassifier(), classes=CLASSES, missing_label=-1
    ).fit(X, y)
    strategy = UncertaintySampling(
        method="least_confident", missing_label=-1, random_state=0
    )
    ours = ActiveLearner(
        estimator=model,
        query_strategy=EVPISampling(process=synthetic_decision_process()),
    )
    assert skactiveml.__version__
    _paired(
        benchmark,
        record_median,
        f"evpi_vs_skactiveml_{n}",
        lambda: ours.query(pool, n_instances=n),
        lambda: strategy.query(
            X, y, wrapped, fit_clf=False, candidates=pool, batch_size=n
        ),
        rounds=7,
    )


def test_predict_proba_vs_qda(benchmark, record_median, data, model):
    benchmark.group = "predict_proba, paired"
    X, y, pool = data
    qda = QuadraticDiscriminantAnalysis().fit(X, y)
    _paired(
        benchmark,
        record_median,
        "proba_vs_qda",
        lambda: model.predict_proba(pool),
        lambda: qda.predict_proba(pool),
    )


def test_evpi_query_vs_predict_proba(benchmark, record_median, data, model):
    benchmark.group = "query, paired"
    pool = data[2]
    ours = ActiveLearner(
        estimator=model,
        query_strategy=EVPISampling(process=synthetic_decision_process()),
    )
    _paired(
        benchmark,
        record_median,
        "evpi_vs_predict_proba",
        lambda: ours.query(pool, n_instances=10),
        lambda: model.predict_proba(pool),
    )
