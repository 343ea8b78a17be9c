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

__all__ = ["open_sqlite_store", "open_storage", "store_parameter"]


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


def _sqlite_path(store) -> str | None:
    """The file a store parameter names, if it names a SQLite file."""
    if not isinstance(store, (str, os.PathLike)):
        return None
    text = os.fspath(store)
    if not isinstance(text, str) or text in ("", ":memory:"):
        return None
    if text.startswith("sqlite:///"):  # SQLAlchemy's spelling of a file
        text = text[len("sqlite:///") :]
        if text in ("", ":memory:") or "?" in text:
            return None
    elif "://" in text:
        return None
    return text


def open_sqlite_store(store, **options):
    """A live call's store on a SQLite file, opened without SQLAlchemy.

    For a command that makes one call of an agent (``skrbal agent observe``
    from a shell), where importing SQLAlchemy would cost more than the
    call: the reads and writes of a call go through the standard library's
    ``sqlite3``, with the store's writer and SQL texts (see
    ``skrbal.online._sql._sqlite_store``).

    Parameters
    ----------
    store : str or path-like
        A SQLite file's path or ``sqlite:///`` URL.
    **options
        ``synchronous``, ``chain_key``, ``anchor_file``, as
        :class:`~skrbal.online.AgentStore` takes them.

    Returns
    -------
    storage : SqliteStore or None
        None when ``store`` is no SQLite file this path serves (PostgreSQL,
        ``:memory:``, no such file, a read-only file, another schema
        version): open an :class:`~skrbal.online.AgentStore`, which serves
        it or says what is wrong.

    Raises
    ------
    StoreError
        For a SQLite file with two names (hard links), as the store does.

    Examples
    --------
    >>> import os, sys, tempfile
    >>> from skrbal.online import open_sqlite_store
    >>> open_sqlite_store("postgresql://db/agents") is None
    True
    >>> path = os.path.join(tempfile.mkdtemp(), "agents.db")
    >>> open_sqlite_store(path) is None  # no store there yet
    True
    """
    path = _sqlite_path(store)
    if path is None:
        return None
    from skrbal.online._sql._sqlite_store import SqliteStore

    return SqliteStore.open(path, **options)


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
