"""A bridge engineer's first week, the second round: what the first left open.

As in ``test_cli_first_week.py`` (whose helpers are used here), each test
replays a problem through the real ``skrbal`` command in a subprocess, on
raw natural frequencies in Hz with ISO times and a process typed by hand.
"""

import json

import numpy as np
import pandas as pd
import pytest
from test_cli_first_week import (  # tests/ is on sys.path
    STATES,
    hand_typed_process,
    measurements,
    one_line,
    skrbal,
)


@pytest.fixture
def process_file(tmp_path):
    path = tmp_path / "process.json"
    path.write_text(json.dumps(hand_typed_process(), indent=2))
    return path


def commissioned(
    tmp_path, process_file, *options, n=60, n_labelled=30, store="a.db", **columns
):
    """A store commissioned from one file: ``n_labelled`` healthy rows, then blank."""
    table = measurements(n)
    table["label"] = ["healthy"] * n_labelled + [""] * (n - n_labelled)
    table = table.rename(columns=columns)
    table.to_csv(tmp_path / "c.csv", index=False)
    store = tmp_path / store
    code, out, err = skrbal(
        "agent", "init", "--store", store, "--process", process_file, "--data",
        tmp_path / "c.csv", *options,
    )  # fmt: skip
    assert code == 0, err
    return store, out


# ---------------------------------------------------------------------- #
# durations on a step clock
# ---------------------------------------------------------------------- #
def test_a_duration_with_a_unit_is_refused_on_a_step_clock(tmp_path):
    """'--min-gap 2w' without times was silently 1,209,600 steps."""
    init = ["agent", "init", "--case", "z24", "--rate", 0.05]
    code, _, err = skrbal(*init, "--store", tmp_path / "a.db", "--min-gap", "2w")
    line = one_line(err)
    assert code == 2 and "--min-gap 2w: the agent has no time column" in line
    assert "1,209,600 steps" in line
    code, _, err = skrbal(*init, "--store", tmp_path / "b.db", "--min-gap", 24)
    assert code == 0, err
    code, _, err = skrbal(
        "agent", "init", "--case", "z24", "--store", tmp_path / "c.db", "--paced",
        20, "--period", "30d",
    )  # fmt: skip
    assert code == 2 and "--period 30d: the agent has no time column" in err


# ---------------------------------------------------------------------- #
# 9: the agent keeps its time column
# ---------------------------------------------------------------------- #
def test_observe_reads_the_time_column_the_agent_was_commissioned_with(
    tmp_path, process_file
):
    """#28.9: every cron line repeated --time-column."""
    store, _ = commissioned(
        tmp_path, process_file, "--time-column", "measured_at", time="measured_at"
    )
    later = measurements(3, start="1997-11-14").rename(columns={"time": "measured_at"})
    later.to_csv(tmp_path / "later.csv", index=False)
    code, out, err = skrbal(
        "agent", "observe", tmp_path / "later.csv", "--store", store
    )
    assert code == 0, err
    decided = pd.read_csv(pd.io.common.StringIO(out))
    assert decided["timestamp"].tolist() == later["measured_at"].tolist()
    # The message names the column the agent reads.
    later.rename(columns={"measured_at": "when"}).to_csv(
        tmp_path / "w.csv", index=False
    )
    code, _, err = skrbal("agent", "observe", tmp_path / "w.csv", "--store", store)
    assert code == 2 and "it reads them from column 'measured_at'" in one_line(err)


# ---------------------------------------------------------------------- #
# 19: times come back as given
# ---------------------------------------------------------------------- #
def test_times_given_with_z_come_back_with_z_everywhere(tmp_path, process_file):
    """#28.19: '...Z' came back '+00:00' from observe and export."""
    store, _ = commissioned(tmp_path, process_file)
    later = measurements(2, start="1997-11-14")
    later.to_csv(tmp_path / "later.csv", index=False)
    code, out, err = skrbal(
        "agent", "observe", tmp_path / "later.csv", "--store", store
    )
    assert code == 0, err
    assert out.count("T00:00:00Z,") == 1 and "+00:00" not in out
    code, out, err = skrbal("agent", "export", "--store", store, "--out", "-")
    assert code == 0, err
    history = pd.read_csv(pd.io.common.StringIO(out))
    assert history["timestamp"].str.endswith("Z").all()
    assert history["timestamp"].iloc[0] == "1997-11-11T00:00:00Z"


