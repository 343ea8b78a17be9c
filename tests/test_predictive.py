"""The numpy-only Student-t predictive of the NIW classifiers (issue 28.25)."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skrbal._predictive import StudentTPredictive
from skrbal.mixture import BayesianGMMClassifier, SemiSupervisedGMMClassifier

ROOT = Path(__file__).resolve().parents[1]


def _fitted(cls=BayesianGMMClassifier, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, 1.0, size=(6, 2)) for c in (0.0, 3.0, 7.0)])
    y = np.repeat([1, 2, 3], 6)
    return cls(classes=[1, 2, 3, 4]).fit(X, y), rng, X, y


def _learnt(model, X, y, row, label):
    """``model`` after one more label (fantasised, as a campaign does)."""
    if hasattr(model, "partial_fit"):
        return copy.deepcopy(model).partial_fit(row, [label])
    return copy.deepcopy(model).fit(np.vstack([X, row]), np.append(y, label))


@pytest.mark.parametrize("cls", [BayesianGMMClassifier, SemiSupervisedGMMClassifier])
def test_the_predictive_from_json_gives_predict_proba_bit_for_bit(cls):
    """A model's beliefs are computed from a few arrays per class; written as
    JSON and read back, they give the model's ``predict_proba`` exactly, for
    one model and for copies that learnt fantasised labels (stacked)."""
    model, rng, X_train, y_train = _fitted(cls)
    X = np.vstack([rng.normal(3.0, 4.0, size=(50, 2)), [[1e200, -1e200]]])
    copies = [_learnt(model, X_train, y_train, X[:1], k) for k in (1, 2, 4)]
    stacked = BayesianGMMClassifier.stacked_predictor([model, *copies])
    assert not stacked.directed
    again = StudentTPredictive.from_json(stacked.predictive.to_json())
    got = again.proba(X)
    expected = np.stack([m.predict_proba(X) for m in (model, *copies)])
    assert got.shape == (4, 51, 4)
    assert np.array_equal(got, expected)
    # A class the copies share (bit for bit) is computed once.
    assert again.means.shape[0] < 16


def test_a_predictive_refuses_json_that_does_not_fit():
    model = _fitted()[0]
    given = json.loads(
        BayesianGMMClassifier.stacked_predictor([model]).predictive.to_json()
    )
    given["offset"] = given["offset"][:-1]
    with pytest.raises(ValueError, match="StudentTPredictive"):
        StudentTPredictive.from_json(json.dumps(given))
    with pytest.raises(ValueError, match="not a StudentTPredictive's JSON"):
        StudentTPredictive.from_json('{"format": 99}')


def test_the_predictive_imports_numpy_alone(tmp_path):
    """#28.25: the beliefs of a stored model, computed where neither
    scikit-learn nor scipy is imported, equal the model's."""
    model, rng = _fitted()[:2]
    X = rng.normal(3.0, 3.0, size=(20, 2))
    text = BayesianGMMClassifier.stacked_predictor([model]).predictive.to_json()
    probe = (
        "import json, sys\nimport numpy as np\n"
        "from skrbal._predictive import StudentTPredictive\n"
        "given = json.loads(sys.stdin.read())\n"
        "p = StudentTPredictive.from_json(given['model'])\n"
        "proba = p.proba(np.array(given['X']))[0]\n"
        "heavy = [m for m in ('sklearn', 'scipy', 'pandas') if m in sys.modules]\n"
        "print(json.dumps([proba.tobytes().hex(), heavy]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        input=json.dumps({"model": text, "X": X.tolist()}),
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    proba, heavy = json.loads(result.stdout)
    assert heavy == []
    assert proba == model.predict_proba(X).tobytes().hex()
