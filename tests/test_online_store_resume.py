"""Resuming an agent: its store parameter, and memory bounded by one block.

The PostgreSQL cases run when ``SKRBAL_TEST_POSTGRES_URL`` is set.
"""

import numpy as np
from sklearn.base import clone
from sklearn.naive_bayes import GaussianNB
from sqlalchemy.engine import make_url

from skrbal import synthetic_decision_process
from skrbal.online import AgentStore, RiskBasedAgent
from skrbal.online._store import store_parameter

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
