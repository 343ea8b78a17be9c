"""skrbal.exceptions is the one home of every public warning and error class."""

import ast
import doctest
import importlib
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.exceptions import ConvergenceWarning

import skrbal
import skrbal.exceptions as exceptions

PACKAGE = Path(skrbal.__file__).parent

# Where each class was defined before skrbal.exceptions held them all: user
# code imports them from these modules, so they must stay the same objects.
FORMER_HOMES = {
    "ImpossibleEvidenceError": ["skrbal.smoothing", "skrbal.smoothing._result"],
    "ImpossibleReportError": ["skrbal.inspection", "skrbal.inspection._value"],
    "NonDiscriminatingFitWarning": ["skrbal.rvm", "skrbal.rvm._mrvm"],
    "StudyFileWarning": ["skrbal.experiments", "skrbal.experiments._folder"],
    "ConfigurationError": ["skrbal.online", "skrbal.online._config"],
    "StoreError": ["skrbal.online", "skrbal.online._sql._store"],
    "AgentLockedError": ["skrbal.online", "skrbal.online._sql._lock"],
    "RequestError": ["skrbal.online", "skrbal.online._agent"],
    "BudgetStarvedError": ["skrbal.budget"],
    "BudgetStarvedWarning": ["skrbal.budget"],
}
# Raised and caught inside one module, never seen by a user.
INTERNAL = {"MaxPlusFallback", "ScaledChainUnderflow"}


def _defined_exception_classes():
    """(module, class name) of every class skrbal defines on an exception base."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                ast.unparse(base).endswith(("Error", "Warning", "Exception"))
                for base in node.bases
            ):
                module = ".".join(
                    path.relative_to(PACKAGE.parent).with_suffix("").parts
                )
                found.append((module, node.name))
    return found


def test_every_public_exception_is_defined_in_skrbal_exceptions():
    elsewhere = [
        f"{module}.{name}"
        for module, name in _defined_exception_classes()
        if module != "skrbal.exceptions" and name not in INTERNAL
    ]
    assert not elsewhere, f"define {elsewhere} in skrbal/exceptions.py"


@pytest.mark.parametrize("name", exceptions.__all__)
def test_every_name_is_a_warning_or_error_of_this_module(name):
    cls = getattr(exceptions, name)
    assert issubclass(cls, (Warning, Exception))
    assert cls.__module__ == "skrbal.exceptions"
    assert cls.__qualname__ == name
    assert cls.__doc__ and ">>>" in cls.__doc__


@pytest.mark.parametrize(
    ("name", "module"),
    [(name, module) for name, modules in FORMER_HOMES.items() for module in modules],
)
def test_former_homes_re_export_the_same_class(name, module):
    assert getattr(importlib.import_module(module), name) is getattr(exceptions, name)
    assert name in exceptions.__all__


def test_the_hierarchy_is_unchanged():
    assert issubclass(
        exceptions.ImpossibleReportError, exceptions.ImpossibleEvidenceError
    )
    assert issubclass(exceptions.ImpossibleEvidenceError, ValueError)
    assert issubclass(exceptions.NonDiscriminatingFitWarning, ConvergenceWarning)
    assert issubclass(exceptions.StudyFileWarning, UserWarning)
    assert issubclass(exceptions.ConfigurationError, ValueError)
    assert issubclass(exceptions.RequestError, ValueError)
    assert issubclass(exceptions.StoreError, RuntimeError)
    assert issubclass(exceptions.AgentLockedError, RuntimeError)


def test_warnings_pickle_as_the_same_class():
    # Batch studies send fitted models, with their recorded warnings, between
    # processes.
    for name in ("NonDiscriminatingFitWarning", "StudyFileWarning"):
        cls = getattr(exceptions, name)
        assert type(pickle.loads(pickle.dumps(cls("x")))) is cls


def test_importing_the_module_imports_no_heavy_dependency():
    code = (
        "import sys, importlib.util, pathlib\n"
        "spec = importlib.util.spec_from_file_location("
        f"'skrbal.exceptions', {str(PACKAGE / 'exceptions.py')!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "print(sorted(m for m in ('sklearn', 'sqlalchemy', 'pandas', 'scipy')"
        " if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_an_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'NoSuchError'"):
        exceptions.NoSuchError  # noqa: B018


def test_the_class_made_on_first_use_runs_its_example():
    # pytest's doctest collection only sees classes already in the module's
    # namespace, which this one is not until first used.
    cls = exceptions.NonDiscriminatingFitWarning
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    for test in doctest.DocTestFinder().find(cls, cls.__qualname__, globs={}):
        runner.run(test)
    assert runner.tries > 0
    assert runner.failures == 0
