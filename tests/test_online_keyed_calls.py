"""The inputs a keyed call stores with its client key, fixed across versions.

A store keeps, with each client key, the SHA-256 of every input of the call
(the JSON of the value as the agent validated it). A retry made by a later
version of skrbal must compute the same digests, or it would be refused as
another call: these are written out here, independently of the agent's code.
"""

import hashlib
import json

import numpy as np
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.online import RiskBasedAgent

PROCESS = synthetic_decision_process().set_params(inspection_cost=1.0)
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-5.3], [-0.4], [6.1], [18.5]])
Y0 = np.array([1, 2, 3, 4, 1, 2, 3, 4])


def _sha(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def _stored(agent, key) -> dict:
    return dict(agent.store_.find_key(agent.agent_id_, key).key.digest)


def test_keyed_calls_store_the_digest_of_each_input():
    agent = RiskBasedAgent(estimator=GaussianNB(var_smoothing=0.05), process=PROCESS)
    with agent.fit(X0, Y0, timestamps=np.arange(8.0)):
        decisions = agent.observe([[12.5], [13.0]], timestamps=[100.0, 200.0])
        first, second = decisions["request_id"].astype(int).tolist()
        agent.record_inspection(first, np.int64(4), timestamp=250.0, key="r")
        agent.cancel_request(second, reason="no access", key="c")
        agent.record_action(np.int64(9), 1, key="a")
        assert _stored(agent, "r") == {
            "call": "record_inspection",
            "request_id": _sha(first),
            "label": _sha(4),
            "report": _sha(None),
            "timestamp": _sha(250.0),
        }
        assert _stored(agent, "c") == {
            "call": "cancel_request",
            "request_id": _sha(second),
            "reason": _sha("no access"),
        }
        assert _stored(agent, "a") == {
            "call": "record_action",
            "step": _sha(9),
            "action": _sha(1),
        }
