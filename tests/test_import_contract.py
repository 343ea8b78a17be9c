"""The import contract of skrbal, read from the source with ``ast``.

1. Packages keep their insides: no module imports ``skrbal.X._y`` (or a
   private name of ``skrbal.X``) from outside package ``X``. Top-level
   private modules and packages (``skrbal._labels``, ``skrbal._decision``,
   ``skrbal._learning``) are shared infrastructure: anyone may import their
   top level, but not their private submodules.
2. Layers are one-way: a module imports its own package or packages of
   strictly lower layers (:data:`LAYERS`). Packages of one layer do not
   import each other, so there is no cycle between packages.

Every import counts, including those inside functions (made lazy for start-up
time, they are still dependencies).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import skrbal

PACKAGE = Path(skrbal.__file__).resolve().parent

# Lowest first, derived from the import graph of the code (not from a wish):
# - the leaves import no other part of skrbal;
# - the decision process needs only labels and parameter checks, the Z24
#   labelling protocol (shared by the datasets and the Z24 case study) only
#   argument checks;
# - plotting and datasets need only the decision process, and experiments
#   uses plotting (its report's query curves), so both sit low, not at the
#   top as "figures come last" would suggest;
# - budget policies are pure functions of numbers;
# - the root package is a facade over the process and the mixture models,
#   and online reads __version__ from it;
# - query and metrics use inspection (EVSI, method checks);
# - _learning, the decision kernel, sits under both learners and the agent;
# - experiments run the learners; online sits above experiments only because
#   its command line (online/_cli.py, moving to skrbal/cli/) writes files
#   with the study folders' helpers; once that is gone the two are
#   independent;
# - the command line drives everything (its data options below it, the
#   ``python -m skrbal`` entry point above).
LAYERS = [
    {
        "exceptions",
        "_logspace",
        "_params",
        "_labels",
        "_validation",
        "_files",
        "_tables",
        "_fingerprint",
        "_scores",
        "_lazy",
        "_datetimes",
        "_separators",
    },
    {"_decision", "_z24_labels"},
    {"mixture", "rvm", "smoothing", "budget", "datasets", "plotting"},
    {"inspection", "skrbal"},
    {"query", "metrics"},
    {"_learning"},
    {"active"},
    {"experiments"},
    {"online"},
    {"cli"},
    {"__main__"},
]
# Imports allowed to break the contract, as (importing module, imported name),
# each with the reason: none today. The test fails when an entry is no longer
# needed, so the list can only shrink.
_KNOWN_VIOLATIONS: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(module: str) -> bool:
    return module == "skrbal" or (
        PACKAGE.parent.joinpath(*module.split("."), "__init__.py").is_file()
    )


def _exists(module: str) -> bool:
    base = PACKAGE.parent.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imported_names(module: str, source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of every skrbal module or name that ``source`` imports.

    ``from a.b import c`` imports ``a.b.c`` (a submodule or a name of
    ``a.b``); relative imports are resolved against ``module``.
    """
    package = module if _is_package(module) else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in names if name.split(".")[0] == "skrbal"]


def _unit(name: str, *, imported: bool = True) -> str:
    """The top-level part of skrbal that a module or imported name belongs to.

    ``skrbal.X...`` is ``X``; an imported name of the root package (``from
    skrbal import DecisionProcess``) is ``skrbal``, the facade.
    """
    parts = name.split(".")
    if len(parts) == 1 or (imported and not _exists(f"skrbal.{parts[1]}")):
        return "skrbal"
    return parts[1]


def _rank(unit: str) -> int | None:
    for rank, layer in enumerate(LAYERS):
        if unit in layer:
            return rank
    return None


def private_import(module: str, name: str) -> str | None:
    """The private container ``name`` reaches into from outside, if any.

    The first private part of ``name`` after ``skrbal.`` is checked: the
    importer must live inside its parent (``skrbal`` itself for the shared
    top-level modules).
    """
    package = module if _is_package(module) else module.rpartition(".")[0]
    parts = name.split(".")
    for i in range(2, len(parts)):
        if parts[i].startswith("_") and not parts[i].startswith("__"):
            parent = ".".join(parts[:i])
            if package != parent and not package.startswith(parent + "."):
                return ".".join(parts[: i + 1])
            return None
    return None


