"""Sphinx configuration of the skrbal documentation.

Build with ``make docs`` (warnings are errors). The gallery scripts in
``docs/examples`` run on every build; set ``SKRBAL_DOCS_NO_GALLERY=1`` to skip
running them while working on the text.
"""

import importlib
import inspect
import os
import pkgutil
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))
sys.path.insert(0, str(DOCS))  # gallery_order

# Figures are drawn off-screen and progress bars would only add noise.
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("TQDM_DISABLE", "1")

import skrbal  # noqa: E402

# The public modules: skrbal and each module with no underscore in its path.
_API_MODULES = ["skrbal"] + [
    info.name
    for info in pkgutil.walk_packages(skrbal.__path__, prefix="skrbal.")
    if not any(part.startswith("_") for part in info.name.split("."))
]

project = "skrbal"
author = "skrbal developers"
copyright = "skrbal developers"
version = release = skrbal.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "matplotlib.sphinxext.plot_directive",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
# The gallery's sources are rendered into auto_examples/ by sphinx-gallery.
exclude_patterns = ["_build", "examples", "_intersphinx"]
root_doc = "index"
default_role = "literal"
pygments_style = "sphinx"
# Every cross-reference must resolve: a broken one is a build error (-W).
nitpicky = True

# -- API reference -------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True}
autodoc_typehints = "none"
autoclass_content = "class"
# The autosummary page of a class documents its methods; numpydoc's own table
# of members would list them twice.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
# Parameter types link to their classes, as in the libraries they come from.
# numpydoc links Python's and NumPy's type words (int, array-like, callable,
# ...) by itself; the names below add the classes; any other word ("of",
# "shape", "fitted classifier") stays text, as "all" says.
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {
    # Python's inventory documents the class (numpydoc's default is a label).
    "bool": "bool",
    "boolean": "bool",
    "ndarray": "numpy.ndarray",
    "Generator": "numpy.random.Generator",
    "RandomState": "numpy.random.RandomState",
    "DataFrame": "pandas.DataFrame",
    "Series": "pandas.Series",
    "Path": "pathlib.Path",
    "Bunch": "sklearn.utils.Bunch",
    "Pipeline": "sklearn.pipeline.Pipeline",
    "Axes": "matplotlib.axes.Axes",
    "Figure": "matplotlib.figure.Figure",
    "Colormap": "matplotlib.colors.Colormap",
    "Line2D": "matplotlib.lines.Line2D",
    "PolyCollection": "matplotlib.collections.PolyCollection",
    "BarContainer": "matplotlib.container.BarContainer",
    "QuadContourSet": "matplotlib.contour.QuadContourSet",
    "QuadMesh": "matplotlib.collections.QuadMesh",
    "Colorbar": "matplotlib.colorbar.Colorbar",
    # Every public class of skrbal by its bare name, wherever it is written.
    **{
        name: f"{module}.{name}"
        for module in _API_MODULES
        for name in getattr(importlib.import_module(module), "__all__", ())
        if isinstance(getattr(importlib.import_module(module), name), type)
    },
}

# -- Cross-references to other projects ------------------------------------
# No network is needed: each project's inventory is generated from the
# installed package by _intersphinx/make_inventories.py and kept in the repo.
intersphinx_mapping = {
    name: (url, f"_intersphinx/{name}.inv")
    for name, url in {
        "python": "https://docs.python.org/3/",
        "numpy": "https://numpy.org/doc/stable/",
        "scipy": "https://docs.scipy.org/doc/scipy/",
        "sklearn": "https://scikit-learn.org/stable/",
        "pandas": "https://pandas.pydata.org/docs/",
        "matplotlib": "https://matplotlib.org/stable/",
    }.items()
}

# -- HTML ----------------------------------------------------------------
html_static_path = ["_static"]
# Formulas render without network access: MathJax ships in _static/mathjax
# (see its README.txt), and the build fails if a page loads a remote script.
mathjax_path = "mathjax/tex-svg-full.js"
html_theme = "pydata_sphinx_theme"
html_title = f"skrbal {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": False,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_show_sourcelink = False

# -- Figures of the user guide (the ``plot`` directive) --------------------
plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = ["svg"]

# -- Gallery -------------------------------------------------------------
# Every example must run in well under a minute on two cores.
_run_gallery = os.environ.get("SKRBAL_DOCS_NO_GALLERY", "") in ("", "0")
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    # An example whose library pieces have not landed yet is named wip_*.py
    # and kept out of the build until they have.
    "ignore_pattern": r"/wip_",
    "plot_gallery": "True" if _run_gallery else "False",
    "abort_on_example_error": True,
    "download_all_examples": False,
    # The gallery opens with the quick start.
    "within_subsection_order": "gallery_order.QuickStartFirst",
    "reset_modules": ("matplotlib",),
    "capture_repr": ("_repr_html_", "__repr__"),
    "write_computation_times": False,
    "show_memory": False,
    "doc_module": ("skrbal",),
    "backreferences_dir": None,
    "reference_url": {"skrbal": None},
}


# -- Docstring processing ------------------------------------------------
_SKLEARN_GLOSSARY = "https://scikit-learn.org/stable/glossary.html#term-"
_GLOSSARY_TERM = re.compile(r":term:`([^`<]+?)(?:\s*<([^`>]+)>)?`")
_PARAMETER_LINE = re.compile(r"^(\s*\*{0,2}\w+ : )(.*)$")
_BARE_FITTED_NAME = re.compile(r"(?<![`\w])([A-Za-z]\w*_)(?=[,)\s]|$)")


