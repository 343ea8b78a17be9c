"""``skrbal agent serve``: one process keeps an agent open and runs its commands.

Each ``skrbal agent`` command is a new process that imports scikit-learn,
opens the store and rebuilds the agent (about 2 s of CPU, most of it
scikit-learn's own import): too slow for a monitoring system answering a web
hook. ``skrbal agent serve --store S --socket PATH`` pays that once, keeps
the agent open (its write lock held: no other writer can interleave) and
answers, on a Unix socket, the commands that ``skrbal --server PATH agent
...`` forwards to it. The forwarding process imports only the standard
library, so a call costs little more than the interpreter's own start.

A forwarded command is the command line itself: the server parses it with
the ``skrbal agent`` parser and runs the same handler on its open agent, so
its options, output, one-line errors, exit status and client keys
(``--key``) are those of the command run alone. The server runs one command
at a time, in the order they come. Paths in a command (``observe``'s INPUT,
``--out``) are taken from the caller's working directory; standard input is
sent with the command.

A plain ``skrbal agent ...`` command finds the server too: the server writes
its socket beside a SQLite store's lock, and ``SKRBAL_SERVER`` names it for
any store (:mod:`skrbal.cli._server_record`); the command is then sent as
``--server`` sends it, if the server says it runs that store's agent.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import os
import socket
import socketserver
import sys
from http.server import BaseHTTPRequestHandler

from skrbal.cli._agent_store import guarded, resumed_agent
from skrbal.cli._server_record import (
    SERVED_VERBS,
    SERVER_ENV,
    ServerRecord,
    sqlite_file,
)

__all__ = ["SERVED_VERBS", "forward", "forward_if_served", "serve"]

# A socket nobody listens on, or that has gone: no server runs the command.
_NO_SERVER = (FileNotFoundError, ConnectionRefusedError)


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket (its file's permissions say who may call)."""

    def __init__(self, path: str, timeout: float | None = None):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def _exchange(path: str, route: str, request: dict) -> dict:
    """One request to the server at ``path``, and its JSON answer."""
    connection = _UnixHTTPConnection(path)
    try:
        connection.request(
            "POST", route, json.dumps(request), {"Content-Type": "application/json"}
        )
        return json.loads(connection.getresponse().read())
    finally:
        connection.close()


def _standard_input(reads_stdin: bool) -> str:
    return sys.stdin.buffer.read().decode("utf-8", "replace") if reads_stdin else ""


def _answered(path: str, answer: dict) -> int:
    sys.stdout.write(answer["stdout"])
    sys.stderr.write(answer["stderr"])
    return int(answer["status"])


def _lost(path: str, exc: Exception) -> int:
    """A server that went away during the command: what it did is unknown."""
    print(
        f"skrbal: the agent server on {path} ended during the command "
        f"({exc}); whether it was recorded is unknown: see 'skrbal agent "
        "status' (a --key makes running it again safe)",
        file=sys.stderr,
    )
    return 1


def forward(path: str, argv: list[str]) -> int:
    """Run ``skrbal agent ARGV`` on the server at socket ``path``.

    Parameters
    ----------
    path : str
        The socket of ``skrbal agent serve``.
    argv : list of str
        The command line after ``agent`` (``["observe", "feed.csv"]``).

    Returns
    -------
    status : int
        The command's exit status; its output and errors are written here.

    Examples
    --------
    >>> forward("/nonexistent/agent.sock", ["status"])  # says so on stderr
    1
    """
    from skrbal.cli import _parser

    # Parsed here too (a usage error needs no server), and to know whether
    # the command reads standard input: then it is sent with the command.
    line = ["agent", *argv[:1], "--store", "-", *argv[1:]]
    parsed = _parser("agent").parse_args(line)
    request = {
        "argv": argv,
        "cwd": os.getcwd(),
        "stdin": _standard_input(getattr(parsed, "input", None) == "-"),
    }
    try:
        answer = _exchange(path, "/agent", request)
    except _NO_SERVER as exc:
        print(
            f"skrbal: --server {path}: no agent server there ({exc.strerror}); "
            "start one with 'skrbal agent serve --socket PATH'",
            file=sys.stderr,
        )
        return 1
    except (http.client.HTTPException, OSError) as exc:
        return _lost(path, exc)
    return _answered(path, answer)


