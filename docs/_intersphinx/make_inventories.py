"""Write the intersphinx inventories this documentation links with.

The documentation builds without network access, so the ``objects.inv`` of
Python, NumPy, SciPy, scikit-learn, pandas and matplotlib cannot be fetched at
build time. This script writes a small stand-in for each, ``<project>.inv``
next to it, from the *installed* packages: it walks the modules and classes
listed in ``PROJECTS`` (their public functions, classes, methods, properties
and attributes) and gives each object the address it has in that project's
own documentation (``URI_RULES``). Only the parts of each library that this
documentation links to, and their neighbours, are walked, to keep the files
small; add a root to ``PROJECTS`` when a page links somewhere new and run::

    python docs/_intersphinx/make_inventories.py

It needs ``sphobjinv`` (``pip install sphobjinv``), which the documentation
build itself does not. Glossary terms and labels cannot be found by walking a
package; the few this documentation uses are listed in ``EXTRA``, each with
its real address.
"""

from __future__ import annotations

import importlib
import inspect
import types
from pathlib import Path

import sphobjinv as soi

HERE = Path(__file__).resolve().parent


# --------------------------------------------------------------------- #
# What to walk: (root, with_members). A root is a module (its public names,
# from __all__ when it has one) or a class (with its public members).
# --------------------------------------------------------------------- #
PROJECTS = {
    "python": [
        ("builtins", False),
        ("functools", False),
        ("contextlib", False),
        ("collections", False),
        ("itertools", False),
        ("pathlib", False),
        ("pathlib.Path", True),
        ("os", False),
        ("json", False),
        ("warnings", False),
        ("collections.abc", False),
        ("numbers", False),
        ("dataclasses", False),
        ("concurrent.futures", False),
        ("sqlite3", False),
    ],
    "numpy": [
        ("numpy", False),
        ("numpy.ndarray", True),
        ("numpy.random", False),
        ("numpy.random.Generator", True),
        ("numpy.random.RandomState", True),
    ],
    "scipy": [
        ("scipy.special", False),
        ("scipy.stats", False),
        ("scipy.linalg", False),
        ("scipy.optimize", False),
    ],
    "sklearn": [
        ("sklearn", False),
        ("sklearn.base", True),
        ("sklearn.pipeline", True),
        ("sklearn.compose", True),
        ("sklearn.preprocessing", True),
        ("sklearn.model_selection", True),
        ("sklearn.metrics", True),
        ("sklearn.metrics.pairwise", False),
        ("sklearn.naive_bayes", True),
        ("sklearn.discriminant_analysis", True),
        ("sklearn.semi_supervised", True),
        ("sklearn.mixture", True),
        ("sklearn.svm", True),
        ("sklearn.linear_model", False),
        ("sklearn.gaussian_process", True),
        ("sklearn.gaussian_process.kernels", False),
        ("sklearn.inspection", True),
        ("sklearn.utils", False),
        ("sklearn.utils.Bunch", True),
        ("sklearn.utils.metadata_routing", False),
        ("sklearn.exceptions", False),
    ],
    "pandas": [
        ("pandas", False),
        ("pandas.DataFrame", True),
        ("pandas.Series", True),
    ],
    "matplotlib": [
        ("matplotlib", False),
        ("matplotlib.pyplot", False),
        ("matplotlib.axes.Axes", True),
        ("matplotlib.figure", False),
        ("matplotlib.figure.Figure", True),
        ("matplotlib.colors", False),
        ("matplotlib.lines", False),
        ("matplotlib.collections", False),
        ("matplotlib.container", False),
        ("matplotlib.contour", False),
        ("matplotlib.colorbar", False),
        ("matplotlib.cm", False),
        ("matplotlib.ticker", False),
    ],
}

# (name, domain:role, uri): terms and labels, with the addresses they have.
EXTRA = {
    "python": [
        ("sequence", "std:term", "glossary.html#term-sequence"),
        ("iterable", "std:term", "glossary.html#term-iterable"),
        ("mapping", "std:term", "glossary.html#term-mapping"),
        ("path-like object", "std:term", "glossary.html#term-path-like-object"),
        ("file object", "std:term", "glossary.html#term-file-object"),
        ("generator", "std:term", "glossary.html#term-generator"),
        ("None", "py:data", "library/constants.html#None"),
        ("True", "py:data", "library/constants.html#True"),
        ("False", "py:data", "library/constants.html#False"),
    ],
    "sklearn": [
        ("metadata_routing", "std:label", "metadata_routing.html#metadata-routing"),
        ("accuracy_score", "std:label", "modules/model_evaluation.html#accuracy-score"),
    ],
    "numpy": [
        ("array_like", "std:term", "glossary.html#term-array_like"),
        ("arrays.scalars", "std:label", "reference/arrays.scalars.html#arrays-scalars"),
        *(
            (f"numpy.{name}", "py:data", f"reference/constants.html#numpy.{name}")
            for name in ("inf", "nan", "pi", "e", "newaxis")
        ),
    ],
}

