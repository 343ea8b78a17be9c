"""The in-process runner of the oldest run answers as the real command does.

``make test-oldest`` replays the first week's sessions through
``tests/_cli_runner.py`` instead of a subprocess; this test (in every run)
holds it to the subprocess's exit status, standard output and standard
error, on a success that warns and on a refusal.
"""

import json

import pytest
from _cli_runner import run_in_process  # tests/ is on sys.path
from test_cli_first_week import ROOT, hand_typed_process, measurements

import skrbal.cli


def _subprocess(argv):
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "skrbal", *map(str, argv)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"},
        cwd=ROOT,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def test_in_process_runs_answer_as_the_command_in_a_subprocess(tmp_path):
    (tmp_path / "process.json").write_text(json.dumps(hand_typed_process()))
    table = measurements(30).assign(label=["healthy"] * 26 + [""] * 4)
    table.to_csv(tmp_path / "c.csv", index=False)

    def init(store):
        return ["agent", "init", "--store", tmp_path / store, "--process",
                tmp_path / "process.json", "--data", tmp_path / "c.csv"]  # fmt: skip

    # A success that warns (stdout and one warning line on stderr).
    sub = _subprocess(init("sub.db"))
    here = run_in_process(init("here.db"), cwd=ROOT)
    assert sub[0] == here[0] == 0, sub[2]
    assert "UncommissionedStatesWarning" in sub[2]
    assert here[1:] == tuple(text.replace("sub.db", "here.db") for text in sub[1:])
    # A refusal: exit status 2 and one line on stderr, nothing on stdout.
    refused = ["agent", "status", "--store", tmp_path / "none.db"]
    sub = _subprocess(refused)
    assert sub[0] == 2 and sub[2].startswith("skrbal: ")
    assert run_in_process(refused, cwd=ROOT) == sub


def test_in_process_runs_give_the_exit_status_of_what_escapes_main(monkeypatch):
    # argparse's usage error exits 2 with its message, as a process would.
    code, out, err = run_in_process(["agent", "no-such-command"], cwd=ROOT)
    assert code == 2 and out == "" and "invalid choice" in err
    # An exception main does not turn into a status: 1 and its traceback.

    def broken(argv=None):
        raise RuntimeError("not caught")

    monkeypatch.setattr(skrbal.cli, "main", broken)
    code, out, err = run_in_process(["status"], cwd=ROOT)
    assert code == 1 and "Traceback" in err and "RuntimeError: not caught" in err


@pytest.mark.parametrize("value, expected", [("", False), ("0", False), ("1", True)])
def test_only_a_set_variable_runs_the_command_in_process(value, expected):
    import os
    import subprocess
    import sys

    probe = "import _cli_runner; print(_cli_runner.IN_PROCESS)"
    env = {**os.environ, "SKRBAL_TEST_CLI_IN_PROCESS": value}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT / "tests")},
        check=True,
    )
    assert done.stdout.strip() == str(expected)


def test_forked_runs_answer_as_the_command_in_a_new_interpreter(tmp_path):
    """The main run's first-week sessions fork this process for each command
    (``run_forked``); a fork must answer as a new interpreter does, including
    a warning this process has already shown (a fresh process has not)."""
    import os
    import warnings

    from _cli_runner import run_forked

    if not hasattr(os, "fork"):
        pytest.skip("no fork on this system")
    (tmp_path / "process.json").write_text(json.dumps(hand_typed_process()))
    table = measurements(30).assign(label=["healthy"] * 26 + [""] * 4)
    table.to_csv(tmp_path / "c.csv", index=False)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}

    def init(store):
        return ["agent", "init", "--store", tmp_path / store, "--process",
                tmp_path / "process.json", "--data", tmp_path / "c.csv"]  # fmt: skip

    # This process shows the warning first, under the default filters.
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        run_in_process(init("here.db"), cwd=ROOT)
    sub = _subprocess(init("sub.db"))
    forked = run_forked(init("fork.db"), cwd=ROOT, env=env, timeout=120)
    assert sub[0] == forked[0] == 0, sub[2]
    assert "UncommissionedStatesWarning" in forked[2]
    assert forked[1:] == tuple(text.replace("sub.db", "fork.db") for text in sub[1:])
    refused = ["agent", "status", "--store", tmp_path / "none.db"]
    assert run_forked(refused, cwd=ROOT, env=env, timeout=120) == _subprocess(refused)
    # Standard input reaches the child, and its own folder is its own.
    observe = ["agent", "observe", "-", "--store", tmp_path / "fork.db"]
    feed = measurements(34).iloc[30:].to_csv(index=False)
    code, out, err = run_forked(observe, input=feed, cwd=tmp_path, env=env, timeout=120)
    assert code == 0, err
    assert len(out.strip().splitlines()) == 1 + 4
    assert os.getcwd() != str(tmp_path)