@pytest.mark.filterwarnings("ignore::skrbal.exceptions.UncommissionedStatesWarning")
def test_observe_from_python_returns_datetimes_and_action_names():
    """#28.19: pandas datetimes came back as epoch seconds, and no action name."""
    from sklearn.naive_bayes import GaussianNB

    from skrbal import DecisionProcess
    from skrbal.online import RiskBasedAgent

    table = measurements(12)
    X, times = table[["f1", "f2", "f3", "f4"]], pd.to_datetime(table["time"])
    process = DecisionProcess.from_dict(hand_typed_process())
    with RiskBasedAgent(estimator=GaussianNB(), process=process).fit(
        X.iloc[:8], ["healthy"] * 4 + ["damaged"] * 4, timestamps=times.iloc[:8]
    ) as agent:
        decided = agent.observe(X.iloc[8:], timestamps=times.iloc[8:])
        assert decided["timestamp"].tolist() == times.iloc[8:].tolist()
        assert str(decided["timestamp"].dt.tz) == "UTC"
        names = np.array(["do nothing", "repair"], dtype=object)
        assert decided["action_name"].tolist() == names[decided["action"]].tolist()
        assert decided.columns.get_loc("action_name") == len(decided.columns) - 1
        naive = pd.Series(pd.date_range("1997-11-11T12:00", periods=2, freq="h"))
        decided = agent.observe(X.iloc[:2], timestamps=naive)
        assert decided["timestamp"].tolist() == naive.tolist()
        assert decided["timestamp"].dt.tz is None


# ---------------------------------------------------------------------- #
# 21: a sensor dropout can be skipped
# ---------------------------------------------------------------------- #
def test_skip_missing_skips_a_dropout_row_and_names_it(tmp_path, process_file):
    """#28.21: a missing value stopped the batch; nothing could skip it."""
    store, _ = commissioned(tmp_path, process_file)
    later = measurements(5, start="1997-11-14")
    later[["f2", "f3"]] = later[["f2", "f3"]].astype(object)
    later.loc[1, "f2"], later.loc[3, "f3"] = "", "NaN"
    later.to_csv(tmp_path / "later.csv", index=False)
    observe = ["agent", "observe", tmp_path / "later.csv"]
    code, _, err = skrbal(*observe, "--store", store)
    assert code == 2 and "line 3" in one_line(err)  # without the option: stops
    other, _ = commissioned(tmp_path, process_file, store="b.db")
    code, out, err = skrbal(*observe, "--store", other, "--skip-missing")
    assert code == 0, err
    decided = pd.read_csv(pd.io.common.StringIO(out))
    assert decided["timestamp"].tolist() == later["time"].iloc[[0, 2, 4]].tolist()
    assert decided["step"].tolist() == [60, 61, 62]
    name = tmp_path / "later.csv"
    assert err.splitlines() == [
        f"skrbal: {name} line 3 skipped (--skip-missing): no value in column "
        "'f2'; not observed, no step; recorded in the store",
        f"skrbal: {name} line 5 skipped (--skip-missing): no value in column "
        "'f3'; not observed, no step; recorded in the store",
    ]


def _dropouts(tmp_path, n=9):
    """A feed whose lines 3, 6 and 10 (rows 1, 4 and the last) miss a value."""
    later = measurements(n, start="1997-11-14")
    later[["f2", "f3"]] = later[["f2", "f3"]].astype(object)
    later.loc[1, "f2"], later.loc[4, "f3"], later.loc[n - 1, "f2"] = "", "NaN", ""
    later.to_csv(tmp_path / "later.csv", index=False)
    return later


def _logged(store):
    """The store's events as export gives them, less the writing times."""
    code, out, err = skrbal("agent", "export", "--store", store, "--table",
                            "events", "--out", "-")  # fmt: skip
    assert code == 0, err
    return pd.read_csv(pd.io.common.StringIO(out)).drop(columns="created_at")


