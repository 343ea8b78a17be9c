"""The ``skrbal`` command: studies, reproductions and live agents from the shell.

- ``skrbal run``: EVPI against random querying, quickly (``make demo``);
- ``skrbal reproduce synthetic|z24|custom``: a case study of the paper (or its
  protocol on your own campaign and process) with every method, writing
  results, all figures and a Markdown summary;
- ``skrbal agent ...``: a live agent over its store (SQLite or PostgreSQL);
- ``skrbal fleet ...``: the agents of a fleet's structures on one budget;
- ``skrbal --server SOCKET agent ...``: the command run by a running
  ``skrbal agent serve --socket SOCKET``, which keeps the agent open. A plain
  ``skrbal agent ...`` command is sent there too when that server runs its
  store's agent (found beside a SQLite store, or named by ``SKRBAL_SERVER``).

The parser of a command is only built (and its modules only imported) when
that command runs, so ``skrbal --version`` or ``skrbal agent status`` do not
pay for pandas, scikit-learn or matplotlib they do not use.
"""

from __future__ import annotations

import argparse
import sys

from skrbal.cli._errors import exit_status, one_line_warnings

__all__ = ["main"]

# name -> (module, one-line help); the module's ``add_parser(commands, name,
# help)`` fills in the command.
_COMMANDS = {
    "run": ("skrbal.cli._run", "run a repeated study with figures"),
    "reproduce": (
        "skrbal.cli._reproduce",
        "reproduce a case study of the paper: results, all figures, summary",
    ),
    "agent": (
        "skrbal.cli._agent",
        "run a live risk-based agent over a store (SQLite or PostgreSQL)",
    ),
    "fleet": (
        "skrbal.cli._fleet",
        "run the agents of a fleet of structures on one budget",
    ),
}


def _requested(argv: list[str]) -> str:
    """The command named on the line (the first word that is not an option).

    ``""`` when there is none (``skrbal --version``, ``skrbal --help``) or it
    is not a command: the top-level parser then needs no command's options.
    """
    word = next((a for a in argv if not a.startswith("-")), "")
    return word if word in _COMMANDS else ""


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s options are built (all when ``None``)."""
    import importlib

    import skrbal

    parser = argparse.ArgumentParser(
        prog="skrbal",
        description="Risk-based active learning: inspect only when the expected "
        "value of perfect information exceeds the inspection cost.",
        epilog="Exit status: 0 on success, 2 for a user error (an option, file, "
        "row or column; one line on standard error), 1 when the system fails "
        "(disk, database server, lock, missing dependency), 141 when the "
        "reader of the output went away (a closed pipe, as in '| head').",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {skrbal.__version__}"
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an error, show Python's traceback instead of one line",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in _COMMANDS.items():
        if command in (None, name):
            importlib.import_module(module).add_parser(commands, name, help_text)
        else:
            commands.add_parser(name, help=help_text)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``skrbal`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments; ``sys.argv[1:]`` when ``None``.

    Returns
    -------
    status : int
        Exit status: 0 on success; 2 for a user error (invalid arguments,
        data, a process file, a folder that holds another study, a store
        that is not one); 1 when the system fails the run (a file that
        cannot be written, a full or read-only disk, an unreachable Dask
        scheduler or database server, a folder or agent locked by another
        run, a missing optional dependency); 141 when standard output is a
        pipe its reader closed (``skrbal agent status ... | head -1``).
        Errors are reported on one line of standard error, starting
        ``skrbal:``; ``--debug`` shows the traceback instead.

    Examples
    --------
    >>> from skrbal.cli import main
    >>> main(["run", "--help"])  # doctest: +SKIP
    """
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    if argv[:1] == ["--server"] and len(argv) > 2 and argv[2] == "agent":
        # A command for a running 'skrbal agent serve': sent, not run here.
        from skrbal.cli._serve import forward

        with one_line_warnings():
            return forward(argv[1], argv[3:])
    args = _parser(_requested(argv)).parse_args(argv)
    with one_line_warnings():
        status = _served(argv, args)
        if status is not None:
            return status
        return exit_status(args.handler, args, debug=args.debug)


def _served(argv: list[str], args) -> int | None:
    """The exit status of a command a running agent server ran, else None."""
    from skrbal.cli._server_record import server_socket

    socket = server_socket(args)
    if socket is None:
        return None
    from skrbal.cli._serve import forward_if_served

    return forward_if_served(socket, argv[argv.index("agent") + 1 :], args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
