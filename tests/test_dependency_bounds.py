"""Declared lower bounds must not admit versions with known vulnerabilities."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# package -> (first fixed version, advisory): a lower bound below it lets pip
# resolve (and `make test-oldest` pin) a vulnerable release.
FIXED_IN = {
    # Deserialisation of untrusted IPC/Parquet data runs arbitrary code.
    "pyarrow": ((14, 0, 1), "CVE-2023-47248"),
}


def _declared_lower_bounds() -> dict[str, list[tuple[int, ...]]]:
    import tomllib  # Python >= 3.11, as the project requires

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    bounds: dict[str, list[tuple[int, ...]]] = {}
    for requirement in requirements:
        match = re.match(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*([^;]*)", requirement)
        name, _, spec = match.groups()
        lower = re.search(r">=\s*([0-9][0-9.]*)", spec)
        version = tuple(int(p) for p in lower.group(1).split(".")) if lower else ()
        bounds.setdefault(name.lower(), []).append(version)
    return bounds


@pytest.mark.parametrize("package", sorted(FIXED_IN))
def test_lower_bounds_exclude_vulnerable_versions(package):
    fixed, advisory = FIXED_IN[package]
    bounds = _declared_lower_bounds()
    assert package in bounds, f"{package} is no longer declared: drop it here"
    for lower in bounds[package]:
        assert lower >= fixed, (
            f"{package}>={'.'.join(map(str, lower)) or '(none)'} admits {advisory}, "
            f"fixed in {'.'.join(map(str, fixed))}"
        )


def test_test_oldest_pins_the_fixed_versions():
    spec = importlib.util.spec_from_file_location(
        "lowest_constraints", ROOT / ".ci" / "lowest_constraints.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pins = module.lowest_pins(["parquet"])
    assert "pyarrow==14.0.1" in pins
