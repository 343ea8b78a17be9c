"""The store against a hostile round (issue 27): a second name of the file,
rollback, secrets, edits of every column, crafted values.

The PostgreSQL cases run when ``SKRBAL_TEST_POSTGRES_URL`` is set.
"""

import multiprocessing
import os

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.online import AgentStore, RiskBasedAgent, StoreError

PROCESS = synthetic_decision_process()
X0 = np.array([[-5.0], [0.0], [6.0], [19.0]])
Y0 = np.array([1, 2, 3, 4])


def _agent(store, name="bridge", **params):
    return RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=store, name=name, **params
    ).fit(X0, Y0)


# ---------------------------------------------------------------------- #
# 1. a second writer through a hard link
# ---------------------------------------------------------------------- #
def _observe_through(path, queue):
    try:
        with RiskBasedAgent.from_store(path, "bridge") as agent:
            agent.observe([[1.0]])
        queue.put("observed")
    except StoreError as exc:
        queue.put(str(exc))


def test_a_second_name_of_the_file_meets_the_writer(tmp_path):
    db = tmp_path / "agents.db"
    agent = _agent(str(db))
    agent.observe([[0.5]])
    os.link(db, tmp_path / "agents2.db")
    # another process through the second name is refused, told who holds it
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(
        target=_observe_through, args=(str(tmp_path / "agents2.db"), queue)
    )
    child.start()
    message = queue.get(timeout=60)
    child.join()
    assert message != "observed"
    assert "2 names" in message and f"pid {os.getpid()}" in message
    # and so is a second agent object of this process, by name (no raw error)
    with pytest.raises(StoreError, match="hard link"):
        RiskBasedAgent.from_store(tmp_path / "agents2.db", "bridge")
    # the writer goes on, one step per call
    agent.observe([[0.7]])
    agent.close()
    os.unlink(tmp_path / "agents2.db")
    history = AgentStore(db).history("bridge")
    assert history["step"].tolist() == list(range(6))


# ---------------------------------------------------------------------- #
# 3. one masking rule for passwords
# ---------------------------------------------------------------------- #
SECRET = "s3cr3t-Pa55"


def _with_password(url: str) -> str:
    """``url`` with a password (PostgreSQL's test server trusts, ignores it)."""
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user}:{SECRET}@{host}"


def _everything_said(exc: BaseException) -> str:
    """The message, repr and traceback of an error and of its causes."""
    import traceback

    return "".join(traceback.format_exception(exc)) + repr(exc)


def _errors_of(calls):
    said = []
    for call in calls:
        try:
            call()
        except Exception as exc:
            said.append(_everything_said(exc))
        else:
            pytest.fail(f"{call} raised nothing")
    return said


def test_urls_refused_before_connecting_never_echo_the_password(capsys):
    from skrbal.cli import main

    urls = [
        f"postgres://bridge:{SECRET}@db.example:5432/fleet",
        f"mysql+pymysql://bridge:{SECRET}@db.example/fleet",
        f"postgresql://bridge:{SECRET}@db.example:port/fleet",
        f"postgresql://bridge:{SECRET}@127.0.0.1:1/fleet",  # nobody listens
        f"oracle://:{SECRET}@db.example/fleet",
        f"postgresql://bridge:{SECRET}@[::1/fleet",
    ]
    said = _errors_of([lambda u=u: AgentStore(u) for u in urls])
    for text in said:
        assert SECRET not in text
    assert "postgresql://, not postgres://" in said[0]
    for url in urls:
        for argv in (
            ["agent", "status", "--store", url],
            ["agent", "report", "--store", url, "--out", "-"],
            ["agent", "observe", "--store", url, os.devnull],
        ):
            main(argv)
            out, err = capsys.readouterr()
            assert err.startswith("skrbal: ") and SECRET not in out + err
    # an agent made with such a URL shows it masked, and clones as given
    from sklearn.base import clone

    agent = RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=urls[0], name="b"
    )
    shown = [repr(agent), str(agent.get_params()), repr(clone(agent))]
    assert not any(SECRET in text for text in shown)
    assert clone(agent).get_params()["store"] == urls[0]


@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_every_store_error_masks_the_password(store_url, tmp_path, capsys):
    from sqlalchemy import update

    from skrbal.cli import main
    from skrbal.online import _schema as schema

    url = _with_password(store_url)
    store = AgentStore(url)
    said = _errors_of(
        [
            lambda: store.status("bridge"),
            lambda: store.verify("bridge"),
            lambda: store.history("bridge"),
            lambda: store.requests("bridge"),
            lambda: store.events("bridge"),
            lambda: store.configuration("bridge"),
            lambda: RiskBasedAgent.from_store(url, "bridge"),
        ]
    )
    for argv in (
        ["agent", "report", "--store", url, "--out", tmp_path / "r.html"],
        ["agent", "status", "--store", url, "--agent", "bridge"],
        ["agent", "verify", "--store", url, "--agent", "bridge"],
        ["agent", "export", "--store", url, "--agent", "x", "--out", "-"],
    ):
        assert main([str(a) for a in argv]) == 2
        said.append("".join(capsys.readouterr()))
    agent = _agent(url)
    agent.observe([[0.5], [7.0]])
    said += _errors_of(
        [
            lambda: RiskBasedAgent.from_store(url, "bridge"),  # locked
            lambda: _agent(url),  # already commissioned
            lambda: agent.record_inspection(99, 1),
        ]
    )
    said += [repr(agent), str(agent.get_params()), repr(store), store.display_url]
    with store.engine.begin() as conn:
        conn.execute(update(schema.agents).values(last_seq=99))
    said += _errors_of([lambda: agent.observe([[1.0]]), lambda: store.verify("bridge")])
    agent.close()
    with store.engine.begin() as conn:
        conn.execute(update(schema.agents).values(last_seq=2))
    # the pages and exports made of the store
    for argv in (
        ["agent", "report", "--store", url, "--out", tmp_path / "r.html"],
        ["agent", "export", "--store", url, "--agent", "bridge", "--out", "-"],
        [
            "agent",
            "export",
            "--store",
            url,
            "--agent",
            "bridge",
            "--table",
            "events",
            "--out",
            "-",
        ],
        ["agent", "status", "--store", url, "--agent", "bridge", "--json"],
    ):
        assert main([str(a) for a in argv]) == 0, capsys.readouterr()
        said.append("".join(capsys.readouterr()))
    said.append((tmp_path / "r.html").read_text())
    store.close()
    assert len(said) > 20
    for text in said:
        assert SECRET not in text, text
