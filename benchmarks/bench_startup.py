"""Start-up of the ``skrbal`` command against ``python -c pass`` (issue 18.12).

Each round runs, in a fresh interpreter each and in rotating order,
``python -c pass`` (the peer: the interpreter's own start-up),
``python -m skrbal --version``, ``python -m skrbal agent status`` on a small
SQLite store, ``agent observe`` of one row and ``agent inspect`` of one
result on it (issue 28.25), the same three sent to ``skrbal agent serve``
on a copy of the store (``skrbal --server SOCKET agent ...``: the CPU of
the forwarding process plus the server's for the call), the same three as
plain command lines that find that server beside the store and are sent to
it ("auto-forwarded"), and two floors:
that of reading a store through SQLAlchemy (``python -c "import
sqlalchemy, numpy"`` with SQLite's dialect; ``agent status`` on a SQLite
file imports neither now, so it goes below) and that of
deciding (``import sklearn.base`` too: rebuilding the estimator needs
scikit-learn, whose ``sklearn.utils`` imports ``scipy.stats``,
``scipy.sparse.linalg`` and pandas); and the floors of a decision that
needs numpy alone (the stored snapshot of the model), writing
through sqlite3 or SQLAlchemy; and, on a checkout that has them, the import of
the modules such a decision would share with the full path (the decision
step, the model's predictive, the requests, the store's writer). It keeps three
measures per command: the wall time, the CPU time (user + system, what a
loaded machine distorts least), and the import time ``python -X
importtime`` reports (the sum of the listed modules' own times; a module
imported through ``importlib.import_module``, as the command's lazy parts
are, is not listed, but what it imports is). A command's overhead is its
time minus the peer's in the same round, so the load of a shared machine
cancels; the table gives the median and interquartile range of the
per-round overheads. With ``--before CHECKOUT`` every round also runs the
commands on that checkout's code (say, main), so "before" and "after" share
each round's load.

Every command runs as from an installed package: with its bytecode compiled
once (in a temporary ``PYTHONPYCACHEPREFIX``, by the warm-up round) even when
the environment sets ``PYTHONDONTWRITEBYTECODE``, which would otherwise make
each run compile the checkout's modules from source (about 0.06 s of CPU for
``status``, more for ``observe``) where ``pip install`` has compiled them.

Run it (the code under test is this checkout)::

    .venv/bin/python benchmarks/bench_startup.py --rounds 9 --before ../main

It prints a Markdown table; ``--out FILE`` also writes it.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


# Commands that do not depend on the checkout, timed once per round.
_READING = "import sqlalchemy, numpy, sqlite3, sqlalchemy.dialects.sqlite"
# What a decision from a numpy-only snapshot of the model imports at least
# (issue 28.25): numpy, the CSV reader, the chain's hashes, and
# the store's writer (SQLAlchemy, or the standard library's sqlite3).
_SNAPSHOT = "import numpy, csv, json, hashlib, hmac, struct, argparse"
_DECISION_STEP = (
    "import csv, argparse, skrbal._learning._kernel, skrbal._learning._requests, "
    "skrbal._decision._tables, skrbal._decision._serialisation, "
    "skrbal.budget._rules, skrbal.budget._paced_rule, skrbal._predictive, "
    "skrbal.online._sql._store, skrbal.online._records, sqlalchemy.dialects.sqlite"
)
_SHARED = {
    "python -c pass": ["-c", "pass"],
    "floor of status through SQLAlchemy: python -c 'import sqlalchemy, numpy'": [
        "-c",
        _READING,
    ],
    "floor of observe: python -c 'import sklearn.base, sqlalchemy, numpy'": [
        "-c",
        f"{_READING}, sklearn.base",
    ],
    "floor of a snapshot decision, sqlite3 writes: numpy, sqlite3, csv": [
        "-c",
        f"{_SNAPSHOT}, sqlite3",
    ],
    "floor of a snapshot decision, SQLAlchemy writes: numpy, sqlalchemy, csv": [
        "-c",
        f"{_SNAPSHOT}, sqlalchemy, sqlite3, sqlalchemy.dialects.sqlite",
    ],
}


def _compiled(env: dict, folder: str) -> dict:
    """``env`` with bytecode written (once) to a folder of its own."""
    env = {**env, "PYTHONPYCACHEPREFIX": str(Path(folder) / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _import_seconds(stderr: str) -> float:
    """The sum of the modules' own import times in ``-X importtime`` output."""
    total = 0
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            own = line.split(":", 1)[1].split("|")[0].strip()
            if own.isdigit():
                total += int(own)
    return total / 1e6


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run(arguments, env: dict, cwd: str, server=None) -> tuple[float, float, float]:
    """Wall and CPU time of one run, and its import time (a second run).

    ``arguments`` is a list, or a callable giving the next run's list (a
    command that changes the store, such as ``inspect``, needs new ones).
    ``cwd`` holds no checkout: ``python -m`` puts it first on the path. The
    CPU time (user + system of the child) is what a loaded machine distorts
    least.
    """
    argv = arguments() if callable(arguments) else arguments
    served = 0.0 if server is None else _process_cpu(server.pid)
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, *argv], env=env, check=True, cwd=cwd,
                   capture_output=True)  # fmt: skip
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if server is not None:  # the server's work for the call counts too
        cpu += _process_cpu(server.pid) - served
    argv = arguments() if callable(arguments) else arguments
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    return wall, cpu, _import_seconds(traced.stderr)


