"""Option shapes the ``skrbal agent`` and ``skrbal fleet`` parsers share.

Both commands take a store the same way and import a command's code only
when it runs; these builders say each once.
"""

from __future__ import annotations

import importlib

__all__ = ["lazy_handler", "store_option"]


def lazy_handler(module: str, name: str):
    """The handler ``module.name``, imported when the command runs.

    Parameters
    ----------
    module, name : str
        Where the command's function is.

    Returns
    -------
    handler : callable
        ``handler(args)`` imports ``module`` and runs ``name(args)``.

    Examples
    --------
    >>> lazy_handler("math", "sqrt")(4.0)
    2.0
    """

    def run(args) -> int:
        return getattr(importlib.import_module(module), name)(args)

    return run


def store_option(parser) -> None:
    """Add the required ``--store`` (a SQLite path or a database URL).

    Parameters
    ----------
    parser : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> store_option(parser)
    >>> parser.parse_args(["--store", "agents.db"]).store
    'agents.db'
    """
    parser.add_argument(
        "--store",
        required=True,
        metavar="URL|PATH",
        help="the store: a SQLite file path, sqlite:///path or "
        "postgresql://user@host/database",
    )
