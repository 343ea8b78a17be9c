"""From an agent's ``store`` parameter to a storage: the one place that opens one.

:class:`~skrbal.online.RiskBasedAgent` takes any object of the storage
contract (:class:`~skrbal.online.AgentStorage`); a URL or a path names an
:class:`~skrbal.online.AgentStore` (SQLite or PostgreSQL), opened here, and
``None`` is a fresh :class:`~skrbal.online.InMemoryAgentStore`. The agent
never builds a store itself, so another backend needs no change to it.
"""

from __future__ import annotations

import os

from skrbal._secrets import mask_passwords
from skrbal.online._storage import AgentStorage

__all__ = ["open_storage", "store_parameter"]


def open_storage(store) -> tuple[AgentStorage, bool]:
    """The storage an agent's ``store`` parameter names, and whether it is new.

    Parameters
    ----------
    store : AgentStorage, str, path-like or None
        A storage object (used as given), a store's URL or SQLite path (an
        :class:`~skrbal.online.AgentStore` is opened), or ``None`` (a new
        :class:`~skrbal.online.InMemoryAgentStore`).

    Returns
    -------
    storage : AgentStorage
    owned : bool
        Whether it was opened here (the agent then closes it).

    Examples
    --------
    >>> from skrbal.online._connect import open_storage
    >>> storage, owned = open_storage(None)
    >>> type(storage).__name__, owned
    ('InMemoryAgentStore', True)
    >>> open_storage(storage) == (storage, False)
    True
    """
    if store is None:
        from skrbal.online._memory import InMemoryAgentStore

        return InMemoryAgentStore(), True
    if isinstance(store, (str, os.PathLike)):
        from skrbal.online._sql._store import AgentStore

        return AgentStore(store), True
    if not isinstance(store, AgentStorage):
        raise TypeError(
            "store must be an AgentStorage (an AgentStore, an InMemoryAgentStore, "
            f"...), a store's URL or path, or None; got {type(store).__name__}."
        )
    return store, False


class _URL(str):
    """A store URL as given, password included, whose repr hides the password.

    An agent resumed from a URL keeps it as its ``store`` parameter, so that
    a clone connects as the original did; its repr (and the agent's) shows
    ``***`` in place of the password.
    """

    def __repr__(self):
        return repr(mask_passwords(str(self)))


def store_parameter(url):
    """The ``store`` parameter of an agent for ``url``, as given.

    A URL with a password becomes a string equal to it whose ``repr``
    masks the password (``***``); anything else
    (a path, a storage object, a URL without a password, a string
    made so already) is returned unchanged.

    Examples
    --------
    >>> from skrbal.online._connect import store_parameter
    >>> url = store_parameter("postgresql://ann:secret@db/agents")
    >>> url == "postgresql://ann:secret@db/agents", repr(url)
    (True, "'postgresql://ann:***@db/agents'")
    """
    if isinstance(url, (str, os.PathLike)) and not isinstance(url, _URL):
        text = os.fspath(url)
        if isinstance(text, str) and mask_passwords(text) != text:
            return _URL(text)
    return url
