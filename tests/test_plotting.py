import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.contour import QuadContourSet
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.datasets import make_degradation_stream
from skrbal.mixture import BayesianGMMClassifier
from skrbal.plotting import (
    EVPIDisplay,
    plot_class_proportions,
    plot_model_evpi,
    plot_query_counts,
    plot_query_positions,
    segment_boundaries,
)

CENTRES = np.array([[-5.0, 0.0], [0.0, 0.0], [6.0, 0.0], [19.0, 0.0]])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    y = np.repeat([1, 2, 3, 4], 30)
    X = rng.normal(size=(120, 2)) * [1.0, 0.7] + CENTRES[y - 1]
    return X, y


def _grid_evpi(display, model, process):
    grid = np.c_[display.xx0.ravel(), display.xx1.ravel()]
    proba = process.align_proba(model.predict_proba(grid), classes=model.classes_)
    return process.evpi(proba).reshape(display.xx0.shape), proba


def test_evpi_display_of_a_gmm(data):
    X, y = data
    process = synthetic_decision_process()
    # Three classes seen, the fourth known only through the prior.
    seen = y < 4
    model = BayesianGMMClassifier(classes=[1, 2, 3, 4]).fit(X[seen], y[seen])
    display = EVPIDisplay.from_estimator(model, X, process, grid_resolution=60, eps=0.5)
    assert display.xx0.shape == display.evpi.shape == (60, 60)
    assert display.xx0.min() == pytest.approx(X[:, 0].min() - 0.5)
    assert display.xx1.max() == pytest.approx(X[:, 1].max() + 0.5)
    expected, proba = _grid_evpi(display, model, process)
    np.testing.assert_allclose(display.evpi, expected)
    np.testing.assert_allclose(display.proba.reshape(-1, 4), proba)
    # The surface spans the inspection cost, so the cost contour is drawn at it.
    assert display.evpi.min() < 7 < display.evpi.max()
    assert list(display.cost_contour_.levels) == [7.0]

    # One 2-sigma ellipse and one mean marker per class, the unseen one too.
    assert len(display.ellipses_) == len(model.classes_) == 4
    np.testing.assert_allclose(
        np.c_[display.mean_markers_.get_xdata(), display.mean_markers_.get_ydata()],
        model.means_,
    )
    for ellipse, covariance in zip(display.ellipses_, model.covariances_):
        variances = np.linalg.eigvalsh(covariance)
        axes = sorted([ellipse.width, ellipse.height])
        np.testing.assert_allclose(axes, 4 * np.sqrt(variances), rtol=1e-10)
        # A point two standard deviations along the major axis lies on it.
        values, vectors = np.linalg.eigh(covariance)
        edge = 2 * np.sqrt(values[1]) * vectors[:, 1]
        path = ellipse.get_patch_transform().inverted().transform(ellipse.center + edge)
        assert np.hypot(*path) == pytest.approx(1.0)
    assert all(patch in display.ax_.patches for patch in display.ellipses_)
    assert isinstance(display.surface_, QuadContourSet)
    assert display.colorbar_ is not None and display.figure_ is display.ax_.figure
    # Gaussian models draw no probability contours unless asked.
    assert display.proba_contours_ == {} and display.relevance_markers_ is None


def test_probability_contours_of_a_discriminative_model(data):
    X, y = data
    process = synthetic_decision_process()
    model = LogisticRegression().fit(X, y)
    display = EVPIDisplay.from_estimator(model, X, process, grid_resolution=80)
    assert display.ellipses_ == [] and display.mean_markers_ is None
    assert set(display.proba_contours_) <= {1, 2, 3, 4}
    assert len(display.proba_contours_) >= 3
    for label, contour in display.proba_contours_.items():
        vertices = np.concatenate([p.vertices for p in contour.get_paths()])
        assert len(vertices) > 10
        column = list(model.classes_).index(label)
        # Linear interpolation between grid points: close to, not exactly, 0.5.
        np.testing.assert_allclose(
            model.predict_proba(vertices)[:, column], 0.5, atol=0.05
        )


def test_relevance_vectors_and_contours_of_an_mrvm(data):
    rvm = pytest.importorskip("skrbal.rvm")
    X, y = data
    model = rvm.MulticlassRVC(method="mrvm2").fit(X[::3], y[::3])
    display = EVPIDisplay.from_estimator(
        model, X, synthetic_decision_process(), grid_resolution=30
    )
    np.testing.assert_allclose(
        np.c_[
            display.relevance_markers_.get_xdata(),
            display.relevance_markers_.get_ydata(),
        ],
        model.relevance_vectors_,
    )
    assert display.relevance_markers_.get_marker() == "x"
    assert display.proba_contours_, "a trained mRVM crosses p = 0.5 somewhere"
    assert display.ellipses_ == []


