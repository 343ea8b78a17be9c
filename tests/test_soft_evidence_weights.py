"""Soft evidence whose conjugate update gives each class's exact posterior mean.

A report that a sample is in class ``k`` with probability ``p`` makes the
exact posterior of the class's parameters the mixture ``p * updated + (1 - p)
* unchanged``. The weights of :func:`skrbal.inspection.weighted_copies` with
``mean_precision`` are checked against that mixture, enumerated by brute
force over every assignment of the reported samples.
"""

import itertools

import numpy as np
import pytest

from skrbal import synthetic_decision_process
from skrbal._learning import soft_rows
from skrbal.inspection import weighted_copies
from skrbal.mixture import BayesianGMMClassifier

CLASSES = synthetic_decision_process().classes_


def _labelled(seed=0):
    """Labels of the first two states only: states 3 and 4 rest on the prior."""
    rng = np.random.default_rng(seed)
    y = np.repeat([1, 2], 30)
    X = np.where(y[:, None] == 1, -2.0, 2.0) + rng.normal(size=(60, 2))
    return X, y


def _model(X, y):
    return BayesianGMMClassifier(classes=CLASSES, mean_precision_prior=1.0).fit(X, y)


def _exact_mean(model, X_soft, posterior):
    """E[class mean | reports] by enumerating every assignment of the rows.

    Each reported row is in class ``k`` with probability ``posterior[:, k]``
    independently; given an assignment, the class's posterior mean is the
    conjugate one, ``(kappa m + sum x) / (kappa + n)``.
    """
    kappa0, m0 = model.mean_precision_posterior_, model.mean_posterior_
    exact = np.zeros_like(m0)
    for k in range(len(CLASSES)):
        p = posterior[:, k]
        for z in itertools.product([0, 1], repeat=len(p)):
            z = np.array(z, dtype=bool)
            chance = np.prod(np.where(z, p, 1.0 - p))
            total = kappa0[k] * m0[k] + X_soft[z].sum(axis=0)
            exact[k] += chance * total / (kappa0[k] + z.sum())
    return exact


def _taught(model, X_soft, posterior, mean_precision):
    X_c, y_c, w_c = weighted_copies(
        X_soft, posterior, CLASSES, mean_precision=mean_precision
    )
    return model.partial_fit(X_c, y_c, sample_weight=w_c).mean_posterior_


def test_one_report_gives_each_class_its_exact_posterior_mean():
    X, y = _labelled()
    x = np.array([[-2.5, 0.5]])  # a healthy sample falsely called damaged
    posterior = np.array([[0.5, 0.06, 0.22, 0.22]])
    exact = _exact_mean(_model(X, y), x, posterior)
    kappa = _model(X, y).mean_precision_posterior_
    matched = _taught(_model(X, y), x, posterior, kappa)
    np.testing.assert_allclose(matched, exact, rtol=1e-12, atol=1e-12)
    # Fractional weights move a never-labelled state's mean to the sample:
    # 0.22 / 1.22 of the way instead of the exact 0.22 / 2.
    fractional = _taught(_model(X, y), x, posterior, None)
    moved = (fractional[2] - exact[2]) / (x[0] - _model(X, y).mean_posterior_[2])
    np.testing.assert_allclose(moved, 0.22 / 1.22 - 0.22 / 2, rtol=1e-10)


def test_several_reports_stay_close_to_the_exact_mixture():
    X, y = _labelled(1)
    rng = np.random.default_rng(2)
    X_soft = rng.normal(loc=-2.0, size=(5, 2))
    posterior = rng.dirichlet([4.0, 1.0, 0.6, 0.6], size=5)
    exact = _exact_mean(_model(X, y), X_soft, posterior)
    kappa = _model(X, y).mean_precision_posterior_
    matched = _taught(_model(X, y), X_soft, posterior, kappa)
    fractional = _taught(_model(X, y), X_soft, posterior, None)
    error_matched = np.linalg.norm(matched - exact, axis=1)
    error_fractional = np.linalg.norm(fractional - exact, axis=1)
    # The never-labelled states (3, 4): sequential moment matching is an
    # approximation past one row, but several times closer than fractions.
    assert np.all(error_matched[2:] < 0.25 * error_fractional[2:])
    # The labelled states rest on 30 samples: both are close.
    assert np.all(error_matched[:2] < 1e-2)


def test_certain_rows_and_many_samples():
    # A certain row is a label (weight 1) whatever kappa is.
    _, y_c, w = weighted_copies([[0.0]], [[0.0, 1.0]], [1, 2], mean_precision=[3, 0.01])
    assert y_c.tolist() == [2] and w.tolist() == [1.0]
    # kappa grows by each weight: the second row sees 1 + 1/3.
    _, _, w = weighted_copies(
        [[0.0], [1.0]], [[0.5, 0.5], [0.5, 0.5]], [1, 2], mean_precision=[1.0, 1e9]
    )
    first = 0.5 / 1.5
    second = 0.5 * (1 + first) / (1 + first + 0.5)
    np.testing.assert_allclose(w, [first, 0.5, second, 0.5], rtol=1e-9)


@pytest.mark.parametrize(
    "mean_precision, match",
    [([1.0], r"shape \(2,\)"), ([1.0, 0.0], "positive"), ([1.0, np.nan], "finite")],
)
def test_mean_precision_errors(mean_precision, match):
    with pytest.raises(ValueError, match=match):
        weighted_copies([[0.0]], [[0.5, 0.5]], [1, 2], mean_precision=mean_precision)


def test_the_learners_rule_takes_the_models_kappa_for_an_update():
    X, y = _labelled()
    model = _model(X, y)
    x = np.array([[-2.5, 0.5]])
    posterior = np.array([[0.5, 0.06, 0.22, 0.22]])
    kappa = model.mean_precision_posterior_
    *_, weight, key = soft_rows(model, x, posterior, CLASSES, "partial_fit")
    assert key == "sample_weight"
    p = posterior[0]
    np.testing.assert_allclose(weight, p * kappa / (kappa + 1 - p))
    # A refit from scratch (no fitted kappa applies) keeps the fractions.
    *_, weight, _ = soft_rows(model, x, posterior, CLASSES, "fit")
    np.testing.assert_array_equal(weight, posterior[0])
