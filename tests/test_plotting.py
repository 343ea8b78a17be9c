import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.contour import QuadContourSet
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process, z24_decision_process
from skrbal.datasets import make_degradation_stream
from skrbal.mixture import BayesianGMMClassifier
from skrbal.plotting import (
    ClassProportionDisplay,
    EVPIDisplay,
    QueryCountDisplay,
    QueryCurveDisplay,
    QueryPositionDisplay,
    query_curve_summary,
    segment_boundaries,
    state_styles,
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
    model = rvm.MulticlassRVC(random_state=0, method="mrvm2").fit(X[::3], y[::3])
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


def test_evpi_display_marks_the_labelled_set(data):
    X, y = data
    labelled = np.array([0, 40, 80, 100, 119])
    model = GaussianNB().fit(X[labelled], y[labelled])
    process = synthetic_decision_process()
    display = EVPIDisplay.from_estimator(
        model, X, process, y=y, labelled=labelled, max_points=50
    )
    circled = display.labelled_scatter_
    np.testing.assert_allclose(circled.get_offsets(), X[labelled])
    assert circled.get_label() == "labelled (5)"
    scatters = display.data_scatters_
    # A subset of the unlabelled points, every state in its colour and name.
    assert sum(len(s.get_offsets()) for s in scatters.values()) == 50
    assert list(scatters) == [1, 2, 3, 4]
    styles = state_styles(process)
    for label, scatter in scatters.items():
        assert scatter.get_label() == styles[label].name
        assert to_hex(scatter.get_facecolor()[0]) == styles[label].color
        rows = np.flatnonzero(y == label)
        offsets = scatter.get_offsets()
        assert np.isin(offsets[:, 0], X[rows, 0]).all()
    # The ellipses are the same states in the same colours.
    assert [to_hex(e.get_edgecolor()) for e in display.ellipses_] == [
        styles[k].color for k in model.classes_
    ]
    with pytest.raises(ValueError, match="y must have shape"):
        EVPIDisplay.from_estimator(model, X, process, y=y[:-1])
    with pytest.raises(ValueError, match=r"y has labels \[9\]"):
        EVPIDisplay.from_estimator(model, X, process, y=np.where(y == 4, 9, y))
    with pytest.raises(ValueError, match="labelled must be indices"):
        EVPIDisplay.from_estimator(model, X, process, labelled=[0, 120])


def test_compared_evpi_panels_share_one_colour_scale(data):
    X, y = data
    process = synthetic_decision_process()
    early = GaussianNB().fit(X[::10], y[::10])
    late = GaussianNB().fit(X, y)
    _, axes = plt.subplots(1, 3)
    kwargs = dict(grid_resolution=40, vmin=0.0, vmax=20.0)
    first = EVPIDisplay.from_estimator(early, X, process, ax=axes[0], **kwargs)
    second = EVPIDisplay.from_estimator(late, X, process, ax=axes[1], **kwargs)
    assert first.evpi.max() != pytest.approx(second.evpi.max())
    for display in (first, second):
        assert (display.surface_.norm.vmin, display.surface_.norm.vmax) == (0, 20)
        assert display.colorbar_.vmin == 0 and display.colorbar_.vmax == 20
    # Same levels, so the same colour means the same EVPI in both panels.
    np.testing.assert_allclose(first.surface_.levels, second.surface_.levels)
    np.testing.assert_allclose(first.surface_.levels, np.linspace(0, 20, 21))

    # Without a scale each panel spans its own range; rescale joins them,
    # keeping the overlays and the axes.
    third = EVPIDisplay.from_estimator(late, X, process, ax=axes[2], grid_resolution=40)
    assert third.surface_.norm.vmax == pytest.approx(third.evpi.max())
    ellipses = list(third.ellipses_)
    third.rescale(0.0, 20.0)
    assert third.surface_.norm.vmax == 20 and third.colorbar_.vmax == 20
    np.testing.assert_allclose(third.surface_.levels, first.surface_.levels)
    assert third.ellipses_ == ellipses and all(e in axes[2].patches for e in ellipses)
    assert sum(isinstance(c, QuadContourSet) for c in axes[2].collections) <= 2

    # EVPI beyond a narrow scale takes the end colours, no hole in the surface.
    narrow = EVPIDisplay.from_estimator(late, X, process, grid_resolution=40, vmax=1)
    assert narrow.evpi.max() > 1
    assert narrow.surface_.extend == "max"
    mesh = EVPIDisplay.from_estimator(
        early, X, process, grid_resolution=20, plot_method="pcolormesh", vmin=0, vmax=5
    )
    assert (mesh.surface_.norm.vmin, mesh.surface_.norm.vmax) == (0, 5)
    with pytest.raises(ValueError, match="vmin must be below vmax"):
        EVPIDisplay.from_estimator(early, X, process, vmin=3, vmax=3)


def test_state_styles_one_colour_and_name_per_state():
    process = z24_decision_process()
    styles = state_styles(process)
    assert list(styles) == [1, 2, 3, 4]
    assert [s.name for s in styles.values()] == list(process.state_names)
    assert len({s.color for s in styles.values()}) == 4
    # tab10 ordered for health, fixed whatever the style: normal green, cold
    # blue, incipient damage orange, advanced damage red.
    with plt.style.context("ggplot"):
        assert [s.color for s in state_styles(process).values()] == [
            to_hex(f"tab:{c}") for c in ("green", "blue", "orange", "red")
        ]
    renamed = state_styles(process, names=list("abcd"), colors=["k", "r", "g", "b"])
    assert renamed[3] == ("c", "g")
    assert state_styles(["x", "y"])["y"].name == "state y"
    with pytest.raises(ValueError, match="repeated"):
        state_styles([1, 1])
    with pytest.raises(ValueError, match="names has 1 entries for 4"):
        state_styles(process, names=["a"])
    with pytest.raises(ValueError, match="11 states"):
        state_styles(range(11))
    assert len(state_styles(range(11), colors=[f"C{k}" for k in range(11)])) == 11


def test_a_state_has_one_colour_in_every_figure(data):
    """The same state, the same colour and name, in all three state figures."""
    X, y = data
    process = synthetic_decision_process()
    styles = state_styles(process)
    queries = pd.DataFrame(
        {
            "method": "evpi",
            "repetition": 0,
            "query": [0, 1, 2],
            "record_index": [-1, 10, 100],
            # Columns in another order than the process's states.
            "proportion_4": [0.0, 0.0, 0.5],
            "proportion_1": [1.0, 1.0, 0.5],
        }
    )
    proportions = ClassProportionDisplay.from_frames(queries, process=process)
    assert list(proportions.lines_) == [1, 4]  # the process's order
    positions = QueryPositionDisplay.from_frames(queries, y, process=process)
    evpi = EVPIDisplay.from_estimator(
        GaussianNB().fit(X, y), X, process, y=y, grid_resolution=20
    )
    for state in (1, 4):
        style = styles[state]
        line = proportions.lines_[state]
        assert (line.get_label(), to_hex(line.get_color())) == style
        assert to_hex(proportions.bands_[state].get_facecolor()[0]) == style.color
        spans = [
            span
            for span, label in zip(positions.state_spans_, segment_boundaries(y)[2])
            if label == state
        ]
        assert spans and {to_hex(s.get_facecolor()) for s in spans} == {style.color}
        scatter = evpi.data_scatters_[state]
        assert (scatter.get_label(), to_hex(scatter.get_facecolor()[0])) == style
    ticks = positions.state_axis_.get_xticklabels()
    assert [to_hex(t.get_color()) for t in ticks] == [styles[k].color for k in y[::30]]
    assert "4 failure" in positions.state_axis_.get_xlabel()
    with pytest.raises(ValueError, match="'7' is not a state of the process"):
        ClassProportionDisplay.from_frames(
            queries.rename(columns={"proportion_4": "proportion_7"}), process=process
        )


def _is_integer_locator(axis) -> bool:
    from matplotlib.ticker import MaxNLocator

    locator = axis.get_major_locator()
    return isinstance(locator, MaxNLocator) and locator._integer


def test_counts_have_integer_ticks():
    queries = pd.DataFrame(
        {
            "method": ["a", "a", "b"],
            "repetition": 0,
            "query": [0, 1, 0],
            "record_index": [-1, 2, 1],
            "f1": [0.5, 0.7, 0.6],
            "proportion_1": [1.0, 0.5, 1.0],
        }
    )
    totals = pd.DataFrame({"method": ["a", "b"], "n_inspections": [1, 2]})
    curves = QueryCurveDisplay.from_frames(queries, "f1")
    proportions = ClassProportionDisplay.from_frames(queries, "a")
    counts = QueryCountDisplay.from_frames(totals)
    positions = QueryPositionDisplay.from_frames(queries, bin_width=1)
    for axis in (
        curves.ax_.xaxis,
        proportions.ax_.xaxis,
        counts.ax_.xaxis,
        counts.ax_.yaxis,
        positions.ax_.xaxis,
        positions.ax_.yaxis,
    ):
        assert _is_integer_locator(axis)
        # On a short range matplotlib would otherwise tick at halves.
        ticks = axis.get_ticklocs()
        np.testing.assert_array_equal(ticks, np.round(ticks))
    assert not _is_integer_locator(curves.ax_.yaxis)  # a score, not a count


def test_query_curves_display():
    queries = pd.DataFrame(
        {
            "method": ["a"] * 4 + ["b"] * 2,
            "repetition": [0, 0, 1, 1, 0, 0],
            "query": [0, 1, 0, 1, 0, 1],
            "f1": [0.2, 0.6, 0.4, 0.8, 0.1, 0.3],
        }
    )
    display = QueryCurveDisplay.from_frames(queries, "f1", methods=["b", "a"])
    assert list(display.lines_) == ["b", "a"]
    np.testing.assert_allclose(display.lines_["a"].get_ydata(), [0.3, 0.7])
    band = display.bands_["a"].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(0.25) and band[:, 1].max() == 0.75
    assert display.ax_.get_ylabel() == "f1" and display.figure_ is display.ax_.figure
    # Redrawn elsewhere with plot(ax=...), as scikit-learn's displays.
    _, ax = plt.subplots()
    assert display.plot(ax=ax, ylabel="macro F1").ax_ is ax
    assert ax.get_ylabel() == "macro F1"
    from sklearn.utils import Bunch

    study = Bunch(queries=queries, totals=None, config={})
    again = QueryCurveDisplay.from_study(study, "f1")
    pd.testing.assert_frame_equal(
        again.summary.sort_values(["method", "query"]).reset_index(drop=True),
        display.summary.sort_values(["method", "query"]).reset_index(drop=True),
    )
    with pytest.raises(TypeError, match="run_study or load_study"):
        QueryCurveDisplay.from_study(queries)
    with pytest.raises(ValueError, match="no method"):
        QueryCurveDisplay.from_frames(queries, "f1", methods=["c"])


def test_query_counts_histogram_counts_runs():
    totals = pd.DataFrame(
        {
            "method": ["a"] * 4 + ["b"] * 4,
            "n_inspections": [2, 2, 3, 7, 0, 1, 1, 1],
        }
    )
    display = QueryCountDisplay.from_frames(totals)
    ax = display.ax_
    # One bar per method and integer count from 0 to 7, side by side.
    a, b = ax.containers
    assert (display.bars_["a"], display.bars_["b"]) == (a, b)
    assert [int(p.get_height()) for p in a] == [0, 0, 2, 1, 0, 0, 0, 1]
    assert [int(p.get_height()) for p in b] == [1, 3, 0, 0, 0, 0, 0, 0]
    assert a[2].get_x() < b[2].get_x() < a[3].get_x()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["a: 3.5 +- 2.1", "b: 0.8 +- 0.4"]
    with pytest.raises(ValueError, match="no method"):
        QueryCountDisplay.from_frames(totals, methods=["c"])
    from sklearn.utils import Bunch

    single = QueryCountDisplay.from_study(Bunch(totals=totals), methods=["b"])
    assert [int(p.get_height()) for p in single.bars_["b"]] == [1, 3]


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
    display = QueryPositionDisplay.from_frames(queries, y, bin_width=50)
    ax = display.ax_
    heights = [p.get_height() for bars in display.bars_.values() for p in bars]
    assert sum(heights) == 60  # the initial model's row (-1) is no inspection
    boundaries, centres, _ = segment_boundaries(y)
    assert len(boundaries) == 7  # 2 cycles x 4 states
    dashed = [line.get_xdata()[0] for line in ax.get_lines()]
    np.testing.assert_allclose(dashed, boundaries - 0.5)
    assert display.boundaries_ == ax.get_lines()
    # The state strip: one span per segment, in the top 3 % of the axes.
    assert len(display.state_spans_) == 8
    assert all(span in ax.patches for span in display.state_spans_)
    top = ax.child_axes[0]
    assert top is display.state_axis_
    assert [t.get_text() for t in top.get_xticklabels()] == ["1", "2", "3", "4"] * 2
    np.testing.assert_allclose(top.get_xticks(), centres)

    # A one-observation segment keeps its boundaries but gets no class number.
    flicker = np.r_[np.ones(500, int), 2, np.ones(299, int)]
    index = queries["record_index"]
    early = queries.assign(record_index=np.where(index >= 0, index % 800, -1))
    ax = QueryPositionDisplay.from_frames(early, flicker).ax_
    assert [line.get_xdata()[0] for line in ax.get_lines()] == [499.5, 500.5]
    assert [t.get_text() for t in ax.child_axes[0].get_xticklabels()] == ["1", "1"]

    by_step = QueryPositionDisplay.from_frames(queries, bin_width=800)
    assert by_step.ax_.child_axes == []  # no labels, no boundaries
    assert by_step.state_spans_ == [] and by_step.state_axis_ is None
    with pytest.raises(ValueError, match="labels cover 10 positions"):
        QueryPositionDisplay.from_frames(queries, y[:10])
    with pytest.raises(ValueError, match="no column 'step'"):
        QueryPositionDisplay.from_frames(queries, y, position="step")


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
    display = ClassProportionDisplay.from_frames(queries, "em", effective=True)
    ax = display.ax_
    first = ax.get_lines()[0]
    assert first is display.lines_["1"]  # labels read from the columns
    np.testing.assert_allclose(first.get_ydata(), [0.5, 0.5])
    assert "effective" in ax.get_title()
    with pytest.raises(ValueError, match="effective_proportion_"):
        ClassProportionDisplay.from_frames(queries, "plain", effective=True)
    with pytest.raises(ValueError, match="choose a method"):
        ClassProportionDisplay.from_frames(queries)


def test_displays_of_one_fitted_learner():
    from skrbal.active import RiskBasedLearner

    X, y, actions = make_degradation_stream(n_cycles=1, random_state=0)
    process = synthetic_decision_process()
    learners = {
        name: RiskBasedLearner(
            estimator=GaussianNB(),
            process=process,
            strategy=query,
            n_queries=8,
            random_state=0,
        ).fit(X, y, actions=actions, initial=np.arange(0, 400, 40), X_test=X, y_test=y)
        for name, query in (("EVPI", "evpi"), ("random", "random"))
    }
    _, ax = plt.subplots()
    for name, learner in learners.items():
        display = QueryCurveDisplay.from_history(learner.history_, name=name, ax=ax)
        queries = learner.history_.queries
        np.testing.assert_allclose(
            display.lines_[name].get_ydata(), queries["decision_accuracy"]
        )
    assert [line.get_label() for line in ax.get_lines()] == ["EVPI", "random"]
    proportions = ClassProportionDisplay.from_history(
        learners["EVPI"].history_, process=process
    )
    queries = learners["EVPI"].history_.queries
    assert list(proportions.lines_) == [1, 2, 3, 4]
    for state, line in proportions.lines_.items():
        np.testing.assert_allclose(line.get_ydata(), queries[f"proportion_{state}"])
    assert proportions.ax_.get_title() == ""
    with pytest.raises(TypeError, match="history_"):
        QueryCurveDisplay.from_history(learners["EVPI"])


def test_query_curve_summary_counts_the_runs_that_reached_each_query():
    # Method a: run 0 made 2 queries, run 1 none, run 2 one; b: one run, one query.
    queries = pd.DataFrame(
        {
            "method": ["a", "a", "a", "a", "a", "a", "b", "b"],
            "repetition": [0, 0, 0, 1, 2, 2, 0, 0],
            "query": [0, 1, 2, 0, 0, 1, 0, 1],
            "f1": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
        }
    )
    summary = query_curve_summary(queries, "f1")
    assert summary["method"].tolist() == ["a", "a", "a", "b", "b"]
    assert summary["n_runs"].tolist() == [3, 2, 1, 1, 1]