def is_documented_member(name: str, obj) -> bool:
    """Whether the API reference documents member ``name`` of a public class.

    Every public method is documented, the inherited ones included, as in
    scikit-learn's reference, except

    - the ``set_*_request`` methods scikit-learn adds to every estimator: they
      come from its metadata routing and are documented there;
    - the members of Python's built-in types (``Exception.add_note``,
      ``tuple.count``), documented by Python.
    """
    if name.startswith("_") and name != "__call__":
        return False
    if name.startswith("set_") and name.endswith("_request"):
        return False
    owner = getattr(obj, "__objclass__", None)
    return getattr(owner, "__module__", None) != "builtins"


def public_methods(cls: type) -> list[str]:
    """The methods and properties of ``cls`` its reference page must show."""
    names = []
    for name in dir(cls):
        try:
            value = getattr(cls, name)
        except AttributeError:
            continue
        raw = inspect.getattr_static(cls, name, None)
        is_method = callable(value) and not inspect.isclass(value)
        if (is_method or isinstance(raw, property)) and is_documented_member(
            name, value
        ):
            names.append(name)
    return names


def undocumented_methods(classes: dict[str, type], documented: set[str]) -> list[str]:
    """``Class.method`` of each public method missing from ``documented``.

    ``classes`` maps the name under which the reference documents a class to
    the class; ``documented`` holds the full names the reference documents.
    """
    return [
        f"{name}.{method}"
        for name, cls in sorted(classes.items())
        for method in public_methods(cls)
        if f"{name}.{method}" not in documented
    ]


def _check_api_coverage(app, env):
    """Warn (an error under ``-W``) for a public class or method left out.

    The classes are those of the ``__all__`` of every module the reference
    documents; each must have a page, and that page every public method.
    """
    objects = env.get_domain("py").objects
    modules = [name for name, entry in objects.items() if entry.objtype == "module"]
    documented_as = {}
    for name, entry in objects.items():
        if entry.objtype in ("class", "exception") and not entry.aliased:
            module, _, attr = name.rpartition(".")
            try:
                obj = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):  # a nested class
                continue
            documented_as[id(obj)] = name
    classes = {}
    for module_name in modules:
        module = importlib.import_module(module_name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if not inspect.isclass(obj):
                continue
            if id(obj) not in documented_as:
                _warn(
                    "%s.%s is public but has no page in the API reference",
                    module_name,
                    attr,
                    subtype="api_coverage",
                )
                continue
            classes[documented_as[id(obj)]] = obj
    for missing in undocumented_methods(classes, set(objects)):
        _warn(
            "public method %s is missing from the API reference",
            missing,
            subtype="api_coverage",
        )


def _warn(message: str, *args, subtype: str) -> None:
    """A build warning of type ``skrbal``: an error under ``-W``.

    Sphinx is imported here so that the tests can load this file without it.
    """
    from sphinx.util import logging

    logging.getLogger("skrbal.docs").warning(
        message, *args, type="skrbal", subtype=subtype
    )


def _skip_undocumented_members(app, what, name, obj, skip, options):
    if what in ("class", "exception") and not is_documented_member(name, obj):
        return True
    return None


def _link_sklearn_glossary_terms(app, what, name, obj, options, lines):
    """Render a scikit-learn style ``:term:`fit``` as a link to its glossary.

    This documentation has no glossary of its own, and the scikit-learn
    inventory in ``_intersphinx/`` is generated from the installed package,
    which holds no glossary, so the terms link to scikit-learn's page.
    """

    def link(match):
        text = match.group(1).strip()
        target = (match.group(2) or text).strip().replace(" ", "-").lower()
        return f"`{text} <{_SKLEARN_GLOSSARY}{target}>`__"

    lines[:] = [_GLOSSARY_TERM.sub(link, line) for line in lines]


def _quote_fitted_attributes_in_types(app, what, name, obj, options, lines):
    """Quote fitted-attribute names in parameter types, ``(n_features_in_,)``.

    reStructuredText reads a bare ``name_`` as a link to a target; scikit-learn
    writes these names in backquotes, and this accepts both spellings.
    """
    for i, line in enumerate(lines):
        match = _PARAMETER_LINE.match(line)
        if match:
            quoted = _BARE_FITTED_NAME.sub(r"``\1``", match.group(2))
            lines[i] = match.group(1) + quoted


_REMOTE_RESOURCE = re.compile(
    r"<script\b[^>]*\bsrc=[\"'](?:https?:)?//[^\"']*"
    r"|<link\b[^>]*\brel=[\"']stylesheet[\"'][^>]*\bhref=[\"'](?:https?:)?//[^\"']*"
    r"|<link\b[^>]*\bhref=[\"'](?:https?:)?//[^\"']*[\"'][^>]*\brel=[\"']stylesheet",
    re.IGNORECASE,
)


def remote_resources(html: str) -> list[str]:
    """The ``<script src>`` and stylesheets of a page that need the network."""
    return [match.group(0) for match in _REMOTE_RESOURCE.finditer(html)]


def _check_no_remote_resources(app, exception):
    """Warn (an error under ``-W``) for a built page that loads a remote script.

    The documentation must read the same offline, formulas included.
    """
    if exception is not None or app.builder.format != "html":
        return
    for page in sorted(Path(app.outdir).rglob("*.html")):
        for tag in remote_resources(page.read_text(encoding="utf-8")):
            _warn(
                "%s loads a remote resource: %s",
                page.relative_to(app.outdir),
                tag,
                subtype="offline",
            )


def setup(app):
    app.connect("autodoc-skip-member", _skip_undocumented_members)
    app.connect("env-check-consistency", _check_api_coverage)
    app.connect("build-finished", _check_no_remote_resources)
    # Before numpydoc (priority 500) turns the sections into reST.
    app.connect("autodoc-process-docstring", _link_sklearn_glossary_terms, 400)
    app.connect("autodoc-process-docstring", _quote_fitted_attributes_in_types, 400)
