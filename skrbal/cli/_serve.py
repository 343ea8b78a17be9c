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

__all__ = ["SERVED_VERBS", "forward", "serve"]

# The commands a served agent runs: those of one agent, open for writing or
# reading (init creates an agent, report and export read a whole store).
SERVED_VERBS = frozenset(
    {"observe", "inspect", "cancel", "record-action", "record-label", "status"}
)


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket (its file's permissions say who may call)."""

    def __init__(self, path: str, timeout: float | None = None):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


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
    """
    from skrbal.cli import _parser

    # Parsed here too (a usage error needs no server), and to know whether
    # the command reads standard input: then it is sent with the command.
    line = ["agent", *argv[:1], "--store", "-", *argv[1:]]
    parsed = _parser("agent").parse_args(line)
    stdin = b""
    if getattr(parsed, "input", None) == "-":
        stdin = sys.stdin.buffer.read()
    body = json.dumps(
        {"argv": argv, "cwd": os.getcwd(), "stdin": stdin.decode("utf-8", "replace")}
    )
    connection = _UnixHTTPConnection(path)
    try:
        connection.request("POST", "/agent", body, {"Content-Type": "application/json"})
        answer = json.loads(connection.getresponse().read())
    except (FileNotFoundError, ConnectionRefusedError) as exc:
        print(
            f"skrbal: --server {path}: no agent server there ({exc.strerror}); "
            "start one with 'skrbal agent serve --socket PATH'",
            file=sys.stderr,
        )
        return 1
    finally:
        connection.close()
    sys.stdout.write(answer["stdout"])
    sys.stderr.write(answer["stderr"])
    return int(answer["status"])


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
        if args.agent != self.agent.name or args.store != self.store:
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
        args.served_agent = self.agent
        return args


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        answer = self.server.agent_server.run(
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

    if os.path.exists(args.socket):
        raise FileExistsError(
            f"--socket {args.socket}: exists (another server, or one that did "
            "not end cleanly: remove it if no server runs)"
        )
    signal.signal(signal.SIGTERM, _ended)  # ended as by Ctrl-C: the lock freed
    with resumed_agent(args) as agent:
        server = _UnixHTTPServer(args.socket, _Handler)
        server.agent_server = AgentServer(agent, args.store, _parser("agent"))
        print(
            f"skrbal: serving agent {agent.name!r} of {args.store} on "
            f"{args.socket} (skrbal --server {args.socket} agent ...); Ctrl-C "
            "ends it",
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
            server.server_close()
            os.unlink(args.socket)
    return 0
