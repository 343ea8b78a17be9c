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
# - the password mask (under the exceptions that apply it) and the lazy
#   names and modules (numpy imported when first used, by the leaves too)
#   import nothing;
# - the leaves import no other part of skrbal;
# - the decision process needs only labels and parameter checks, the Z24
#   labelling protocol (shared by the datasets and the Z24 case study) only
#   argument checks, the Student-t predictive (the mixtures' beliefs, numpy
#   only, for the command line's decision step) only the log-space sums;
# - plotting and datasets need only the decision process, and experiments
#   uses plotting (its report's query curves), so both sit low, not at the
#   top as "figures come last" would suggest;
# - budget policies are pure functions of numbers;
# - the root package is a facade over the process and the mixture models,
#   and online reads __version__ from it;
# - query and metrics use inspection (EVSI, method checks);
# - _learning (the decision kernel and the campaign) sits under the stream
#   learners (active) and the agent (online); experiments run the learners;
#   online imports neither active nor experiments, so it shares active's
#   layer;
# - the command line drives everything (its data options below it, the
#   ``python -m skrbal`` entry point above).
LAYERS = [
    {"_secrets", "_lazy"},
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
        "_datetimes",
        "_separators",
    },
    {"_decision", "_z24_labels", "_predictive"},
    {"mixture", "rvm", "smoothing", "budget", "datasets", "plotting"},
    {"inspection", "skrbal"},
    {"query", "metrics"},
    {"_learning"},
    {"active", "online"},
    {"experiments", "fleet"},
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
        ("skrbal.online._agent", "from skrbal.online._sql._store import X", []),
        ("skrbal.online", "from skrbal.online._sql import _store", []),
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


# ---------------------------------------------------------------------- #
# 3. No module of online/ reaches a sibling's private attribute.
# 4. benchmarks/ imports no private skrbal name.
# ---------------------------------------------------------------------- #
BENCHMARKS = PACKAGE.parent / "benchmarks"

# (module, attribute access) that still reach a sibling's private state, with
# the reason; the tests fail when one is no longer needed, so the list can
# only shrink. Empty: the SQL store's database, reader, writer and locks are
# classes that own their state and are handed what they share.
_KNOWN_REACHES: set[tuple[str, str]] = set()
# (benchmark, imported name), with the reason: benchmarks of skrbal's own
# internals (the log-space kernels, the update rules, the learner's walk).
_KNOWN_BENCHMARK_IMPORTS: set[tuple[str, str]] = {
    ("bench_logspace", "skrbal._logspace.logsumexp"),
    ("bench_stream_overhead", "skrbal._logspace.exp_normalise"),
    ("bench_mrvm_incremental", "skrbal._learning.clone_for"),
    ("bench_semi_supervised", "skrbal._learning.SmoothingUpdate"),
    ("bench_semi_supervised", "skrbal.experiments._runner._fit_learner"),
    ("bench_semi_supervised", "skrbal.experiments._runner._learner"),
    # The store of a command-line call (issue 28.25), timed against AgentStore.
    ("bench_agent", "skrbal.online._sql._sqlite_store.SqliteStore"),
}


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private_reaches(source: str) -> list[tuple[int, str]]:
    """``(line, access)`` of each private attribute read off another object.

    An attribute of ``self``, ``cls`` or ``super()`` is the object's own, and
    so is one the module defines (a method or a ``self._x`` it assigns);
    any other ``x._name`` reaches into another module's object.
    """
    tree = ast.parse(source)
    own = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    own |= {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }
    reaches = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in ("self", "cls"):
            continue
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "super":
            continue
        if node.attr in own:
            continue
        reaches.append((node.lineno, ast.unparse(node)))
    return reaches


def _online_reaches():
    for path in sorted((PACKAGE / "online").rglob("*.py")):
        module = _module_name(path)
        for line, access in private_reaches(path.read_text()):
            yield module, access, line


def test_no_online_module_reaches_a_sibling_private_attribute():
    found = [
        f"{module} line {line}: {access}"
        for module, access, line in _online_reaches()
        if (module, access) not in _KNOWN_REACHES
    ]
    assert not found, "\n".join(found)
    stale = _KNOWN_REACHES - {(m, a) for m, a, _ in _online_reaches()}
    assert not stale, f"remove {sorted(stale)} from _KNOWN_REACHES"


def _benchmark_imports():
    for path in sorted(BENCHMARKS.glob("*.py")):
        for line, name in imported_names("benchmarks." + path.stem, path.read_text()):
            if any(_is_private(part) for part in name.split(".")[1:]):
                yield path.stem, name, line


def test_benchmarks_import_no_private_name():
    found = [
        f"benchmarks/{bench}.py line {line}: {name}"
        for bench, name, line in _benchmark_imports()
        if (bench, name) not in _KNOWN_BENCHMARK_IMPORTS
    ]
    assert not found, "\n".join(found)
    stale = _KNOWN_BENCHMARK_IMPORTS - {(b, n) for b, n, _ in _benchmark_imports()}
    assert not stale, f"remove {sorted(stale)} from _KNOWN_BENCHMARK_IMPORTS"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("def f(agent):\n    return agent._clock\n", ["agent._clock"]),
        ("class A:\n    def f(self):\n        return self._x\n", []),
        ("class A:\n    def _g(self):\n        pass\n\ndef f(a):\n    a._g()\n", []),
        ("def f(store):\n    return store.engine._pool\n", ["store.engine._pool"]),
        ("x = y.__class__\n", []),
    ],
)
def test_a_private_reach_is_found(source, expected):
    assert [access for _, access in private_reaches(source)] == expected
