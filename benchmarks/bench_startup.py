"""Start-up of the ``skrbal`` command against ``python -c pass`` (issue 18.12).

Each round runs, in a fresh interpreter each and in rotating order,
``python -c pass`` (the peer: the interpreter's own start-up),
``python -m skrbal --version`` and ``python -m skrbal agent status`` on a
small SQLite store, and keeps two measures per command: the wall time, and
the import time ``python -X importtime`` reports (the sum of every module's
own time). A command's overhead is its time minus the peer's in the same
round, so the load of a shared machine cancels; the table gives the median
and interquartile range of the per-round overheads.

Run it on the code under test, and on another checkout for "before"::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_startup.py --rounds 15
    PYTHONPATH=. .venv/bin/python benchmarks/bench_startup.py --rounds 15 \\
        --root /path/to/other/checkout

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


def _commands(store: Path) -> dict[str, list[str]]:
    status = ["agent", "status", "--store", str(store)]
    return {
        "python -c pass": ["-c", "pass"],
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


def _run(arguments: list[str], env: dict) -> tuple[float, float]:
    """Wall time of one run, and its import time (a second run, -X importtime)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *arguments], env=env, check=True,
                   capture_output=True)  # fmt: skip
    wall = time.perf_counter() - start
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return wall, _import_seconds(traced.stderr)


def measure(root: Path, rounds: int) -> dict[str, dict[str, np.ndarray]]:
    """Per-round overheads (wall, import) of each command over the peer."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "agents.db"
        subprocess.run(
            [sys.executable, "-m", "skrbal", "agent", "init", "--store", str(store),
             "--case", "synthetic"],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        commands = _commands(store)
        names = list(commands)
        times = {name: [] for name in names}
        for r in range(rounds + 1):  # round 0 warms the file cache
            order = names[r % len(names) :] + names[: r % len(names)]
            result = {name: _run(commands[name], env) for name in order}
            if r:
                for name in names:
                    times[name].append(result[name])
    peer = np.array(times[names[0]])
    overheads = {}
    for name in names[1:]:
        own = np.array(times[name])
        overheads[name] = {
            "wall": own[:, 0] - peer[:, 0],
            "import": own[:, 1] - peer[:, 1],
            "peer_wall": peer[:, 0],
        }
    return overheads


def _cell(values: np.ndarray) -> str:
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return f"{median:.3f} s [{q1:.3f}, {q3:.3f}]"


def table(overheads, root: Path, rounds: int) -> str:
    lines = [
        f"Start-up overhead over `python -c pass`, code at `{root}`, {rounds} "
        "paired rounds: median [interquartile range].",
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
        "--root", type=Path, default=ROOT, help="the checkout to time (default: this)"
    )
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    text = table(measure(args.root, args.rounds), args.root, args.rounds)
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