def test_skipped_rows_are_recorded_with_their_batch_and_verified(
    tmp_path, process_file
):
    """#28.21: skipped rows were named on stderr but not recorded in the store."""
    store, _ = commissioned(tmp_path, process_file)
    later = _dropouts(tmp_path)
    code, _, err = skrbal("agent", "observe", tmp_path / "later.csv", "--store",
                          store, "--skip-missing")  # fmt: skip
    assert code == 0, err
    assert all(line.endswith("; recorded in the store") for line in err.splitlines())
    code, out, err = skrbal("agent", "status", "--store", store, "--json")
    assert code == 0, err
    assert json.loads(out)["n_skipped"] == 3
    code, out, _ = skrbal("agent", "status", "--store", store)
    assert "  n_skipped: 3 (rows without a value, not observed)" in out.splitlines()
    events = _logged(store)
    observed = events[events["kind"] == "observe"]
    payloads = [json.loads(p) for p in observed["payload"]]
    assert [row for p in payloads for row in p.get("skipped", ())] == [
        {"row": 3, "columns": ["f2"], "time": later["time"][1]},
        {"row": 6, "columns": ["f3"], "time": later["time"][4]},
        {"row": 10, "columns": ["f2"], "time": later["time"][8]},
    ]
    code, out, err = skrbal("agent", "verify", "--store", store)
    assert code == 0, err + out


def test_a_resumed_run_with_skipped_rows_equals_an_uninterrupted_one(
    tmp_path, process_file
):
    """#28.21: recorded skipped rows survive an interruption and a keyed resume."""
    _dropouts(tmp_path)
    whole, _ = commissioned(tmp_path, process_file, store="whole.db")
    cut, _ = commissioned(tmp_path, process_file, store="cut.db")
    run = ["--skip-missing", "--key", "feed-1", "--batch-size", 2]
    full = pd.read_csv(tmp_path / "later.csv", dtype=str, keep_default_na=False)
    full.iloc[:3].to_csv(tmp_path / "first.csv", index=False)  # stopped early
    for store, files in ((whole, ["later.csv"]), (cut, ["first.csv", "later.csv"])):
        for name in files:
            code, _, err = skrbal("agent", "observe", tmp_path / name, "--store",
                                  store, *run)  # fmt: skip
            assert code == 0, err
    # Line 10 comes after the last batch (of two rows): recorded alone.
    assert err.splitlines()[-1].endswith("; recorded in the store")
    for store in (whole, cut):
        code, out, err = skrbal("agent", "verify", "--store", store)
        assert code == 0, err + out
    # The commission events differ only by the agents' creation times.
    after = [
        _logged(s).iloc[1:].drop(columns="hash", errors="ignore") for s in (whole, cut)
    ]
    pd.testing.assert_frame_equal(*after)
    statuses = [
        json.loads(skrbal("agent", "status", "--store", s, "--json")[1])
        for s in (whole, cut)
    ]
    assert statuses[0] == statuses[1] and statuses[0]["n_skipped"] == 3
    skipped = _logged(whole).iloc[-1]
    assert skipped["kind"] == "skip" and json.loads(skipped["payload"]) == {
        "skipped": [{"row": 10, "columns": ["f2"], "time": full["time"][8]}]
    }


# ---------------------------------------------------------------------- #
# 22: commissioning rows carry their beliefs
# ---------------------------------------------------------------------- #
def test_exported_commissioning_rows_carry_their_beliefs(tmp_path, process_file):
    """#28.22: the commissioning rows' belief columns were empty."""
    from skrbal import DecisionProcess

    store, _ = commissioned(tmp_path, process_file, n=40, n_labelled=30)
    code, out, err = skrbal("agent", "export", "--store", store, "--out", "-")
    assert code == 0, err
    history = pd.read_csv(pd.io.common.StringIO(out))
    beliefs = history[[f"belief_{s}" for s in STATES]].to_numpy()
    assert not np.isnan(beliefs).any()
    np.testing.assert_allclose(beliefs.sum(axis=1), 1.0)
    # The EVPI stored with each commissioning row is the one of its belief.
    process = DecisionProcess.from_dict(hand_typed_process())
    first = (history["kind"] == "commissioning").to_numpy()
    np.testing.assert_allclose(
        history["evpi"][first], process.evpi(beliefs[first]), rtol=1e-12, atol=1e-12
    )
    code, out, err = skrbal("agent", "verify", "--store", store)
    assert code == 0, err


