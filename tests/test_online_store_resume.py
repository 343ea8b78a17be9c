"""Resuming an agent: its store parameter, and memory bounded by one block.

The PostgreSQL cases run when ``SKRBAL_TEST_POSTGRES_URL`` is set.
"""

import tracemalloc

import numpy as np
from sklearn.base import clone
from sklearn.naive_bayes import GaussianNB
from sqlalchemy.engine import make_url

from skrbal import synthetic_decision_process
from skrbal.online import AgentStore, RiskBasedAgent
from skrbal.online._connect import store_parameter

PROCESS = synthetic_decision_process()
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0]])
Y0 = np.array([1, 2, 3, 4])


def test_store_parameter_keeps_the_password_and_masks_it_in_repr():
    url = "postgresql+psycopg://alice:s3cret@db.example:5432/fleet"
    kept = store_parameter(url)
    assert kept == url and str(kept) == url
    assert "s3cret" not in repr(kept) and "***" in repr(kept)
    agent = RiskBasedAgent(estimator=GaussianNB(), process=PROCESS, store=kept)
    assert agent.get_params()["store"] == url
    assert "s3cret" not in repr(agent)
    assert clone(agent).get_params()["store"] == url
    assert "s3cret" not in repr(clone(agent))
    # paths and URLs without a password are kept as given
    assert store_parameter("agents.db") == "agents.db"


def test_a_resumed_agent_keeps_the_real_url(store_url):
    url = store_url
    if "://" in url:
        # The test server trusts local connections, so any password works;
        # what matters is that the clone is given this one, not '***'.
        url = make_url(url).set(password="s3cret")
        url = url.render_as_string(hide_password=False)
    RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=url, name="bridge"
    ).fit(X0, Y0).close()
    with RiskBasedAgent.from_store(url, "bridge") as agent:
        assert agent.get_params()["store"] == url
        twin = clone(agent)
        assert "s3cret" not in repr(agent)
    # the clone connects with the real URL: commission a second agent with it
    twin.set_params(name="twin").fit(X0, Y0).close()
    with AgentStore(url) as store:
        assert store.agent_names() == ["bridge", "twin"]


def _peak_bytes(call):
    """Peak of the memory Python and numpy allocate during ``call()``."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_resume_and_status_read_one_block_at_a_time(tmp_path):
    # One observe of 20,000 rows (a block of 1.4 MB) making about 140
    # requests: reading the block once per request took 90 MB to resume.
    path = tmp_path / "a.db"
    process = PROCESS.set_params(inspection_cost=1e-4)
    X = np.random.default_rng(0).normal(0, 8, size=(20_000, 1))
    stamps = np.arange(8 + X.shape[0], dtype=float)
    with RiskBasedAgent(estimator=GaussianNB(), process=process, store=path).fit(
        np.vstack([X0, X0 + 1.0]), np.tile(Y0, 2), timestamps=stamps[:8]
    ) as agent:
        decisions = agent.observe(X, timestamps=stamps[8:])
        n_requests = int(decisions["inspect"].sum())
        first = int(decisions["request_id"].dropna().iloc[0])
        agent.record_inspection(first, 2)
        expected = agent.status()
    assert n_requests > 100
    resumed, peak = _peak_bytes(lambda: RiskBasedAgent.from_store(path))
    with resumed:
        assert peak < 12e6
        status, peak = _peak_bytes(resumed.status)
        assert peak < 12e6
        assert status == expected
        assert len(status["open_requests"]) == n_requests - 1
        for request in status["open_requests"][:3]:
            assert request["timestamp"] == float(request["step"])
