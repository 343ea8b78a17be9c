"""The fixed work of one ``observe`` call (issue 27, point 13).

Counted, never timed: the SQL statements a write builds, the input checks a
call makes and the changes made to the returned frame after it is built.
"""

import sys

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


def test_a_write_builds_no_sql_statement(agent):
    # The statements of an observe (the agent's move, the block, its
    # requests, the previous hash and the event) are built once, not at every
    # call: the old writer built four or five per call. Every write is now
    # one of _driver's SQL texts: the writer has no Core construct to build
    # one with (it imports no SQLAlchemy, see tests/test_sqlite_store.py).
    for name in ("insert", "update", "select", "delete"):
        assert not hasattr(writing_module, name)
    made = agent.observe(np.array([[12.5], [-5.0], [12.0]]))
    assert made["inspect"].any()
    assert agent.n_steps_ == len(X0) + 3
    # The chain of events still verifies, the observe's event last.
    assert agent.store_.verify(agent.name)["seq"] == 2


def test_an_array_is_checked_once_per_call(agent, monkeypatch):
    # A finite float64 array is used as given; anything else goes through
    # scikit-learn's check_array once. The old agent called it at every call.
    # (imported where it is called, so that observing needs no scikit-learn)
    import sklearn.utils.validation as validation

    calls = []
    original = validation.check_array

    def counting(X, *args, **kwargs):
        # the agent's own check, not the estimator's inside predict_proba
        if sys._getframe(1).f_globals["__name__"] == decisions_module.__name__:
            calls.append(type(X).__name__)
        return original(X, *args, **kwargs)

    monkeypatch.setattr(validation, "check_array", counting)
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


def _frame_from_dict(arrays, agent):
    """The decisions frame as ``pd.DataFrame(dict)`` builds it (the old way)."""
    columns = {"step": arrays["step"], "timestamp": arrays["timestamp"]}
    for j, label in enumerate(agent.classes_.tolist()):
        columns[f"belief_{label}"] = arrays["belief"][:, j]
    columns["evpi"] = arrays["evpi"]
    columns["inspect"] = arrays["inspect"]
    ids = arrays["request_id"]
    columns["request_id"] = pd.arrays.IntegerArray(ids, mask=ids == 0)
    if "method" in arrays:
        columns["method"] = arrays["method"]
    columns["action"] = arrays["action"]
    names = agent.process.action_names
    if names is not None:
        columns["action_name"] = np.asarray(names, dtype=object)[arrays["action"]]
    return pd.DataFrame(columns)


@pytest.mark.parametrize("pandas_2", [False, True])
@pytest.mark.parametrize("variant", ["plain", "named", "methods", "text states"])
def test_the_frame_is_the_one_a_dict_of_its_columns_makes(
    tmp_path, variant, pandas_2, monkeypatch
):
    # The frame is assembled from blocks of its final dtypes (from a dict
    # where pandas 2 has no create_dataframe_from_blocks), on a column index
    # made once per layout: it must equal, dtypes and column index included,
    # the frame pd.DataFrame builds from the same columns.
    from skrbal.inspection import InspectionMethod

    if pandas_2:
        monkeypatch.setattr(decisions_module, "_frame_from_blocks", lambda: None)

    process = synthetic_decision_process().set_params(inspection_cost=1e-6)
    X, y = X0, Y0
    params = {}
    if variant == "plain":
        process.set_params(action_names=None)
    if variant == "methods":
        params["inspections"] = [
            InspectionMethod(
                name="drone",
                cost=1e-6,
                confusion=np.eye(4),
                outcomes=["none", "minor", "major", "failed"],
            )
        ]
    if variant == "text states":
        process.set_params(state_names=["ok", "minor", "major", "failed"])
    agent = RiskBasedAgent(
        estimator=GaussianNB(),
        process=process,
        store=str(tmp_path / "agent.db"),
        **params,
    ).fit(X, y)
    try:
        rows = np.array([[12.5], [-5.0], [12.0], [2.9]])
        frames = []
        for shift, key in ((0.0, "b1"), (0.01, "b2")):
            frames.append(agent.observe(rows + shift, key=key))
            # The retry returns the same decisions, as arrays.
            arrays = agent.observe(rows + shift, key=key, output="arrays")
            expected = _frame_from_dict(arrays, agent)
            pd.testing.assert_frame_equal(frames[-1], expected, check_exact=True)
            assert frames[-1].columns.dtype == expected.columns.dtype
        assert frames[0]["inspect"].any()
        # The column index is made once for the agent's frames where pandas
        # builds them from blocks (pandas 3); the dict path of pandas 2 (the
        # oldest supported versions too) makes its own.
        from_blocks = decisions_module._frame_from_blocks() is not None
        assert (frames[0].columns is frames[1].columns) == from_blocks
    finally:
        agent.close()
