"""``skrbal agent observe`` with a time column in several ISO 8601 spellings."""

import io
import json

import numpy as np
import pandas as pd

from skrbal import synthetic_decision_process, z24_decision_process
from skrbal.cli import main


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _agent(tmp_path, name, capsys):
    """A store commissioned on 20 daily rows of the four Z24 states."""
    rng = np.random.default_rng(1)
    means = np.array([[0, 0], [1, 1], [2, 0], [3, 3]], dtype=float)
    labels = np.repeat([1, 2, 3, 4], 5)
    table = pd.DataFrame(rng.normal(means[labels - 1], 0.3), columns=["a", "b"])
    table["label"] = labels
    table.insert(0, "time", pd.date_range("2025-03-01", periods=20, freq="D"))
    table.to_csv(tmp_path / "campaign.csv", index=False)
    z24_decision_process().to_json(tmp_path / "process.json")
    store = tmp_path / f"{name}.db"
    code, _, err = run(
        ["agent", "init", "--store", store, "--process", tmp_path / "process.json",
         "--data", tmp_path / "campaign.csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    return store


def test_observe_reads_a_time_column_in_mixed_iso_spellings(tmp_path, capsys):
    spelt = [
        "2025-03-21T06:00:00Z",
        "2025-03-21T09:30:00.5+02:00",  # 07:30:00.5Z
        "2025-03-22 12:00-01:00",  # 13:00Z
        "20250323T000000Z",
    ]
    utc = [
        "2025-03-21T06:00:00Z",
        "2025-03-21T07:30:00.500000Z",
        "2025-03-22T13:00:00Z",
        "2025-03-23T00:00:00Z",
    ]
    rng = np.random.default_rng(5)
    features = {"a": rng.uniform(0, 3, 4), "b": rng.uniform(0, 3, 4)}
    outputs = {}
    for name, times in [("mixed", spelt), ("utc", utc)]:
        store = _agent(tmp_path, name, capsys)
        pd.DataFrame({"time": times, **features}).to_csv(
            tmp_path / f"{name}.csv", index=False
        )
        code, out, err = run(
            ["agent", "observe", tmp_path / f"{name}.csv", "--store", store,
             "--timestamp-column", "time", "--format", "jsonl"],
            capsys,
        )  # fmt: skip
        assert code == 0 and err == "", err
        outputs[name] = [json.loads(line) for line in out.splitlines()]
    assert outputs["mixed"] == outputs["utc"]
    assert [d["timestamp"] for d in outputs["mixed"]] == utc


def test_observe_refuses_naive_next_to_aware_times_in_one_line(tmp_path, capsys):
    store = _agent(tmp_path, "agent", capsys)
    feed = pd.DataFrame(
        {"time": ["2025-03-21T06:00:00Z", "2025-03-21T07:00:00"], "a": 1.0, "b": 1.0}
    )
    feed.to_csv(tmp_path / "feed.csv", index=False)
    code, out, err = run(
        ["agent", "observe", tmp_path / "feed.csv", "--store", store,
         "--timestamp-column", "time"],
        capsys,
    )  # fmt: skip
    assert code == 2 and out == ""
    assert err.startswith("skrbal: ") and len(err.splitlines()) == 1
    assert "timestamps" in err and "UTC offset" in err and "Traceback" not in err


def test_observe_reads_a_time_column_by_default_and_names_the_option(tmp_path, capsys):
    # As in a campaign file, a column named 'time' holds the times of an agent
    # commissioned with times; without one, the error names --time-column.
    from sklearn.naive_bayes import GaussianNB

    from skrbal.online import RiskBasedAgent

    rng = np.random.default_rng(0)
    y = np.tile([1, 2, 3, 4], 4)
    X = rng.normal(np.array([[-5.0, 0], [-0.7, 0], [5.8, 0], [19.0, 0]])[y - 1])
    store = str(tmp_path / "a.db")
    RiskBasedAgent(
        estimator=GaussianNB(), process=synthetic_decision_process(), store=store
    ).fit(X[:12], y[:12], timestamps=np.arange(12.0)).close()
    rows = pd.DataFrame(X[12:15], columns=["f0", "f1"])
    rows.assign(time=[20.0, 21.0, 22.0]).to_csv(tmp_path / "timed.csv", index=False)
    code, out, err = run(
        ["agent", "observe", tmp_path / "timed.csv", "--store", store], capsys
    )
    assert code == 0, err
    assert pd.read_csv(io.StringIO(out))["timestamp"].tolist() == [20.0, 21.0, 22.0]
    rows.assign(when=[30.0, 31.0, 32.0]).to_csv(tmp_path / "when.csv", index=False)
    code, _, err = run(
        ["agent", "observe", tmp_path / "when.csv", "--store", store], capsys
    )
    assert code == 2 and "name their column with --time-column" in err
    assert len(err.strip().splitlines()) == 1
