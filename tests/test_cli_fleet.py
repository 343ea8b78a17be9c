"""``skrbal fleet``: init, observe, status and report from the shell."""

import json
import os

import pandas as pd
import pytest

from skrbal import z24_decision_process
from skrbal.cli import main
from skrbal.datasets import make_fleet


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """A fleet campaign: 40 labelled rows per asset, then 48 to observe
    across the damage onsets of two of them (hours 331 and 332)."""
    folder = tmp_path_factory.mktemp("fleet")
    frame = make_fleet(3, n_samples=400, random_state=0).frame
    hour = frame.groupby("asset").cumcount()
    first = frame[hour < 40]
    later = frame[(hour >= 310) & (hour < 358)]
    first.drop(columns=["action"]).to_csv(folder / "commission.csv", index=False)
    later.drop(columns=["action", "label"]).to_csv(folder / "feed.csv", index=False)
    z24_decision_process().to_json(folder / "process.json")
    return folder


def _init(campaign, store, capsys):
    status = main(
        [
            "fleet",
            "init",
            "--store",
            store,
            "--process",
            campaign / "process.json",
            "--data",
            campaign / "commission.csv",
            "--limit",
            "90",
            "--period",
            "1w",
            "--method",
            "gmm-evpi",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def test_init_observe_status_report(campaign, tmp_path, capsys):
    store = str(tmp_path / "fleet.db")
    out = _init(campaign, store, capsys)
    assert "3 agents commissioned" in out
    decisions = tmp_path / "decisions.csv"
    assert (
        main(
            [
                "fleet",
                "observe",
                "--store",
                store,
                "--data",
                campaign / "feed.csv",
                "--out",
                decisions,
            ]
        )
        == 0
    )
    frame = pd.read_csv(decisions)
    assert len(frame) == 3 * 48 and frame["asset"].nunique() == 3
    assert main(["fleet", "status", "--store", store, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert len(status["structures"]) == 3
    assert all(v <= 90.0 for v in status["budget"]["spent"].values())
    assert status["budget"]["n_draws"] == 3
    inspected = int(frame["inspect"].sum())
    assert sum(s["n_open"] for s in status["structures"]) == inspected
    asked = frame[frame["inspect"]].iloc[0]
    assert (
        main(
            [
                "fleet",
                "inspect",
                "--store",
                store,
                asked["asset"],
                str(int(asked["request_id"])),
                "1",
            ]
        )
        == 0
    )
    assert "state 1 (normal) recorded; optimal action" in capsys.readouterr().out
    assert main(["fleet", "status", "--store", store, "--json"]) == 0
    after = json.loads(capsys.readouterr().out)["structures"]
    assert sum(s["n_inspected"] for s in after) == 1
    assert main(["fleet", "status", "--store", store]) == 0
    # the period in the agents' words, not as seconds (was "period of 604800")
    assert "fleet budget 'fleet': 90 per 1 week;" in capsys.readouterr().out
    page = tmp_path / "fleet.html"
    assert main(["fleet", "report", "--store", store, "--out", page]) == 0
    text = page.read_text()
    assert text.count("<tr><td>S0") == 3
    assert "one budget of 90 per 1 week," in text


def test_make_fleets_time_is_read_as_its_cadence(campaign, tmp_path, capsys):
    """make_fleet's time column is seconds, as the CLI reads numbers: its rows
    are 2 hours apart, so a week's period is 84 of them (the column counted
    hours, which the CLI took for seconds: 168 "seconds" were 84 rows, and
    --period 1w covered 7 months of rows)."""
    store = str(tmp_path / "fleet.db")
    _init(campaign, store, capsys)
    main(["fleet", "observe", "--store", store, "--data", campaign / "feed.csv"])
    capsys.readouterr()
    assert main(["fleet", "status", "--store", store, "--json"]) == 0
    budget = json.loads(capsys.readouterr().out)["budget"]
    feed = pd.read_csv(campaign / "feed.csv")
    assert budget["period"] == 7 * 86400.0
    # rows 310..357 of each asset: hours 620..714, in weeks 3 and 4
    assert budget["clock"] == feed["time"].max() == 357 * 7200.0
    periods = {int(k) for k in budget["spent"]}
    assert periods <= {int(t // (7 * 86400.0)) for t in feed["time"]} == {3, 4}


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["observe", "--data", "{feed_no_asset}"], "no asset column 'asset'"),
        (["observe", "--data", "{feed_unknown}"], "asset 'X9' has no agent"),
        (["status", "--budget-name", "other"], "no fleet budget 'other'"),
    ],
)
def test_errors_are_one_line_exit_2(campaign, tmp_path, capsys, argv, words):
    store = str(tmp_path / "fleet.db")
    _init(campaign, store, capsys)
    feed = pd.read_csv(campaign / "feed.csv")
    feed.drop(columns=["asset"]).to_csv(tmp_path / "no_asset.csv", index=False)
    feed.assign(asset="X9").to_csv(tmp_path / "unknown.csv", index=False)
    paths = {
        "feed_no_asset": tmp_path / "no_asset.csv",
        "feed_unknown": tmp_path / "unknown.csv",
    }
    argv = [a.format(**paths) for a in argv]
    assert main(["fleet", argv[0], "--store", store, *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_status_of_a_store_without_a_fleet_writes_nothing(tmp_path, capsys):
    import sqlalchemy

    from skrbal.online import AgentStore

    path = tmp_path / "agents.db"
    AgentStore(path).close()
    assert main(["fleet", "status", "--store", path]) == 2
    assert "no fleet budget 'fleet'" in capsys.readouterr().err
    tables = sqlalchemy.inspect(sqlalchemy.create_engine(f"sqlite:///{path}"))
    assert not [t for t in tables.get_table_names() if "fleet" in t]


def test_a_limit_below_one_inspection_is_refused(campaign, tmp_path, capsys):
    argv = [
        "fleet",
        "init",
        "--store",
        tmp_path / "f.db",
        "--process",
        campaign / "process.json",
        "--data",
        campaign / "commission.csv",
        "--limit",
        "3",
        "--period",
        "1w",
    ]
    assert main(argv) == 2
    assert "--limit 3 is below the cost of one inspection, 30" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "f.db").exists()


def test_the_report_in_a_headless_browser(campaign, tmp_path, capsys):
    from test_agent_report import CHROMIUM_FLAGS, _browser_or_skip, _ink

    chromium, chromedriver = _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    store = str(tmp_path / "fleet.db")
    _init(campaign, store, capsys)
    assert (
        main(
            [
                "fleet",
                "observe",
                "--store",
                store,
                "--data",
                campaign / "feed.csv",
                "--out",
                os.devnull,
            ]
        )
        == 0
    )
    page = tmp_path / "fleet.html"
    assert main(["fleet", "report", "--store", store, "--out", page]) == 0
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(
        service=Service(executable_path=chromedriver), options=options
    )
    try:
        browser.get(page.as_uri())
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
        rows = browser.find_elements(By.CSS_SELECTOR, "#structures tbody tr")
        assert [r.find_element(By.TAG_NAME, "td").text for r in rows] == [
            "S01",
            "S02",
            "S03",
        ]
        cells = rows[0].find_elements(By.TAG_NAME, "td")
        assert len(cells) == 8
        assert cells[2].text in z24_decision_process().action_names
        assert _ink(browser.get_screenshot_as_png())[0] > 0.01
    finally:
        browser.quit()


def test_one_draw_is_said_in_the_singular(campaign, tmp_path, capsys):
    # Status and report said "1 draws" after one asset's feed.
    store = str(tmp_path / "fleet.db")
    _init(campaign, store, capsys)
    feed = pd.read_csv(campaign / "feed.csv")
    one = tmp_path / "one.csv"
    feed[feed["asset"] == feed["asset"].iloc[0]].to_csv(one, index=False)
    argv = ["fleet", "observe", "--store", store, "--data", one, "--out", "-"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["fleet", "status", "--store", store]) == 0
    assert "; 1 draw\n" in capsys.readouterr().out
    page = tmp_path / "fleet.html"
    assert main(["fleet", "report", "--store", store, "--out", page]) == 0
    assert ", 1 draw.</p>" in page.read_text()
