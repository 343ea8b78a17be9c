"""The documentation stays true to the code, without building it.

- Every public name (the ``__all__`` of ``skrbal`` and of each public
  subpackage or module) is listed in the API reference, ``docs/api.rst``.
- The ``pycon`` sessions of the user guide run and print what they show, so
  every number quoted there is recomputed by the library.
- Numbers the user guide derives in prose are checked against the library.
- The gallery examples are runnable scripts with ``# %%`` cells, and the
  gallery opens with the quick start.
- The reference shows every public method (inherited ones included), links
  to other projects through inventories kept in the repository, renders its
  formulas with a MathJax kept in the repository, and draws the influence
  diagram as a figure. The build itself (``make docs``) checks the generated
  pages: conf.py fails it when a public method has no entry or a page loads
  a remote script.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import re
import runpy
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest
from _cli_runner import SHELL_FORKED, run_shell_forked  # tests/ is on sys.path

import skrbal

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api.rst"
USER_GUIDE = DOCS / "user_guide"
EXAMPLES = DOCS / "examples"
TEMPLATES = DOCS / "_templates"

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


def test_the_gallery_opens_with_the_quick_start(conf):
    key_path = conf.sphinx_gallery_conf["within_subsection_order"]
    module, _, name = key_path.rpartition(".")
    key = getattr(importlib.import_module(module), name)(str(EXAMPLES))
    scripts = sorted((p.name for p in EXAMPLES.glob("plot_*.py")), key=key)
    assert scripts[0] == "plot_quick_start.py", scripts


# ---------------------------------------------------------------------- #
# the reference: every method, cross-references, formulas, figures
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def conf():
    """docs/conf.py as a module (it needs no Sphinx to load)."""
    spec = importlib.util.spec_from_file_location("skrbal_docs_conf", DOCS / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def public_classes() -> dict[str, type]:
    classes = {}
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj):
                classes[f"{module_name}.{name}"] = obj
    return classes


def test_every_autosummary_template_exists():
    # autosummary looks a ``:template:`` up under templates_path as written
    # and silently falls back to a bare page when it is not there: that hid
    # every method but fit and partial_fit of the estimators.
    templates = set(re.findall(r":template:\s+(\S+)", API.read_text()))
    assert templates
    for template in templates:
        assert (TEMPLATES / template).is_file(), f"{template} not in {TEMPLATES}"


def test_every_package_section_registers_its_module():
    # The section titles link to their module (:mod:`skrbal.mixture`); an
    # ``automodule`` with ``:no-index:`` registers none and the link breaks.
    sections = re.findall(
        r"^\.\. automodule:: .*\n((?:   :.*\n)*)", API.read_text(), re.M
    )
    assert sections
    assert not [options for options in sections if ":no-index:" in options]


def test_the_class_template_shows_inherited_methods():
    options = (TEMPLATES / "class.rst").read_text()
    assert re.search(r"^\s+:members:\s*$", options, re.M)
    assert re.search(r"^\s+:inherited-members:\s*$", options, re.M)
    assert ":no-inherited-members:" not in options


def test_every_public_method_is_shown(conf):
    # The methods a user calls, inherited ones included, are documented;
    # scikit-learn's metadata-routing setters and Python's own members of
    # built-in bases are not.
    methods = conf.public_methods(skrbal.BayesianGMMClassifier)
    for name in ("fit", "predict", "predict_proba", "score", "get_params"):
        assert name in methods
    hidden = ("set_fit_request", "set_score_request", "_joint_log_likelihood")
    assert not set(hidden) & set(methods)
    assert conf.public_methods(skrbal.plotting.StateStyle) == []
    exception = skrbal.smoothing.ImpossibleEvidenceError
    assert "with_traceback" not in conf.public_methods(exception)
    assert "__call__" in conf.public_methods(skrbal.query.EVPISampling)
    for name, cls in public_classes().items():
        for method in conf.public_methods(cls):
            assert conf.is_documented_member(method, getattr(cls, method)), name


def test_the_build_check_names_a_missing_method(conf):
    cls = skrbal.BayesianGMMClassifier
    name = "skrbal.mixture.BayesianGMMClassifier"
    documented = {f"{name}.{m}" for m in conf.public_methods(cls)}
    assert conf.undocumented_methods({name: cls}, documented) == []
    documented.discard(f"{name}.predict_proba")
    assert conf.undocumented_methods({name: cls}, documented) == [
        f"{name}.predict_proba"
    ]


def read_inventory(path: Path) -> dict[str, tuple[str, str]]:
    """``name -> (domain:role, uri)`` of a Sphinx ``objects.inv``."""
    raw = path.read_bytes()
    header = raw.split(b"\n", 4)
    assert header[0] == b"# Sphinx inventory version 2", path.name
    entries = {}
    for line in zlib.decompress(header[4]).decode().splitlines():
        match = re.match(r"(.+?)\s+(\S+:\S+)\s+(-?\d+)\s+(\S*)\s+(.*)", line)
        name, role, _, uri, _ = match.groups()
        entries[name] = (role, uri.replace("$", name) if uri.endswith("$") else uri)
    return entries


def test_intersphinx_works_offline(conf):
    assert conf.nitpicky is True
    expected = {
        "python": ("pathlib.Path", "py:class"),
        "numpy": ("numpy.ndarray", "py:class"),
        "scipy": ("scipy.special.logsumexp", "py:function"),
        "sklearn": ("sklearn.pipeline.Pipeline", "py:class"),
        "pandas": ("pandas.DataFrame", "py:class"),
        "matplotlib": ("matplotlib.axes.Axes", "py:class"),
    }
    assert set(conf.intersphinx_mapping) == set(expected)
    for project, (url, inventory) in conf.intersphinx_mapping.items():
        assert url.startswith("https://")
        assert not str(inventory).startswith(("http:", "https:")), project
        path = DOCS / inventory
        assert path.stat().st_size < 50_000, f"{path.name} should stay small"
        name, role = expected[project]
        assert read_inventory(path)[name][0] == role, project
        assert read_inventory(path)[name][1].endswith(f"#{name}"), project


def test_inventory_addresses_follow_each_project(conf):
    # Spot checks of the address shapes of the real documentation.
    cases = {
        "numpy": ("numpy.meshgrid", "reference/generated/numpy.meshgrid.html"),
        "sklearn": (
            "sklearn.pipeline.Pipeline.fit",
            "modules/generated/sklearn.pipeline.Pipeline.html",
        ),
        "pandas": (
            "pandas.DataFrame.to_csv",
            "reference/api/pandas.DataFrame.to_csv.html",
        ),
        "python": ("functools.partial", "library/functools.html"),
        "scipy": (
            "scipy.special.logsumexp",
            "reference/generated/scipy.special.logsumexp.html",
        ),
        "matplotlib": (
            "matplotlib.axes.Axes.plot",
            "api/_as_gen/matplotlib.axes.Axes.plot.html",
        ),
    }
    for project, (name, page) in cases.items():
        _, uri = read_inventory(DOCS / conf.intersphinx_mapping[project][1])[name]
        assert uri == f"{page}#{name}", (project, uri)


def test_formulas_render_offline(conf):
    assert "sphinx.ext.mathjax" in conf.extensions
    assert not conf.mathjax_path.startswith(("http:", "https:", "//"))
    bundled = [DOCS / static / conf.mathjax_path for static in conf.html_static_path]
    assert any(path.is_file() for path in bundled), bundled


def test_the_remote_script_check(conf):
    cdn = '<script defer="defer" src="https://cdn.jsdelivr.net/npm/mathjax@4/x.js">'
    css = '<link rel="stylesheet" href="//fonts.example.org/a.css" />'
    local = '<script src="../_static/mathjax/tex-svg-full.js?v=1"></script>'
    link = '<a href="https://numpy.org/doc/stable/">numpy</a>'
    assert conf.remote_resources(cdn + local + link) == [cdn[:-2]]
    assert len(conf.remote_resources(css)) == 1
    assert conf.remote_resources(local + link) == []


def test_the_influence_diagram_is_a_figure(monkeypatch):
    page = (USER_GUIDE / "decision_process.rst").read_text()
    directive = re.search(r"^\.\. plot:: (\S+)$", page, re.M)
    assert directive, "the influence diagram is drawn by a plot directive"
    assert "[ d_t ]" not in page, "the ASCII diagram is gone"
    plt = pytest.importorskip("matplotlib.pyplot")
    monkeypatch.setattr(plt, "show", lambda: None)
    namespace = runpy.run_path(str(DOCS / directive.group(1)))
    try:
        texts = {t.get_text() for t in namespace["ax"].texts}
        for label in (r"$y_t$", r"$\mathbf{x}_t$", r"$d_t$", r"$y_{t+1}$", r"$U(d_t)$"):
            assert label in texts
    finally:
        plt.close(namespace["fig"])


# ---------------------------------------------------------------------- #
# shell sessions: run as written, or (studies) parsed by the real parser
# ---------------------------------------------------------------------- #
def console_sessions() -> list[tuple[str, list[str], dict]]:
    """``(page, commands, files)`` of every ``console`` block of docs and README.

    ``files`` are the ``csv`` blocks the README introduces by their file name
    (```` `campaign.csv`: ````), which its session reads.
    """
    sessions = []
    pages = sorted(DOCS.rglob("*.rst"))
    for page in pages:
        blocks = re.findall(
            r"\.\. code-block:: console\n\n((?:   .*\n|\n)+)", page.read_text()
        )
        for block in blocks:
            commands = [line.strip()[2:] for line in block.splitlines() if line.strip()]
            sessions.append((page.name, commands, {}))
    readme = (ROOT / "README.md").read_text()
    files = dict(
        re.findall(r"`([\w.-]+\.csv)`\)?:\n\n```csv\n(.*?)```", readme, flags=re.S)
    )
    for block in re.findall(r"```console\n(.*?)```", readme, flags=re.S):
        commands = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
        sessions.append(("README.md", commands, files))
    return sessions


def _is_study(command: str) -> bool:
    """A study takes minutes: its command is parsed, not run."""
    return bool(re.search(r"\bskrbal (run|reproduce)\b", command))


RUN = [s for s in console_sessions() if not any(map(_is_study, s[1]))]
PARSED = [c for _, commands, _ in console_sessions() for c in commands if _is_study(c)]


def test_the_shell_sessions_are_found():
    assert any(page == "live_monitoring.rst" for page, _, _ in RUN)
    readme = [files for page, _, files in RUN if page == "README.md"]
    assert readme and {"campaign.csv", "new.csv"} <= set(readme[0])
    assert any("skrbal reproduce custom" in c for c in PARSED)


@pytest.mark.parametrize(
    "page, commands, files", RUN, ids=[f"{p}-{i}" for i, (p, *_) in enumerate(RUN)]
)
def test_shell_sessions_run_as_written(page, commands, files, tmp_path):
    """#18.10: the live-monitoring session failed as written."""
    import os
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "skrbal"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m skrbal "$@"\n')
    shim.chmod(0o755)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }
    for command in commands:
        if SHELL_FORKED:  # each `skrbal` a fork of this process (_cli_runner.py)
            result = run_shell_forked(command, cwd=tmp_path, env=env, timeout=300)
        else:
            result = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", command],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
        # 141: '| head' closed the pipe, which the command takes quietly.
        assert result.returncode in (0, 141), f"{page}: $ {command}\n{result.stderr}"
        # Nothing on stderr but the warnings the page explains, by name.
        text = ROOT / "README.md" if page == "README.md" else next(DOCS.rglob(page))
        for line in result.stderr.splitlines():
            warning = re.match(r"skrbal: warning: (\w+Warning): ", line)
            assert warning and warning[1] in text.read_text(), (
                f"{page}: $ {command}\n{result.stderr}"
            )
    _results_are_the_true_states(commands, tmp_path)