# Objects a project documents under another role than their type suggests.
ROLE_OF = {"functools.partial": "py:function"}

# A class's members are documented on the class's page, in most projects.
MEMBER_ROLES = {
    "py:method",
    "py:classmethod",
    "py:staticmethod",
    "py:attribute",
    "py:property",
}

VERSION_OF = {"python": "sys", "sklearn": "sklearn"}


# --------------------------------------------------------------------- #
# Where each project documents an object
# --------------------------------------------------------------------- #
def python_uri(name: str, role: str) -> str:
    if role == "py:module":
        return f"library/{name}.html#module-{name}"
    if "." not in name:  # a builtin
        page = "exceptions" if role == "py:exception" else "functions"
        return f"library/{page}.html#{name}"
    return f"library/{_module_of(name)}.html#{name}"


def numpy_uri(name: str, role: str) -> str:
    if role == "py:module":
        page = "random/index" if name == "numpy.random" else "index"
        return f"reference/{page}.html#module-{name}"
    if name in ("numpy.random.Generator", "numpy.random.default_rng"):
        return f"reference/random/generator.html#{name}"
    if name == "numpy.random.RandomState":
        return f"reference/random/legacy.html#{name}"
    if name.startswith("numpy.random."):
        return f"reference/random/generated/{name}.html#{name}"
    obj = _resolve(name)
    if isinstance(obj, type) and issubclass(
        obj, importlib.import_module("numpy").generic
    ):
        return f"reference/arrays.scalars.html#{name}"
    return f"reference/generated/{name}.html#{name}"


def scipy_uri(name: str, role: str) -> str:
    if role == "py:module":
        return f"reference/{name.removeprefix('scipy.')}.html#module-{name}"
    return f"reference/generated/{name}.html#{name}"


def sklearn_uri(name: str, role: str) -> str:
    if role == "py:module":
        top = ".".join(name.split(".")[:2])
        return f"api/{top}.html#module-{name}"
    if role in MEMBER_ROLES:
        owner = name.rpartition(".")[0]
        return f"modules/generated/{owner}.html#{name}"
    return f"modules/generated/{name}.html#{name}"


def pandas_uri(name: str, role: str) -> str:
    if role == "py:module":
        return f"reference/index.html#module-{name}"
    return f"reference/api/{name}.html#{name}"


# matplotlib documents some modules on one page (automodule), others with a
# page per class or function (autosummary, under api/_as_gen/).
_MPL_ONE_PAGE = {"collections", "container", "contour", "colorbar", "cm", "ticker"}
_MPL_MODULE_PAGE = {
    "pyplot": "pyplot_summary",
    "matplotlib": "matplotlib_configuration_api",
}


def matplotlib_uri(name: str, role: str) -> str:
    parts = name.split(".")
    if role == "py:module":
        short = parts[-1] if len(parts) > 1 else "matplotlib"
        page = _MPL_MODULE_PAGE.get(short, f"{short}_api")
        return f"api/{page}.html#module-{name}"
    module = parts[1] if len(parts) > 2 else None
    if name == "matplotlib.axes.Axes":
        return f"api/axes_api.html#{name}"
    if name.startswith("matplotlib.axes.Axes."):
        return f"api/_as_gen/{name}.html#{name}"
    if module in _MPL_ONE_PAGE:
        return f"api/{module}_api.html#{name}"
    if role in MEMBER_ROLES:
        owner = name.rpartition(".")[0]
        return f"api/_as_gen/{owner}.html#{name}"
    if module is None:
        return f"api/matplotlib_configuration_api.html#{name}"
    return f"api/_as_gen/{name}.html#{name}"


URI_RULES = {
    "python": python_uri,
    "numpy": numpy_uri,
    "scipy": scipy_uri,
    "sklearn": sklearn_uri,
    "pandas": pandas_uri,
    "matplotlib": matplotlib_uri,
}


