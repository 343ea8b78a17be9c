"""A bridge engineer's first week: the problems met commissioning on a real record.

Each test replays one of them through the real ``skrbal`` command, in a
subprocess, on files made as an engineer has them: raw natural frequencies in
Hz with ISO times, inspections labelled by name, a process typed by hand.
"""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli_runner import (
    FORKED,
    IN_PROCESS,
    run_forked,
    run_in_process,
)  # tests/ on sys.path

from skrbal.datasets import make_z24_like

ROOT = Path(__file__).resolve().parents[1]
STATES = ["healthy", "damaged", "severe"]


def skrbal(*argv, input=None, timeout=120):
    """The ``skrbal`` command in a subprocess: (exit status, stdout, stderr).

    A process forked from this one where the system forks (it starts with this
    process's imports), ``SKRBAL_TEST_CLI_SUBPROCESS=1`` for a new interpreter
    each time, in-process on the oldest versions (``tests/_cli_runner.py``
    says why).
    """
    if IN_PROCESS:
        return run_in_process(argv, input=input, cwd=ROOT)
    script = Path(sys.executable).with_name("skrbal")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "skrbal"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    if FORKED:
        return run_forked(argv, input=input, cwd=ROOT, env=env, timeout=timeout)
    done = subprocess.run(
        [*command, *map(str, argv)],
        input=input,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
    )
    return done.returncode, done.stdout, done.stderr


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("skrbal: "), err
    return lines[0]