def _skrbal(root: Path, folder: str, *argv) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "skrbal", *map(str, argv)],
        env={**os.environ, "PYTHONPATH": str(root)}, check=True,
        capture_output=True, text=True, cwd=folder,
    )  # fmt: skip
    return done.stdout


def _store(root: Path, folder: str, rounds: int) -> dict:
    """A synthetic-case agent with open requests, and the commands to time.

    ``observe`` gets a new row of the case's stream at each run (the same row
    twice would be a repeated batch), ``inspect`` the result of the next
    open request (with its true state).
    """
    import pandas as pd

    base = Path(folder) / f"agents-{abs(hash(root))}"
    store, stream = f"{base}.db", f"{base}-stream.csv"
    _skrbal(root, folder, "agent", "init", "--store", store, "--case",
            "synthetic", "--stream-out", stream)  # fmt: skip
    rows = pd.read_csv(stream)
    # Enough open requests for every inspect run: observe until there are.
    # Each timed run and its -X importtime twin answer one request; the served
    # and auto-forwarded commands answer theirs on one copy of the store.
    need, first = 4 * (rounds + 1), 0
    decided = pd.DataFrame()
    while first < len(rows) - 200:
        part = rows.iloc[first : first + 200]
        part.drop(columns="label").to_csv(f"{base}-part.csv", index=False)
        out = _skrbal(root, folder, "agent", "observe", f"{base}-part.csv",
                      "--store", store)  # fmt: skip
        decided = pd.concat([decided, pd.read_csv(io.StringIO(out))])
        first += 200
        if decided["request_id"].notna().sum() >= need:
            break
    asked = decided[decided["request_id"].notna()]
    labels = rows["label"].to_numpy()
    n0 = int(decided["step"].iloc[0]) if len(decided) else 0
    asked = zip(asked["request_id"], asked["step"])
    pairs = [(int(r), labels[int(s) - n0]) for r, s in asked]
    answers, later = iter(pairs), iter(range(first, len(rows)))
    one = f"{base}-one.csv"

    def observe():
        rows.iloc[[next(later)]].drop(columns="label").to_csv(one, index=False)
        return ["-m", "skrbal", "agent", "observe", one, "--store", store]

    def inspect():
        request, label = next(answers)
        return ["-m", "skrbal", "agent", "inspect", str(request), str(label),
                "--store", store]  # fmt: skip

    commands = {
        "skrbal --version": (["-m", "skrbal", "--version"], None),
        "skrbal agent status": (
            ["-m", "skrbal", "agent", "status", "--store", store],
            None,
        ),
        "skrbal agent observe (one row)": (observe, None),
        "skrbal agent inspect": (inspect, None),
    }
    if (root / "skrbal" / "_predictive.py").exists():
        # The modules a numpy-only observe would share with the full path
        # (issue 28.25): the decision step, the model's predictive, the
        # requests and the store's writer (SQLAlchemy), and a CSV reader.
        commands["floor of a snapshot decision with its real modules"] = (
            ["-c", _DECISION_STEP],
            None,
        )
    if (root / "skrbal" / "cli" / "_serve.py").exists():
        commands.update(_served(root, folder, base, rows, first, pairs))
    return commands


