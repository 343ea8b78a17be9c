"""``skrbal agent report``: one self-contained HTML page about a store's agents."""

import base64
import hashlib
import html
import os
import re
import stat
import warnings
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from _agent_stores import grow_agent, stream
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.budget import CostThreshold, SpendCap
from skrbal.cli import main
from skrbal.exceptions import PriorScaleWarning
from skrbal.mixture import BayesianGMMClassifier
from skrbal.online import AgentStore, RiskBasedAgent

pytest.importorskip("matplotlib")

HOSTILE = '<script>alert("agent")</script>'


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("skrbal: "), err
    return lines[0]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    """Two agents with every kind of request, one named like a script, and a
    third whose commissioning fit logged a warning."""
    path = str(tmp_path_factory.mktemp("report") / "agents.db")
    grow_agent(path, HOSTILE)
    grow_agent(path, "bridge <7> & co", dates=False)
    X, y = stream(20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PriorScaleWarning)
        with RiskBasedAgent(
            estimator=BayesianGMMClassifier(),
            process=synthetic_decision_process(),
            store=path,
            name="warned",
        ) as agent:
            agent.fit(100 * X[:8], y[:8]).observe(100 * X[8:])
    return path


class Page(HTMLParser):
    """What a browser would see: elements, their attributes and the text."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.text = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_one_page_for_every_agent_of_a_store(store_path, tmp_path, capsys):
    out = tmp_path / "report.html"
    code, printed, err = run(
        ["agent", "report", "--store", store_path, "--out", out], capsys
    )
    assert code == 0, err
    assert printed == f"wrote a report of 3 agents to {out}\n" and err == ""
    text = out.read_text()
    page = Page(text)
    # Self-contained: no script, no external address, images inline.
    tags = [tag for tag, _ in page.tags]
    assert "script" not in tags
    for tag, attrs in page.tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            assert value is None or value.startswith(("data:", "#")), (tag, attrs)
    images = [attrs["src"] for tag, attrs in page.tags if tag == "img"]
    assert len(images) == 3
    for src in images:
        png = base64.b64decode(src.removeprefix("data:image/png;base64,"))
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
    # Each agent has its section, its name escaped.
    words = " ".join(page.text)
    for name in (HOSTILE, "bridge <7> & co", "warned"):
        assert f"Agent {name}" in words
    assert HOSTILE not in text and html.escape(HOSTILE) in text
    assert "bridge <7>" not in text
    # The status of each, as status() gives it.
    store = AgentStore(store_path)
    status = store.status(HOSTILE)
    for needed in ("observations (steps)", "expired", "committed spend"):
        assert needed in words
    assert f"<td>{status['n_observations']}</td>" in text
    # Requests waiting, with their age at the last observation (dates: days
    # and hours; steps: steps), and the cancellation's reason escaped.
    last = store.history(HOSTILE)["timestamp"].max()
    age = last - status["open_requests"][0]["timestamp"]
    days, hours = int(age // 86400), int(age % 86400 // 3600)
    assert days > 0 and f"<td>{days} d {hours} h</td>" in text
    assert re.search(r"<td>\d+ steps</td>", text)
    assert "no &lt;access&gt; &amp; rain" in text
    # ISO times for the agent given dates.
    assert re.search(r"<td>2025-01-0\dT\d\d:00:00Z</td>", text)
    # Spend by period against the limit, and the stored warning.
    assert "Spend by period (SpendCap)" in words
    assert "PriorScaleWarning" in words
    store.close()


def test_one_agent_to_standard_output(store_path, capsys):
    code, out, err = run(
        ["agent", "report", "--store", store_path, "--agent", "warned", "--out", "-"],
        capsys,
    )
    assert code == 0 and err == ""
    assert out.startswith("<!DOCTYPE html>") and out.count("<section") == 1
    assert "wrote a report" not in out


def test_a_device_is_written_in_place_never_replaced(store_path, capsys):
    code, out, err = run(
        ["agent", "report", "--store", store_path, "--agent", "warned", "--out",
         os.devnull],
        capsys,
    )  # fmt: skip
    assert code == 0 and out == "" and err == ""
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_read_only_store_is_enough(store_path, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "read-only"
    folder.mkdir()
    copy = folder / "agents.db"
    copy.write_bytes(open(store_path, "rb").read())
    digest = hashlib.sha256(copy.read_bytes()).hexdigest()
    copy.chmod(0o444)
    folder.chmod(0o555)
    if os.geteuid() == 0:  # root writes anyway: make the store see a read-only file
        import skrbal.online._sql._database as store_module

        monkeypatch.setattr(store_module, "_writable", lambda path: False)
    try:
        code, _, err = run(
            ["agent", "report", "--store", copy, "--agent", "warned", "--out",
             tmp_path / "r.html"],
            capsys,
        )  # fmt: skip
    finally:
        folder.chmod(0o755)
    assert code == 0, err
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == digest
    if os.geteuid() != 0:  # root's read-only SQLite still makes its -shm file
        assert sorted(os.listdir(folder)) == ["agents.db"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--agent", "nobody"], "no agent named 'nobody'"),
        (["--store", "{tmp}/none.db"], "no such store"),
        (["--out", "{tmp}"], "is a directory"),
        (["--out", "{tmp}/no/such/folder/r.html"], "no folder"),
    ],
)
def test_errors_are_one_line_exit_2(store_path, tmp_path, capsys, argv, words):
    base = {"--store": store_path, "--out": str(tmp_path / "r.html")}
    argv = [a.format(tmp=tmp_path) for a in argv]
    for option, value in zip(argv[::2], argv[1::2]):
        base[option] = value
    full = ["agent", "report"]
    for option, value in base.items():
        full += [option, value]
    if "--agent" in argv:
        full += ["--agent", "nobody"]
    code, out, err = run(full, capsys)
    assert code == 2 and out == ""
    assert words in one_line_error(err)
    assert not (tmp_path / "r.html").exists()


def test_an_empty_store_is_a_user_error(tmp_path, capsys):
    AgentStore(tmp_path / "empty.db").close()
    code, _, err = run(
        ["agent", "report", "--store", tmp_path / "empty.db", "--out", "-"], capsys
    )
    assert code == 2 and "holds no agent" in one_line_error(err)


def test_the_timeline_figure_is_the_display(store_path, monkeypatch, capsys):
    """The page draws AgentHistoryDisplay, with the store's configuration."""
    from skrbal.plotting import AgentHistoryDisplay

    seen = []
    original = AgentHistoryDisplay.from_history.__func__

    def spy(cls, history, **kwargs):
        display = original(cls, history, **kwargs)
        seen.append((len(history), display))
        return display

    monkeypatch.setattr(AgentHistoryDisplay, "from_history", classmethod(spy))
    assert main(["agent", "report", "--store", store_path, "--agent", HOSTILE,
                 "--out", os.devnull]) == 0  # fmt: skip
    capsys.readouterr()
    [(n_rows, display)] = seen
    assert n_rows == 208 and display.time_axis == "datetime"
    assert display.budget["limit"] == 4.0
    assert np.isfinite(display.evpi).all()
    assert isinstance(display.requests, pd.DataFrame)


