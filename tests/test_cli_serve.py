"""``skrbal agent serve`` (issue 28.25): one process keeps the agent open.

Through the real ``skrbal`` command: a server on a Unix socket runs the
commands ``skrbal --server SOCKET agent ...`` forwards, deciding as the agent
run in this process on a copy of the store does, with the same keys, errors
and exit statuses, and its write lock held until it ends.
"""

import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from test_cli_first_week import skrbal  # tests/ is on sys.path

from skrbal.online import RiskBasedAgent

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    not hasattr(__import__("socket"), "AF_UNIX"), reason="needs Unix sockets"
)


@pytest.fixture
def served(tmp_path):
    """A commissioned store, a copy of it, and a server of the first."""
    store, twin = tmp_path / "a.db", tmp_path / "twin.db"
    code, _, err = skrbal("agent", "init", "--store", store, "--case", "synthetic",
                          "--stream-out", tmp_path / "s.csv")  # fmt: skip
    assert code == 0, err
    shutil.copy(store, twin)
    sock = tmp_path / "agent.sock"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "skrbal", "agent", "serve", "--store", store,
         "--socket", sock],
        env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not sock.exists():
        assert server.poll() is None, server.stderr.read()
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.1)
    yield store, twin, sock, server
    if server.poll() is None:
        server.kill()
        server.wait()


def test_served_commands_decide_as_the_agent_and_keep_its_rules(tmp_path, served):
    store, twin, sock, server = served
    stream = pd.read_csv(tmp_path / "s.csv").drop(columns="label")
    stream.iloc[:40].to_csv(tmp_path / "feed.csv", index=False)
    via = ["--server", sock, "agent"]
    code, out, err = skrbal(*via, "observe", tmp_path / "feed.csv", "--key", "f-1")
    assert code == 0, err
    decided = pd.read_csv(io.StringIO(out))
    with RiskBasedAgent.from_store(f"sqlite:///{twin}") as agent:
        alone = agent.observe(stream.iloc[:40].to_numpy(), key="f-1#1")
    assert decided["step"].tolist() == alone["step"].tolist()
    pd.testing.assert_series_equal(decided["evpi"], alone["evpi"])
    # A keyed retry answers the same, from the store; standard input is sent.
    code, again, _ = skrbal(*via, "observe", "--key", "f-1",
                            input=stream.iloc[:40].to_csv(index=False))  # fmt: skip
    assert code == 0 and again == out
    request = int(decided["request_id"].dropna().iloc[0])
    code, out, err = skrbal(*via, "inspect", request, 1)
    assert code == 0 and out.startswith(f"request {request} (step "), err
    # Errors and usage as the command alone gives them.
    code, out, err = skrbal(*via, "inspect", 999, 1)
    assert code == 2 and out == "" and "request_id 999 is not a request" in err
    assert err.startswith("skrbal: ") and err.count("\n") == 1
    code, _, err = skrbal(*via, "verify")
    assert code == 2 and "a served agent runs cancel, inspect" in err
    code, out, err = skrbal(*via, "status", "--json")
    assert code == 0 and '"n_observations": 40' in out and '"n_results": 1' in out
    # The server holds the write lock: a command run alone cannot write.
    code, _, err = skrbal("agent", "inspect", request + 1, 1, "--store", store)
    assert code == 1 and "a store accepts one writer per agent" in err
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=60) == 0
    assert "ended; the agent is closed" in server.stderr.read()
    assert not sock.exists()
    code, _, err = skrbal(*via, "status")
    assert code == 1 and "no agent server there" in err


def test_a_socket_path_in_use_is_refused(tmp_path, served):
    store, _, sock, _ = served
    code, _, err = skrbal("agent", "serve", "--store", store, "--socket", sock)
    assert code == 2 and f"--socket {sock}: exists" in err
