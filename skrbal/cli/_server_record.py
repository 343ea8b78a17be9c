"""Where a running ``skrbal agent serve`` is found, so a plain command uses it.

A monitoring system that keeps ``skrbal agent serve`` running should get the
server's speed from the command lines it already has (``skrbal agent observe
--store S ...``), not only from ``skrbal --server SOCKET agent ...``. So a
plain command of one agent (observe, inspect, cancel, record-action,
record-label, status) first looks for a server of its store and agent:

- ``SKRBAL_SERVER=SOCKET`` in the environment names one, for a store of any
  kind (a PostgreSQL store too); ``SKRBAL_SERVER=none`` turns the search off;
- else, for a SQLite store, the server's record beside the store's writer
  lock: the file ``<database>-server-<agent>`` (the agent's name
  percent-encoded) that the server writes when it starts and removes when it
  ends, naming its socket.

The command is sent only if a server answers on that socket and says it runs
that store's agent; a record left by a server that was killed (nothing
listens on its socket) or a socket serving another store is ignored, and the
command runs on its own. This module imports only the standard library: a
command decides whether to forward before importing SQLAlchemy, numpy or
scikit-learn.
"""

from __future__ import annotations

import json
import os
from urllib.parse import quote, unquote

__all__ = ["SERVED_VERBS", "SERVER_ENV", "ServerRecord", "server_socket", "sqlite_file"]

# The commands a served agent runs: those of one agent, open for writing or
# reading (init creates an agent, report and export read a whole store).
SERVED_VERBS = frozenset(
    {"observe", "inspect", "cancel", "record-action", "record-label", "status"}
)
SERVER_ENV = "SKRBAL_SERVER"
_NO_SERVER = "none"


def sqlite_file(store: str) -> str | None:
    """The file of a SQLite store (a path or a ``sqlite:///`` URL), else None.

    Read as SQLAlchemy's ``make_url(store).database`` reads it, without
    importing SQLAlchemy: ``None`` for a server's URL and for ``:memory:``
    given as a path.

    Parameters
    ----------
    store : str
        The ``--store`` of a command.

    Returns
    -------
    path : str or None

    Examples
    --------
    >>> sqlite_file("a.db"), sqlite_file("sqlite:////srv/a.db?mode=ro")
    ('a.db', '/srv/a.db')
    >>> sqlite_file("postgresql://u@host/db") is None
    True
    """
    if "://" not in store:
        return None if store == ":memory:" else store
    scheme, rest = store.split("://", 1)
    if scheme.split("+")[0] != "sqlite" or not rest.startswith("/"):
        return None
    return unquote(rest[1:].split("?", 1)[0]) or None


class ServerRecord:
    """The file beside a SQLite store naming the socket of its agent's server.

    Parameters
    ----------
    database : str
        The store's file.
    agent : str
        The agent the server runs.

    Attributes
    ----------
    path : str
        ``<database>-server-<agent>`` beside the store's lock file (the
        store's real path; the agent's name percent-encoded).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> record = ServerRecord(os.path.join(folder, "a.db"), "bridge 1")
    >>> os.path.basename(record.path)
    'a.db-server-bridge%201'
    >>> record.write("/run/a.sock")
    >>> record.socket()
    '/run/a.sock'
    >>> record.remove("/run/a.sock")
    >>> record.socket() is None
    True
    """

    def __init__(self, database: str, agent: str):
        self.path = f"{os.path.realpath(database)}-server-{quote(agent, safe='')}"

    def write(self, socket: str) -> None:
        """Name ``socket`` (made absolute) as the server's, atomically."""
        content = {"socket": os.path.abspath(socket), "pid": os.getpid()}
        temporary = f"{self.path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(content, file)
        os.replace(temporary, self.path)

    def socket(self) -> str | None:
        """The socket the record names; None without a readable record."""
        try:
            with open(self.path, encoding="utf-8") as file:
                socket = json.load(file).get("socket")
        except (OSError, ValueError, AttributeError):
            return None
        return socket if isinstance(socket, str) else None

    def remove(self, socket: str) -> None:
        """Remove the record if it still names ``socket`` (this server's)."""
        if self.socket() == os.path.abspath(socket):
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass


def server_socket(args) -> str | None:
    """The socket of a server that may run this ``skrbal agent`` command.

    ``$SKRBAL_SERVER``, else the record of a server beside a SQLite store;
    None for a command a server does not run, with ``SKRBAL_SERVER=none``,
    or when no record is found. Whether the server there runs this store's
    agent is the server's to say (see :func:`skrbal.cli._serve.forward_if_served`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``skrbal agent`` command line.

    Returns
    -------
    socket : str or None

    Examples
    --------
    >>> import argparse
    >>> args = argparse.Namespace(command="agent", verb="init", store="a.db")
    >>> server_socket(args) is None  # init runs alone
    True
    """
    if getattr(args, "command", None) != "agent" or args.verb not in SERVED_VERBS:
        return None
    named = os.environ.get(SERVER_ENV)
    if named is not None:
        return None if named.strip() in ("", _NO_SERVER) else named
    database = sqlite_file(args.store)
    if database is None or not os.path.exists(database):
        return None
    return ServerRecord(database, args.agent).socket()
