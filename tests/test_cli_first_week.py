"""A bridge engineer's first week: the problems met commissioning on a real record.

Each test replays one of them through the real ``skrbal`` command, in a
subprocess, on files made as an engineer has them: raw natural frequencies in
Hz with ISO times, inspections labelled by name, a process typed by hand.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skrbal.datasets import make_z24_like

ROOT = Path(__file__).resolve().parents[1]
STATES = ["healthy", "damaged", "severe"]


def skrbal(*argv, input=None, timeout=120):
    """The ``skrbal`` command in a subprocess: (exit status, stdout, stderr)."""
    script = Path(sys.executable).with_name("skrbal")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "skrbal"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
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
