"""``skrbal agent record-label`` and ``agent init --data`` with unlabelled rows."""

import json

import numpy as np
import pandas as pd
import pytest

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal.cli import main
from skrbal.online import RiskBasedAgent

PROCESS = synthetic_decision_process()


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _campaign(tmp_path, n_labelled=8, n=60, later=(20, 41), seed=2):
    """A campaign CSV: times, two raw features, labels on a few rows only."""
    rng = np.random.default_rng(seed)
    states = np.array([1, 2, 3, 4] * (n // 4))
    rng.shuffle(states[n_labelled:])
    means = np.array([[-5.0, 1.0], [-0.7, 2.0], [5.8, 3.0], [19.0, 4.0]])
    X = rng.normal(means[states - 1], 0.8)
    frame = pd.DataFrame(
        {
            "time": pd.date_range("2025-01-01", periods=n, freq="D").strftime(
                "%Y-%m-%dT%H:%M:%S"
            ),
            "f1": X[:, 0],
            "f2": X[:, 1],
            "label": [str(s) for s in states],
        }
    )
    keep = np.zeros(n, dtype=bool)
    keep[:n_labelled] = True
    keep[list(later)] = True
    frame.loc[~keep, "label"] = ""
    frame.to_csv(tmp_path / "campaign.csv", index=False)
    PROCESS.to_json(tmp_path / "process.json")
    return frame, states


def _status(store, capsys):
    code, out, err = run(["agent", "status", "--store", store, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_init_commissions_the_labelled_rows_and_observes_the_rest(tmp_path, capsys):
    frame, _ = _campaign(tmp_path)
    store = tmp_path / "a.db"
    code, out, err = run(
        ["agent", "init", "--store", store, "--process", tmp_path / "process.json",
         "--data", tmp_path / "campaign.csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "with 8 labelled observations of 2 features" in out
    assert "then observed the 52 later rows (rows 8 to 59) in order" in out
    status = _status(store, capsys)
    assert status["n_commissioning"] == 8 and status["n_observations"] == 52
    assert status["n_routine"] + status["n_results"] == 2
    # the same as the Python path with the model init builds (data prior)
    y = [int(v) if v else None for v in frame["label"]]
    python = RiskBasedAgent(
        estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
        process=PROCESS,
        request_timeout=30 * 86400.0,  # init's default with times (#28.15)
    ).fit(frame[["f1", "f2"]], y, timestamps=frame["time"])
    with RiskBasedAgent.from_store(store) as cli:
        history = cli.history_.steps
    expected = python.history_.steps
    python.close()
    pd.testing.assert_frame_equal(history, expected)


def test_a_bad_later_label_names_the_campaign_row(tmp_path, capsys):
    frame, _ = _campaign(tmp_path)
    frame.loc[30, "label"] = "7"
    frame.to_csv(tmp_path / "campaign.csv", index=False)
    code, _, err = run(
        ["agent", "init", "--store", tmp_path / "a.db", "--process",
         tmp_path / "process.json", "--data", tmp_path / "campaign.csv"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert "row 30 (counted from 0; line 32 of the file)" in err


def test_record_label_teaches_a_routine_inspection(tmp_path, capsys):
    _campaign(tmp_path)
    store = tmp_path / "a.db"
    common = ["--store", store]
    assert main(["agent", "init", *common, "--process", tmp_path / "process.json",
                 "--data", tmp_path / "campaign.csv"]) == 0  # fmt: skip
    capsys.readouterr()
    history = RiskBasedAgent.from_store(store)
    requested = set(history.store_.requests("agent")["step"])
    history.close()
    step = next(s for s in range(9, 60) if s not in requested)
    argv = ["agent", "record-label", step, 1, *common, "--time",
            "2025-03-05T00:00:00", "--key", "visit-1"]  # fmt: skip
    code, said, err = run(argv, capsys)
    assert code == 0, err
    assert said.startswith(f"step {step}: routine inspection, state 1 (")
    assert ") recorded; optimal action" in said
    before = _status(store, capsys)
    code, again, err = run(argv, capsys)
    assert code == 0 and again == said and _status(store, capsys) == before
    # labelled already (no key): exit 2, one line
    code, _, err = run(["agent", "record-label", step, 2, *common], capsys)
    assert code == 2 and "already labelled" in err and len(err.splitlines()) == 1
    # dated before the observation
    other = next(s for s in range(step + 1, 60) if s not in requested)
    code, _, err = run(
        ["agent", "record-label", other, 2, *common, "--time", "2020-01-01"], capsys
    )
    assert code == 2 and "before step" in err
    code, _, err = run(["agent", "record-label", other, *common], capsys)
    assert code == 2 and "LABEL" in err


@pytest.mark.parametrize("flag", ["--report"])
def test_record_label_report_needs_a_method(tmp_path, capsys, flag):
    _campaign(tmp_path)
    store = tmp_path / "a.db"
    assert main(["agent", "init", "--store", store, "--process",
                 tmp_path / "process.json", "--data",
                 tmp_path / "campaign.csv"]) == 0  # fmt: skip
    code, _, err = run(
        ["agent", "record-label", 50, "--store", store, flag, "crack"], capsys
    )
    assert code == 2 and "--report needs --method" in err


def test_record_label_of_a_requested_step_points_to_inspect(tmp_path, capsys):
    _campaign(tmp_path)
    store = tmp_path / "a.db"
    assert main(["agent", "init", "--store", store, "--process",
                 tmp_path / "process.json", "--data",
                 tmp_path / "campaign.csv"]) == 0  # fmt: skip
    capsys.readouterr()
    requests = _status(store, capsys)["open_requests"]
    assert requests, "the campaign should leave a request open"
    request, step = requests[0]["request_id"], requests[0]["step"]
    code, _, err = run(["agent", "record-label", step, 1, "--store", store], capsys)
    assert code == 2
    assert f"record it as its result, skrbal agent inspect {request} LABEL" in err


def test_the_campaign_reader_keeps_unlabelled_rows_when_asked():
    from skrbal.datasets import load_campaign

    table = pd.DataFrame(
        {"a": [0.0, 1.0, 2.0, 3.0, 4.0], "label": [1, np.nan, 3, np.nan, 9]}
    )
    with pytest.raises(ValueError, match=r"holds \['9.0'\].*row 4 \(counted from 0"):
        load_campaign(table, PROCESS, unlabelled=True)
    table.loc[4, "label"] = 2
    campaign = load_campaign(table, PROCESS, unlabelled=True)
    assert campaign.y.tolist() == [1, None, 3, None, 2]
    with pytest.raises(ValueError, match=r"missing value .* at row 1"):
        load_campaign(table, PROCESS)
    # without a gap, the labels are as without the option
    full = load_campaign(table.dropna(), PROCESS, unlabelled=True)
    assert full.y.dtype.kind == "i"


def test_text_status_counts_routine_labels_and_their_spend(tmp_path, capsys):
    # `status` without --json shows what --json has: routine labels are not
    # requests, so they appear under their own count and spend.
    _campaign(tmp_path)
    store = tmp_path / "a.db"
    code, _, err = run(
        ["agent", "init", "--store", store, "--process", tmp_path / "process.json",
         "--data", tmp_path / "campaign.csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    status = _status(store, capsys)
    code, out, err = run(["agent", "status", "--store", store], capsys)
    assert code == 0, err
    assert f"  n_routine: {status['n_routine']}\n" in out
    assert f"  routine_spend: {status['routine_spend']}\n" in out