def forward_if_served(path: str, argv: list[str], args) -> int | None:
    """Run a plain ``skrbal agent`` command on the server at ``path``, if it may.

    The server is asked first whether it runs ``args.store``'s agent
    ``args.agent`` (the same file, however named, or the same database);
    standard input is read only then.

    Parameters
    ----------
    path : str
        The socket from :func:`skrbal.cli._server_record.server_socket`.
    argv : list of str
        The command line after ``agent``.
    args : argparse.Namespace
        That command line, parsed.

    Returns
    -------
    status : int or None
        The command's exit status (its output and errors written here), or
        None when no server there runs that agent (a record left by a server
        that was killed, a socket of another store): the command then runs
        on its own.

    Examples
    --------
    >>> import argparse
    >>> args = argparse.Namespace(store="a.db", agent="agent", input=None)
    >>> forward_if_served("/nonexistent/agent.sock", ["status"], args) is None
    True
    """
    here = os.getcwd()
    asked = {"store": args.store, "agent": args.agent, "cwd": here}
    try:
        if not _exchange(path, "/serves", asked).get("serves"):
            return None
    except (http.client.HTTPException, OSError, ValueError):
        # Nothing listens there (a record left by a killed server), this user
        # may not call it, or it is no skrbal server: the command runs alone.
        return None
    stdin = _standard_input(getattr(args, "input", None) == "-")
    request = {"argv": argv, "cwd": here, "stdin": stdin}
    try:
        answer = _exchange(path, "/agent", request)
    except _NO_SERVER:
        # It ended in between, before running anything: run here, on the
        # input already read.
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        return None
    except (http.client.HTTPException, OSError) as exc:
        return _lost(path, exc)
    return _answered(path, answer)


def store_identity(store: str, cwd: str) -> tuple:
    """What a ``--store`` names, from ``cwd``: its file, or its database.

    Two spellings of one store (a relative path and a ``sqlite:///`` URL; a
    ``postgresql://`` URL with or without its password) have one identity.

    Examples
    --------
    >>> store_identity("sqlite:////srv/a.db", "/") == store_identity("a.db", "/srv")
    True
    """
    database = sqlite_file(store)
    if database is not None:
        return ("sqlite", os.path.realpath(os.path.join(cwd, database)))
    from sqlalchemy.engine import make_url

    try:
        url = make_url(store)
    except Exception:  # not a URL: no store the server runs
        return ("unknown", store)
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    return ("url", url.render_as_string(hide_password=True))


class _Captured:
    """Standard input, output and error of one command, in memory."""

    def __init__(self, stdin: str):
        self.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        self.stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        self.stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")

    @contextlib.contextmanager
    def installed(self):
        saved = sys.stdin, sys.stdout, sys.stderr
        sys.stdin, sys.stdout, sys.stderr = self.stdin, self.stdout, self.stderr
        try:
            yield
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved

    @staticmethod
    def text(stream) -> str:
        stream.flush()
        return stream.buffer.getvalue().decode("utf-8")


