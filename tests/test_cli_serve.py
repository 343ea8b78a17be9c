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


def _started(store, sock, cwd, record=None):
    """``skrbal agent serve`` on ``store``, once its socket (and record) exist."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "skrbal", "agent", "serve", "--store", store,
         "--socket", sock],
        env=env, cwd=cwd, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (sock.exists() and (record is None or record.exists())):
        assert server.poll() is None, server.stderr.read()
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.1)
    return server


@pytest.fixture
def served(tmp_path):
    """A commissioned store, a copy of it, and a server of the first."""
    store, twin = tmp_path / "a.db", tmp_path / "twin.db"
    code, _, err = skrbal("agent", "init", "--store", store, "--case", "synthetic",
                          "--stream-out", tmp_path / "s.csv")  # fmt: skip
    assert code == 0, err
    shutil.copy(store, twin)
    sock = tmp_path / "agent.sock"
    record = Path(f"{os.path.realpath(store)}-server-agent")  # after the socket
    server = _started(store, sock, ROOT, record)
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
    code, _, err = plain("agent", "inspect", request + 1, 1, "--store", store,
                         cwd=ROOT, SKRBAL_SERVER="none")  # fmt: skip
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


def plain(*argv, cwd, input=None, module=True, **env):
    """The real ``skrbal`` command (or ``python ARGV``), in ``cwd`` with ``env``."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    environment.pop("SKRBAL_SERVER", None)
    environment.update(env)
    done = subprocess.run(
        [sys.executable, *(["-m", "skrbal"] if module else []), *map(str, argv)],
        input=input, capture_output=True, text=True, env=environment, cwd=cwd,
        timeout=120,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_a_plain_command_finds_the_server_of_its_store(tmp_path, served):
    """28.25: the command lines a monitoring system has get the server's speed."""
    store, twin, sock, server = served
    record = Path(f"{os.path.realpath(store)}-server-agent")
    assert record.exists()
    stream = pd.read_csv(tmp_path / "s.csv").drop(columns="label")
    stream.iloc[:30].to_csv(tmp_path / "feed.csv", index=False)
    # Relative paths from the caller's folder; the server holds the write lock,
    # so a command run alone could not have written.
    code, out, err = plain("agent", "observe", "feed.csv", "--store", "a.db",
                           "--key", "k", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    with RiskBasedAgent.from_store(f"sqlite:///{twin}") as agent:
        alone = agent.observe(stream.iloc[:30].to_numpy(), key="k#1")
    decided = pd.read_csv(io.StringIO(out))
    assert decided["step"].tolist() == alone["step"].tolist()
    pd.testing.assert_series_equal(decided["evpi"], alone["evpi"])
    feed = (tmp_path / "feed.csv").read_text()
    code, again, _ = plain("agent", "observe", "--store", "a.db", "--key", "k",
                           cwd=tmp_path, input=feed)  # fmt: skip
    assert code == 0 and again == out
    # Errors and exit statuses as with --server; another spelling of the store.
    code, out, err = plain("agent", "inspect", 999, 1, "--store",
                           f"sqlite:///{store}", cwd=ROOT)  # fmt: skip
    assert (code, out) == (2, "") and "request_id 999 is not a request" in err
    assert one_line_of(err)
    code, out, _ = plain("agent", "status", "--json", "--store", store, cwd=ROOT)
    assert code == 0 and '"n_observations": 30' in out
    # The caller decides to forward, and forwards, on the standard library.
    probe = (
        "import sys\nfrom skrbal.cli import main\n"
        f"code = main(['agent', 'inspect', '999', '1', '--store', {str(store)!r}])\n"
        "print(code, sorted({m.split('.')[0] for m in sys.modules}))"
    )
    code, out, err = plain("-c", probe, cwd=tmp_path, module=False)
    status, loaded = out.strip().splitlines()[-1].split(" ", 1)
    assert status == "2" and "request_id 999 is not a request" in err
    heavy = ("numpy", "sklearn", "pandas", "scipy", "sqlalchemy")
    assert not [m for m in heavy if f"'{m}'" in loaded], loaded
    # SKRBAL_SERVER=none: run alone, and meet the server's lock.
    code, _, err = plain("agent", "inspect", 999, 1, "--store", store, cwd=ROOT,
                         SKRBAL_SERVER="none")  # fmt: skip
    assert code == 1 and "a store accepts one writer per agent" in err
    # Without the record, SKRBAL_SERVER names the server (any store, PostgreSQL too).
    saved = record.read_text()
    record.unlink()
    code, _, err = plain("agent", "inspect", 999, 1, "--store", store, cwd=ROOT)
    assert code == 1 and "a store accepts one writer per agent" in err
    code, _, err = plain("agent", "inspect", 999, 1, "--store", store, cwd=ROOT,
                         SKRBAL_SERVER=str(sock))  # fmt: skip
    assert code == 2 and "request_id 999 is not a request" in err
    # A server of another store is not used: the command runs alone there.
    code, out, err = plain("agent", "status", "--json", "--store", twin, cwd=ROOT,
                           SKRBAL_SERVER=str(sock))  # fmt: skip
    assert code == 0 and '"n_observations": 30' in out, err  # the twin's own
    record.write_text(saved)
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=60) == 0
    assert not record.exists() and not sock.exists()


def one_line_of(err: str) -> bool:
    return err.startswith("skrbal: ") and err.count("\n") == 1


def test_a_killed_servers_record_and_socket_are_ignored(tmp_path, served):
    store, _, sock, server = served
    record = Path(f"{os.path.realpath(store)}-server-agent")
    server.kill()  # no clean end: its record and socket stay
    server.wait()
    assert record.exists() and sock.exists()
    code, out, err = plain("agent", "status", "--store", store, cwd=ROOT)
    assert code == 0 and "n_observations: 0" in out, err
    # A writer runs alone (the kernel freed the lock with the process).
    code, _, err = plain("agent", "cancel", 999, "--store", store, cwd=ROOT)
    assert code == 2 and "999" in err and "writer" not in err
    # A new server takes over the socket nobody listens on; a file that is
    # not a socket is never replaced.
    code, _, err = skrbal("agent", "serve", "--store", tmp_path / "none.db",
                          "--socket", sock)  # fmt: skip
    assert code == 2 and "no such store" in err and not sock.exists()
    code, _, err = skrbal("agent", "serve", "--store", store, "--socket",
                          tmp_path / "s.csv")  # fmt: skip
    assert code == 2 and "not a socket" in err


@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_skrbal_server_names_the_server_of_a_postgresql_store(tmp_path, store_url):
    """No file beside a database server's store: SKRBAL_SERVER names the socket."""
    code, _, err = plain("agent", "init", "--store", store_url, "--case",
                         "synthetic", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    sock = tmp_path / "pg.sock"
    server = _started(store_url, sock, tmp_path)
    try:
        # Sent (run alone, the command would meet the server's lock), also
        # when the URL is spelled with the default driver.
        other = store_url.replace("postgresql+psycopg://", "postgresql://")
        for url in {store_url, other}:
            code, out, err = plain("agent", "inspect", 999, 1, "--store", url,
                                   cwd=tmp_path, SKRBAL_SERVER=str(sock))  # fmt: skip
            assert (code, out) == (2, ""), err
            assert "request_id 999 is not a request" in err
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
