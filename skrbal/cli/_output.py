"""Output files of the ``skrbal`` command, as Unix tools treat them.

``-`` is standard output. A regular file (or a symlink to one, which stays a
symlink) is written atomically: it is either the old file or the complete new
one, never half of it. Anything else that exists (``/dev/stdout``, a FIFO, a
terminal, a symlink to one of them) is opened and written in place, never
replaced by a regular file; a directory is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

__all__ = ["check_output", "output_stream", "write_output"]


def _target(name: str, option: str) -> tuple[Path, bool]:
    """The file to write and whether it is (or will be) a regular file."""
    path = Path(name)
    try:
        mode = os.stat(path).st_mode  # follows symlinks
    except FileNotFoundError:
        if path.is_symlink():
            raise ValueError(
                f"{option} {name}: a symlink to a file that does not exist "
                f"({os.readlink(path)}); write to the file itself"
            ) from None
        if not path.parent.is_dir():
            raise FileNotFoundError(
                f"{option} {name}: no folder {str(path.parent)!r} to write it in"
            ) from None
        return path, True
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(
            f"{option} {name}: is a directory; give the name of a file in it, "
            f"such as {os.path.join(name, 'out.csv')}"
        )
    if stat.S_ISREG(mode):
        return path.resolve(), True
    return path, False


def check_output(name: str, option: str = "--out") -> None:
    """Refuse an output that cannot be written before any work is done."""
    if name != "-":
        _target(name, option)


def _system_error(exc: OSError, name: str, option: str) -> OSError:
    """The error of a failed write naming the user's file, not a temporary one."""
    reason = exc.strerror or str(exc)
    error = type(exc)(exc.errno, f"{option} {name}: cannot write it: {reason}")
    error.filename = None
    return error


def write_output(name: str, data: str | bytes, *, option: str = "--out") -> bool:
    """Write ``data`` to ``name`` (``-``: standard output).

    Returns whether the data went to a regular file, where a confirmation
    printed to standard output cannot mix with it.
    """
    if name == "-":
        stream = sys.stdout if isinstance(data, str) else sys.stdout.buffer
        stream.write(data)
        stream.flush()
        return False
    from skrbal._files import atomic_write_bytes, atomic_write_text

    path, regular = _target(name, option)
    try:
        if regular:
            write = atomic_write_text if isinstance(data, str) else atomic_write_bytes
            write(path, data)
        else:
            mode, encoding = ("w", "utf-8") if isinstance(data, str) else ("wb", None)
            with open(path, mode, encoding=encoding) as stream:
                stream.write(data)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise _system_error(exc, name, option) from exc
    return regular


@contextlib.contextmanager
def output_stream(name: str | None, *, option: str = "--out"):
    """A text stream to write as results come (``None`` or ``-``: stdout).

    A file is written in place as the results come, so a reader can follow it.
    """
    if name is None or name == "-":
        yield sys.stdout
        return
    path, _ = _target(name, option)
    try:
        stream = open(path, "w", newline="", encoding="utf-8")
    except OSError as exc:
        raise _system_error(exc, name, option) from exc
    with stream:
        yield stream
