"""scikit-learn's estimator checks on every public skrbal estimator.

Estimators are discovered from the public packages' ``__all__``, so a new
estimator cannot skip the checks by not being listed here. Configuration objects
(decision processes, query strategies, learners that drive an estimator) are
``BaseEstimator`` subclasses too, for ``clone`` and ``repr``, but they are not
models of data; only classifiers, regressors, transformers and clusterers are
checked.
"""

import importlib
import inspect
import pkgutil

import pytest
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClusterMixin,
    RegressorMixin,
    TransformerMixin,
)
from sklearn.utils.estimator_checks import parametrize_with_checks

import skrbal

# Expected failures, once, with the reason: {class name: {check name: reason}}.
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    "PooledGMMClassifier": {
        "check_classifiers_classes": (
            "uses -1 as a class label, which marks the structure's unlabelled "
            "steps (sklearn.semi_supervised convention), as for "
            "SemiSupervisedGMMClassifier"
        ),
    },
    "SemiSupervisedGMMClassifier": {
        "check_classifiers_classes": (
            "uses -1 as a class label, which marks unlabelled samples "
            "(sklearn.semi_supervised convention); sklearn exempts its own "
            "semi-supervised estimators from this by name"
        ),
    },
}

# Constructor arguments that keep the checks fast: {class name: {param: value}}.
CHECK_PARAMS: dict[str, dict] = {}


_MODEL_MIXINS = (ClassifierMixin, RegressorMixin, TransformerMixin, ClusterMixin)


def _public_estimators():
    found = {}
    modules = [skrbal]
    for info in pkgutil.walk_packages(skrbal.__path__, prefix="skrbal."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        if info.name.startswith("skrbal.tests"):
            continue
        modules.append(importlib.import_module(info.name))
    for module in modules:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseEstimator)
                and issubclass(obj, _MODEL_MIXINS)
                and not inspect.isabstract(obj)
            ):
                found[obj.__name__] = obj
    return [found[name] for name in sorted(found)]


ESTIMATORS = _public_estimators()


def _instances():
    return [est(**CHECK_PARAMS.get(est.__name__, {})) for est in ESTIMATORS]


def test_discovery_is_not_empty():
    names = {est.__name__ for est in ESTIMATORS}
    assert unknown_names(names) == set()


def unknown_names(names):
    """Names in the expected-failure tables that no public estimator has."""
    return (set(EXPECTED_FAILED_CHECKS) | set(CHECK_PARAMS)) - names


@parametrize_with_checks(
    _instances(),
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS.get(
        type(est).__name__, {}
    ),
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: e.__name__)
def test_public_estimator_has_docstring_example(est):
    assert est.__doc__ and ">>> " in est.__doc__, est.__name__
