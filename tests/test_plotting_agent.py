"""AgentHistoryDisplay: the timeline of a live agent, from a store or an agent."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from _agent_stores import START, grow_agent, stream
from matplotlib.colors import to_hex
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.inspection import InspectionMethod
from skrbal.online import AgentStore, RiskBasedAgent, StoreError
from skrbal.plotting import AgentHistoryDisplay, state_styles


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("agents") / "agents.db")
    grow_agent(path, "dated")
    grow_agent(path, "stepped", dates=False)
    return path


def drawn(path, name, **kwargs):
    with AgentStore(path) as store:
        return AgentHistoryDisplay.from_store(store, name, **kwargs)


def test_a_stores_history_is_drawn(store_path):
    """#18.13: there was no picture of an agent from its store."""
    display = drawn(store_path, "dated")
    store = AgentStore(store_path)
    history = store.history("dated")
    status = store.status("dated")
    store.close()
    observed = history[history["kind"] == "observation"]
    assert len(display.axes_) == 4 and display.ax_ is display.axes_[3]
    assert display.figure_ is display.ax_.figure
    # Times as given: dates, the observations' own.
    expected = pd.to_datetime(observed["timestamp"], unit="s").to_numpy()
    x = display.evpi_line_.get_xdata()
    assert np.array_equal(np.asarray(x, dtype="datetime64[ns]"), expected)
    assert display.time_axis == "datetime"
    np.testing.assert_array_equal(display.evpi_line_.get_ydata(), observed["evpi"])
    # One line per state, in the state's colour and name of every figure.
    styles = state_styles(synthetic_decision_process())
    for state, line in display.belief_lines_.items():
        assert to_hex(line.get_color()) == styles[state].color
        assert line.get_label() == styles[state].name
        np.testing.assert_array_equal(line.get_ydata(), observed[f"belief_{state}"])
    assert display.cost_line_.get_ydata()[0] == 1.0
    # Every kind of request has its markers; the answered one its state's colour.
    answered = display.requests[display.requests["status"] == "done"]
    state = answered["label"].iloc[0]
    assert set(display.request_markers_) == {state, "open", "expired", "cancelled"}
    face = display.request_markers_[state].get_facecolor()[0]
    assert to_hex(face) == styles[state].color
    counts = {k: len(m.get_offsets()) for k, m in display.request_markers_.items()}
    assert counts["open"] == status["n_open"]
    assert counts["expired"] == status["n_expired"]
    assert counts["cancelled"] == status["n_cancelled"] == 1
    np.testing.assert_array_equal(
        display.action_line_.get_ydata(), observed["action"].to_numpy()
    )


@pytest.mark.parametrize("name", ["dated", "stepped"])
def test_spend_by_period_adds_up_to_the_status(store_path, name):
    display = drawn(store_path, name)
    status = AgentStore(store_path).status(name)
    table = display.spend_by_period()
    assert table["spend"].sum() == status["spend"]
    assert table["committed"].sum() == status["committed_spend"]
    # The cap held in every period, and the limit is drawn.
    assert (table["committed"] <= 4.0).all() and (table["limit"] == 4.0).all()
    assert display.limit_line_.get_ydata()[0] == 4.0
    # Periods follow one another from the first observation's to the last's.
    assert (np.diff(table["period"]) == 1).all()
    assert (table["start"].iloc[1:].to_numpy() == table["end"].iloc[:-1]).all()
    # The drawn curve restarts at each period and ends at the last total.
    committed = display.spend_lines_["committed"].get_ydata()
    assert committed.max() == table["committed"].max()
    assert committed[-1] == table["committed"].iloc[-1]


def test_an_agent_without_times_is_drawn_against_steps(store_path):
    display = drawn(store_path, "stepped")
    history = AgentStore(store_path).history("stepped")
    steps = history.loc[history["kind"] == "observation", "step"].to_numpy()
    assert display.time_axis == "step" and display.ax_.get_xlabel() == "step"
    np.testing.assert_array_equal(display.evpi_line_.get_xdata(), steps)
    with pytest.raises(ValueError, match="needs timestamps"):
        drawn(store_path, "stepped", time_axis="datetime")


def test_times_as_seconds_and_the_time_axis_choice(store_path):
    seconds = drawn(store_path, "dated", time_axis="seconds")
    assert seconds.ax_.get_xlabel() == "time (s)"
    assert seconds.evpi_line_.get_xdata()[0] == START.timestamp() + 8 * 3600
    with pytest.raises(ValueError, match="time_axis must be one of"):
        drawn(store_path, "dated", time_axis="days")


def test_from_agent_draws_what_from_store_draws(store_path, tmp_path):
    path = str(tmp_path / "one.db")
    grow_agent(path, "bridge", n=80)
    agent = RiskBasedAgent.from_store(path, "bridge")
    live = AgentHistoryDisplay.from_agent(agent)
    # from_history takes an agent's history_ as the learners' Displays do
    bunch = AgentHistoryDisplay.from_history(agent.history_, draw=False)
    steps = AgentHistoryDisplay.from_history(agent.history_.steps, draw=False)
    pd.testing.assert_frame_equal(bunch.requests, steps.requests)
    agent.close()
    stored = drawn(path, "bridge")
    pd.testing.assert_frame_equal(live.requests, stored.requests)
    pd.testing.assert_frame_equal(live.spend_by_period(), stored.spend_by_period())
    assert live.budget == stored.budget