# ---------------------------------------------------------------------- #
# in a real browser: Debian's chromium and chromedriver, through selenium
# ---------------------------------------------------------------------- #
# As /work/.library's machine notes and CI start chromium: headless, as root
# (no sandbox), with nothing that would reach the network on its own.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,2000",
)


def _browser_or_skip():
    """``(chromium, chromedriver)``; skip without them, or fail if required."""
    import shutil

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    found = {"chromium": chromium, "chromedriver": driver}
    missing = [name for name, path in found.items() if not path]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install 'skrbal[test]')")
    if missing:
        message = f"no {', '.join(missing)} (apt-get install chromium chromium-driver)"
        if os.environ.get("SKRBAL_REQUIRE_BROWSER", "") not in ("", "0"):
            pytest.fail(f"SKRBAL_REQUIRE_BROWSER is set but there is {message}")
        pytest.skip(message)
    return chromium, driver


def test_required_browser_fails_rather_than_skips(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("SKRBAL_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="no chromium, chromedriver"):
        _browser_or_skip()
    monkeypatch.setenv("SKRBAL_REQUIRE_BROWSER", "0")
    with pytest.raises(pytest.skip.Exception):
        _browser_or_skip()


def _ink(png: bytes) -> tuple[float, float]:
    """Share of pixels that are not white, and the spread of their values."""
    import io

    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png), format="png")[..., :3]
    return float((pixels < 0.95).any(axis=-1).mean()), float(pixels.std())


