"""Names of a package imported when first used (PEP 562), in one helper."""

import ast
import subprocess
import sys
import types
from pathlib import Path

import pytest

import skrbal
import skrbal.online
from skrbal._lazy import lazy_attributes

ROOT = Path(__file__).resolve().parents[1]


def _package(lazy, public):
    module = types.ModuleType("fleet")
    module.__all__ = public
    module.__getattr__, module.__dir__ = lazy_attributes(
        "fleet", lazy, vars(module), public
    )
    return module


def test_a_name_is_imported_on_first_use_then_is_a_plain_attribute():
    import json

    package = _package({"dumps": "json", "sqrt": "math"}, ["dumps", "sqrt"])
    assert "dumps" not in vars(package)
    assert package.dumps is json.dumps
    assert vars(package)["dumps"] is json.dumps  # __getattr__ is not called again
    assert "sqrt" not in vars(package)
    assert sorted(dir(package)) == dir(package)
    assert {"dumps", "sqrt", "__all__"} <= set(dir(package))


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    package = _package({"sqrt": "math"}, ["sqrt"])
    with pytest.raises(AttributeError, match="module 'fleet' has no attribute 'x'"):
        package.x  # noqa: B018
    assert not hasattr(package, "cos")


@pytest.mark.parametrize("package", [skrbal, skrbal.online])
def test_skrbal_and_skrbal_online_share_the_helper(package):
    assert package.__getattr__.__module__ == "skrbal._lazy"
    assert package.__dir__.__module__ == "skrbal._lazy"
    with pytest.raises(AttributeError, match=f"module '{package.__name__}' has no"):
        package.nothing  # noqa: B018


def test_importing_skrbal_online_imports_none_of_its_names():
    probe = (
        "import sys, skrbal.online\n"
        "print(sorted(m for m in sys.modules if m.startswith(('skrbal', 'sklearn',"
        " 'pandas'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    loaded = ast.literal_eval(result.stdout.strip().splitlines()[-1])
    assert set(loaded) <= {"skrbal", "skrbal._lazy", "skrbal.online"}, loaded
