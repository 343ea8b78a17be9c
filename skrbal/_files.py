"""Files written atomically, and folders held by one writer at a time.

Shared by the results folders of studies (:mod:`skrbal.experiments`) and the
command line, which writes its summaries and figures into the same folders
under the same lock.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
from pathlib import Path

__all__ = ["LOCK_NAME", "atomic_write_bytes", "atomic_write_text", "folder_lock"]

LOCK_NAME = ".skrbal.lock"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` so that ``path`` is either absent, old or complete.

    The temporary file is created with mode 0o666 and the process umask,
    like any other file the user writes (``mkstemp`` would give 0o600).
    """
    _atomic_write(path, text, "w", "utf-8")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """:func:`atomic_write_text` for bytes (a Parquet file, say)."""
    _atomic_write(path, data, "wb", None)


def _atomic_write(path, data, mode: str, encoding) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # a full disk says which file it cost
        raise


_held = threading.local()


def _try_lock(fd: int) -> bool:
    if os.name == "nt":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _lock_holder(path: Path) -> str:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        holder = path.read_text(encoding="utf-8").strip()
        if holder:
            return f" ({holder})"
    return ""


@contextlib.contextmanager
def folder_lock(out):
    """Hold the study folder ``out`` for this thread, creating it if needed.

    An operating-system lock (``flock``) on ``out/.skrbal.lock``: released by
    the system when the holder ends, even by SIGKILL, so a killed run never
    leaves the folder locked. Re-entrant within one thread, so the command
    line can hold the folder around :func:`run_study`, which takes it too.

    Raises
    ------
    BlockingIOError
        If another run (process or thread) holds the folder.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(out)
    held = _held.__dict__.setdefault("depth", {})
    if key in held:
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    path = out / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if not _try_lock(fd):
            raise BlockingIOError(
                f"{out} is in use by another run{_lock_holder(path)}: two runs "
                "writing into one study folder would corrupt it. Wait for that "
                "run to finish (or stop it), or choose another output folder."
            )
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        held[key] = 1
        try:
            yield
        finally:
            del held[key]
            os.ftruncate(fd, 0)  # still held: no holder is named any more
    finally:
        os.close(fd)  # releases the lock