def test_the_lock_file_beside_a_sqlite_store_is_documented(tmp_path, process_file):
    """#28.23: an unexplained 'a.db-lock' appeared beside the store."""
    from test_cli_first_week import ROOT

    commissioned(tmp_path, process_file, n=32, n_labelled=30)
    assert (tmp_path / "a.db-lock").exists()
    guide = (ROOT / "docs" / "user_guide" / "live_monitoring.rst").read_text()
    told = " ".join(guide.split())
    assert "Beside ``agents.db`` you will find ``agents.db-lock``" in told
    assert "It is created empty and may stay" in told


# ---------------------------------------------------------------------- #
# 12: the same file observed twice
# ---------------------------------------------------------------------- #
def test_observing_the_same_rows_twice_warns_for_an_agent_without_times(
    tmp_path, process_file
):
    """#28.12: a file observed twice was decided twice without a word."""
    table = measurements(40).drop(columns="time")
    table["label"] = ["healthy"] * 30 + [""] * 10
    table.to_csv(tmp_path / "c.csv", index=False)
    store = tmp_path / "a.db"
    code, _, err = skrbal("agent", "init", "--store", store, "--process",
                          process_file, "--data", tmp_path / "c.csv")  # fmt: skip
    assert code == 0, err
    feed = measurements(8, seed=3).drop(columns="time")
    feed.to_csv(tmp_path / "feed.csv", index=False)
    observe = ["agent", "observe", tmp_path / "feed.csv", "--store", store]
    code, _, err = skrbal(*observe)
    assert code == 0 and err == "", err
    code, out, err = skrbal(*observe)
    assert code == 0
    assert err == (
        "skrbal: warning: RepeatedBatchWarning: agent 'agent': lines 2 to 9 of "
        f"{tmp_path / 'feed.csv'} repeat the agent's last 8 observations (steps "
        "40 to 47) exactly; they are decided again as new steps (was the same "
        "batch observed twice?)\n"
    )
    assert len(pd.read_csv(pd.io.common.StringIO(out))) == 8
    feed.iloc[:-1].to_csv(tmp_path / "other.csv", index=False)  # not a repeat
    code, _, err = skrbal("agent", "observe", tmp_path / "other.csv", "--store", store)
    assert code == 0 and err == "", err


# ---------------------------------------------------------------------- #
# 15: the expiry speaks the agent's time
# ---------------------------------------------------------------------- #
def test_request_expired_warning_speaks_in_dates_and_days():
    """#28.15: 'waited 2592000s or more' for a request of a dated agent."""
    from sklearn.naive_bayes import GaussianNB

    from skrbal import synthetic_decision_process
    from skrbal.exceptions import RequestExpiredWarning
    from skrbal.online import RiskBasedAgent

    process = synthetic_decision_process().set_params(inspection_cost=1.0)
    day = pd.Timestamp("1997-11-11", tz="UTC")
    times = [day + pd.Timedelta(hours=h) for h in range(8)]
    agent = RiskBasedAgent(
        estimator=GaussianNB(var_smoothing=0.05),
        process=process,
        request_timeout=30 * 86400.0,
    )
    agent.fit([[-5.0], [-0.7], [5.8], [19.0]] * 2, [1, 2, 3, 4] * 2, timestamps=times)
    with agent:
        asked = agent.observe([[12.5]], timestamps=[day + pd.Timedelta(days=1)])
        assert asked["inspect"].tolist() == [True]
        with pytest.warns(RequestExpiredWarning) as caught:
            agent.observe([[-5.0]], timestamps=[day + pd.Timedelta(days=40)])
    message = str(caught[0].message)
    assert "request(s) 1 (step 8, at 1997-11-12T00:00:00Z) waited 30 days" in message
    assert "to 1997-12-21T00:00:00Z" in message and "2592000" not in message