def _served(root, folder, base, rows, first, pairs) -> dict:
    """The same commands sent to ``skrbal agent serve`` on a copy of the store.

    Each is timed as the forwarding process's CPU plus the server's for the
    call (read from /proc), so the server's work is not left out.
    """
    import shutil

    copy, sock = f"{base}-served.db", f"{base}.sock"
    shutil.copy(f"{base}.db", copy)
    env = _compiled({**os.environ, "PYTHONPATH": str(root)}, folder)
    server = subprocess.Popen(
        [sys.executable, "-m", "skrbal", "agent", "serve", "--store", copy,
         "--socket", sock],
        env=env, cwd=folder, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _SERVERS.append(server)
    while not Path(sock).exists():
        if server.poll() is not None:
            raise RuntimeError("skrbal agent serve did not start")
        time.sleep(0.1)
    record = Path(f"{os.path.realpath(copy)}-server-agent")  # written after the socket
    while (
        root / "skrbal" / "cli" / "_server_record.py"
    ).exists() and not record.exists():
        time.sleep(0.1)
    answers, later = iter(pairs), iter(range(first, len(rows)))
    one = f"{base}-served-one.csv"
    via = ["-m", "skrbal", "--server", sock, "agent"]

    def observe():
        rows.iloc[[next(later)]].drop(columns="label").to_csv(one, index=False)
        return [*via, "observe", one]

    def inspect():
        request, label = next(answers)
        return [*via, "inspect", str(request), str(label)]

    commands = {
        "served: skrbal --server S agent status": ([*via, "status"], server),
        "served: agent observe (one row)": (observe, server),
        "served: agent inspect": (inspect, server),
    }
    if (root / "skrbal" / "cli" / "_server_record.py").exists():
        # The plain command lines, which find the server beside the store.
        plain = ["-m", "skrbal", "agent"]

        def observe_plain():
            *_, one = observe()
            return [*plain, "observe", one, "--store", copy]

        def inspect_plain():
            *_, request, label = inspect()
            return [*plain, "inspect", request, label, "--store", copy]

        commands.update(
            {
                "auto-forwarded: skrbal agent status --store S": (
                    [*plain, "status", "--store", copy],
                    server,
                ),
                "auto-forwarded: agent observe (one row)": (observe_plain, server),
                "auto-forwarded: agent inspect": (inspect_plain, server),
            }
        )
    return commands


_SERVERS: list = []  # the servers started, ended after the measures


def measure(roots: list[Path], rounds: int) -> dict[str, dict[str, np.ndarray]]:
    """Per-round overheads (wall, CPU, import) of each command over the peer."""
    with tempfile.TemporaryDirectory() as folder:
        shared = _compiled(os.environ, folder)
        runs = {name: (a, shared, None) for name, a in _SHARED.items()}
        try:
            for root in roots:
                env = _compiled({**os.environ, "PYTHONPATH": str(root)}, folder)
                for name, (a, server) in _store(root, folder, rounds).items():
                    runs[f"{name} ({root})"] = (a, env, server)
            labels = list(runs)
            times = {label: [] for label in labels}
            for r in range(rounds + 1):  # round 0 warms the file cache
                order = labels[r % len(labels) :] + labels[: r % len(labels)]
                result = {label: _run(*runs[label][:2], folder, runs[label][2])
                          for label in order}  # fmt: skip
                if r:
                    for label in labels:
                        times[label].append(result[label])
        finally:
            while _SERVERS:
                server = _SERVERS.pop()
                server.terminate()
                server.wait()
    peer = np.array(times["python -c pass"])
    overheads = {}
    for label in labels:
        if label != "python -c pass":
            own = np.array(times[label])
            overheads[label] = {
                "wall": own[:, 0] - peer[:, 0],
                "cpu": own[:, 1] - peer[:, 1],
                "import": own[:, 2] - peer[:, 2],
                "peer_wall": peer[:, 0],
            }
    return overheads


def _cell(values: np.ndarray) -> str:
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return f"{median:.3f} s [{q1:.3f}, {q3:.3f}]"


def table(overheads, rounds: int) -> str:
    lines = [
        f"Start-up overhead over `python -c pass`, {rounds} paired rounds: "
        "median [interquartile range].",
        "",
        "| command | CPU time | import time (-X importtime) | wall time | "
        "peer wall time |",
        "|---|---|---|---|---|",
    ]
    for name, values in overheads.items():
        lines.append(
            f"| `{name}` | {_cell(values['cpu'])} | {_cell(values['import'])} | "
            f"{_cell(values['wall'])} | {_cell(values['peer_wall'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--before",
        type=Path,
        help="another checkout to time in the same rounds (e.g. main)",
    )
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    roots = [ROOT] if args.before is None else [args.before.resolve(), ROOT]
    text = table(measure(roots, args.rounds), args.rounds)
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