def hand_typed_process(**changes) -> dict:
    """A three-state process as an engineer types it: states and actions named."""
    process = {
        "format_version": 1,
        "transition": [
            [[0.98, 0.02, 0.0], [0.0, 0.97, 0.03], [0.0, 0.0, 1.0]],
            [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
        ],
        "state_utility": [0.0, -60.0, -600.0],
        "action_utility": [0.0, -100.0],
        "inspection_cost": 5.0,
        "classes": STATES,
        "action_names": ["do nothing", "repair"],
    }
    process.update(changes)
    return {k: v for k, v in process.items() if v is not None}


def measurements(n: int, start="1997-11-11", seed=0) -> pd.DataFrame:
    """``n`` hourly rows of the four natural frequencies of a Z24-like bridge."""
    X, _, _ = make_z24_like(random_state=seed)
    table = pd.DataFrame(X[:n], columns=["f1", "f2", "f3", "f4"])
    times = pd.date_range(start, periods=n, freq="h", tz="UTC")
    table.insert(0, "time", times.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return table


@pytest.fixture
def process_file(tmp_path):
    path = tmp_path / "process.json"
    path.write_text(json.dumps(hand_typed_process(), indent=2))
    return path


# ---------------------------------------------------------------------- #
# 1, 2: commissioning from one file
# ---------------------------------------------------------------------- #
def test_one_file_commissioning_with_text_labels_and_blank_later_rows(
    tmp_path, process_file
):
    """#28.1: later blank labels were read as floats and refused."""
    table = measurements(60)
    table["label"] = ["healthy"] * 48 + [""] * 12
    table.to_csv(tmp_path / "campaign.csv", index=False)
    code, out, err = skrbal(
        "agent", "init", "--store", tmp_path / "a.db", "--process", process_file,
        "--data", tmp_path / "campaign.csv",
    )  # fmt: skip
    assert code == 0, err
    assert "48 labelled observations" in out
    code, out, err = skrbal("agent", "status", "--store", tmp_path / "a.db", "--json")
    assert code == 0, err
    status = json.loads(out)
    assert (status["n_commissioning"], status["n_observations"]) == (48, 12)


def test_commission_from_python_with_text_labels_then_none():
    """#28.1, from Python: ``['healthy'] * 48 + [None] * 12``."""
    from skrbal import BayesianGMMClassifier, DecisionProcess
    from skrbal.online import RiskBasedAgent

    X = measurements(60)[["f1", "f2", "f3", "f4"]].to_numpy()
    process = DecisionProcess.from_dict(hand_typed_process())
    estimator = BayesianGMMClassifier(mean_prior="data", covariance_prior="data")
    with RiskBasedAgent(estimator=estimator, process=process).commission(
        X, ["healthy"] * 48 + [None] * 12
    ) as agent:
        assert agent.n_steps_ == 60


def test_scattered_labels_commission_on_the_leading_row_with_a_prior_from_all(
    tmp_path, process_file
):
    """#28.2: labels on every 4th row failed in the mixture's 'data' prior."""
    from skrbal.online import RiskBasedAgent

    table = measurements(60)
    table["label"] = ["healthy" if i % 4 == 0 else "" for i in range(60)]
    table.to_csv(tmp_path / "campaign.csv", index=False)
    store = tmp_path / "a.db"
    code, out, err = skrbal(
        "agent", "init", "--store", store, "--process", process_file,
        "--data", tmp_path / "campaign.csv",
    )  # fmt: skip
    assert code == 0, err
    assert "(row 0 of " in out and "first without a label, row 1" in out
    assert "then observed the 59 later rows (rows 1 to 59)" in out
    with RiskBasedAgent.from_store(str(store), "agent") as agent:
        params = agent.estimator.get_params()
        features = table[["f1", "f2", "f3", "f4"]].to_numpy()
        np.testing.assert_allclose(params["mean_prior"], features.mean(axis=0))
        np.testing.assert_allclose(
            np.diag(params["covariance_prior"]), features.var(axis=0)
        )
        assert agent.status()["labelled"]["healthy"] == 15
    code, out, err = skrbal("agent", "verify", "--store", store)
    assert code == 0, err


# ---------------------------------------------------------------------- #
# 3: a process file states every value a user must decide
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "field", ["inspection_cost", "action_utility", "state_utility", "transition"]
)
def test_a_process_file_without_a_cost_utility_or_transition_is_refused(
    tmp_path, field
):
    """#28.3: a file without inspection_cost was taken as free inspections."""
    process = tmp_path / "process.json"
    process.write_text(json.dumps(hand_typed_process(**{field: None})))
    table = measurements(20)
    table["label"] = "healthy"
    table.to_csv(tmp_path / "campaign.csv", index=False)
    code, out, err = skrbal(
        "agent", "init", "--store", tmp_path / "a.db", "--process", process,
        "--data", tmp_path / "campaign.csv",
    )  # fmt: skip
    assert code == 2 and out == ""
    line = one_line(err)
    assert f"lacks the key(s) ['{field}']" in line and str(process) in line
    assert not (tmp_path / "a.db").exists()


# ---------------------------------------------------------------------- #
# 4: day-first dates
# ---------------------------------------------------------------------- #
def day_first(table: pd.DataFrame) -> pd.DataFrame:
    times = pd.to_datetime(table["time"])
    return table.assign(time=times.dt.strftime("%d/%m/%Y %H:%M"))


def test_day_first_dates_are_refused_with_the_row_or_read_by_date_format(
    tmp_path, process_file
):
    """#28.4: 01/02/1998 00:00 was stored as 2 January without a word."""
    table = day_first(measurements(30, start="1998-02-01"))
    table.iloc[:24].assign(label="healthy").to_csv(tmp_path / "c.csv", index=False)
    table.iloc[24:].to_csv(tmp_path / "new.csv", index=False)
    store = tmp_path / "a.db"
    init = ["agent", "init", "--store", store, "--process", process_file,
            "--data", tmp_path / "c.csv"]  # fmt: skip
    code, out, err = skrbal(*init)
    assert code == 2 and out == ""
    line = one_line(err)
    assert "row 0 (counted from 0; line 2 of the file)" in line
    assert "'01/02/1998 00:00'" in line and "--date-format" in line
    assert not store.exists()
    code, out, err = skrbal(*init, "--date-format", "%d/%m/%Y %H:%M")
    assert code == 0, err
    observe = ["agent", "observe", tmp_path / "new.csv", "--store", store]
    code, out, err = skrbal(*observe)
    assert code == 2 and "line 2 holds '02/02/1998 00:00'" in one_line(err)
    code, out, err = skrbal(*observe, "--date-format", "%d/%m/%Y %H:%M")
    assert code == 0, err
    decided = pd.read_csv(io.StringIO(out))
    assert decided["timestamp"].iloc[0].startswith("1998-02-02T00:00:00")
    code, out, err = skrbal("agent", "export", "--store", store, "--out", "-")
    history = pd.read_csv(io.StringIO(out))
    assert history["timestamp"].iloc[0].startswith("1998-02-01T00:00:00")


# ---------------------------------------------------------------------- #
# 5: naive times meet an agent commissioned with zoned ones
# ---------------------------------------------------------------------- #
def test_an_agent_commissioned_with_zoned_times_refuses_naive_ones(
    tmp_path, process_file
):
    """#28.5: naive local times were taken as UTC silently."""
    table = measurements(40)  # times end in Z
    labels = ["healthy"] * 30 + [""] * 4
    table.iloc[:34].assign(label=labels).to_csv(tmp_path / "c.csv", index=False)
    store = tmp_path / "a.db"
    code, out, err = skrbal(
        "agent", "init", "--store", store, "--process", process_file,
        "--data", tmp_path / "c.csv",
    )  # fmt: skip
    assert code == 0, err
    # One-file commissioning keeps the times as given: ISO, not seconds.
    code, out, err = skrbal("agent", "export", "--store", store, "--out", "-")
    assert pd.read_csv(io.StringIO(out))["timestamp"].iloc[-1].startswith("1997-")
    local = table.iloc[34:].assign(time=table["time"].iloc[34:].str.rstrip("Z"))
    local.to_csv(tmp_path / "local.csv", index=False)
    code, out, err = skrbal(
        "agent", "observe", tmp_path / "local.csv", "--store", store
    )
    assert code == 2 and out == ""
    line = one_line(err)
    assert "line 2" in line and "no UTC offset" in line and "Z for UTC" in line
    table.iloc[34:].to_csv(tmp_path / "zoned.csv", index=False)
    code, out, err = skrbal(
        "agent", "observe", tmp_path / "zoned.csv", "--store", store
    )
    assert code == 0, err
    assert len(pd.read_csv(io.StringIO(out))) == 6


# ---------------------------------------------------------------------- #
# 6: healthy-only commissioning
# ---------------------------------------------------------------------- #
def test_healthy_only_commissioning_warns_naming_the_states_everywhere(
    tmp_path, process_file
):
    """#28.6: init said nothing when states had no commissioning example."""
    table = measurements(30)
    labels = ["healthy"] * 26 + [""] * 4
    table.assign(label=labels).to_csv(tmp_path / "c.csv", index=False)
    store = tmp_path / "a.db"
    code, out, err = skrbal(
        "agent", "init", "--store", store, "--process", process_file,
        "--data", tmp_path / "c.csv",
    )  # fmt: skip
    assert code == 0, err
    assert "UncommissionedStatesWarning" in err
    assert "no commissioning example of state(s) damaged, severe" in err
    code, out, err = skrbal("agent", "export", "--store", store, "--table",
                            "events", "--out", "-")  # fmt: skip
    events = pd.read_csv(io.StringIO(out))
    commission = events.loc[events["kind"] == "commission", "payload"].iloc[0]
    assert "UncommissionedStatesWarning" in commission
    code, out, err = skrbal("agent", "status", "--store", store)
    assert code == 0, err
    assert "warning: no labelled example of state(s) damaged, severe" in out
    code, out, err = skrbal("agent", "report", "--store", store, "--out",
                            tmp_path / "r.html")  # fmt: skip
    assert code == 0, err
    page = (tmp_path / "r.html").read_text()
    assert "no labelled example of state(s) damaged, severe" in page
    # Once an inspection finds a state, status stops naming it.
    code, out, err = skrbal("agent", "status", "--store", store, "--json")
    waiting = [r["request_id"] for r in json.loads(out)["open_requests"]]
    if waiting:
        found = ("agent", "inspect", waiting[0], "damaged", "--store", store)
    else:
        found = ("agent", "record-label", 29, "damaged", "--store", store)
    code, out, err = skrbal(*found)
    assert code == 0, err
    code, out, err = skrbal("agent", "status", "--store", store)
    assert "warning: no labelled example of state(s) severe:" in out


# ---------------------------------------------------------------------- #
# 20: a spreadsheet's CSV
# ---------------------------------------------------------------------- #
def test_a_semicolon_or_decimal_comma_file_gets_a_hint_naming_it(
    tmp_path, process_file
):
    """#28.20: such a file was read as one column and refused obscurely."""
    table = measurements(20).assign(label="healthy")
    table.to_csv(tmp_path / "c.csv", sep=";", decimal=",", index=False)
    init = ["agent", "init", "--store", tmp_path / "a.db", "--process", process_file]
    code, _out, err = skrbal(*init, "--data", tmp_path / "c.csv")
    assert code == 2 and "separated by ';' (semicolon)" in one_line(err)
    table.iloc[:10].to_csv(tmp_path / "ok.csv", index=False)
    assert skrbal(*init, "--data", tmp_path / "ok.csv")[0] == 0
    new = table.iloc[10:].drop(columns="label")
    new.to_csv(tmp_path / "new.csv", sep=";", decimal=",", index=False)
    code, _, err = skrbal("agent", "observe", tmp_path / "new.csv", "--store",
                            tmp_path / "a.db")  # fmt: skip
    assert code == 2 and "separated by ';' (semicolon)" in one_line(err)
    # A comma-separated file with one decimal comma, quoted.
    table.iloc[:10].astype({"f2": object}).assign(
        f2=lambda t: [str(v).replace(".", ",") for v in t["f2"]]
    ).to_csv(tmp_path / "comma.csv", index=False)
    code, _, err = skrbal(*init[:3], tmp_path / "b.db", *init[4:], "--data",
                            tmp_path / "comma.csv")  # fmt: skip
    assert code == 2 and "(a decimal comma? write " in one_line(err)


# ---------------------------------------------------------------------- #
# 11: Ctrl-C
# ---------------------------------------------------------------------- #
def test_ctrl_c_in_a_large_observe_is_one_line_exit_130_and_resumes(
    tmp_path, process_file
):
    """#28.11: Ctrl-C printed a traceback from inside pandas or SQLAlchemy."""
    import signal

    table = measurements(3030)
    table.iloc[:30].assign(label="healthy").to_csv(tmp_path / "c.csv", index=False)
    table.iloc[30:].to_csv(tmp_path / "feed.csv", index=False)
    store = tmp_path / "a.db"
    code, _, err = skrbal("agent", "init", "--store", store, "--process",
                          process_file, "--data", tmp_path / "c.csv")  # fmt: skip
    assert code == 0, err
    script = Path(sys.executable).with_name("skrbal")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "skrbal"]
    observe = ["agent", "observe", str(tmp_path / "feed.csv"), "--store",
               str(store), "--key", "feed-1", "--batch-size", "100"]  # fmt: skip
    proc = subprocess.Popen(
        [*command, *observe],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"},
        # A shell's background job ignores SIGINT; a terminal's does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for _ in range(3):  # the header and decisions: observing has begun
            assert proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    line = one_line(err)
    assert "Traceback" not in err and line.startswith("skrbal: interrupted (Ctrl-C): ")
    assert "observation(s) of " in line and "up to step " in line
    assert " at 1997-" in line and "--key feed-1 to resume" in line
    code, out, err = skrbal(*observe)
    assert code == 0, err
    decided = pd.read_csv(io.StringIO(out))
    assert decided["step"].tolist() == list(range(30, 3030))
    code, out, _ = skrbal("agent", "status", "--store", store, "--json")
    assert json.loads(out)["n_observations"] == 3000


# ---------------------------------------------------------------------- #
# 10: time errors a user can resume from
# ---------------------------------------------------------------------- #
def test_a_time_going_back_is_named_by_date_line_and_the_agents_last_step(
    tmp_path, process_file
):
    """#28.10: 'timestamps must not go back in time: 879454800.0 comes after ...'."""
    table = measurements(40)
    table.iloc[:30].assign(label="healthy").to_csv(tmp_path / "c.csv", index=False)
    store = tmp_path / "a.db"
    code, _, err = skrbal("agent", "init", "--store", store, "--process",
                          process_file, "--data", tmp_path / "c.csv")  # fmt: skip
    assert code == 0, err
    table.iloc[30:35].to_csv(tmp_path / "first.csv", index=False)
    assert skrbal("agent", "observe", tmp_path / "first.csv", "--store", store)[0] == 0
    table.iloc[33:40].to_csv(tmp_path / "again.csv", index=False)
    code, _, err = skrbal("agent", "observe", tmp_path / "again.csv", "--store", store)
    assert code == 2
    line = one_line(err)
    assert "line 2 of " in line and "1997-11-12T09:00:00Z" in line
    assert "last observation, step 34 at 1997-11-12T10:00:00Z" in line
    assert "879" not in line  # no epoch seconds
    swapped = table.iloc[35:40].iloc[[0, 2, 1, 3, 4]]
    swapped.to_csv(tmp_path / "swapped.csv", index=False)
    code, _, err = skrbal("agent", "observe", tmp_path / "swapped.csv", "--store",
                          store)  # fmt: skip
    line = one_line(err)
    assert code == 2 and "line 4 of " in line and "is before line 3 of " in line
    assert "1997-11-12T12:00:00Z" in line and "879" not in line


# ---------------------------------------------------------------------- #
# 8, 18: the paced budget first, budgets in words, exhausted until when
# ---------------------------------------------------------------------- #
def test_init_help_recommends_the_paced_budget_first():
    """#28.8: the README's and help's first budget spent a month in hours."""
    code, out, _ = skrbal("agent", "init", "--help")
    assert code == 0
    assert out.index("--paced") < out.index("--spend-cap") < out.index("--rate")
    assert "recommended" in out[out.index("--paced MONEY  ") :][:200]
    readme = (ROOT / "README.md").read_text()
    assert "--paced 28 --period 30d" in readme and "--spend-cap 28" not in readme


def test_budgets_in_words_and_exhausted_until_a_date(tmp_path, process_file):
    """#28.8 and #28.18: budgets were reprs; nothing said when money returns."""
    table = measurements(60)
    labels = ["healthy"] * 30 + [""] * 30
    table.assign(label=labels).to_csv(tmp_path / "c.csv", index=False)
    store = tmp_path / "a.db"
    code, out, err = skrbal(
        "agent", "init", "--store", store, "--process", process_file, "--data",
        tmp_path / "c.csv", "--paced", 5, "--period", "30d",
    )  # fmt: skip
    assert code == 0, err
    words = "5 per 30 days from 1997-11-11T00:00Z, paced over each period"
    assert f"budget {words}" in out and "PacedBudget(" not in out
    code, out, err = skrbal("agent", "status", "--store", store)
    assert code == 0, err
    assert f"budget: {words}" in out and "budget_state" not in out
    period = "this period (1997-11-11T00:00Z to 1997-12-11T00:00Z): 5 of 5 spent"
    assert f"{period}; budget exhausted until 1997-12-11T00:00Z" in out
    code, out, err = skrbal("agent", "status", "--store", store, "--json")
    assert "budget_state" in json.loads(out)  # the machine form stays
    code, out, err = skrbal("agent", "report", "--store", store, "--out", "-")
    assert code == 0, err
    assert words in out and "budget exhausted until 1997-12-11T00:00Z" in out


# ---------------------------------------------------------------------- #
# 7: a cancel, the budget and the report agree
# ---------------------------------------------------------------------- #
def test_after_a_cancel_status_report_and_a_resume_count_the_same_money(
    tmp_path, process_file
):
    """#28.7: the budget kept a cancelled cost which the report's period dropped,
    so the report showed money left that the budget would not spend."""
    import re

    table = measurements(60)
    labels = ["healthy"] * 30 + [""] * 30
    table.assign(label=labels).to_csv(tmp_path / "c.csv", index=False)
    store = tmp_path / "a.db"
    code, _, err = skrbal("agent", "init", "--store", store, "--process",
                          process_file, "--data", tmp_path / "c.csv", "--paced",
                          20, "--period", "30d")  # fmt: skip
    assert code == 0, err
    code, out, _ = skrbal("agent", "status", "--store", store, "--json")
    first = json.loads(out)["open_requests"][0]["request_id"]
    code, out, err = skrbal("agent", "cancel", first, "--store", store)
    assert code == 0 and "stays charged to the budget" in out, err
    # Each command resumes the agent from its store: the same count in each.
    code, out, _ = skrbal("agent", "status", "--store", store)
    spent = re.search(r"this period \(.*?\): (\S+) of 20 spent", out)
    assert spent, out
    code, page, err = skrbal("agent", "report", "--store", store, "--out", "-")
    assert code == 0, err
    assert f"{spent[1]} of 20 spent" in page
    row = re.search(r"<tr>(<td[^>]*>[^<]*</td>){3}(.*?)</tr>", page.split(
        "Spend by period")[1])  # fmt: skip
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row[0])
    charged = float(cells[6])
    assert charged == float(spent[1]) and charged >= 5.0


