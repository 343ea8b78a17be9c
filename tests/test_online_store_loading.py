"""Loading a store runs no code: an allowlist of classes, checked parameters.

The PostgreSQL cases run when ``SKRBAL_TEST_POSTGRES_URL`` is set.
"""

import hashlib
import json
import shutil
import sys

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sqlalchemy import update

from skrbal import synthetic_decision_process
from skrbal.online import AgentStore, ConfigurationError, RiskBasedAgent
from skrbal.online._config import REBUILDABLE, decode_config, dumps, encode_config
from skrbal.online._sql import _schema as schema

PROCESS = synthetic_decision_process()
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)


def _commission(store, estimator):
    RiskBasedAgent(estimator=estimator, process=PROCESS, store=store).fit(
        X0, Y0
    ).close()


def test_a_pipeline_cache_folder_is_never_used_on_load(store_url, tmp_path):
    cache = tmp_path / "cache"
    piped = Pipeline([("scale", StandardScaler()), ("nb", GaussianNB())], memory=None)
    _commission(store_url, piped.set_params(memory=str(cache)))
    shutil.rmtree(cache)  # the user's own fit cached there; loading must not
    with pytest.raises(ConfigurationError, match=r"Pipeline parameter memory=.*files"):
        RiskBasedAgent.from_store(store_url)
    assert not cache.exists()
    # passed again by the user, it is theirs to trust, and checked
    same = Pipeline([("scale", StandardScaler()), ("nb", GaussianNB())])
    with RiskBasedAgent.from_store(
        store_url, estimator=same.set_params(memory=str(cache))
    ) as agent:
        agent.observe(X0[:2])


def test_only_allowlisted_classes_are_rebuilt(store_url):
    _commission(store_url, SVC(probability=True, random_state=0))
    with pytest.raises(ConfigurationError, match="not one of the classes"):
        RiskBasedAgent.from_store(store_url)
    with RiskBasedAgent.from_store(
        store_url, estimator=SVC(probability=True, random_state=0)
    ) as agent:
        agent.observe(X0[:1])
    assert "sklearn.pipeline.Pipeline" in REBUILDABLE


def test_a_name_in_the_store_is_never_imported():
    module = "sklearn.experimental.enable_iterative_imputer"
    assert module not in sys.modules
    for name in (f"{module}.IterativeImputer", "skrbal.cli.main", "os.system"):
        with pytest.raises(ConfigurationError, match="not one of the classes"):
            decode_config({"__estimator__": name, "params": {}})
    assert module not in sys.modules


def test_sizes_are_bounded():
    huge = encode_config(RandomForestClassifier(n_estimators=10**9))
    with pytest.raises(ConfigurationError, match=r"n_estimators=1000000000 refused"):
        decode_config(huge)
    rebuilt = decode_config(encode_config(RandomForestClassifier(n_estimators=50)))
    assert rebuilt.n_estimators == 50
    big = {"__ndarray__": [0] * 1_000_001, "dtype": "<i8", "shape": [1_000_001]}
    with pytest.raises(ConfigurationError, match="arrays of numbers"):
        decode_config(big)


def _edit_estimator(store_url, estimator, fingerprint=True):
    text = dumps(encode_config(estimator))
    values = {"estimator": text}
    if fingerprint:
        values["estimator_fingerprint"] = hashlib.sha256(text.encode()).hexdigest()
    with AgentStore(store_url) as store, store.engine.begin() as conn:
        conn.execute(update(schema.agents).values(**values))


def test_an_edited_configuration_is_not_resumed(store_url):
    _commission(store_url, GaussianNB(var_smoothing=1e-9))
    _edit_estimator(store_url, GaussianNB(var_smoothing=0.5), fingerprint=False)
    with pytest.raises(ConfigurationError, match="does not match its stored finger"):
        RiskBasedAgent.from_store(store_url)
    # a crafted store with a matching fingerprint still meets the bounds
    _edit_estimator(store_url, RandomForestClassifier(n_estimators=10**9))
    with pytest.raises(ConfigurationError, match="n_estimators"):
        RiskBasedAgent.from_store(store_url)


def test_a_stored_configuration_that_is_not_json_is_named(store_url):
    _commission(store_url, GaussianNB())
    with AgentStore(store_url) as store, store.engine.begin() as conn:
        text = "{not json"
        fingerprint = hashlib.sha256(text.encode()).hexdigest()
        conn.execute(
            update(schema.agents).values(budget=text, budget_fingerprint=fingerprint)
        )
    with pytest.raises(ConfigurationError, match="budget configuration is not JSON"):
        RiskBasedAgent.from_store(store_url)
    assert json.loads(dumps(encode_config(GaussianNB())))
