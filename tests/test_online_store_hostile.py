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