# ---------------------------------------------------------------------- #
# 15: an unanswered request does not blind the agent for ever
# ---------------------------------------------------------------------- #
def test_requests_expire_by_default_and_overdue_ones_are_shown(tmp_path, process_file):
    """#28.15: by default a request waited for ever, and nothing showed it."""
    table = measurements(60)
    labels = ["healthy"] * 30 + [""] * 30
    table.assign(label=labels).to_csv(tmp_path / "c.csv", index=False)
    init = ["agent", "init", "--process", process_file, "--data", tmp_path / "c.csv"]
    store = tmp_path / "a.db"
    code, out, err = skrbal(*init, "--store", store, "--paced", 20, "--period", "14d")
    assert code == 0, err
    assert "a request without a result expires after 2 weeks" in out
    code, out, _ = skrbal(*init, "--store", tmp_path / "b.db")
    assert "expires after 30 days (--request-timeout)" in out
    code, out, _ = skrbal(*init, "--store", tmp_path / "c.db", "--request-timeout",
                          "none")  # fmt: skip
    assert "requests wait for their result without end" in out
    code, out, _ = skrbal("agent", "status", "--store", store, "--json")
    waiting = [r["request_id"] for r in json.loads(out)["open_requests"]]
    assert waiting
    later = measurements(3, start="1997-12-01")
    later.to_csv(tmp_path / "later.csv", index=False)
    code, _, err = skrbal("agent", "observe", tmp_path / "later.csv", "--store", store)
    assert code == 0, err
    code, out, err = skrbal("agent", "status", "--store", store)
    assert "request_timeout: 2 weeks" in out
    assert f"overdue request {waiting[0]}: step " in out
    code, out, err = skrbal("agent", "report", "--store", store, "--out", "-")
    assert code == 0 and "overdue (expired)" in out, err


