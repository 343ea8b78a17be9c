"""The ``skrbal`` command, run as a fresh interpreter would, in this process.

``make test-oldest`` sets ``SKRBAL_TEST_CLI_IN_PROCESS=1``: the tests that
replay a user's session through the real command in a subprocess
(``tests/test_cli_first_week*.py``) then call :func:`skrbal.cli.main` here
instead. That run proves the lowest declared versions of the dependencies:
the command's code and every library call it makes run the same in this
process, while what a subprocess adds (the interpreter starting, the entry
point, exit codes and pipes of a real process) does not depend on those
versions, and runs on them in the tests that start a process themselves
(``test_ctrl_c_in_a_large_observe_is_one_line_exit_130_and_resumes`` and the
pipes of ``tests/test_cli_agent.py``). Every other run starts the real
command. A command's start imports scikit-learn and pandas again, about
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
