"""One writer per agent: locks that die with the process holding them.

A lock held by a process that is killed must not outlive it, or a restart
after a crash would be refused. So the lock is never a row in the database:

- PostgreSQL: a session-level advisory lock, held on a dedicated connection
  for as long as the agent is open; the server releases it when the
  connection closes, however the client died.
- SQLite file: a POSIX byte-range lock (one byte per agent) on a sidecar file
  ``<database>-lock``; the kernel releases it with the process.
- Within one process (and for in-memory SQLite), a registry of open agents,
  since POSIX locks do not exclude their own process.
"""

from __future__ import annotations

import os
import threading
import time

from skrbal.exceptions import AgentLockedError, StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process registry only
    fcntl = None

# The first key of PostgreSQL's two-key advisory locks: "skrb".
PG_LOCK_SPACE = 0x736B7262 - 2**31
# Whether the session ``l_pid`` still holds the lock of agent ``l_agent``.
LOCK_HELD = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
    "AND classid::bigint = :l_space AND objid::bigint = :l_agent "
    "AND objsubid = 2 AND pid = :l_pid AND granted"
)

_registry_guard = threading.Lock()
_held: set = set()
# One descriptor per sidecar file per process: closing any descriptor of a
# file drops every POSIX lock this process holds on it.
_sidecars: dict = {}


class AgentLock:
    """Exclusive write access to one agent of a store; ``release`` ends it."""

    def __init__(self, database, agent_id: int, name: str, timeout: float = 0.0):
        self.key = (database.identity, agent_id)
        self.agent_id = agent_id
        self._database = database
        self._connection = None
        self._backend_pid = None
        self._sidecar = None
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._acquire(name)
                return
            except AgentLockedError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    def _acquire(self, name):
        with _registry_guard:
            if self.key in _held:
                raise self._locked(name, "another agent object of this process")
            _held.add(self.key)
        try:
            self._acquire_outside(name)
        except BaseException:
            with _registry_guard:
                _held.discard(self.key)
            raise

    def _locked(self, name, holder):
        return AgentLockedError(
            f"agent {name!r} in store {self._database.display_url} is already open "
            f"for writing by {holder}; a store accepts one writer per agent. "
            "Close the other agent (agent.close()) or wait for its process to end."
        )

    def _owner(self, name):
        owner = self._database.owner_of(self.agent_id)
        return f"another process ({owner})" if owner else "another process"

    def _acquire_outside(self, name):
        if self._database.dialect == "postgresql":
            from sqlalchemy import text

            self._connection = self._database.engine.connect()
            got = self._connection.execute(
                text("SELECT pg_try_advisory_lock(:space, :agent)"),
                {"space": PG_LOCK_SPACE, "agent": self.agent_id},
            ).scalar()
            self._backend_pid = self._connection.execute(
                text("SELECT pg_backend_pid()")
            ).scalar()
            self._connection.commit()
            if not got:
                self._connection.close()
                self._connection = None
                raise self._locked(name, self._owner(name))
        elif self._database.path is not None and fcntl is not None:
            # By the real path: a store opened through a symlink (of the
            # file or of a folder) is the same store, locked by one file.
            path = os.path.realpath(self._database.path) + "-lock"
            with _registry_guard:
                entry = _sidecars.get(path)
                if entry is None:
                    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
                    entry = _sidecars[path] = [fd, 0]
                entry[1] += 1
            try:
                fcntl.lockf(entry[0], fcntl.LOCK_EX | fcntl.LOCK_NB, 1, self.agent_id)
            except OSError:
                self._drop_sidecar(path, unlock=False)
                raise self._locked(name, self._owner(name)) from None
            self._sidecar = path

    def _drop_sidecar(self, path, unlock):
        with _registry_guard:
            entry = _sidecars[path]
            if unlock:
                fcntl.lockf(entry[0], fcntl.LOCK_UN, 1, self.agent_id)
            entry[1] -= 1
            if entry[1] == 0:
                os.close(entry[0])
                del _sidecars[path]

    def probe(self) -> dict | None:
        """The parameters of :data:`~._driver.LOCK_HELD` for this lock, so a
        write can check it in its own statement (None: nothing to check, a
        SQLite lock is the kernel's)."""
        if self._backend_pid is None:
            return None
        return {
            "l_space": PG_LOCK_SPACE % 2**32,
            "l_agent": self.agent_id,
            "l_pid": self._backend_pid,
        }

    def verify(self, conn, name) -> None:
        """Raise :class:`StoreError` if the server dropped this lock.

        A PostgreSQL advisory lock lives as long as its session: a server
        restart or a dropped connection ends it silently, and another
        process may then open the agent. Checked in the transaction of each
        write (``conn``), so a write never commits without the lock; a write
        that moves the agent checks it in that statement instead
        (:meth:`probe`, :meth:`check`).
        """
        params = self.probe()
        if params is not None:
            from sqlalchemy import text

            self.check(conn.execute(text(LOCK_HELD), params).scalar(), name)

    def check(self, held, name) -> None:
        """Raise :class:`StoreError` unless ``held`` (the count of
        :data:`~._driver.LOCK_HELD`) says the server still holds this lock."""
        if not held:
            raise StoreError(
                f"agent {name!r} in store {self._database.display_url} lost its write "
                "lock: the PostgreSQL session holding it ended (a server restart "
                "or a dropped connection), so another process may have opened the "
                "agent; nothing was written. Close this agent and resume it with "
                "RiskBasedAgent.from_store()."
            )

    @property
    def held(self) -> bool:
        """Whether this lock is still held."""
        return self.key in _held

    def release(self) -> None:
        """Release the lock (idempotent)."""
        with _registry_guard:
            if self.key not in _held:
                return
            _held.discard(self.key)
        if self._connection is not None:
            from sqlalchemy import text

            try:
                self._connection.execute(
                    text("SELECT pg_advisory_unlock(:space, :agent)"),
                    {"space": PG_LOCK_SPACE, "agent": self.agent_id},
                )
            except Exception:  # a dead session holds no lock any more
                pass
            finally:
                self._connection.close()
                self._connection = None
        if self._sidecar is not None:
            self._drop_sidecar(self._sidecar, unlock=True)
            self._sidecar = None