# ---------------------------------------------------------------------- #
# 16 (in part): the page's title and state names
# ---------------------------------------------------------------------- #
def test_the_report_names_the_store_without_its_path_and_each_state_once(
    tmp_path, process_file
):
    """#28.16: the title held the store's absolute path; 'healthy (healthy)'."""
    process = hand_typed_process(state_names=STATES)
    (tmp_path / "named.json").write_text(json.dumps(process))
    table = measurements(40)
    labels = ["healthy"] * 30 + [""] * 10
    table.assign(label=labels).to_csv(tmp_path / "c.csv", index=False)
    store = tmp_path / "bridge.db"
    code, _, err = skrbal(
        "agent", "init", "--store", store, "--process", tmp_path / "named.json",
        "--data", tmp_path / "c.csv",
    )  # fmt: skip
    assert code == 0, err
    code, page, err = skrbal("agent", "report", "--store", store, "--out", "-")
    assert code == 0, err
    assert "<title>skrbal agents of store bridge.db</title>" in page
    assert str(tmp_path) not in page
    assert "healthy (healthy)" not in page and "healthy: 30" in page


# ---------------------------------------------------------------------- #
# 13: measurements and inspection results in two files
# ---------------------------------------------------------------------- #
def test_init_joins_a_separate_labels_file_by_time_or_row(tmp_path, process_file):
    """#28.13: init --data wanted one table; an engineer has two files."""
    table = measurements(60)
    table.to_csv(tmp_path / "m.csv", index=False)
    # Times spelt otherwise than in the measurements: the same instants.
    spelt = pd.to_datetime(table["time"].iloc[:30]).dt.strftime("%Y-%m-%d %H:%M+00:00")
    pd.DataFrame({"time": spelt, "state": "healthy"}).to_csv(
        tmp_path / "inspections.csv", index=False
    )
    init = ["agent", "init", "--process", process_file, "--data", tmp_path / "m.csv"]
    code, out, err = skrbal(*init, "--store", tmp_path / "a.db", "--labels",
                            tmp_path / "inspections.csv")  # fmt: skip
    assert code == 0, err
    assert "with 30 labelled observations" in out and "rows 30 to 59" in out
    pd.DataFrame({"row": [0, 1, 2], "state": "healthy"}).to_csv(
        tmp_path / "rows.csv", index=False
    )
    code, out, err = skrbal(*init, "--store", tmp_path / "b.db", "--labels",
                            tmp_path / "rows.csv")  # fmt: skip
    assert code == 0 and "with 3 labelled observations" in out, err
    pd.DataFrame({"time": ["1997-11-11T00:30Z"], "state": ["healthy"]}).to_csv(
        tmp_path / "off.csv", index=False
    )
    code, out, err = skrbal(*init, "--store", tmp_path / "c.db", "--labels",
                            tmp_path / "off.csv")  # fmt: skip
    line = one_line(err)
    assert code == 2 and "line 2 of the file) is dated 1997-11-11T00:30Z" in line
    assert "the time of no row of " in line
