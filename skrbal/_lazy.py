"""Names of a package, and modules, imported when first used (PEP 562).

``skrbal`` and ``skrbal.online`` re-export names whose modules are heavy
(scikit-learn, pandas) or not needed by every command; each names, for every
public name, the module that defines it, and gets its module ``__getattr__``
and ``__dir__`` from :func:`lazy_attributes`. The modules that read a store
use numpy through :data:`numpy`, imported when they first compute with it:
``skrbal agent status`` reads counts and a few numbers, and importing numpy
was a fifth of its start (``tests/test_packaging.py`` checks it stays out).
This module imports nothing of skrbal, so any package may use it.
"""

from __future__ import annotations

import importlib

# typing.TYPE_CHECKING without importing typing: ``import skrbal`` is start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, MutableMapping

__all__ = ["LazyModule", "lazy_attributes", "numpy"]


def lazy_attributes(
    package: str,
    lazy: Mapping[str, str],
    namespace: MutableMapping[str, object],
    public: Iterable[str],
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package with lazy names.

    Parameters
    ----------
    package : str
        The package's ``__name__``, named by the error for an unknown name.
    lazy : mapping of str to str
        Each name imported on first use, and the module that defines it.
    namespace : dict
        The package's ``globals()``: a name, once imported, is stored there,
        so that its next lookup is a plain attribute.
    public : iterable of str
        The package's ``__all__``, listed by ``dir()`` before any import.

    Returns
    -------
    getattr : callable
        The package's ``__getattr__``: the name from its module, or
        :class:`AttributeError` for a name not in ``lazy``.
    dir : callable
        The package's ``__dir__``: its namespace and ``public``, sorted.

    Examples
    --------
    >>> import types
    >>> package = types.ModuleType("fleet")
    >>> package.__getattr__, package.__dir__ = lazy_attributes(
    ...     "fleet", {"sqrt": "math"}, vars(package), ["sqrt"])
    >>> "sqrt" in vars(package), "sqrt" in dir(package)
    (False, True)
    >>> package.sqrt(4.0)
    2.0
    >>> "sqrt" in vars(package)
    True
    """
    public = tuple(public)

    def __getattr__(name: str):
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *public})

    return __getattr__, __dir__


class LazyModule:
    """A module imported when one of its attributes is first read.

    Unlike ``importlib.util.LazyLoader`` it leaves ``sys.modules`` alone: the
    module is imported, as usual, only by the first attribute read, and each
    attribute read is then kept here, so the next read is a plain lookup.

    Parameters
    ----------
    name : str
        The module's name.

    Examples
    --------
    >>> import sys
    >>> sys.modules.pop("colorsys", None) is None
    True
    >>> colorsys = LazyModule("colorsys")
    >>> "colorsys" in sys.modules
    False
    >>> colorsys.rgb_to_hsv(1.0, 0.0, 0.0)
    (0.0, 1.0, 1.0)
    >>> "colorsys" in sys.modules
    True
    """

    def __init__(self, name: str):
        self.__dict__["_module_name"] = name

    def __getattr__(self, attribute: str):
        value = getattr(importlib.import_module(self._module_name), attribute)
        self.__dict__[attribute] = value
        return value

    def __repr__(self) -> str:
        return f"<module {self._module_name!r}, imported when first used>"


#: numpy, imported when first used (``from skrbal._lazy import numpy as np``).
numpy = LazyModule("numpy")
