"""The full modAL loop (query, teach, score) with skrbal's EVPI strategy.

modAL 0.4.2 passes ``force_all_finite`` to ``check_X_y``, which scikit-learn
1.8 removed, so its ``teach``/``fit`` only work on scikit-learn < 1.8. ``make
test`` runs this file a second time in a virtual environment with
scikit-learn 1.7 (``.venv-modal``), where it must not skip.
"""

import os

import numpy as np
import pytest
import sklearn
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.query import EVPISampling, evpi_sampling

modal_models = pytest.importorskip("modAL.models")

_SKLEARN = tuple(int(part) for part in sklearn.__version__.split(".")[:2])
if _SKLEARN >= (1, 8):
    if os.environ.get("SKRBAL_REQUIRE_MODAL_LOOP"):
        raise RuntimeError(
            f"the modAL loop needs scikit-learn < 1.8, found {sklearn.__version__}"
        )
    pytest.skip(
        "modAL's teach needs scikit-learn < 1.8; `make test` runs this file in "
        ".venv-modal",
        allow_module_level=True,
    )


def test_modal_active_learner_full_loop():
    rng = np.random.default_rng(0)
    centres = np.array([-5.19, -0.66, 5.75, 19.11])
    y_pool = np.repeat([1, 2, 3, 4], 100)
    X_pool = np.column_stack(
        [rng.normal(centres[y_pool - 1], 3.0), rng.normal(0, 1, y_pool.size)]
    )
    init = np.array([0, 1, 2, 100, 101, 102, 200, 201, 202, 300, 301, 302])
    process = synthetic_decision_process()
    learner = modal_models.ActiveLearner(
        estimator=GaussianNB(),
        query_strategy=EVPISampling(process=process),
        X_training=X_pool[init],
        y_training=y_pool[init],
    )
    scores = [learner.score(X_pool, y_pool)]
    for n_instances in (1, 2, 3, 2, 1):
        expected, _ = evpi_sampling(
            learner.estimator, X_pool, n_instances, process=process
        )
        idx, rows = learner.query(X_pool, n_instances=n_instances)
        np.testing.assert_array_equal(idx, expected)
        learner.teach(rows, y_pool[idx])
        scores.append(learner.score(X_pool, y_pool))
    assert learner.X_training.shape[0] == init.size + 9
    assert all(0 <= s <= 1 for s in scores)
