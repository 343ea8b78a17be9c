"""Issue 28.12: a batch repeating the agent's last observations is named.

An agent without times cannot tell a batch given twice from new rows. The
rule lives in :meth:`RiskBasedAgent.observe` (the ``skrbal agent observe``
command goes through it), on every store.
"""

import warnings

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.exceptions import RepeatedBatchWarning
from skrbal.online import RiskBasedAgent

X0 = [[-5.0], [0.0], [6.0], [19.0]]
BATCH = np.array([[12.5], [-5.0], [3.25]])


def repeats(call) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [
        str(w.message) for w in caught if issubclass(w.category, RepeatedBatchWarning)
    ]


def agent(store=None):
    return RiskBasedAgent(
        estimator=GaussianNB(), process=synthetic_decision_process(), store=store,
        name="bridge",
    ).fit(X0, [1, 2, 3, 4])  # fmt: skip


def test_a_batch_given_twice_warns_and_is_still_decided():
    with agent() as a:
        assert repeats(lambda: a.observe(BATCH)) == []
        messages = repeats(lambda: a.observe(BATCH))
        assert a.n_steps_ == 4 + 6  # decided again, as new steps
    assert messages == [
        "agent 'bridge': rows 0 to 2 of this call repeat the agent's last 3 "
        "observations (steps 4 to 6) exactly; they are decided again as new "
        "steps (was the same batch observed twice?)"
    ]


def test_other_rows_a_shorter_tail_or_commissioning_rows_are_no_repeat():
    with agent() as a:
        assert repeats(lambda: a.observe(X0)) == []  # the commissioning rows
        assert repeats(lambda: a.observe(BATCH)) == []
        assert repeats(lambda: a.observe(BATCH[:2])) == []  # not the last 2
        assert repeats(lambda: a.observe(BATCH[1:] + 1e-12)) == []  # not bit for bit
        assert len(repeats(lambda: a.observe(BATCH[1:] + 1e-12))) == 1


def test_a_keyed_retry_is_no_repeat():
    with agent() as a:
        a.observe(BATCH, key="b-1")
        assert repeats(lambda: a.observe(BATCH, key="b-1")) == []
        assert a.n_steps_ == 7


def test_the_rule_holds_across_a_resume(tmp_path):
    store = f"sqlite:///{tmp_path / 'a.db'}"
    with agent(store) as a:
        a.observe(BATCH)
    with RiskBasedAgent.from_store(store, "bridge") as a:
        assert len(repeats(lambda: a.observe(BATCH))) == 1
        assert len(repeats(lambda: a.observe(BATCH[:1]))) == 0


def test_an_agent_with_times_is_not_warned():
    with RiskBasedAgent(
        estimator=GaussianNB(), process=synthetic_decision_process()
    ).fit(X0, [1, 2, 3, 4], timestamps=[0.0, 1.0, 2.0, 3.0]) as a:
        a.observe(BATCH, timestamps=[5.0, 5.0, 5.0])
        assert repeats(lambda: a.observe(BATCH, timestamps=[5.0, 5.0, 5.0])) == []


@pytest.mark.parametrize("n", [1, 2])
def test_the_warning_names_what_it_saw(n):
    with agent() as a:
        a.observe(BATCH[:n])
        (message,) = repeats(lambda: a.observe(BATCH[:n]))
    assert f"last {n} observations" in message
