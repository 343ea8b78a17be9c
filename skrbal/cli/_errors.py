"""Errors of the ``skrbal`` command: one line, one exit status per kind.

A handler raises ``ValueError`` (``FileNotFoundError``, ``FileExistsError``
too) for what the user can fix: exit 2, one line naming the option, file, row
or column. ``OSError`` and ``ImportError`` are the system failing: exit 1. A
reader that closed the pipe (``| head``) ends the command quietly, as it ends
any Unix tool. ``--debug`` shows the traceback instead of the line.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["USER_ERROR", "debug_option", "exit_status", "one_line"]

USER_ERROR = 2
SYSTEM_ERROR = 1
# 128 + SIGPIPE: what a shell reports for a tool its reader stopped reading.
CLOSED_PIPE = 141


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (its class name when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def debug_option() -> argparse.ArgumentParser:
    """``--debug`` for a command's own options (``skrbal agent status --debug``)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="on an error, show Python's traceback instead of one line",
    )
    return parent


def _quiet_stdout() -> None:
    """Point standard output at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def exit_status(handler, args, *, debug: bool = False) -> int:
    """Run ``handler(args)`` and turn what it raises into an exit status."""
    try:
        status = handler(args)
        # Written output reaches a closed pipe here at the latest.
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        _quiet_stdout()
        return CLOSED_PIPE
    except (FileExistsError, FileNotFoundError, IsADirectoryError, ValueError) as exc:
        if debug:
            raise
        print(f"skrbal: {one_line(exc)}", file=sys.stderr)
        return USER_ERROR
    except (OSError, ImportError) as exc:
        # The disk, the folder, the cluster or the install: one line, no
        # traceback, whatever the operating system or library reported.
        if debug:
            raise
        print(f"skrbal: {one_line(exc)}", file=sys.stderr)
        return SYSTEM_ERROR
