"""The ``skrbal`` command, run as a fresh interpreter would, without starting one.

Three runners. :func:`run_forked` (the main run) forks this process for each
command: a real process with its own pipes, folder, environment, signals and
exit status, that starts with this process's imports. The first week's
sessions start about a hundred commands, each of which imported scikit-learn
and pandas again (about 1.6 CPU seconds): forked, those files take a fifth of
their CPU time. ``SKRBAL_TEST_CLI_SUBPROCESS=1`` starts a new interpreter for
each command instead; the Ctrl-C test and the pipes of
``tests/test_cli_agent.py`` always do, so the entry point and the
interpreter's start are run in every run.

:func:`run_in_process` (the oldest run) calls the command in this process.

:func:`run_shell_forked` (both runs) runs a documented shell session with
``bash``: its pipes and redirections are real, and each ``skrbal`` the shell
starts is a small client that hands its arguments and standard streams to
this process, which forks the command on them as :func:`run_forked` does
(the sessions' dozen commands each imported scikit-learn and pandas again:
about 43 of the suite's CPU seconds, 11 forked).

``make test-oldest`` sets ``SKRBAL_TEST_CLI_IN_PROCESS=1``: the tests that
replay a user's session through the real command in a subprocess
(``tests/test_cli_first_week*.py``) then call :func:`skrbal.cli.main` here
instead. That run proves the lowest declared versions of the dependencies:
the command's code and every library call it makes run the same in this
process, while what a subprocess adds (the interpreter starting, the entry
point, exit codes and pipes of a real process) does not depend on those
versions, and runs on them in the tests that start a process themselves
(``test_ctrl_c_in_a_large_observe_is_one_line_exit_130_and_resumes`` and the
pipes of ``tests/test_cli_agent.py``). The main run forks instead (above). A
command's start imports scikit-learn and pandas again, about
1.6 CPU seconds each: in-process, the oldest run saves that for each of the
first week's commands.

What a fresh interpreter has and this process must give the command:
standard streams with a byte buffer (the command writes bytes to
``sys.stdout.buffer`` and reads ``sys.stdin.buffer``), Python's default
warning filters (not pytest's, which show every warning), the repository as
the working folder, and an exit status for what escapes ``main``.
"""

import contextlib
import io
import os
import sys
import traceback
import warnings

IN_PROCESS = os.environ.get("SKRBAL_TEST_CLI_IN_PROCESS", "") not in ("", "0")


def _stream(data: str = "") -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(data.encode()), encoding="utf-8", newline="")


