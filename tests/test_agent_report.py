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

from skrbal import synthetic_decision_process
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
    assert re.search(r"<td>\d+ d \d+ h</td>", text)
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
        import skrbal.online._store as store_module

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