def test_display_options_and_errors(data):
    X, y = data
    process = synthetic_decision_process()
    frame = pd.DataFrame(X, columns=["mode 1", "mode 2"])
    display = EVPIDisplay.from_estimator(
        GaussianNB().fit(frame, y),
        frame,
        process,
        grid_resolution=20,
        plot_method="pcolormesh",
        overlay=False,
        cost_contour=False,
        colorbar=False,
    )
    assert display.ax_.get_xlabel() == "mode 1" and display.ax_.get_ylabel() == "mode 2"
    assert display.ellipses_ == [] and display.cost_contour_ is None
    assert display.colorbar_ is None
    # GaussianNB's diagonal variances become axis-aligned ellipses.
    model = GaussianNB().fit(X, y)
    again = EVPIDisplay.from_estimator(model, X, process, grid_resolution=20)
    assert len(again.ellipses_) == 4
    assert {round(e.angle % 90, 6) for e in again.ellipses_} == {0.0}

    with pytest.raises(ValueError, match="2-D feature space; X has 3"):
        EVPIDisplay.from_estimator(model, np.c_[X, X[:, 0]], process)
    with pytest.raises(ValueError, match="grid_resolution"):
        EVPIDisplay.from_estimator(model, X, process, grid_resolution=1)
    with pytest.raises(ValueError, match="plot_method"):
        EVPIDisplay.from_estimator(model, X, process, plot_method="contour")
    with pytest.raises(TypeError, match="DecisionProcess"):
        EVPIDisplay.from_estimator(model, X, "process")
    with pytest.raises(ValueError, match="unknown label"):
        EVPIDisplay.from_estimator(GaussianNB().fit(X, y + 10), X, process)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        EVPIDisplay.from_estimator(GaussianNB(), X, process)


def test_model_evpi_marks_the_labelled_set(data):
    X, y = data
    labelled = np.array([0, 40, 80, 100, 119])
    model = GaussianNB().fit(X[labelled], y[labelled])
    display = plot_model_evpi(
        model, X, y, synthetic_decision_process(), labelled=labelled, max_points=50
    )
    scatters = display.ax_.collections[-5:]
    circled = scatters[-1]
    np.testing.assert_allclose(circled.get_offsets(), X[labelled])
    assert circled.get_label() == "labelled (5)"
    shown = sum(len(s.get_offsets()) for s in scatters[:-1])
    assert shown == 50  # a subset of the unlabelled points, every class coloured
    assert [s.get_label() for s in scatters[:-1]] == [f"class {k}" for k in range(1, 5)]


def test_query_counts_histogram_counts_runs():
    totals = pd.DataFrame(
        {
            "method": ["a"] * 4 + ["b"] * 4,
            "n_inspections": [2, 2, 3, 7, 0, 1, 1, 1],
        }
    )
    ax = plot_query_counts(totals)
    # One bar per method and integer count from 0 to 7, side by side.
    a, b = ax.containers
    assert [int(p.get_height()) for p in a] == [0, 0, 2, 1, 0, 0, 0, 1]
    assert [int(p.get_height()) for p in b] == [1, 3, 0, 0, 0, 0, 0, 0]
    assert a[2].get_x() < b[2].get_x() < a[3].get_x()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["a: 3.5 +- 2.1", "b: 0.8 +- 0.4"]
    with pytest.raises(ValueError, match="no method"):
        plot_query_counts(totals, methods=["c"])


def test_query_positions_mark_the_class_boundaries():
    _, y, _ = make_degradation_stream(n_cycles=2, n_per_cycle=400, random_state=0)
    rng = np.random.default_rng(1)
    positions = rng.choice(y.size, size=60, replace=False)
    queries = pd.DataFrame(
        {
            "method": ["evpi"] * 30 + ["random"] * 30 + ["evpi"],
            "record_index": np.r_[positions, -1],
        }
    )
    ax = plot_query_positions(queries, y, bin_width=50)
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == 60  # the initial model's row (-1) is no inspection
    boundaries, centres, _ = segment_boundaries(y)
    assert len(boundaries) == 7  # 2 cycles x 4 states
    dashed = [line.get_xdata()[0] for line in ax.get_lines()]
    np.testing.assert_allclose(dashed, boundaries - 0.5)
    top = ax.child_axes[0]
    assert [t.get_text() for t in top.get_xticklabels()] == ["1", "2", "3", "4"] * 2
    np.testing.assert_allclose(top.get_xticks(), centres)

    # A one-observation segment keeps its boundaries but gets no class number.
    flicker = np.r_[np.ones(500, int), 2, np.ones(299, int)]
    index = queries["record_index"]
    early = queries.assign(record_index=np.where(index >= 0, index % 800, -1))
    ax = plot_query_positions(early, flicker)
    assert [line.get_xdata()[0] for line in ax.get_lines()] == [499.5, 500.5]
    assert [t.get_text() for t in ax.child_axes[0].get_xticklabels()] == ["1", "1"]

    by_step = plot_query_positions(queries, position="record_index", bin_width=800)
    assert by_step.child_axes == []  # no labels, no boundaries
    with pytest.raises(ValueError, match="labels cover 10 positions"):
        plot_query_positions(queries, y[:10])
    with pytest.raises(ValueError, match="no column 'step'"):
        plot_query_positions(queries, y, position="step")


def test_effective_class_proportions():
    queries = pd.DataFrame(
        {
            "method": ["em"] * 4 + ["plain"] * 2,
            "repetition": [0, 0, 1, 1, 0, 0],
            "query": [0, 1, 0, 1, 0, 1],
            "proportion_1": [1.0, 0.5, 1.0, 0.5, 1.0, 1.0],
            "proportion_2": [0.0, 0.5, 0.0, 0.5, 0.0, 0.0],
            "effective_proportion_1": [0.6, 0.5, 0.4, 0.5, np.nan, np.nan],
            "effective_proportion_2": [0.4, 0.5, 0.6, 0.5, np.nan, np.nan],
        }
    )
    ax = plot_class_proportions(queries, "em", effective=True)
    first = ax.get_lines()[0]
    np.testing.assert_allclose(first.get_ydata(), [0.5, 0.5])
    assert "effective" in ax.get_title()
    with pytest.raises(ValueError, match="effective_proportion_"):
        plot_class_proportions(queries, "plain", effective=True)
