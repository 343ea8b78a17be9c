"""Errors of the ``skrbal`` command: one line, one exit status per kind.

A handler raises ``ValueError`` (``FileNotFoundError``, ``FileExistsError``
too) for what the user can fix: exit 2, one line naming the option, file, row
or column. ``OSError`` and ``ImportError`` are the system failing: exit 1. A
reader that closed the pipe (``| head``) ends the command quietly, as it ends
any Unix tool. ``--debug`` shows the traceback instead of the line.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import warnings

from skrbal._secrets import mask_passwords

__all__ = [
    "INTERRUPTED",
    "USER_ERROR",
    "Interrupted",
    "debug_option",
    "exit_status",
    "one_line",
    "one_line_warnings",
]

USER_ERROR = 2
SYSTEM_ERROR = 1
# 128 + SIGPIPE: what a shell reports for a tool its reader stopped reading.
CLOSED_PIPE = 141
# 128 + SIGINT: what a shell reports for a tool stopped by Ctrl-C.
INTERRUPTED = 130


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, with what a command had recorded and how to resume it."""


# Python spellings a message of the library may carry, and the command's.
_CLI_WORDS = (
    # np.float64(1730851200.0) -> 1730851200.0
    (re.compile(r"\bnp\.[a-z]+[0-9]*\(([^()]*)\)"), r"\1"),
    (
        re.compile(r"record_inspection\((\d+), report=\.\.\.\)"),
        r"skrbal agent inspect \1 --report OUTCOME",
    ),
    (
        re.compile(r"record_inspection\((\d+), label\)"),
        r"skrbal agent inspect \1 LABEL",
    ),
    (
        re.compile(r"resume it with RiskBasedAgent\.from_store\(\)"),
        "work on it with the other 'skrbal agent' commands",
    ),
)


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line, in the command's words.

    A URL's password is masked (``***``), numbers are shown plainly
    (``1730851200.0``, not ``np.float64(...)``) and the library's method
    calls become the command's options.
    """
    text = mask_passwords(" ".join(str(exc).split()) or type(exc).__name__)
    for pattern, words in _CLI_WORDS:
        text = pattern.sub(words, text)
    return text


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
    except KeyboardInterrupt as exc:
        # One line, never a traceback from inside pandas or SQLAlchemy: each
        # write to a store is a transaction, whole or not at all.
        if debug:
            raise
        said = (
            str(exc)
            if isinstance(exc, Interrupted)
            else (
                "interrupted (Ctrl-C); each write is atomic: what was recorded "
                "before stays, nothing is half-written"
            )
        )
        print(f"skrbal: {said}", file=sys.stderr)
        return INTERRUPTED
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


@contextlib.contextmanager
def one_line_warnings():
    """Warnings shown as ``skrbal: warning: Category: message``, one line each.

    Python's default shows the file and source line of the library, which
    mean nothing to the user of a command.
    """

    def show(message, category, filename, lineno, file=None, line=None):
        print(
            f"skrbal: warning: {category.__name__}: {one_line(message)}",
            file=sys.stderr if file is None else file,
        )

    original = warnings.showwarning
    warnings.showwarning = show
    try:
        with warnings.catch_warnings():
            # pandas 2.0 writes a float column holding NaN (an empty
            # timestamp) to CSV through astype(str), on which numpy 1.24
            # warns; the text written is right, and the user has nothing to do.
            warnings.filterwarnings(
                "ignore",
                "invalid value encountered in cast",
                RuntimeWarning,
                module=r"pandas\.",
            )
            yield
    finally:
        warnings.showwarning = original
