"""One configuration fingerprint: canonical JSON, for studies and stores."""

import numpy as np
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skrbal._fingerprint import dumps, encode_config, fingerprint
from skrbal.online import _config


def _first(X, weights):
    return X * weights[0]


def _pipeline(weights):
    return make_pipeline(
        FunctionTransformer(_first, kw_args={"weights": weights}), GaussianNB()
    )


def test_a_change_deep_inside_a_long_parameter_changes_the_fingerprint():
    weights = np.ones(2000)
    changed = weights.copy()
    changed[1000] = 1.0 + 2**-52  # one ulp: full precision
    assert repr(_pipeline(weights)) == repr(_pipeline(changed))
    assert fingerprint(_pipeline(weights)) != fingerprint(_pipeline(changed))
    assert fingerprint(_pipeline(weights)) == fingerprint(_pipeline(weights.copy()))


def test_functions_are_named_not_addressed():
    encoded = dumps(encode_config(_pipeline(np.ones(2))))
    assert "test_fingerprint._first>" in encoded
    assert " at 0x" not in encoded


def test_the_store_uses_the_same_functions():
    assert _config.encode_config is encode_config
    assert _config.dumps is dumps
    assert _config.fingerprint is fingerprint