def violations(module: str, source: str) -> list[tuple[str, str, str]]:
    """``(imported name, rule, explanation)`` of each import that breaks the
    contract, once per imported private container or package."""
    found = {}
    unit = _unit(module, imported=False)
    rank = _rank(unit)
    for line, name in imported_names(module, source):
        private = private_import(module, name)
        if private is not None:
            found.setdefault(
                (private, "private"),
                f"line {line}: {module} imports {name}, inside another package; "
                "use (or make) a public name of its package",
            )
        target = _unit(name)
        if target == unit:
            continue
        if rank is None:
            found.setdefault(
                (unit, "layer"),
                f"{module}: skrbal.{unit} is in no layer; add it to LAYERS",
            )
            continue
        target_rank = _rank(target)
        if target_rank is None or target_rank >= rank:
            found.setdefault(
                (f"skrbal.{target}", "layer"),
                f"line {line}: {module} (layer {rank}) imports {name} (layer "
                f"{target_rank}): a module imports only lower layers",
            )
    return [(name, rule, text) for (name, rule), text in found.items()]


def _all_violations() -> dict[tuple[str, str], str]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for name, _, text in violations(module, path.read_text()):
            found[module, name] = text
    return found


def test_no_package_reaches_into_another_and_layers_are_one_way():
    new = {
        key: text
        for key, text in _all_violations().items()
        if key not in _KNOWN_VIOLATIONS
    }
    assert not new, "import contract broken:\n" + "\n".join(new.values())


def test_known_violations_are_still_needed():
    stale = _KNOWN_VIOLATIONS - set(_all_violations())
    assert not stale, f"remove {sorted(stale)} from _KNOWN_VIOLATIONS"


def test_every_part_of_skrbal_is_in_one_layer():
    units = {
        _unit(_module_name(path), imported=False) for path in PACKAGE.rglob("*.py")
    }
    placed = [unit for layer in LAYERS for unit in layer]
    assert len(placed) == len(set(placed)), "a unit is in two layers"
    assert units <= set(placed), f"add {sorted(units - set(placed))} to LAYERS"


# ------------------------------------------------------------------ self-test


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        # A package's own private modules, and shared top-level ones.
        ("skrbal.online._agent", "from skrbal.online._store import X", []),
        ("skrbal.online", "from skrbal.online import _store", []),
        ("skrbal.active._stream", "from skrbal._decision import DecisionProcess", []),
        ("skrbal.active._stream", "import skrbal._labels", []),
        ("skrbal.online._agent", "from skrbal import __version__", []),
        ("skrbal._decision._process", "from ._serialisation import x", []),
        # Reaching into another package, however it is spelled.
        (
            "skrbal.metrics._x",
            "from skrbal.inspection._value import check_methods",
            [("skrbal.inspection._value", "private")],
        ),
        (
            "skrbal.metrics._x",
            "def f():\n    import skrbal.inspection._value as v\n",
            [("skrbal.inspection._value", "private")],
        ),
        (
            "skrbal.metrics._x",
            "from skrbal.inspection import _value",
            [("skrbal.inspection._value", "private")],
        ),
        (
            "skrbal.metrics._x",
            "from ..inspection._value import f",
            [("skrbal.inspection._value", "private")],
        ),
        (
            "skrbal.online._agent",
            "from skrbal._decision._process import DecisionProcess",
            [("skrbal._decision._process", "private")],
        ),
        # Upwards and sideways.
        (
            "skrbal.metrics._x",
            "from skrbal.active import RiskBasedLearner",
            [("skrbal.active", "layer")],
        ),
        (
            "skrbal.query._x",
            "from skrbal.metrics import decision_accuracy",
            [("skrbal.metrics", "layer")],
        ),
        (
            "skrbal._decision._presets",
            "from skrbal.mixture._gmm import G",
            [("skrbal.mixture._gmm", "private"), ("skrbal.mixture", "layer")],
        ),
        ("skrbal._new", "import skrbal.mixture", [("_new", "layer")]),
    ],
)
def test_a_new_violation_is_found(module, source, expected):
    assert [(name, rule) for name, rule, _ in violations(module, source)] == expected


def test_the_message_names_the_module_and_the_line():
    ((_, _, text),) = violations(
        "skrbal.metrics._x", "import numpy\nfrom skrbal.active._stream import R\n"
    )[:1]
    assert text.startswith("line 2: skrbal.metrics._x imports skrbal.active._stream.R")
