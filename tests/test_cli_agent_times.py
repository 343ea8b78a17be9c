"""``skrbal agent observe`` with a time column in several ISO 8601 spellings."""

import json

import numpy as np
import pandas as pd

from skrbal import z24_decision_process
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
        "2025-03-21T06:00:00+00:00",
        "2025-03-21T07:30:00.500000+00:00",
        "2025-03-22T13:00:00+00:00",
        "2025-03-23T00:00:00+00:00",
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
