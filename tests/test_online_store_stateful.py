"""An agent driven through random sequences of calls and restarts.

A hypothesis state machine observes, records results, cancels requests,
records actions and routine labels, retries keyed calls (same client key:
the stored answer, nothing changed; same key, other inputs:
IdempotencyKeyError), restarts the agent (close, then ``from_store``) and
kills it inside a keyed ``observe``, before or after its commit (then
restarts it and retries the call, which must happen exactly once), and
checks after every step that the store holds what an in-memory model of the
calls says it must, that its chain verifies, and that a restart rebuilds
the same model (identical beliefs on a probe).
"""

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import create_engine, text

from skrbal import synthetic_decision_process
from skrbal.exceptions import IdempotencyKeyError
from skrbal.online import AgentStore, RiskBasedAgent

PROCESS = synthetic_decision_process().set_params(inspection_cost=1e-4)
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)
POSTGRES_ENV = "SKRBAL_TEST_POSTGRES_URL"
PROBE = np.linspace(-8.0, 22.0, 25)[:, None]


class _Killed(BaseException):
    """The process running the agent died (a SIGKILL, simulated in a test)."""


class AgentMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.url = self._new_store()
        self.agent = RiskBasedAgent(
            estimator=GaussianNB(), process=PROCESS, store=self.url
        ).fit(X0, Y0)
        self.n_steps, self.open, self.done, self.cancelled = 8, {}, 0, 0
        # Keyed calls made: key -> (call, inputs, answer).
        self.keyed = {}
        # Observed steps with a request, or a routine label: not labellable.
        self.taken, self.routine = set(), 0

    @rule(
        xs=st.lists(st.floats(min_value=11.0, max_value=13.5), min_size=1, max_size=6),
        keyed=st.booleans(),
    )
    def observe(self, xs, keyed):
        key = f"observe-{len(self.keyed)}" if keyed else None
        decisions = self.agent.observe(np.array(xs)[:, None], key=key)
        if keyed:
            self.keyed[key] = ("observe", xs, decisions)
        made = decisions[decisions["inspect"]]
        for step, request_id in zip(made["step"], made["request_id"]):
            self.open[int(request_id)] = int(step)
            self.taken.add(int(step))
        self.n_steps += len(xs)

    @precondition(lambda self: self.n_steps - 8 > len(self.taken))
    @rule(data=st.data(), label=st.sampled_from([1, 2, 3, 4]))
    def record_label(self, data, label):
        free = sorted(set(range(8, self.n_steps)) - self.taken)
        step = data.draw(st.sampled_from(free))
        budget = dict(self.agent.budget_state_)
        self.agent.record_label(step, label)
        assert self.agent.budget_state_ == budget
        self.taken.add(step)
        self.routine += 1

    @precondition(lambda self: self.open)
    @rule(data=st.data(), label=st.sampled_from([1, 2, 3, 4]), keyed=st.booleans())
    def record_result(self, data, label, keyed):
        request_id = data.draw(st.sampled_from(sorted(self.open)))
        key = f"result-{len(self.keyed)}" if keyed else None
        action = self.agent.record_inspection(request_id, label, key=key)
        if keyed:
            self.keyed[key] = ("result", (request_id, label), action)
        del self.open[request_id]
        self.done += 1

    @precondition(lambda self: self.keyed)
    @rule(data=st.data(), other=st.booleans())
    def retry(self, data, other):
        """A keyed call again: its answer, nothing changed; other inputs: refused."""
        key = data.draw(st.sampled_from(sorted(self.keyed)))
        call, inputs, answer = self.keyed[key]
        before = (self.agent.n_steps_, self.agent.status())
        if call == "observe":
            xs = np.array(inputs)[:, None]
            if other:
                with pytest.raises(IdempotencyKeyError, match="another X"):
                    self.agent.observe(xs + 1.0, key=key)
            else:
                pd.testing.assert_frame_equal(self.agent.observe(xs, key=key), answer)
        else:
            request_id, label = inputs
            if other:
                with pytest.raises(IdempotencyKeyError, match="another label"):
                    self.agent.record_inspection(request_id, label % 4 + 1, key=key)
            else:
                assert self.agent.record_inspection(request_id, label, key=key) == (
                    answer
                )
        assert (self.agent.n_steps_, self.agent.status()) == before

    @precondition(lambda self: self.open)
    @rule(data=st.data())
    def cancel(self, data):
        request_id = data.draw(st.sampled_from(sorted(self.open)))
        self.agent.cancel_request(request_id, reason="no access")
        del self.open[request_id]
        self.cancelled += 1

    @rule(data=st.data(), action=st.integers(0, 1))
    def record_action(self, data, action):
        step = data.draw(st.integers(0, self.n_steps - 1))
        self.agent.record_action(step, action)

    @rule(
        xs=st.lists(st.floats(min_value=11.0, max_value=13.5), min_size=1, max_size=6),
        committed=st.booleans(),
    )
    def kill(self, xs, committed):
        """The process dies in a keyed observe, before or after its commit;
        it restarts and the caller retries: the call happens exactly once."""
        key = f"killed-{len(self.keyed)}"
        store = self.agent.store_
        write = store.append_observe

        def dying(*args, **kwargs):
            if committed:
                write(*args, **kwargs)
            raise _Killed  # nothing after this line runs in a killed process

        store.append_observe = dying
        try:
            with pytest.raises(_Killed):
                self.agent.observe(np.array(xs)[:, None], key=key)
        finally:
            del store.append_observe
        # Death: what the process held in memory is lost with its lock.
        self.agent.close()
        self.agent = RiskBasedAgent.from_store(self.url)
        assert self.agent.n_steps_ == self.n_steps + (len(xs) if committed else 0)
        self.keyed_retry_of_observe(key, xs)

    def keyed_retry_of_observe(self, key, xs):
        decisions = self.agent.observe(np.array(xs)[:, None], key=key)
        self.keyed[key] = ("observe", xs, decisions)
        made = decisions[decisions["inspect"]]
        for step, request_id in zip(made["step"], made["request_id"]):
            self.open[int(request_id)] = int(step)
            self.taken.add(int(step))
        self.n_steps += len(xs)

    @rule()
    def restart(self):
        before = self.agent.estimator_.predict_proba(PROBE)
        self.agent.close()
        self.agent = RiskBasedAgent.from_store(self.url)
        np.testing.assert_array_equal(
            self.agent.estimator_.predict_proba(PROBE), before
        )

    @invariant()
    def store_holds_the_calls(self):
        status = self.agent.status()
        assert status["n_commissioning"] + status["n_observations"] == self.n_steps
        assert status["n_open"] == len(self.open)
        assert status["n_results"] == self.done
        assert status["n_cancelled"] == self.cancelled
        assert status["n_routine"] == self.routine
        assert [r["request_id"] for r in status["open_requests"]] == sorted(self.open)
        with AgentStore(self.url) as store:
            store.verify("agent")

    def _new_store(self):
        self.folder = Path(tempfile.mkdtemp())
        return self.folder / "agents.db"

    def teardown(self):
        self.agent.close()
        shutil.rmtree(self.folder)


class PostgresAgentMachine(AgentMachine):
    """The same, on a fresh schema of the PostgreSQL test server."""

    def _new_store(self):
        self.schema = f"t_{uuid.uuid4().hex[:16]}"
        self.engine = create_engine(os.environ[POSTGRES_ENV])
        with self.engine.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {self.schema}"))
        base = os.environ[POSTGRES_ENV]
        separator = "&" if "?" in base else "?"
        return f"{base}{separator}options=-csearch_path%3D{self.schema}"

    def teardown(self):
        self.agent.close()
        with self.engine.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {self.schema} CASCADE"))
        self.engine.dispose()


SETTINGS = settings(max_examples=examples(12), stateful_step_count=10, deadline=None)
AgentMachine.TestCase.settings = SETTINGS
PostgresAgentMachine.TestCase.settings = SETTINGS
test_agent_store_state_machine = AgentMachine.TestCase
test_agent_store_state_machine_postgres = pytest.mark.skipif(
    not os.environ.get(POSTGRES_ENV), reason=f"{POSTGRES_ENV} is not set"
)(PostgresAgentMachine.TestCase)