def _results_are_the_true_states(commands, folder):
    """#28.14: each ``inspect R LABEL`` of a session records the true state.

    The truth of a step is the ``label`` column of the observed files (the
    stream a ``--stream-out`` wrote, cut into feeds), in the order observed.
    """
    import shlex

    import pandas as pd

    from skrbal.online import AgentStore

    observed, checked = [], 0
    for command in commands:
        words = shlex.split(command.split("|")[0].split(">")[0])
        if words[:3] == ["skrbal", "agent", "observe"]:
            observed.append(pd.read_csv(folder / words[3]))
        if words[:3] != ["skrbal", "agent", "inspect"] or "--report" in words:
            continue
        rows = pd.concat(observed, ignore_index=True)
        assert "label" in rows, f"$ {command}: no true state to check it against"
        store = AgentStore(str(folder / words[words.index("--store") + 1]))
        try:
            name = words[words.index("--agent") + 1] if "--agent" in words else "agent"
            requests = store.requests(name).set_index("request_id")
            first = store.status(name)["n_commissioning"]
        finally:
            store.close()
        step = int(requests.loc[int(words[3]), "step"])
        truth = rows["label"].iloc[step - first]
        assert str(truth) == words[4], (
            f"$ {command}: step {step}'s true state is {truth}, not {words[4]}"
        )
        checked += 1
    return checked


@pytest.mark.parametrize("command", PARSED)
def test_study_commands_of_the_docs_parse(command):
    """The options a page shows for a study exist and take those values."""
    import shlex

    from skrbal.cli import _parser

    words = shlex.split(command)
    assert words[0] == "skrbal"
    args = _parser().parse_args(words[1:])
    assert args.command in ("run", "reproduce")