def test_requests_cost_their_inspection_method(tmp_path):
    """With inspection methods, each request is priced at its method's cost."""
    X, y = stream(120)
    methods = [
        InspectionMethod(name="drone", cost=0.05, confusion=[[0.9, 0.1]] * 3
                         + [[0.05, 0.95]], outcomes=["ok", "damage"]),
        InspectionMethod(name="rope", cost=2.0, confusion=np.eye(4),
                         outcomes=[1, 2, 3, 4]),
    ]  # fmt: skip
    path = str(tmp_path / "methods.db")
    with RiskBasedAgent(
        estimator=GaussianNB(),
        process=synthetic_decision_process().set_params(inspection_cost=1.0),
        inspections=methods,
        store=path,
    ) as agent:
        agent.fit(X[:8], y[:8]).observe(X[8:])
        requests = agent.store_.requests("agent")
        drone = requests.loc[requests["method"] == "drone", "request_id"]
        rope = requests.loc[requests["method"] == "rope", "request_id"]
        assert len(drone) and len(rope)
        agent.record_inspection(int(drone.iloc[0]), report="damage")
        agent.record_inspection(int(rope.iloc[0]), report=3)
        status = agent.status()
    display = drawn(path, "agent")
    costs = display.requests.set_index("request_id")["cost"]
    assert (costs[drone] == 0.05).all() and (costs[rope] == 2.0).all()
    table = display.spend_by_period()
    assert table["spend"].sum() == pytest.approx(status["spend"]) == 2.05
    assert table["committed"].sum() == pytest.approx(status["committed_spend"])
    # A drone report leaves the state uncertain; the rope access found state 3.
    assert len(display.request_markers_["done"].get_offsets()) == 1
    assert len(display.request_markers_[3].get_offsets()) == 1
    assert display.request_markers_["done"].get_label() == "inspected: uncertain"
    assert display.budget is None and display.limit_line_ is None
    assert display.ax_.get_ylabel() == "spend"


def test_drawn_on_given_axes_and_errors():
    history = pd.DataFrame(
        {"step": [0, 1], "kind": "observation", "timestamp": np.nan,
         "evpi": [3.0, 0.0], "belief_a": [0.5, 1.0], "belief_b": [0.5, 0.0],
         "request_id": [1, None], "request_status": ["open", None],
         "label": None, "action": [0, 0]}
    )  # fmt: skip
    _, axes = plt.subplots(2, 2)
    display = AgentHistoryDisplay.from_history(history, ax=axes)
    assert list(display.axes_) == list(axes.ravel())
    assert display.cost_line_ is None  # no process, no cost
    assert [line.get_label() for line in display.belief_lines_.values()] == [
        "state a",
        "state b",
    ]
    with pytest.raises(ValueError, match="ax must hold 4 Axes"):
        display.plot(ax=axes[0])
    # axes= (deprecated) is still read, as ax, with a FutureWarning
    with pytest.warns(FutureWarning, match="pass ax="):
        again = display.plot(axes=axes)
    assert list(again.axes_) == list(axes.ravel())
    with pytest.raises(ValueError, match="history has no column 'evpi'"):
        AgentHistoryDisplay.from_history(history.drop(columns="evpi"))
    with pytest.raises(ValueError, match="not a state of the process"):
        AgentHistoryDisplay.from_history(history, process=synthetic_decision_process())


def test_an_unknown_agent_names_the_store(store_path):
    with pytest.raises(StoreError, match="no agent named 'nobody'"):
        drawn(store_path, "nobody")
    with pytest.raises(TypeError, match="store must be an AgentStore"):
        AgentHistoryDisplay.from_store(store_path, "dated")


def test_times_are_drawn_as_the_agent_was_given_them(tmp_path):
    """Epoch seconds given as numbers stay seconds, however large; dates stay
    dates (the agent's time_format setting, not a guess from their size)."""
    X, y = stream(40)
    epoch = START.timestamp() + 3600.0 * np.arange(40)
    path = str(tmp_path / "given.db")
    for name, times in (("numbers", epoch), ("dates", pd.to_datetime(epoch, unit="s"))):
        with RiskBasedAgent(
            estimator=GaussianNB(),
            process=synthetic_decision_process(),
            store=path,
            name=name,
        ) as agent:
            agent.fit(X[:8], y[:8], timestamps=times[:8]).observe(X[8:], times[8:])
            live = AgentHistoryDisplay.from_agent(agent)
        stored = drawn(path, name)
        expected = "seconds" if name == "numbers" else "datetime"
        assert live.time_axis == stored.time_axis == expected


def test_a_learner_display_given_an_agents_history_names_the_agent_display(
    store_path,
):
    # ClassProportionDisplay and QueryCurveDisplay draw a learner's history_;
    # handed a live agent's history() they say which display draws it.
    from skrbal.plotting import ClassProportionDisplay, QueryCurveDisplay

    with RiskBasedAgent.from_store(store_path, name="dated") as agent:
        history = agent.history_.steps
    for display in (ClassProportionDisplay, QueryCurveDisplay):
        with pytest.raises(TypeError, match=r"AgentHistoryDisplay\.from_history"):
            display.from_history(history)