# ---------------------------------------------------------------------- #
# 7: one rule for a cancelled request's cost, on resume, on both backends
# ---------------------------------------------------------------------- #
@pytest.mark.filterwarnings("ignore::skrbal.exceptions.UncommissionedStatesWarning")
def test_a_cancel_keeps_its_charge_in_every_view_and_after_a_resume(
    store_url, tmp_path
):
    """#28.7: the rule (a cancelled request stays charged: the budget's own
    figure everywhere) holds after the agent is resumed from either backend."""
    import re

    from skrbal import BayesianGMMClassifier, DecisionProcess
    from skrbal.budget import PacedBudget
    from skrbal.online import RiskBasedAgent

    table = measurements(60)
    X, times = table[["f1", "f2", "f3", "f4"]], table["time"]
    process = DecisionProcess.from_dict(hand_typed_process())
    origin = pd.Timestamp("1997-11-11", tz="UTC").timestamp()
    agent = RiskBasedAgent(
        estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
        process=process,
        budget=PacedBudget(limit=20.0, period=30 * 86400.0, origin=origin),
        store=store_url,
        name="bridge",
    ).commission(X, ["healthy"] * 30 + [None] * 30, timestamps=times)
    with agent:
        first = agent.status()["open_requests"][0]["request_id"]
        before = agent.status()["budget_state"]
        agent.cancel_request(first, reason="not needed")
        after = agent.status()["budget_state"]
    assert after == before  # the cost stays charged: the budget's own figure
    assert before["spent"] >= 5.0  # a request was charged
    with RiskBasedAgent.from_store(store_url, "bridge") as resumed:
        assert resumed.status()["budget_state"] == before
    code, out, err = skrbal("agent", "status", "--store", store_url, "--agent",
                            "bridge")  # fmt: skip
    assert code == 0, err
    spent = re.search(r"this period \(.*?\): (\S+) of 20 spent", out)
    assert float(spent[1]) == before["spent"] >= 5.0
    code, page, err = skrbal("agent", "report", "--store", store_url, "--out", "-")
    assert code == 0, err
    assert f"{spent[1]} of 20 spent" in page and "cancelled" in page


def test_carried_over_money_is_not_shown_as_overspend():
    """#28.7: a paced budget spending what earlier periods left showed red."""
    from skrbal.cli._report import _period_money

    table = pd.DataFrame(
        {"period": [4, 5, 6], "charged": [0.0, 30.0, 15.0], "limit": 20.0}
    )
    paced = {"__estimator__": "skrbal.budget.PacedBudget",
             "params": {"limit": 20.0, "period": 30.0}}  # fmt: skip
    money = _period_money(table, paced, {"first_period": 4})
    np.testing.assert_array_equal(money, [20.0, 40.0, 30.0])
    capped = {"__estimator__": "skrbal.budget.SpendCap",
              "params": {"limit": 20.0, "period": 30.0}}  # fmt: skip
    np.testing.assert_array_equal(_period_money(table, capped, {}), [20.0] * 3)
    no_carry = {**paced, "params": {**paced["params"], "carry_over": False}}
    np.testing.assert_array_equal(
        _period_money(table, no_carry, {"first_period": 4}), [20.0] * 3
    )


