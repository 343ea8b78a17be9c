"""Start-up of the ``skrbal`` command against ``python -c pass`` (issue 18.12).

Each round runs, in a fresh interpreter each and in rotating order,
``python -c pass`` (the peer: the interpreter's own start-up),
``python -m skrbal --version``, ``python -m skrbal agent status`` on a small
SQLite store, and the floor of reading a store (``python -c "import
sqlalchemy, numpy"``, what ``agent status`` cannot do without). It keeps two
measures per command: the wall time, and the import time ``python -X
importtime`` reports (the sum of the listed modules' own times; a module
imported through ``importlib.import_module``, as the command's lazy parts
are, is not listed, but what it imports is). A command's overhead is its
time minus the peer's in the same round, so the load of a shared machine
cancels; the table gives the median and interquartile range of the
per-round overheads. With ``--before CHECKOUT`` every round also runs the
commands on that checkout's code (say, main), so "before" and "after" share
each round's load.

Run it (the code under test is this checkout)::

    .venv/bin/python benchmarks/bench_startup.py --rounds 9 --before ../main

It prints a Markdown table; ``--out FILE`` also writes it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


# Commands that do not depend on the checkout, timed once per round.
_SHARED = {
    "python -c pass": ["-c", "pass"],
    "python -c 'import sqlalchemy, numpy'": ["-c", "import sqlalchemy, numpy"],
}


def _commands(store: Path) -> dict[str, list[str]]:
    status = ["agent", "status", "--store", str(store)]
    return {
        "skrbal --version": ["-m", "skrbal", "--version"],
        "skrbal agent status": ["-m", "skrbal", *status],
    }


def _import_seconds(stderr: str) -> float:
    """The sum of the modules' own import times in ``-X importtime`` output."""
    total = 0
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            own = line.split(":", 1)[1].split("|")[0].strip()
            if own.isdigit():
                total += int(own)
    return total / 1e6


def _run(arguments: list[str], env: dict, cwd: str) -> tuple[float, float]:
    """Wall time of one run, and its import time (a second run, -X importtime).

    ``cwd`` holds no checkout: ``python -m`` puts it first on the path.
    """
    start = time.perf_counter()
    subprocess.run([sys.executable, *arguments], env=env, check=True, cwd=cwd,
                   capture_output=True)  # fmt: skip
    wall = time.perf_counter() - start
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    return wall, _import_seconds(traced.stderr)


def _store(root: Path, folder: str) -> Path:
    store = Path(folder) / f"agents-{abs(hash(root))}.db"
    subprocess.run(
        [sys.executable, "-m", "skrbal", "agent", "init", "--store", str(store),
         "--case", "synthetic"],
        env={**os.environ, "PYTHONPATH": str(root)}, check=True, capture_output=True,
        cwd=folder,
    )  # fmt: skip
    return store


def measure(roots: list[Path], rounds: int) -> dict[str, dict[str, np.ndarray]]:
    """Per-round overheads (wall, import) of each command and root over the peer."""
    with tempfile.TemporaryDirectory() as folder:
        runs = {
            name: (arguments, dict(os.environ)) for name, arguments in _SHARED.items()
        }
        for root in roots:
            env = {**os.environ, "PYTHONPATH": str(root)}
            for name, arguments in _commands(_store(root, folder)).items():
                runs[f"{name} ({root})"] = (arguments, env)
        labels = list(runs)
        times = {label: [] for label in labels}
        for r in range(rounds + 1):  # round 0 warms the file cache
            order = labels[r % len(labels) :] + labels[: r % len(labels)]
            result = {label: _run(*runs[label], folder) for label in order}
            if r:
                for label in labels:
                    times[label].append(result[label])
    peer = np.array(times["python -c pass"])
    overheads = {}
    for label in labels:
        if label != "python -c pass":
            own = np.array(times[label])
            overheads[label] = {
                "wall": own[:, 0] - peer[:, 0],
                "import": own[:, 1] - peer[:, 1],
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
        "| command | import time (-X importtime) | wall time | peer wall time |",
        "|---|---|---|---|",
    ]
    for name, values in overheads.items():
        lines.append(
            f"| `{name}` | {_cell(values['import'])} | {_cell(values['wall'])} | "
            f"{_cell(values['peer_wall'])} |"
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