# --------------------------------------------------------------------- #
# Walking the installed packages
# --------------------------------------------------------------------- #
def _resolve(name: str):
    """The object at dotted ``name``: the longest importable module, then attributes."""
    module = _module_of(name)
    obj = importlib.import_module(module)
    for attr in name[len(module) + 1 :].split(".") if name != module else ():
        obj = getattr(obj, attr)
    return obj


def _module_of(name: str) -> str:
    """The longest importable module that ``name`` starts with."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        return module
    raise ImportError(name)


def _public(names) -> list[str]:
    return sorted(n for n in names if not n.startswith("_"))


def _role(obj, owner: type | None = None, attr: str | None = None) -> str | None:
    if isinstance(obj, types.ModuleType):
        return "py:module"
    if isinstance(obj, type):
        return "py:exception" if issubclass(obj, BaseException) else "py:class"
    if owner is not None:
        raw = inspect.getattr_static(owner, attr, None)
        if isinstance(raw, property) or inspect.isdatadescriptor(raw):
            return "py:property" if isinstance(raw, property) else "py:attribute"
        if isinstance(raw, classmethod):
            return "py:classmethod"
        if isinstance(raw, staticmethod):
            return "py:staticmethod"
        return "py:method" if callable(obj) else "py:attribute"
    if inspect.isroutine(obj):
        return "py:function"
    if callable(obj):  # numpy's ufuncs, scipy.stats' distributions
        return "py:data"
    return None


def _members(cls: type, prefix: str):
    """Public members a class's own reference page lists (not ``object``'s)."""
    for attr in _public(dir(cls)):
        if attr.startswith("set_") and attr.endswith("_request"):
            continue
        defined_in = next((k for k in cls.__mro__ if attr in vars(k)), object)
        if defined_in is object:
            continue
        try:
            value = getattr(cls, attr)
        except AttributeError:
            continue
        role = _role(value, cls, attr)
        if role:
            yield f"{prefix}.{attr}", role


def walk(project: str):
    """``(name, role)`` of every object under the project's roots."""
    seen: dict[str, str] = {}
    for root, with_members in PROJECTS[project]:
        obj = _resolve(root)
        name = "" if root == "builtins" else root
        role = _role(obj)
        if name and role:
            seen[name] = role
        if isinstance(obj, type):
            if with_members:
                seen.update(_members(obj, name))
            continue
        names = getattr(obj, "__all__", None) or _public(vars(obj))
        for attr in _public(names):
            try:
                member = getattr(obj, attr)
            except (AttributeError, ImportError):  # e.g. sklearn's experimental
                continue
            if member is None or isinstance(member, types.ModuleType):
                continue
            if root != "builtins" and getattr(member, "__module__", "") == "builtins":
                continue  # re-exported builtins are documented by Python
            full = f"{name}.{attr}" if name else attr
            member_role = _role(member)
            if member_role in ("py:class", "py:exception", "py:function", "py:data"):
                seen[full] = member_role
                if with_members and isinstance(member, type):
                    seen.update(_members(member, full))
    return sorted(seen.items())


def build(project: str) -> soi.Inventory:
    version_module = importlib.import_module(VERSION_OF.get(project, project))
    version = getattr(version_module, "__version__", None)
    if project == "python":
        version = ".".join(map(str, version_module.version_info[:2]))
    inventory = soi.Inventory()
    inventory.project = project
    inventory.version = version
    rule = URI_RULES[project]
    for name, role in walk(project):
        role = ROLE_OF.get(name, role)
        domain, _, kind = role.partition(":")
        uri = rule(name, role)
        anchor = uri.rpartition("#")[2]
        if anchor == name:  # the inventory format's shorthand for the name
            uri = uri[: -len(name)] + "$"
        inventory.objects.append(
            soi.DataObjStr(
                name=name, domain=domain, role=kind, priority="1", uri=uri, dispname="-"
            )
        )
    for name, role, uri in EXTRA.get(project, ()):
        domain, _, kind = role.partition(":")
        inventory.objects.append(
            soi.DataObjStr(
                name=name,
                domain=domain,
                role=kind,
                priority="-1",
                uri=uri,
                dispname="-",
            )
        )
    return inventory


def main() -> None:
    for project in PROJECTS:
        inventory = build(project)
        path = HERE / f"{project}.inv"
        soi.writebytes(path, soi.compress(inventory.data_file(contract=True)))
        size = path.stat().st_size
        print(f"{path.name}: {len(inventory.objects)} objects, {size} bytes")


if __name__ == "__main__":
    main()
