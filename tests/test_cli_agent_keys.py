"""``skrbal agent`` commands with ``--key``: a retried command prints the same."""

import io
import json

import pandas as pd
import pytest

from skrbal.cli import main
from skrbal.online import AgentStore


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def synthetic(tmp_path, capsys):
    store, stream = tmp_path / "agents.db", tmp_path / "stream.csv"
    code, _, err = run(
        ["agent", "init", "--store", store, "--agent", "bridge", "--case",
         "synthetic", "--seed", 3, "--stream-out", stream],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    return store, stream


def _status(store, capsys):
    code, out, err = run(
        ["agent", "status", "--store", store, "--agent", "bridge", "--json"], capsys
    )
    assert code == 0, err
    return json.loads(out)


def test_a_retried_keyed_observe_prints_the_same_decisions(synthetic, tmp_path, capsys):
    store, stream_csv = synthetic
    rows = pd.read_csv(stream_csv).iloc[:100][["x1", "x2"]]
    part, full = tmp_path / "part.csv", tmp_path / "full.csv"
    rows.iloc[:80].to_csv(part, index=False)
    rows.to_csv(full, index=False)
    common = ["--store", store, "--agent", "bridge", "--batch-size", 40]
    # a first run that got through two batches of 40 (then, say, died)
    code, first, err = run(["agent", "observe", part, *common, "--key", "k"], capsys)
    assert code == 0, err
    assert _status(store, capsys)["n_observations"] == 80
    # run again on the whole input: two batches from the store, one decided
    code, again, err = run(["agent", "observe", full, *common, "--key", "k"], capsys)
    assert code == 0, err
    assert again.startswith(first) and len(again.splitlines()) == 101
    assert _status(store, capsys)["n_observations"] == 100
    code, third, err = run(["agent", "observe", full, *common, "--key", "k"], capsys)
    assert code == 0 and third == again
    assert _status(store, capsys)["n_observations"] == 100
    # the same key on other rows: exit 2, one line naming key and what differs
    rows.iloc[::-1].to_csv(full, index=False)
    code, _, err = run(["agent", "observe", full, *common, "--key", "k"], capsys)
    assert code == 2
    assert err.startswith("skrbal: ") and len(err.splitlines()) == 1
    assert "client key 'k#1'" in err and "another X" in err
    assert _status(store, capsys)["n_observations"] == 100


def test_a_retried_keyed_inspect_prints_the_same(synthetic, tmp_path, capsys):
    store, stream_csv = synthetic
    rows = pd.read_csv(stream_csv).iloc[:150][["x1", "x2"]]
    rows.to_csv(tmp_path / "rows.csv", index=False)
    common = ["--store", store, "--agent", "bridge"]
    code, out, err = run(["agent", "observe", tmp_path / "rows.csv", *common], capsys)
    assert code == 0, err
    decisions = pd.read_csv(io.StringIO(out))
    request = int(decisions.loc[decisions["inspect"], "request_id"].iloc[0])
    argv = ["agent", "inspect", request, 3, *common, "--key", "wo-17"]
    code, said, err = run(argv, capsys)
    assert code == 0, err
    code, again, err = run(argv, capsys)
    assert code == 0 and again == said
    assert _status(store, capsys)["n_results"] == 1
    argv[3] = 4
    code, _, err = run(argv, capsys)
    assert code == 2 and "another label" in err


@pytest.mark.parametrize("key", ["", "x" * 181])
def test_a_key_option_is_checked(synthetic, capsys, key):
    store, stream_csv = synthetic
    code, _, err = run(
        ["agent", "observe", stream_csv, "--store", store, "--agent", "bridge",
         "--key", key],
        capsys,
    )  # fmt: skip
    assert code == 2 and "--key must be 1 to 180 characters" in err


def _observed(synthetic, tmp_path, capsys, n=150):
    """The store after observing ``n`` stream rows, and its decisions."""
    store, stream_csv = synthetic
    rows = pd.read_csv(stream_csv).iloc[:n][["x1", "x2"]]
    rows.to_csv(tmp_path / "rows.csv", index=False)
    code, out, err = run(
        ["agent", "observe", tmp_path / "rows.csv", "--store", store, "--agent",
         "bridge"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    return store, pd.read_csv(io.StringIO(out))


def _one_line_error(err: str) -> str:
    assert err.startswith("skrbal: ") and len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def test_a_retried_keyed_cancel_prints_the_same(synthetic, tmp_path, capsys):
    store, decisions = _observed(synthetic, tmp_path, capsys)
    request = int(decisions.loc[decisions["inspect"], "request_id"].iloc[0])
    common = ["--store", store, "--agent", "bridge"]
    argv = ["agent", "cancel", request, *common, "--reason", "no access"]
    code, said, err = run([*argv, "--key", "c-1"], capsys)
    assert code == 0, err
    assert said.startswith(f"request {request} cancelled; its cost stays charged")
    before = _status(store, capsys)
    assert before["n_cancelled"] == 1
    code, again, err = run([*argv, "--key", "c-1"], capsys)
    assert code == 0 and again == said and err == ""
    assert _status(store, capsys) == before
    # without the key it is a second cancellation: refused
    code, _, err = run(argv, capsys)
    assert code == 2 and "was cancelled" in _one_line_error(err)
    # the same key with another reason: exit 2, one line naming key and reason
    code, _, err = run([*argv[:-1], "gone", "--key", "c-1"], capsys)
    assert code == 2
    assert "client key 'c-1'" in _one_line_error(err) and "another reason" in err
    # the key of another kind of call
    code, _, err = run(
        ["agent", "record-action", 3, 1, *common, "--key", "c-1"], capsys
    )
    assert code == 2 and "not by record_action" in _one_line_error(err)
    assert _status(store, capsys) == before


def test_a_retried_keyed_record_action_prints_the_same(synthetic, tmp_path, capsys):
    store, _ = _observed(synthetic, tmp_path, capsys)
    common = ["--store", store, "--agent", "bridge"]
    argv = ["agent", "record-action", 7, "repair", *common, "--key", "crew-7"]
    code, said, err = run(argv, capsys)
    assert code == 0, err
    assert said == "step 7: action 1 (repair) recorded\n"

    def actions():
        events = AgentStore(str(store)).events("bridge")
        return events[events["kind"] == "action"]

    assert len(actions()) == 1
    code, again, err = run(argv, capsys)
    assert code == 0 and again == said and err == ""
    # the action by its index is the same call
    code, again, err = run([*argv[:3], 1, *argv[4:]], capsys)
    assert code == 0 and again == said and err == ""
    assert len(actions()) == 1
    code, _, err = run([*argv[:3], "do nothing", *argv[4:]], capsys)
    assert code == 2
    assert "client key 'crew-7'" in _one_line_error(err) and "another action" in err
    code, _, err = run([*argv[:2], 8, *argv[3:]], capsys)
    assert code == 2 and "another step" in _one_line_error(err)
    assert len(actions()) == 1


@pytest.mark.parametrize(
    "command", [["cancel", 1], ["record-action", 0, 1]], ids=["cancel", "action"]
)
@pytest.mark.parametrize("key", ["", "x" * 181])
def test_the_key_of_cancel_and_record_action_is_checked(
    synthetic, capsys, command, key
):
    store, _ = synthetic
    code, _, err = run(
        ["agent", *command, "--store", store, "--agent", "bridge", "--key", key],
        capsys,
    )
    assert code == 2 and "--key must be 1 to 180 characters" in _one_line_error(err)
