"""Timing of BayesianGMMClassifier against scikit-learn peers.

Run with ``pytest benchmarks/bench_gmm.py --benchmark-only``; the ratios and
their targets are printed at the end (see ``benchmarks/conftest.py``).

- predict_proba on 1,000,000 two-dimensional points with four classes, against
  QuadraticDiscriminantAnalysis fitted to the same data (target: at most 1.5x);
- EVPI of the synthetic decision process on top of predict_proba (target: at
  most 10% extra time);
- partial_fit of one sample against fit on 1,000 samples (target: at least
  20x faster), with GaussianNB.partial_fit as the peer.
"""

import time

import numpy as np
import pytest
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.mixture import BayesianGMMClassifier

N_TRAIN = 1_000
N_PREDICT = 1_000_000
CLASSES = np.array([1, 2, 3, 4])
LARGE = {"rounds": 7, "iterations": 1, "warmup_rounds": 1}

BENCHMARK_RATIOS = [
    (
        "predict_proba 1e6x2: skrbal / QDA",
        "proba_skrbal",
        "proba_qda",
        1.5,
        "lower",
    ),
    (
        "predict_proba + evpi / predict_proba",
        "proba_evpi",
        "proba_alone",
        1.10,
        "lower",
    ),
    (
        "predict_proba + evpi / predict_proba, paired rounds",
        "proba_evpi_paired",
        None,
        1.10,
        "lower",
    ),
    (
        "fit on 1,000 / partial_fit of one sample (ndarray)",
        "fit_1000",
        "partial_fit_1",
        20.0,
        "higher",
    ),
    (
        "fit on 1,000 / partial_fit of one sample (lists)",
        "fit_1000",
        "partial_fit_1_lists",
        20.0,
        "higher",
    ),
]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0], [3.0, 3.0]])
    y = rng.choice(CLASSES, size=N_TRAIN)
    X = centres[y - 1] + rng.normal(size=(N_TRAIN, 2))
    X_test = rng.normal(loc=1.5, scale=3.0, size=(N_PREDICT, 2))
    return X, y, X_test


@pytest.fixture(scope="module")
def fitted(data):
    X, y, _ = data
    return BayesianGMMClassifier().fit(X, y), QuadraticDiscriminantAnalysis().fit(X, y)


def test_predict_proba_skrbal(benchmark, record_median, data, fitted):
    benchmark.group = "predict_proba 1e6x2, 4 classes"
    proba = benchmark.pedantic(fitted[0].predict_proba, args=(data[2],), **LARGE)
    record_median("proba_skrbal")
    assert proba.shape == (N_PREDICT, 4)


def test_predict_proba_qda(benchmark, record_median, data, fitted):
    benchmark.group = "predict_proba 1e6x2, 4 classes"
    proba = benchmark.pedantic(fitted[1].predict_proba, args=(data[2],), **LARGE)
    record_median("proba_qda")
    assert proba.shape == (N_PREDICT, 4)


def test_evpi_predict_proba_alone(benchmark, record_median, data, fitted):
    benchmark.group = "EVPI on predict_proba 1e6"
    benchmark.pedantic(fitted[0].predict_proba, args=(data[2],), **LARGE)
    record_median("proba_alone")


def test_evpi_on_predict_proba(benchmark, record_median, data, fitted):
    benchmark.group = "EVPI on predict_proba 1e6"
    clf, process, X_test = fitted[0], synthetic_decision_process(), data[2]
    rounds = []

    def proba_then_evpi():
        start = time.perf_counter()
        proba = clf.predict_proba(X_test)
        middle = time.perf_counter()
        evpi = process.evpi(proba)
        rounds.append((middle - start, time.perf_counter() - middle))
        return evpi

    evpi = benchmark.pedantic(proba_then_evpi, **LARGE)
    record_median("proba_evpi")
    proba_time, evpi_time = np.array(rounds[-LARGE["rounds"] :]).T
    record_median("proba_evpi_paired", seconds=np.median(1 + evpi_time / proba_time))
    assert evpi.shape == (N_PREDICT,)
    assert np.all(evpi >= 0)


def test_fit_1000(benchmark, record_median, data):
    benchmark.group = "update"
    X, y, _ = data
    clf = BayesianGMMClassifier(classes=CLASSES)
    benchmark(clf.fit, X, y)
    record_median("fit_1000")


def test_partial_fit_one_sample(benchmark, record_median, data):
    benchmark.group = "update"
    X, y, _ = data
    clf = BayesianGMMClassifier(classes=CLASSES).fit(X, y)
    benchmark(clf.partial_fit, X[:1], y[:1])
    record_median("partial_fit_1")


def test_partial_fit_one_sample_lists(benchmark, record_median, data):
    benchmark.group = "update"
    X, y, _ = data
    clf = BayesianGMMClassifier(classes=CLASSES).fit(X, y)
    x_list, y_list = X[:1].tolist(), y[:1].tolist()
    benchmark(clf.partial_fit, x_list, y_list)
    record_median("partial_fit_1_lists")


def test_gaussian_nb_partial_fit_one_sample(benchmark, data):
    benchmark.group = "update"
    X, y, _ = data
    peer = GaussianNB().partial_fit(X, y, classes=CLASSES)
    benchmark(peer.partial_fit, X[:1], y[:1])
