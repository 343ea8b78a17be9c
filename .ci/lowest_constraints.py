"""Print pip constraints that pin every declared dependency to its lower bound.

Used by ``make test-oldest``: the declared lower bounds must really work, so CI
installs exactly them (core dependencies and the extras named on the command
line) and runs the test suite. A requirement without a lower bound is left
free; ``>=X`` becomes ``==X`` (PEP 440 pads ``2024.1`` to ``2024.1.0``).
"""

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$")


def lowest_pins(extras: list[str]) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    optional = project.get("optional-dependencies", {})
    for extra in extras:
        if extra not in optional:
            sys.exit(f"lowest_constraints: no extra {extra!r} in pyproject.toml")
        requirements += optional[extra]
    pins = {}
    for requirement in requirements:
        match = _REQUIREMENT.match(requirement.split(";")[0])
        name, _, spec = match.groups()
        if name.lower() == "skrbal":
            continue
        lower = re.search(r">=\s*([0-9][^,\s]*)", spec)
        if lower:
            pins[name.lower()] = lower.group(1)
    return [f"{name}=={version}" for name, version in sorted(pins.items())]


if __name__ == "__main__":
    print("\n".join(lowest_pins(sys.argv[1:])))