# ---------------------------------------------------------------------- #
# 24: a suite without a browser says so at its end
# ---------------------------------------------------------------------- #
def test_a_suite_without_a_browser_says_so_in_its_summary(tmp_path):
    """#28.24: the report's browser test was skipped silently."""
    import os
    import subprocess
    import sys

    from test_cli_first_week import ROOT

    bare = tmp_path / "bin"
    bare.mkdir()  # a PATH without chromium
    # The report test's own check, under the suite's conftest.
    (tmp_path / "test_browser.py").write_text(
        "from test_agent_report import _browser_or_skip\n\n\n"
        "def test_page():\n    _browser_or_skip()\n"
    )
    env = {
        **os.environ,
        "PATH": str(bare),
        "SKRBAL_REQUIRE_BROWSER": "",
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p",
         "no:cacheprovider", "-q", "--rootdir", tmp_path, "test_browser.py"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert "1 skipped" in done.stdout, done.stdout + done.stderr
    assert "the report page was NOT checked in a browser" in done.stdout


# ---------------------------------------------------------------------- #
# 16: the report answers the engineer's first questions
# ---------------------------------------------------------------------- #
def test_the_report_opens_on_the_belief_action_budget_and_overdue_now(
    tmp_path, process_file
):
    """#28.16: the page did not say what the agent believes and recommends now,
    how much money is left, nor why each request was asked."""
    import re

    store, _ = commissioned(tmp_path, process_file, "--paced", 20, "--period", "30d")
    code, page, err = skrbal("agent", "report", "--store", store, "--out", "-")
    assert code == 0, err
    top = page[page.index("<h2>Agent agent</h2>") :].split("<h3>Status</h3>")[0]
    now = re.search(
        r"belief now \(step 59, 1997-11-13T11:00:00Z\)</th><td>healthy (\S+), "
        r"damaged (\S+), severe (\S+)</td>",
        top,
    )
    assert now, top
    assert sum(float(now[i]) for i in (1, 2, 3)) == pytest.approx(1.0, abs=0.02)
    assert re.search(r"recommended action now</th><td><strong>(do nothing|repair)", top)
    assert "budget left</th><td>" in top and "of 20 spent" in top
    assert "overdue requests</th><td>none" in top
    # Each request: its value against the cost, and the belief it was asked on.
    assert "why asked (value vs cost)" in page and "belief then" in page
    assert re.search(r"<td>EVPI [0-9.]+ &gt; cost 5</td><td>healthy 0\.\d\d, ", page)


def test_a_long_timeline_draws_actions_as_shares_per_week_not_a_barcode():
    """#28.16: 4,000 hourly steps drew the action panel as a barcode."""
    import matplotlib

    matplotlib.use("Agg")
    from skrbal.cli._report_timeline import draw_action_shares
    from skrbal.plotting import AgentHistoryDisplay

    n = 4400
    rng = np.random.default_rng(0)
    actions = (rng.random(n) < 0.05).astype(int)  # scattered repairs
    actions[4000:] = 1  # then damage: repair throughout
    history = pd.DataFrame({
        "step": np.arange(n), "kind": "observation",
        "timestamp": 879206400.0 + 3600.0 * np.arange(n), "evpi": 1.0,
        "belief_1": 0.5, "belief_2": 0.5, "request_id": [1] + [None] * (n - 1),
        "request_status": ["cancelled"] + [None] * (n - 1), "label": None,
        "action": actions,
    })  # fmt: skip
    display = AgentHistoryDisplay.from_history(history)
    panel = display.axes_[2]
    assert draw_action_shares(display, panel)
    assert not panel.lines  # no step line of 4,400 switches
    bars = panel.patches
    assert 26 <= len(bars) <= 28  # one per week of 183 days
    heights = np.array([b.get_height() for b in bars])
    assert heights[-1] == 1.0 and heights[:20].max() < 0.2
    assert "steps per week" in panel.get_ylabel()
    # The cancelled marker is large and dark enough to be seen.
    cancelled = display.request_markers_["cancelled"]
    assert cancelled.get_sizes()[0] >= 60
    short = AgentHistoryDisplay.from_history(history.iloc[:500])
    assert not draw_action_shares(short, short.axes_[2])


def test_the_spend_panel_draws_each_periods_money_when_it_carries_over():
    """#28.7: the figure drew a carried-over spend above the flat limit."""
    import matplotlib

    matplotlib.use("Agg")
    from skrbal.budget import PacedBudget
    from skrbal.cli._report import _period_money
    from skrbal.cli._report_timeline import draw_period_money
    from skrbal.plotting import AgentHistoryDisplay

    n = 90
    history = pd.DataFrame({
        "step": np.arange(n), "kind": "observation", "timestamp": None,
        "evpi": 9.0, "belief_1": 0.5, "belief_2": 0.5,
        "request_id": [None] * 40 + [1, 2, 3, 4, 5] + [None] * 45,
        "request_status": [None] * 40 + ["done"] * 5 + [None] * 45,
        "label": None, "action": 0,
    })  # fmt: skip
    budget = PacedBudget(limit=2.0, period=30.0)
    display = AgentHistoryDisplay.from_history(history, budget=budget)
    display.requests["cost"] = 1.0
    table = display.spend_by_period()
    paced = {"__estimator__": "skrbal.budget.PacedBudget",
             "params": {"limit": 2.0, "period": 30.0}}  # fmt: skip
    money = _period_money(table, paced, {"first_period": 0})
    np.testing.assert_array_equal(money, [2.0, 4.0, 1.0])  # 5 spent in period 1
    assert draw_period_money(display, display.axes_[3], table, money)
    assert len(display.limit_line_.get_segments()) == 3
    flat = AgentHistoryDisplay.from_history(history, budget=budget)
    assert not draw_period_money(flat, flat.axes_[3], table, table["limit"].to_numpy())