def _default_warning_filters() -> None:
    """The filters of a fresh interpreter (``python -W`` not given)."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    for category in (
        DeprecationWarning,
        PendingDeprecationWarning,
        ImportWarning,
        ResourceWarning,
    ):
        warnings.simplefilter("ignore", category)


def run_in_process(argv, *, input=None, cwd) -> tuple[int, str, str]:
    """``skrbal *argv`` in this process: (exit status, stdout, stderr)."""
    from skrbal.cli import main

    stdin, stdout, stderr = _stream(input or ""), _stream(), _stream()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        with contextlib.chdir(cwd), warnings.catch_warnings():
            _default_warning_filters()
            try:
                code = main([str(a) for a in argv])
            except SystemExit as exc:  # argparse: --help, a usage error
                code = exc.code if isinstance(exc.code, int) else 1
                if exc.code is not None and not isinstance(exc.code, int):
                    print(exc.code, file=sys.stderr)
            except Exception:  # what the interpreter prints before exit 1
                traceback.print_exc()
                code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    texts = []
    for stream in (stdout, stderr):
        stream.flush()
        # as subprocess.run(text=True) reads them: universal newlines
        text = stream.buffer.getvalue().decode("utf-8")
        texts.append(text.replace("\r\n", "\n").replace("\r", "\n"))
    return code, texts[0], texts[1]


# ---------------------------------------------------------------------- #
# forked: a real process, started from this one's imports
# ---------------------------------------------------------------------- #
FORKED = (
    hasattr(os, "fork")
    and not IN_PROCESS
    and os.environ.get("SKRBAL_TEST_CLI_SUBPROCESS", "") in ("", "0")
)


# A shell session cannot call the command in this process (its pipes and
# redirections are the shell's), so both the main and the oldest run fork it.
SHELL_FORKED = hasattr(os, "fork") and os.environ.get(
    "SKRBAL_TEST_CLI_SUBPROCESS", ""
) in ("", "0")


def _clear_warning_registries() -> None:
    """Forget which warnings this process has shown: a fresh interpreter has
    shown none, and the ``default`` action shows each once per location."""
    for module in list(sys.modules.values()):
        registry = getattr(module, "__warningregistry__", None)
        if isinstance(registry, dict):
            registry.clear()


def _child(argv, stdin_fd, stdout_fd, stderr_fd, cwd, env) -> None:
    """The forked process: the command on real file descriptors; never returns."""
    import signal

    code = 1
    try:
        os.dup2(stdin_fd, 0)
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        for fd in {stdin_fd, stdout_fd, stderr_fd}:
            os.close(fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8"
        )
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False),
            encoding="utf-8",
            errors="backslashreplace",
        )
        _default_warning_filters()
        _clear_warning_registries()
        from skrbal.cli import main

        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
        except KeyboardInterrupt:
            code = 130
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def run_forked(argv, *, input=None, cwd, env, timeout) -> tuple[int, str, str]:
    """``skrbal *argv`` in a child forked from this process: a real process
    with its own pipes, folder, environment and exit status, which starts
    with this process's imports instead of importing scikit-learn and pandas
    again (about 1.6 CPU seconds a command). The interpreter's start and the
    entry point run in the tests that start a process themselves."""
    import subprocess
    import threading

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child exits in _child
        for fd in (in_w, out_r, err_r):
            os.close(fd)
        _child(argv, in_r, out_w, err_w, cwd, env)
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    chunks = {out_r: [], err_r: []}

    def drain(fd):
        with os.fdopen(fd, "rb") as stream:
            chunks[fd].append(stream.read())

    readers = [threading.Thread(target=drain, args=(fd,)) for fd in (out_r, err_r)]
    for reader in readers:
        reader.start()
    with os.fdopen(in_w, "wb") as stream:
        try:
            stream.write((input or "").encode())
        except BrokenPipeError:
            pass
    for reader in readers:
        reader.join(timeout)
    deadline_passed = any(reader.is_alive() for reader in readers)
    if deadline_passed:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise subprocess.TimeoutExpired(["skrbal", *map(str, argv)], timeout)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    texts = [
        b"".join(chunks[fd]).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        for fd in (out_r, err_r)
    ]
    return code, texts[0], texts[1]


# ---------------------------------------------------------------------- #
# a shell session whose ``skrbal`` lines are forks of this process
# ---------------------------------------------------------------------- #
# The ``skrbal`` a session's shell finds: a client that hands its arguments,
# folder, environment and standard streams (the descriptors themselves, so
# pipes and redirections are the shell's) to this process, and exits with the
# status of the fork that ran them. It starts an isolated interpreter without
# site packages: a few milliseconds, not the command's imports.
_CLIENT = """\
import json, os, socket, sys
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
client.connect(os.environ["SKRBAL_TEST_FORK_SERVER"])
request = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
socket.send_fds(client, [json.dumps(request).encode()], [0, 1, 2])
client.shutdown(socket.SHUT_WR)
sys.exit(int(client.recv(16) or b"1"))
"""


def _serve_one(server, running: dict) -> None:
    """Accept one client, fork the command it asks for; note the child."""
    import json
    import socket

    conn, _ = server.accept()
    message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    chunks = [message]
    while chunk := conn.recv(1 << 16):
        chunks.append(chunk)
    request = json.loads(b"".join(chunks))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child exits in _child
        server.close()
        conn.close()
        _child(request["argv"], *fds, request["cwd"], request["env"])
    for fd in fds:
        os.close(fd)
    running[pid] = conn


def run_shell_forked(command: str, *, cwd, env, timeout):
    """``bash -e -o pipefail -c command`` whose ``skrbal`` is forked from here.

    The shell, its pipes and redirections are real; each ``skrbal`` it starts
    is a client that passes its arguments and standard streams to this
    process, which forks the command on them (:func:`run_forked`'s child):
    the command's process starts with this one's imports (a documented
    session's dozen commands imported scikit-learn and pandas each). Returns
    a :class:`subprocess.CompletedProcess` with text output, as
    ``subprocess.run(..., capture_output=True, text=True)`` does.
    """
    import select
    import shutil
    import socket
    import subprocess
    import tempfile
    import threading
    import time

    folder = tempfile.mkdtemp(prefix="skrbal-fork-")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    running: dict = {}
    shell = None
    try:
        address = os.path.join(folder, "server")
        server.bind(address)
        server.listen(8)
        bin_dir = os.path.join(folder, "bin")
        os.mkdir(bin_dir)
        client = os.path.join(bin_dir, "skrbal")
        with open(client, "w", encoding="utf-8") as stream:
            stream.write(f"#!{sys.executable} -IS\n{_CLIENT}")
        os.chmod(client, 0o755)
        env = {
            **env,
            "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}",
            "SKRBAL_TEST_FORK_SERVER": address,
        }
        shell = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        output = {}

        def drain(name, stream):
            output[name] = stream.read()

        readers = [
            threading.Thread(target=drain, args=item)
            for item in (("out", shell.stdout), ("err", shell.stderr))
        ]
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + timeout
        while shell.poll() is None or running:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(command, timeout)
            if select.select([server], [], [], 0.02)[0]:
                _serve_one(server, running)
            for pid in list(running):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    code = os.waitstatus_to_exitcode(status)
                    conn = running.pop(pid)
                    conn.sendall(str(code if code >= 0 else 128 - code).encode())
                    conn.close()
        for reader in readers:
            reader.join(timeout)
    except BaseException:
        for pid in running:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        if shell is not None and shell.poll() is None:
            shell.kill()
            shell.wait()
        raise
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
    texts = [
        output[name].decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        for name in ("out", "err")
    ]
    return subprocess.CompletedProcess(command, shell.returncode, *texts)