class AgentServer:
    """The open agent of ``skrbal agent serve`` and the commands it runs.

    Parameters
    ----------
    agent : RiskBasedAgent
        The agent, open for writing.
    store : str
        The ``--store`` it was opened from.
    parser : argparse.ArgumentParser
        The ``skrbal`` parser (with ``agent``), which reads each command.
    """

    def __init__(self, agent, store: str, parser):
        self.agent, self.store, self.parser = agent, store, parser
        self.identity = store_identity(store, os.getcwd())

    def serves(self, store: str, agent: str, cwd: str) -> bool:
        """Whether ``--store STORE --agent AGENT`` given in ``cwd`` is this agent."""
        return agent == self.agent.name and store_identity(store, cwd) == self.identity

    def run(self, argv: list[str], cwd: str, stdin: str) -> dict:
        """Run one command line; its exit status, output and errors."""
        from skrbal.cli._errors import exit_status, one_line_warnings

        captured = _Captured(stdin)
        with captured.installed(), one_line_warnings():
            try:
                args = self._parsed(argv, cwd)
            except SystemExit as exit_:  # argparse's usage error, already printed
                status = 2 if exit_.code is None else int(exit_.code)
            else:
                status = exit_status(args.handler, args, debug=False)
        return {
            "status": status,
            "stdout": captured.text(captured.stdout),
            "stderr": captured.text(captured.stderr),
        }

    def _parsed(self, argv: list[str], cwd: str):
        if not argv or argv[0] not in SERVED_VERBS:
            verbs = ", ".join(sorted(SERVED_VERBS))
            print(
                f"skrbal: a served agent runs {verbs}; got {argv[:1]}",
                file=sys.stderr,
            )
            raise SystemExit(2)
        given = ["agent", argv[0], "--store", self.store, "--agent", self.agent.name]
        args = self.parser.parse_args([*given, *argv[1:]])
        if not self.serves(args.store, args.agent, cwd):
            print(
                f"skrbal: this server runs agent {self.agent.name!r} of "
                f"{self.store}; --store and --agent name no other",
                file=sys.stderr,
            )
            raise SystemExit(2)
        for name in ("input", "out"):
            value = getattr(args, name, None)
            if value not in (None, "-"):
                setattr(args, name, os.path.join(cwd, value))
        args.store = self.store  # as the server opened it (from its folder)
        args.served_agent = self.agent
        return args


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        served = self.server.agent_server
        if self.path == "/serves":  # may a plain command be run here?
            answer = {
                "serves": served.serves(
                    str(request["store"]), str(request["agent"]), request["cwd"]
                )
            }
        else:
            answer = served.run(
                list(request["argv"]), request["cwd"], request.get("stdin", "")
            )
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def address_string(self):  # a Unix socket's peer has no host
        return "local"

    def log_message(self, format, *args):
        """Quiet: the commands' own output is the log."""


class _UnixHTTPServer(socketserver.UnixStreamServer):
    """One command at a time, in order: the agent has one writer."""

    def get_request(self):
        request, _ = super().get_request()
        return request, ("local", 0)


def _ended(signum, frame):
    raise KeyboardInterrupt


@guarded
def serve(args) -> int:
    """Keep ``--agent`` of ``--store`` open; run the commands sent to ``--socket``."""
    import signal

    from skrbal.cli import _parser

    _free_socket(args.socket)
    signal.signal(signal.SIGTERM, _ended)  # ended as by Ctrl-C: the lock freed
    with resumed_agent(args) as agent:
        server = _UnixHTTPServer(args.socket, _Handler)
        server.agent_server = AgentServer(agent, args.store, _parser("agent"))
        database = sqlite_file(args.store)
        # Written with the lock held, so no other server of the agent races it.
        record = None if database is None else ServerRecord(database, agent.name)
        if record is not None:
            record.write(args.socket)
        print(
            f"skrbal: serving agent {agent.name!r} of {args.store} on "
            f"{args.socket} (skrbal --server {args.socket} agent ...; "
            + (
                "plain 'skrbal agent' commands of this store come here too"
                if record is not None
                else f"or {SERVER_ENV}={args.socket} skrbal agent ..."
            )
            + "); Ctrl-C ends it",
            file=sys.stderr,
            flush=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print(
                f"skrbal: the server of agent {agent.name!r} on {args.socket} "
                "ended; the agent is closed, every command it ran recorded",
                file=sys.stderr,
            )
        finally:
            if record is not None:
                record.remove(args.socket)
            server.server_close()
            os.unlink(args.socket)
    return 0


def _free_socket(path: str) -> None:
    """Refuse a socket a server listens on; remove one a killed server left."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISSOCK(mode):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except ConnectionRefusedError:  # nobody listens: left by a killed server
            os.unlink(path)
            return
        finally:
            probe.close()
    raise FileExistsError(
        f"--socket {path}: exists ("
        + ("another server listens on it" if stat.S_ISSOCK(mode) else "not a socket")
        + "; give another path)"
    )
