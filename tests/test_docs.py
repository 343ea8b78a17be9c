"""The documentation stays true to the code, without building it.

- Every public name (the ``__all__`` of ``skrbal`` and of each public
  subpackage or module) is listed in the API reference, ``docs/api.rst``.
- The ``pycon`` sessions of the user guide run and print what they show, so
  every number quoted there is recomputed by the library.
- Numbers the user guide derives in prose are checked against the library.
- The gallery examples are runnable scripts with ``# %%`` cells.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import skrbal

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api.rst"
USER_GUIDE = DOCS / "user_guide"
EXAMPLES = DOCS / "examples"

# Public modules with an ``__all__`` that are not library API.
NOT_IN_API = {"skrbal.cli": "the command line, documented in the user guide"}
# Modules the API reference must cover, whatever discovery finds.
REQUIRED_MODULES = (
    "skrbal",
    "skrbal.mixture",
    "skrbal.rvm",
    "skrbal.query",
    "skrbal.budget",
    "skrbal.active",
    "skrbal.smoothing",
    "skrbal.metrics",
    "skrbal.datasets",
    "skrbal.experiments",
    "skrbal.plotting",
)


def public_modules() -> list[str]:
    """``skrbal`` and every importable module without an underscore in its path."""
    names = {"skrbal", *REQUIRED_MODULES}
    for info in pkgutil.walk_packages(skrbal.__path__, prefix="skrbal."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.add(info.name)
    return sorted(name for name in names if name not in NOT_IN_API)


def documented_names(rst: str) -> set[str]:
    """``module.name`` of every entry of every autosummary table in ``rst``.

    An entry belongs to the module of the last ``.. currentmodule::`` above
    it (or is taken as written when it is already dotted).
    """
    names: set[str] = set()
    module = None
    in_table = False
    for line in rst.splitlines():
        directive = re.match(r"\.\.\s+currentmodule::\s+(\S+)", line)
        if directive:
            module, in_table = directive.group(1), False
            continue
        if re.match(r"\.\.\s+autosummary::", line):
            in_table = True
            continue
        if not in_table:
            continue
        if line and not line[0].isspace():
            in_table = False
            continue
        entry = line.strip()
        if not entry or entry.startswith(":"):
            continue
        if entry.startswith("~"):
            entry = entry[1:]
        names.add(entry if module is None or "." in entry else f"{module}.{entry}")
    return names


@pytest.fixture(scope="module")
def api_names() -> set[str]:
    return documented_names(API.read_text())


def test_the_parser_reads_autosummary_tables():
    rst = textwrap.dedent(
        """
        .. currentmodule:: pkg.sub

        .. autosummary::
           :toctree: generated/
           :template: class.rst

           Thing
           ~other.Name

        Prose after the table.

           Indented prose is not an entry.
        """
    )
    assert documented_names(rst) == {"pkg.sub.Thing", "other.Name"}


@pytest.mark.parametrize("module_name", public_modules())
def test_every_public_name_is_in_the_api_reference(module_name, api_names):
    module = importlib.import_module(module_name)
    public = getattr(module, "__all__", None)
    assert public is not None, f"{module_name} is public but has no __all__"
    # A name may be documented under the package that defines it, e.g.
    # skrbal.BayesianGMMClassifier as skrbal.mixture.BayesianGMMClassifier.
    documented_objects = {}
    for full in api_names:
        owner, _, attr = full.rpartition(".")
        try:
            documented_objects[id(getattr(importlib.import_module(owner), attr))] = full
        except (ImportError, AttributeError):
            continue
    missing = [
        name
        for name in public
        if not name.startswith("__")
        and f"{module_name}.{name}" not in api_names
        and id(getattr(module, name)) not in documented_objects
    ]
    assert not missing, (
        f"add {missing} of {module_name}.__all__ to an autosummary table of "
        f"{API.relative_to(ROOT)}"
    )


def test_the_api_reference_lists_only_names_that_exist(api_names):
    for full in sorted(api_names):
        owner, _, attr = full.rpartition(".")
        module = importlib.import_module(owner)
        assert attr in getattr(module, "__all__", ()), f"{full} is not public"


# ---------------------------------------------------------------------- #
# user-guide sessions
# ---------------------------------------------------------------------- #
PYCON_BLOCK = re.compile(r"^\.\. code-block:: pycon\n\n((?:(?:   .*)?\n)+)", re.M)


def pycon_sessions(path: Path) -> str:
    """All ``pycon`` blocks of a page, joined into one doctest."""
    text = path.read_text()
    return "\n".join(textwrap.dedent(block) for block in PYCON_BLOCK.findall(text))


PAGES = sorted(
    page
    for page in [*USER_GUIDE.glob("*.rst"), DOCS / "index.rst"]
    if ".. code-block:: pycon" in page.read_text()
)


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_user_guide_sessions_print_what_they_show(page):
    source = pycon_sessions(page)
    test = doctest.DocTestParser().get_doctest(source, {}, page.stem, str(page), 0)
    runner = doctest.DocTestRunner(
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    )
    output: list[str] = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)


def test_every_session_block_is_found():
    # A block the regex missed would silently go unchecked.
    assert PAGES, "the user guide has no pycon session"
    for page in PAGES:
        text = page.read_text()
        n_blocks = text.count(".. code-block:: pycon")
        assert len(PYCON_BLOCK.findall(text)) == n_blocks, page.name


# ---------------------------------------------------------------------- #
# numbers derived in prose
# ---------------------------------------------------------------------- #
def test_decision_process_page_numbers():
    process = skrbal.synthetic_decision_process()
    q = process.state_action_utility
    # Q(1, do nothing) written out term by term.
    assert 0.8 * 10 + 0.18 * 10 + 0.015 * 5 + 0.005 * -75 == pytest.approx(q[0, 0])
    # Perfect-information utility of the first belief: 2.365, EVPI 5.415.
    belief = np.array([0.7, 0.0, 0.2, 0.1])
    assert belief @ q.max(axis=1) == pytest.approx(2.365)
    assert process.meu([belief])[0] == pytest.approx(-3.05)
    # Between states 3 and 4 the action switches at q* = 9.05 / 63.2 and the
    # EVPI peaks at 54.15 q* ~ 7.75; it exceeds C_ins = 7 on (0.129, 0.227).
    switch = (q[2, 0] - q[2, 1]) / ((q[2, 0] - q[2, 1]) + (q[3, 1] - q[3, 0]))
    assert switch == pytest.approx(9.05 / 63.2)
    assert round(switch, 3) == 0.143

    def evpi(p4):
        p4 = np.atleast_1d(p4)
        zeros = np.zeros_like(p4)
        return process.evpi(np.column_stack([zeros, zeros, 1 - p4, p4]))

    assert evpi(switch)[0] == pytest.approx(54.15 * switch)
    assert round(evpi(switch)[0], 2) == 7.75
    grid = np.linspace(0, 1, 100_001)
    inspect = grid[evpi(grid) > process.inspection_cost]
    assert (round(inspect.min(), 3), round(inspect.max(), 3)) == (0.129, 0.227)


def test_z24_process_numbers_in_the_user_guide():
    process = skrbal.z24_decision_process()
    assert process.inspection_cost == 30.0
    np.testing.assert_array_equal(
        process.perfect_information_action([1, 2, 3, 4]), [0, 0, 1, 1]
    )


# ---------------------------------------------------------------------- #
# gallery
# ---------------------------------------------------------------------- #
GALLERY = sorted(EXAMPLES.glob("*.py"))


@pytest.mark.parametrize("script", GALLERY, ids=[p.stem for p in GALLERY])
def test_gallery_scripts_are_cells_with_a_title(script):
    text = script.read_text()
    module = ast.parse(text)
    docstring = ast.get_docstring(module)
    assert docstring, f"{script.name} needs a docstring with a title"
    overline, title, underline = docstring.splitlines()[:3]
    assert set(overline) == set(underline) == {"="}, f"{script.name}: title first"
    assert len(overline) == len(underline) >= len(title), f"{script.name}: title"
    assert "# %%" in text, f"{script.name} has no # %% cells"
