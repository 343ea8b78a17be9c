"""The store of ``skrbal agent``: opened, resumed, and its errors in one line.

A store error the user can fix (no such store, no such agent, a file that
is not a store) exits 2; the system failing (an unreachable server, a lock
held by another writer) exits 1.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import sys

from skrbal.cli._server_record import sqlite_file

__all__ = ["guarded", "new_store", "open_store", "resumed_agent"]


def guarded(handler):
    """Run ``handler``; turn store errors into the exceptions ``main`` prints."""

    @functools.wraps(handler)
    def run(args) -> int:
        from skrbal.online import AgentLockedError, StoreError

        try:
            return handler(args)
        except AgentLockedError as exc:
            raise OSError(str(exc)) from exc
        except StoreError as exc:
            if _unreachable(exc.__cause__) and not _is_local(args):
                # An unreachable server: the system fails.
                raise OSError(str(exc)) from exc
            raise ValueError(str(exc)) from exc
        except sqlite3.Error as exc:
            # A SQLite file read or written without SQLAlchemy (issue 28.25):
            # the driver's own error, said as its DBAPIError would be below.
            if _is_local(args):
                raise ValueError(
                    f"--store {args.store!r}: not a store ({exc})"
                ) from exc
            raise OSError(f"store {args.store!r}: {exc}") from exc
        except Exception as exc:
            if "sqlalchemy" not in sys.modules:
                # Not a database error (status reads SQLite without SQLAlchemy).
                raise
            from sqlalchemy.exc import ArgumentError, DBAPIError

            if isinstance(exc, ArgumentError):
                raise ValueError(f"--store {args.store!r}: {exc}") from exc
            if not isinstance(exc, DBAPIError):
                raise
            if _is_local(args):
                raise ValueError(
                    f"--store {args.store!r}: not a store ({exc.orig})"
                ) from exc
            # The driver's own words, without SQLAlchemy's statement dump.
            raise OSError(f"store {args.store!r}: {exc.orig}") from exc

    return run


def _unreachable(cause) -> bool:
    """Whether a store error's cause is SQLAlchemy's OperationalError."""
    if "sqlalchemy" not in sys.modules:
        return False
    from sqlalchemy.exc import OperationalError

    return isinstance(cause, OperationalError)


def _is_local(args) -> bool:
    """A SQLite file: what goes wrong with it is the file given, not a server."""
    return sqlite_file(args.store) is not None


def open_store(args, *, create: bool = False):
    """The store of ``--store``; an existing one unless ``create``."""
    from skrbal.online import AgentStore

    path = sqlite_file(args.store)
    if path is not None:
        if os.path.isdir(path):
            raise IsADirectoryError(
                f"--store {args.store!r}: is a directory, not a store file"
            )
        if not create and not os.path.exists(path):
            first = (
                "a fleet with 'skrbal fleet init'"
                if getattr(args, "command", None) == "fleet"
                else "an agent with 'skrbal agent init'"
            )
            raise FileNotFoundError(
                f"--store {args.store!r}: no such store; create {first}."
            )
    return AgentStore(args.store)


@contextlib.contextmanager
def new_store(args):
    """The store of ``--store`` for ``init``, created if need be; closed after.

    A SQLite file that this call created is removed again if ``init`` fails
    before an agent is stored in it, so a refused ``init`` leaves nothing
    behind (a file holding only the empty tables would look like a store).
    """
    path = sqlite_file(args.store)
    fresh = path is not None and not os.path.exists(path)
    store = open_store(args, create=True)
    try:
        yield store
    except BaseException:
        empty = fresh and not store.agent_names()
        store.close()
        if empty:
            for end in ("", "-wal", "-shm", "-journal", "-lock"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path + end)
        raise
    finally:
        store.close()


@contextlib.contextmanager
def resumed_agent(args):
    """The agent of ``--agent``, open for writing; closed (and its store) after.

    Under ``skrbal agent serve`` the command runs on the server's agent
    (``args.served_agent``), open already and left open after.
    """
    served = getattr(args, "served_agent", None)
    if served is not None:
        yield served
        return
    from skrbal.online import RiskBasedAgent

    if args.wait < 0:
        raise ValueError(f"--wait must be >= 0, got {args.wait}")
    store = open_store(args)
    try:
        agent = RiskBasedAgent.from_store(store, args.agent, lock_timeout=args.wait)
        try:
            yield agent
        finally:
            agent.close()
    finally:
        store.close()