def test_the_page_in_a_headless_browser(store_path, tmp_path, capsys):
    """The report loads in chromium with no console error, shows every agent,
    and is not blank; the same checks catch a failing and a blank page."""
    chromium, chromedriver = _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    page = tmp_path / "report.html"
    assert main(["agent", "report", "--store", store_path, "--out", page]) == 0
    capsys.readouterr()
    broken = tmp_path / "broken.html"
    broken.write_text('<!DOCTYPE html><img src="http://127.0.0.1:9/x.png">')
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><title>blank</title>")

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
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
        titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "h2")]
        names = AgentStore(store_path).agent_names()
        assert titles == [f"Agent {name}" for name in names] and len(names) == 3
        images = browser.find_elements(By.TAG_NAME, "img")
        assert len(images) == 3
        assert all(int(i.get_property("naturalWidth")) > 500 for i in images)
        non_white, spread = _ink(browser.get_screenshot_as_png())
        assert non_white > 0.05 and spread > 0.05, (non_white, spread)
        # The checks can fail: a page that fetches, a page with nothing on it.
        browser.get(broken.as_uri())
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        browser.get(blank.as_uri())
        assert _ink(browser.get_screenshot_as_png())[0] < 0.01
    finally:
        browser.quit()


def test_an_agent_just_commissioned(tmp_path, capsys):
    """Nothing observed yet: the page says so rather than failing."""
    X, y = stream(8)
    path = tmp_path / "new.db"
    RiskBasedAgent(
        estimator=GaussianNB(),
        process=synthetic_decision_process(),
        budget=CostThreshold() & SpendCap(limit=21.0, period=7),
        store=str(path),
        name="fresh",
    ).fit(X, y).close()
    code, out, err = run(["agent", "report", "--store", path, "--out", "-"], capsys)
    assert code == 0, err
    assert "Agent fresh" in out and "<td>0</td>" in out and "None.</p>" in out


def test_the_report_on_each_backend(store_url, tmp_path, capsys):
    grow_agent(store_url, "bridge", n=100)
    code, out, err = run(["agent", "report", "--store", store_url, "--out", "-"],
                         capsys)  # fmt: skip
    assert code == 0, err
    assert "Agent bridge" in out and "data:image/png;base64," in out


def test_without_matplotlib_the_page_has_no_figure_and_says_so(
    store_path, tmp_path, capsys, monkeypatch
):
    """#28.17: a plain install (no plot extra) failed to write any page."""
    import sys

    for name in [m for m in sys.modules if m.split(".")[0] == "matplotlib"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    page = tmp_path / "report.html"
    code, out, err = run(["agent", "report", "--store", store_path, "--out", page],
                         capsys)  # fmt: skip
    assert code == 0, err
    assert out.startswith("wrote a report of")
    note = err.splitlines()
    assert len(note) == 1 and note[0].startswith("skrbal: note: ")
    assert "pip install 'skrbal[plot]'" in note[0]
    text = page.read_text()
    assert "data:image/png" not in text and "Not drawn:" in text
    assert "Agent bridge" in text and "Spend by period" in text
