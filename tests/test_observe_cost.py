"""The fixed work of one ``observe`` call (issue 27, point 13).

Counted, never timed: the SQL statements a write builds, the input checks a
call makes and the changes made to the returned frame after it is built.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.online import RiskBasedAgent
from skrbal.online import _decisions as decisions_module
from skrbal.online._sql import _writing as writing_module

X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)


@pytest.fixture
def agent(tmp_path):
    agent = RiskBasedAgent(
        estimator=GaussianNB(),
        # Cheap inspections: ambiguous rows open requests (their own rows).
        process=synthetic_decision_process().set_params(inspection_cost=1e-6),
        store=str(tmp_path / "agent.db"),
    ).fit(X0, Y0)
    yield agent
    agent.close()


def test_a_write_builds_no_sql_statement(agent, monkeypatch):
    # The statements of an observe (the agent's move, the block, its
    # requests, the previous hash and the event) are built once, not at every
    # call: the old writer built four or five per call.
    def refuse(*args, **kwargs):
        raise AssertionError("a statement was built during observe")

    for name in ("insert", "update", "select"):
        monkeypatch.setattr(writing_module, name, refuse)
    made = agent.observe(np.array([[12.5], [-5.0], [12.0]]))
    assert made["inspect"].any()
    assert agent.n_steps_ == len(X0) + 3
    # The chain of events still verifies, the observe's event last.
    assert agent.store_.verify(agent.name)["seq"] == 2


def test_an_array_is_checked_once_per_call(agent, monkeypatch):
    # A finite float64 array is used as given; anything else goes through
    # scikit-learn's check_array once. The old agent called it at every call.
    calls = []
    original = decisions_module.check_array

    def counting(X, **kwargs):
        calls.append(type(X).__name__)
        return original(X, **kwargs)

    monkeypatch.setattr(decisions_module, "check_array", counting)
    agent.observe(np.array([[12.5], [-5.0]]))
    assert calls == []
    agent.observe([[12.5], [-5.0]])
    assert calls == ["list"]
    with pytest.raises(ValueError, match="NaN"):
        agent.observe(np.array([[np.nan]]))
    assert calls == ["list", "ndarray"]


def test_the_decisions_frame_is_built_once(agent, monkeypatch):
    # action_name is one of the columns the frame is built from; the old
    # agent inserted it into the built frame (a copy of every column).
    def refuse(self, *args, **kwargs):
        raise AssertionError("a column was inserted into the built frame")

    monkeypatch.setattr(pd.DataFrame, "insert", refuse)
    made = agent.observe(np.array([[12.5], [-5.0], [19.0]]))
    assert list(made.columns[-2:]) == ["action", "action_name"]
    names = np.array(agent.process.action_names, dtype=object)
    assert made["action_name"].tolist() == names[made["action"]].tolist()
